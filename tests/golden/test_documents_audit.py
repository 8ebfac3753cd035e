"""Document readers on the inputs an audit found them losing text or failing on: .docx tables and
content controls, HTML pages of several articles and nested tables, AES-encrypted PDFs and PDFs with a
filter pypdf lacks, Markdown titles and `#` headings, TREC records without a DOCNO in a folder."""

from __future__ import annotations

import codecs
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from document_helpers import PAGE_ONE, PAGE_TWO, pdf_bytes
from helpers import assert_one_error, read_lines, run, write
from semrel.golden.documents import html_text_document, read_documents_report, text_document


def chunk(tmp_path: Path, *args) -> tuple[list[dict], list[str]]:
    out = tmp_path / "corpus.jsonl"
    result = run("corpus", "chunk", *args, "-o", out)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return read_lines(out), result.stderr.splitlines()


# ---------------------------------------------------------------- .docx


def report_docx(path: Path) -> Path:
    """Equal values in a row, a merged header, a table inside a cell and a paragraph in a content control."""
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading("Results", level=1)
    table = document.add_table(rows=2, cols=3)
    for r, values in enumerate([["Item", "Before", "After"], ["Brake pads", "0", "0"]]):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    merged = document.add_table(rows=2, cols=3)
    merged.cell(0, 0).merge(merged.cell(0, 1)).text = "Merged header"
    merged.cell(0, 2).text = "Other"
    for c, value in enumerate("abc"):
        merged.cell(1, c).text = value
    outer = document.add_table(rows=1, cols=2)
    outer.cell(0, 0).text = "Outer"
    inner = outer.cell(0, 1).add_table(rows=1, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text = "Nested one", "Nested two"
    sdt, content, paragraph, run_, text = (OxmlElement(t) for t in ("w:sdt", "w:sdtContent", "w:p", "w:r", "w:t"))
    text.text = "Inside a content control."
    run_.append(text)
    paragraph.append(run_)
    content.append(paragraph)
    sdt.append(content)
    document.element.body.insert(len(document.element.body) - 1, sdt)  # before the section properties
    document.add_paragraph("Last paragraph.")
    document.save(str(path))
    return path


def test_docx_keeps_equal_cells_nested_tables_and_content_controls(tmp_path):
    rows, _ = chunk(tmp_path, report_docx(tmp_path / "report.docx"), "--whole")
    assert rows[0]["text"].split("\n\n") == [
        "Results", "Item | Before | After", "Brake pads | 0 | 0", "Merged header | Other", "a | b | c",
        "Outer", "Nested one | Nested two", "Inside a content control.", "Last paragraph."]


def test_a_docx_without_a_title_property_is_titled_by_its_title_paragraph_or_first_heading(tmp_path):
    """Word leaves the Title property empty unless someone fills it in, so every .docx had the title ''."""
    import docx

    from semrel.golden.documents import docx_document

    document = docx.Document()
    document.add_heading("Setup", level=1)
    document.add_heading("Brake manual", level=0)
    document.save(tmp_path / "titled.docx")
    assert docx_document(tmp_path / "titled.docx", "titled").title == "Brake manual"
    assert docx_document(report_docx(tmp_path / "report.docx"), "report").title == "Results"
    document.core_properties.title = "Given title"
    document.save(tmp_path / "given.docx")
    assert docx_document(tmp_path / "given.docx", "given").title == "Given title"
    plain = docx.Document()
    plain.add_heading("Only a subsection", level=2)
    plain.save(tmp_path / "plain.docx")
    assert docx_document(tmp_path / "plain.docx", "plain").title == ""


# ---------------------------------------------------------------- HTML


def test_html_with_several_articles_reads_the_body():
    doc = html_text_document("<html><body><nav>Home</nav><header>Site</header><h1>Bike FAQ</h1>"
                             "<article><h2>Brakes</h2><p>Replace pads at 1 mm.</p></article>"
                             "<article><h2>Chains</h2><p>Oil every 200 km.</p></article>"
                             "<footer>(c) 2024</footer></body></html>", "faq")
    assert doc.text == "Bike FAQ\n\nBrakes\n\nReplace pads at 1 mm.\n\nChains\n\nOil every 200 km."
    assert doc.title == "Bike FAQ"
    assert [s.meta["headings"] for s in doc.sections] == [("Bike FAQ",), ("Bike FAQ", "Brakes"), ("Bike FAQ", "Chains")]


def test_html_with_one_article_and_articles_inside_it_reads_that_article():
    doc = html_text_document("<body><p>Site blurb.</p><article><h1>Post</h1><p>Body.</p>"
                             "<article><p>A comment.</p></article></article></body>", "post")
    assert doc.text == "Post\n\nBody.\n\nA comment."


def test_html_in_utf16_with_a_byte_order_mark_is_read_as_utf16(tmp_path):
    """Not UTF-8 and with no charset in bytes that read as ASCII, a UTF-16 page (Windows tools save one)
    was decoded as cp1252: its whole markup, NULs dropped, became one block of text."""
    page = '<html><head><meta charset="utf-16"><title>Caf\u00e9</title></head><body><p>Na\u00efve text.</p></body></html>'
    write(tmp_path / "le.html", codecs.BOM_UTF16_LE + page.encode("utf-16-le"))
    write(tmp_path / "be.htm", codecs.BOM_UTF16_BE + page.encode("utf-16-be"))
    rows, _ = chunk(tmp_path, tmp_path / "le.html", tmp_path / "be.htm")
    assert [(r["_id"], r["title"], r["text"]) for r in rows] == [("le#0", "Caf\u00e9", "Na\u00efve text."),
                                                                ("be#0", "Caf\u00e9", "Na\u00efve text.")]


def test_html_declaring_utf8_over_single_byte_text_is_read_as_cp1252(tmp_path):
    """A page saved in latin-1 under a utf-8 declaration had every accented letter as U+FFFD ('caf\ufffd'), which no
    query word matches. One that is UTF-8 but for a stray byte keeps its UTF-8, the stray byte replaced."""
    head = b'<html><head><meta charset="utf-8"><title>x</title></head><body><p>'
    write(tmp_path / "latin.html", head + "Caf\u00e9 cr\u00e8me.".encode("latin-1") + b"</p></body></html>")
    write(tmp_path / "mixed.html", head + "Na\u00efve \u2013 text".encode() + b" \xff.</p></body></html>")
    rows, _ = chunk(tmp_path, tmp_path / "latin.html", tmp_path / "mixed.html")
    assert [r["text"] for r in rows] == ["Caf\u00e9 cr\u00e8me.", "Na\u00efve \u2013 text \ufffd."]


def test_html_nested_table_rows_follow_the_row_holding_them():
    doc = html_text_document("<main><table><tr><td>A<table><tr><td>n1</td><td>n2</td></tr><tr><td>n3</td></tr>"
                             "</table> tail</td><td>B</td></tr><tr><td>C</td></tr></table><p>after</p></main>", "t")
    assert doc.text == "A tail | B\n\nn1 | n2\n\nn3\n\nC\n\nafter"


# ---------------------------------------------------------------- PDF


def aes_pdf() -> bytes:
    """A PDF whose trailer says AES-256 (V5 R6): pypdf needs the cryptography package to check even
    the empty password. The trailer comes after the cross-reference table, so its offsets stay right."""
    zeros = "00"
    encrypt = (f"/Encrypt << /Filter /Standard /V 5 /R 6 /Length 256 /P -4 /O <{zeros * 48}> /U <{zeros * 48}> "
               f"/OE <{zeros * 32}> /UE <{zeros * 32}> /Perms <{zeros * 16}> "
               "/CF << /StdCF << /CFM /AESV3 /Length 32 /AuthEvent /DocOpen >> >> /StmF /StdCF /StrF /StdCF >> "
               f"/ID [<{zeros * 16}> <{zeros * 16}>]")
    data = pdf_bytes([PAGE_ONE])
    assert data.count(b"/Info 4 0 R >>") == 1
    return data.replace(b"/Info 4 0 R >>", b"/Info 4 0 R " + encrypt.encode() + b" >>")


def unsupported_filter_pdf() -> bytes:
    """A PDF whose page content claims a stream filter pypdf does not implement."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([PAGE_ONE]))))
    writer.pages[0]["/Contents"].get_object()[NameObject("/Filter")] = NameObject("/NoSuchDecode")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


HAS_CRYPTOGRAPHY = importlib.util.find_spec("cryptography") is not None


def test_an_aes_pdf_without_cryptography_is_an_error_saying_so(tmp_path):
    pdf = write(tmp_path / "locked.pdf", aes_pdf())
    result = run("corpus", "chunk", pdf, "-o", tmp_path / "c.jsonl")
    if HAS_CRYPTOGRAPHY:  # pypdf can check the password, which is wrong here: an encrypted PDF
        assert_one_error(result, "locked.pdf", "encrypted")
    else:
        assert_one_error(result, "locked.pdf", "encrypted with AES", "pip install cryptography")


def test_a_pdf_with_an_unsupported_filter_is_an_error_not_a_traceback(tmp_path):
    pdf = write(tmp_path / "odd.pdf", unsupported_filter_pdf())
    assert_one_error(run("corpus", "chunk", pdf, "-o", tmp_path / "c.jsonl"), "odd.pdf", "not a readable PDF",
                     "/NoSuchDecode")


def test_a_folder_skips_unreadable_pdfs_and_reads_the_rest(tmp_path):
    folder = tmp_path / "pdfs"
    write(folder / "a_locked.pdf", aes_pdf())
    write(folder / "b_odd.pdf", unsupported_filter_pdf())
    write(folder / "c_manual.pdf", pdf_bytes([PAGE_ONE, PAGE_TWO]))
    rows, lines = chunk(tmp_path, folder, "--whole")
    assert [r["_id"] for r in rows] == ["c_manual"]
    assert any(line.startswith("semrel: warning: skipped 1 (unreadable PDF): b_odd.pdf (not a readable PDF")
               and "/NoSuchDecode" in line for line in lines), lines
    locked = ("semrel: warning: skipped 1 (encrypted PDF: save an unprotected copy): a_locked.pdf" if HAS_CRYPTOGRAPHY
              else "semrel: warning: skipped 1 (PDF encrypted with AES: pip install cryptography to read it): a_locked.pdf")
    assert locked in lines, lines


def test_gzipped_pdf_and_docx_are_read_as_the_plain_files(tmp_path):
    """A .gz is read transparently, and `manual.pdf.gz` was taken for a PDF, but handed to pypdf compressed: 'not a
    readable PDF'."""
    import gzip

    plain = tmp_path / "plain"
    write(plain / "manual.pdf", pdf_bytes([PAGE_ONE, PAGE_TWO]))
    report_docx(plain / "report.docx")
    for name in ("manual.pdf", "report.docx"):
        write(tmp_path / "zipped" / f"{name}.gz", gzip.compress((plain / name).read_bytes()))
    assert chunk(tmp_path, tmp_path / "zipped")[0] == chunk(tmp_path, plain)[0]


def test_a_folder_says_it_skips_linked_folders_fifos_and_broken_links(tmp_path):
    """rglob does not go into a linked folder, and the walk passed over what was not a file: their documents were
    left out without a word. The manifest's digest of the folder does not open the FIFO (it would block)."""
    folder = tmp_path / "docs"
    write(folder / "real" / "a.txt", "Chain oil.\n")
    write(tmp_path / "elsewhere" / "b.txt", "Brake pads.\n")
    (folder / "linked").symlink_to(tmp_path / "elsewhere")
    (folder / "broken").symlink_to(tmp_path / "nowhere")
    os.mkfifo(folder / "pipe")
    rows, lines = chunk(tmp_path, folder)
    assert [r["_id"] for r in rows] == ["real/a#0"]
    assert "semrel: warning: skipped 1 (a link to a folder, not followed: give the folder itself): linked" in lines, lines
    assert "semrel: warning: skipped 2 (not a regular file (a FIFO, device or broken link)): broken, pipe" in lines, lines


def test_a_folder_does_not_read_files_outside_it_through_links(tmp_path):
    """A folder from someone else holding notes.txt -> /home/you/.ssh/id_rsa put the key's text in the corpus (and so in
    the golden set and the review page) without a word. A link to a file inside the folder is read as before."""
    folder = tmp_path / "docs"
    write(folder / "a.txt", "Chain oil.\n")
    secret = write(tmp_path / "secret.txt", "Private key.\n")
    (folder / "notes.txt").symlink_to(secret)
    (folder / "sub").mkdir()
    (folder / "sub" / "same.txt").symlink_to(folder / "a.txt")
    rows, lines = chunk(tmp_path, folder)
    assert [(r["_id"], r["text"]) for r in rows] == [("a#0", "Chain oil."), ("sub/same#0", "Chain oil.")]
    assert "semrel: warning: skipped 1 (a link to a file outside the folder, not followed: give the file itself): notes.txt" in lines, lines
    assert chunk(tmp_path, secret)[0][0]["text"] == "Private key."  # given by name, it is read


def test_a_file_name_that_is_not_utf8_is_skipped_in_a_folder_and_refused_by_name(tmp_path):
    """Its document id is made of the name, which no UTF-8 file can hold: it ended in a UnicodeEncodeError traceback."""
    folder = tmp_path / "docs"
    latin = write(folder / os.fsdecode(b"caf\xe9.txt"), "Coffee notes.\n")
    write(folder / "tea.txt", "Tea notes.\n")
    rows, lines = chunk(tmp_path, folder)
    assert [r["_id"] for r in rows] == ["tea#0"]
    assert any(line.startswith("semrel: warning: skipped 1 (file name not valid UTF-8: rename the file): caf") for line in lines), lines
    assert_one_error(run("corpus", "chunk", latin, "-o", tmp_path / "c.jsonl"), "the file name is not valid UTF-8", "rename the file")


@pytest.mark.slow
def test_file_names_outside_ascii_are_read_under_an_ascii_locale_with_the_ids_a_utf8_one_gives(tmp_path):
    """LC_ALL=C: Python gives 'café.txt' as surrogates of its UTF-8 bytes, and the document was skipped as a file name
    'not valid UTF-8'. Its bytes are UTF-8: read, its chunks have the ids a UTF-8 locale gives them."""
    folder = tmp_path / "docs"
    for name, text in (("café.txt", "Coffee notes.\n"), ("naïve.md", "# Naive\nNaive notes.\n"), ("sous/été.txt", "Summer.\n")):
        write(folder / name, text)
    assert run("corpus", "chunk", folder, "-o", tmp_path / "utf8.jsonl").exit_code == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    done = subprocess.run([sys.executable, "-m", "semrel", "corpus", "chunk", "docs", "-o", "ascii.jsonl"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert (done.returncode, done.stderr.splitlines()[0]) == (0, "semrel: read 3 documents: 2 .txt, 1 .md"), done.stderr
    assert [r["_id"] for r in read_lines(tmp_path / "ascii.jsonl")] == ["café#0", "naïve#0", "sous/été#0"]
    assert (tmp_path / "ascii.jsonl").read_bytes() == (tmp_path / "utf8.jsonl").read_bytes()


# ---------------------------------------------------------------- Markdown


def test_markdown_title_is_the_first_top_level_heading_anywhere(tmp_path):
    doc = text_document(write(tmp_path / "notes.md", "Intro text.\n\n## Setup\n\n# Real Title\n\nBody.\n"), "notes")
    assert doc.title == "Real Title"
    fenced = text_document(write(tmp_path / "f.md", "```\n# not a heading\n```\n\n# Title\n"), "f")
    assert fenced.title == "Title"


def test_markdown_headings_keep_a_hash_that_is_not_a_closing_sequence(tmp_path):
    doc = text_document(write(tmp_path / "c.md", "# C#\n\nText.\n\n## Setup #2 ##\n\nMore.\n\n### F# #\n"), "c")
    assert doc.title == "C#"
    assert [s.meta["headings"] for s in doc.sections] == [("C#",), ("C#", "Setup #2"), ("C#", "Setup #2", "F#")]


def test_markdown_with_crlf_line_ends_keeps_code_fences_and_closing_hashes(tmp_path):
    """`$` matches before \\n only: with \\r\\n line ends no closing fence was found, so a `#` comment in a
    code block became a heading of every section after it, and `## Setup #` kept its closing `#`."""
    text = "# Title\n\n```sh\n# install it\n```\n\n## Setup #\n\nBody.\n"
    for name, content in (("lf", text), ("crlf", text.replace("\n", "\r\n"))):
        doc = text_document(write(tmp_path / f"{name}.md", content.encode()), name)
        assert [s.meta["headings"] for s in doc.sections] == [("Title",), ("Title", "Setup")], name



def test_markdown_front_matter_gives_the_title_and_no_headings(tmp_path):
    """A YAML comment in Hugo's or Jekyll's front matter (`# generated by hugo`) was read as a `# ` heading: it became
    the title and the first heading of every chunk. Its `title` is the title now, as a page's <title> is."""
    yaml = ("---\n# generated by hugo\ntitle: \"Install guide\"  # shown in the menu\ndate: 2024-01-01\n---\n"
            "\nIntro.\n\n## Steps\n\nRun it.\n")
    for name, content in (("yaml", yaml), ("crlf", yaml.replace("\n", "\r\n")),
                          ("toml", yaml.replace("---", "+++").replace("title:", "title =").replace("# gen", "# also gen"))):
        doc = text_document(write(tmp_path / f"{name}.md", content.encode()), name)
        assert doc.text == content and doc.title == "Install guide", name
        assert [s.meta["headings"] for s in doc.sections] == [("Steps",)], name
    plain = text_document(write(tmp_path / "p.md", "---\nlayout: post\n---\n\n# Heading Title\n"), "p")
    assert plain.title == "Heading Title"
    rule = text_document(write(tmp_path / "r.md", "Text\n\n---\n# H\n---\n"), "r")  # a rule, not at the top
    assert rule.title == "H"


def test_a_markdown_heading_closes_the_sections_of_its_level_and_below(tmp_path):
    """A second '## ' heading replaces the first in the path, as a '# ' heading replaces every open one."""
    doc = text_document(write(tmp_path / "s.md", "# A\n\n## B\n\nb\n\n## C\n\nc\n\n# D\n\nd\n"), "s")
    assert [(s.start, s.meta["headings"]) for s in doc.sections] == [(0, ("A",)), (5, ("A", "B")), (14, ("A", "C")), (23, ("D",))]


# ---------------------------------------------------------------- TREC SGML


def test_a_trec_record_without_docno_in_a_folder_skips_only_that_record(tmp_path):
    write(tmp_path / "coll" / "la01", "<DOC>\n<DOCNO> A1 </DOCNO>\n<TEXT>good one</TEXT>\n</DOC>\n"
                                      "<DOC>\n<TEXT>no docno</TEXT>\n</DOC>\n"
                                      "<DOC>\n<DOCNO>A3</DOCNO><TEXT>third</TEXT></DOC>\n")
    rows, lines = chunk(tmp_path, tmp_path / "coll", "--whole")
    assert [(r["_id"], r["text"]) for r in rows] == [("A1", "good one"), ("A3", "third")]
    assert "semrel: warning: skipped 1 (TREC SGML record: a <DOC> without a <DOCNO>): la01:5" in lines
    documents, report = read_documents_report([tmp_path / "coll"])
    assert [d.id for d in documents] == ["A1", "A3"] and report.files["trec"] == 1


def test_a_trec_record_without_its_closing_tag_is_said_not_lost_or_merged(tmp_path):
    """A <DOC> whose </DOC> was missing was dropped in silence at the end of a file, and in the middle
    it swallowed the next record (its DOCNO lost, its text in the first one's)."""
    write(tmp_path / "coll" / "la01", "<DOC>\n<DOCNO> A1 </DOCNO>\n<TEXT>first, never closed</TEXT>\n"
                                      "<DOC>\n<DOCNO>A2</DOCNO><TEXT>second</TEXT></DOC>\n"
                                      "<DOC>\n<DOCNO>A3</DOCNO><TEXT>third, never closed</TEXT>\n")
    rows, lines = chunk(tmp_path, tmp_path / "coll", "--whole")
    assert [(r["_id"], r["text"]) for r in rows] == [("A2", "second")]
    assert ("semrel: warning: skipped 2 (TREC SGML record: a <DOC> without its </DOC> before the next <DOC> or the end "
            "of the file): la01:1, la01:6") in lines
    assert_one_error(run("corpus", "chunk", tmp_path / "coll" / "la01", "-o", tmp_path / "one.jsonl"),
                     "la01:1: a <DOC> without its </DOC>", "add its </DOC>")


def test_trec_paragraphs_survive_crlf_line_ends():
    from semrel.golden.documents import trec_documents

    text = "<DOC>\r\n<DOCNO>A1</DOCNO>\r\n<TEXT>\r\nFirst paragraph.\r\n\r\nSecond one.\r\n</TEXT>\r\n</DOC>\r\n"
    assert [doc.text for _, doc in trec_documents("la.trec", text=text)] == ["First paragraph.\n\nSecond one."]


def test_a_large_trec_file_is_read_in_time_linear_in_its_size():
    """Each <DOC>'s line was counted from the start of the file: 15 MB of 8,000 documents took 20 s
    (100 MB, a quarter of an hour); counted on from the document before, it takes about one. What is
    checked is the text the line counts scan (no timing): about the file once, not once per document."""
    from semrel.golden.documents import trec_documents

    class Counted(str):
        scanned = 0

        def count(self, sub, start=0, end=None):  # type: ignore[override]
            Counted.scanned += (len(self) if end is None else end) - start
            return str.count(self, sub, start, end)

    record = ("<DOC>\n<DOCNO> LA{0:06d} </DOCNO>\n<HEADLINE>title {0}</HEADLINE>\n<TEXT>\n"
              + ("some words of text. " * 50 + "\n") * 2 + "</TEXT>\n</DOC>\n")
    text = Counted("".join(record.format(n) for n in range(2000)))
    lines = [(line, doc.id) for line, doc in trec_documents("la.trec", text=text)]
    assert lines[0] == (1, "LA000000") and lines[-1] == (1 + 8 * 1999, "LA001999")
    assert Counted.scanned <= len(text)  # from the start each time: about 1,000 times the file


def test_a_docx_with_broken_xml_is_skipped_in_a_folder(tmp_path):
    import zipfile

    good = report_docx(tmp_path / "good.docx")
    folder = tmp_path / "docs"
    folder.mkdir()
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(folder / "broken.docx", "w") as broken:
        for item in source.infolist():
            data = source.read(item.filename)
            broken.writestr(item, data[: len(data) // 2] if item.filename == "word/document.xml" else data)
    write(folder / "notes.txt", "Plain notes.\n")
    rows, lines = chunk(tmp_path, folder, "--whole")
    assert [r["_id"] for r in rows] == ["notes"]
    assert any(line.startswith("semrel: warning: skipped 1 (unreadable .docx): broken.docx (not a readable .docx file "
                               "(XMLSyntaxError") for line in lines), lines


def test_a_docx_that_unpacks_past_the_document_limit_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    """A .docx is a zip: python-docx unpacked every part into memory, so a 3 MB file whose document.xml
    held 3 GB of blanks took 6.7 GB before lxml gave up. The sizes the zip records are checked first."""
    import zipfile

    good = report_docx(tmp_path / "good.docx")
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as packed:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + b" " * (4 << 20))
            packed.writestr(item.filename, data)
    assert bomb.stat().st_size < 1 << 20
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "2")
    assert_one_error(run("corpus", "chunk", bomb, "-o", tmp_path / "corpus.jsonl"),
                     "bomb.docx: the .docx unpacked (5 MB) is longer than the limit of 2 MB", "SEMREL_MAX_DOCUMENT_MB")
    assert not (tmp_path / "corpus.jsonl").exists()


def test_docx_reads_tracked_insertions_and_inline_controls_and_drops_deletions(tmp_path):
    """python-docx's Paragraph.text reads only a paragraph's direct runs: text inside a tracked
    insertion or an inline content control was lost in silence."""
    import docx
    from docx.oxml import parse_xml

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    document = docx.Document()
    paragraph = document.add_paragraph("Replace the pads ")
    for xml in (f'<w:ins {w} w:id="1" w:author="ed"><w:r><w:t xml:space="preserve">at 1 mm </w:t></w:r></w:ins>',
                f'<w:del {w} w:id="2" w:author="ed"><w:r><w:delText>at 3 mm </w:delText></w:r></w:del>',
                f'<w:sdt {w}><w:sdtContent><w:r><w:t>or when they squeal.</w:t></w:r></w:sdtContent></w:sdt>'):
        paragraph._p.append(parse_xml(xml))
    document.save(str(tmp_path / "edited.docx"))
    rows, _ = chunk(tmp_path, tmp_path / "edited.docx", "--whole")
    assert rows[0]["text"] == "Replace the pads at 1 mm or when they squeal."


def test_a_pdf_without_pages_is_not_said_to_need_ocr(tmp_path):
    """A PDF of no pages was skipped as "a scanned PDF needs OCR first", which sends the user to OCR for nothing."""
    folder = tmp_path / "d"
    write(folder / "none.pdf", pdf_bytes([]))
    write(folder / "blank.pdf", pdf_bytes([[]]))
    write(folder / "notes.txt", "Chain oil keeps the chain quiet.")
    result = run("corpus", "chunk", folder, "-o", tmp_path / "c.jsonl")
    assert result.exit_code == 0, result.output
    assert f"skipped 1 (no text: nothing to chunk, the PDF has no pages): {folder / 'none.pdf'}" in result.stderr
    assert f"skipped 1 (no text: nothing to chunk, a scanned PDF needs OCR first): {folder / 'blank.pdf'}" in result.stderr


def test_html_nested_past_the_limit_is_skipped_before_the_parser_sees_it(tmp_path):
    """The HTML parser's time grows with the square of the nesting (200,000 divs: over a minute, a page of 2 MB). Such a
    page is skipped, said with its depth; a long page of unclosed paragraphs, formatting and void tags, which the parser
    closes or caps itself, is read."""
    folder = tmp_path / "docs"
    write(folder / "deep.html", "<html><body>" + "<div><span>" * 6000 + "x</body></html>")
    write(folder / "long.html", "<html><body>" + "<p>para <b>bold<br><li>item" * 12000 + "</body></html>")
    documents, report = read_documents_report([folder])
    assert [d.id for d in documents] == ["long"] and documents[0].text.count("para bold") == 12000
    assert dict(report.skipped_counts) == {"unreadable HTML": 1}
    assert "deep.html (elements nest 12,002 deep (over 10,000)" in report.skip_lines()[0]


def test_a_chunk_carries_the_pages_it_overlaps_not_those_it_only_touches():
    """meta_of's sections are half-open: a chunk that ends where page 2 starts, or starts where page 1 ends, is not on it."""
    from semrel.golden.documents import Document, Section

    doc = Document("d", "abcd", sections=(Section(0, 2, {"page": 1}), Section(2, 4, {"page": 2})))
    assert doc.meta_of(0, 2) == {"pages": [1]}
    assert doc.meta_of(2, 4) == {"pages": [2]}
    assert doc.meta_of(1, 3) == {"pages": [1, 2]}


def test_a_pdf_locked_by_a_user_password_is_refused_as_encrypted(tmp_path):
    """RC4 needs no cryptography package: pypdf opens the file, and only the failed decrypt('') tells it is locked."""
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf_bytes([PAGE_ONE]))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    pdf = write(tmp_path / "locked.pdf", buffer.getvalue())
    assert_one_error(run("corpus", "chunk", pdf, "-o", tmp_path / "c.jsonl"), "locked.pdf: the PDF is encrypted",
                     "save an unprotected copy")
    assert not (tmp_path / "c.jsonl").exists()


def test_a_banner_role_is_dropped_from_the_body_but_kept_inside_main():
    """Page chrome (role banner or contentinfo) is left out only when the whole body is read: inside <main> it is content."""
    page = '<body><div role="banner">Site name</div><main><div role="banner">Chapter banner</div><p>Body text.</p></main></body>'
    assert html_text_document(page, "p").text == "Chapter banner\n\nBody text."
    body = '<body><div role="banner">Site name</div><div role="contentinfo">Contact</div><p>Body text.</p></body>'
    assert html_text_document(body, "p").text == "Body text."


def test_a_trec_record_without_text_leaves_its_title_out_of_the_text():
    """Without <TEXT> the text is what is left once DOCNO, the bibliographic fields and the title are removed."""
    from semrel.golden.documents import trec_documents

    sgml = "<DOC>\n<DOCNO> D1 </DOCNO>\n<DATE>1990</DATE>\n<HEADLINE>Bees swarm</HEADLINE>\nHives split in spring.\n</DOC>\n"
    [(line, doc)] = trec_documents("t.trec", sgml)
    assert (line, doc.id, doc.title, doc.text) == (1, "D1", "Bees swarm", "Hives split in spring.")


def test_a_docx_title_heads_the_sections_of_its_heading_1s(tmp_path):
    """`Title` is level 0, above `Heading 1`: the title stays in the path of the sections under it."""
    import docx

    document = docx.Document()
    document.add_heading("Manual", level=0)
    document.add_heading("Setup", level=1)
    document.add_paragraph("Oil the chain.")
    document.save(tmp_path / "m.docx")
    doc = read_documents_report([tmp_path / "m.docx"])[0][0]
    assert doc.text == "Manual\n\nSetup\n\nOil the chain."
    assert [(s.start, s.meta["headings"]) for s in doc.sections] == [(0, ("Manual",)), (8, ("Manual", "Setup"))]


def test_a_file_without_suffix_opening_with_blank_lines_then_doc_is_read_as_trec(tmp_path):
    write(tmp_path / "docs" / "FT911-1", "\n  \n<DOC><DOCNO>FT911-1</DOCNO><TEXT>Bees swarm.</TEXT></DOC>\n")
    documents, report = read_documents_report([tmp_path / "docs"])
    assert [(d.id, d.text) for d in documents] == [("FT911-1", "Bees swarm.")]
    assert report.skipped_counts == {}


def test_a_trec_file_without_any_doc_record_is_refused_not_read_as_empty(tmp_path):
    source = write(tmp_path / "x.trec", "Bees swarm in spring.\n")
    assert_one_error(run("corpus", "chunk", source, "-o", tmp_path / "c.jsonl"), "x.trec:1", "no <DOC>...</DOC> in this file",
                     "is it TREC SGML?")


def test_a_jsonl_corpus_names_the_line_of_a_repeated_or_empty_document_id(tmp_path):
    twice = write(tmp_path / "d.jsonl", '{"id": "a", "text": "Bees."}\n{"id": "a", "text": "Wasps."}\n')
    assert_one_error(run("corpus", "chunk", twice, "-o", tmp_path / "c.jsonl"), "d.jsonl:2", "document id 'a' is already used on line 1")
    empty = write(tmp_path / "e.jsonl", '{"id": "a", "text": "Bees."}\n{"_id": "  ", "text": "Wasps."}\n')
    assert_one_error(run("corpus", "chunk", empty, "-o", tmp_path / "c.jsonl"), "e.jsonl:2", "empty document id in field '_id'")
    assert not (tmp_path / "c.jsonl").exists()


def test_files_inside_a_hidden_folder_are_skipped_as_hidden(tmp_path):
    write(tmp_path / "docs" / "a.txt", "Bees.")
    write(tmp_path / "docs" / ".git" / "notes.txt", "Internal.")
    documents, report = read_documents_report([tmp_path / "docs"])
    assert [d.id for d in documents] == ["a"]
    assert report.skipped == {"hidden": [".git/notes.txt"]}


def test_a_folder_of_no_kind_semrel_reads_says_so_and_what_it_skipped(tmp_path):
    write(tmp_path / "docs" / "data.csv", "a,b\n")
    assert_one_error(run("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl"), "no documents in this folder",
                     ".docx", "skipped 1 (not a kind semrel reads: .csv): data.csv")


def test_two_files_that_make_one_document_id_are_refused_naming_both(tmp_path):
    write(tmp_path / "docs" / "notes.md", "Bees.")
    write(tmp_path / "docs" / "notes.txt", "Wasps.")
    folder = tmp_path / "docs"
    assert_one_error(run("corpus", "chunk", folder, "-o", tmp_path / "c.jsonl"),
                     f"document id 'notes' occurs in {folder / 'notes.md'} and in {folder / 'notes.txt'}; rename one of the documents")


def test_files_of_one_name_in_two_folders_are_told_to_chunk_the_folder_holding_both(tmp_path):
    """a/notes.md and b/notes.md given as files, or as the folders a and b, are both 'notes': renaming was the only advice,
    where chunking their common folder names them 'a/notes' and 'b/notes'."""
    first, second = write(tmp_path / "docs" / "a" / "notes.md", "Bees."), write(tmp_path / "docs" / "b" / "notes.md", "Wasps.")
    advice = (f", or chunk the folder holding both, {tmp_path / 'docs'}, whose documents are named by their paths in it "
              "('a/notes', 'b/notes')")
    for inputs in ((first, second), (first.parent, second.parent)):
        line = assert_one_error(run("corpus", "chunk", *inputs, "-o", tmp_path / "c.jsonl"), "rename one of the documents")
        assert line.endswith(advice), line

