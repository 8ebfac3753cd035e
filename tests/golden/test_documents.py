"""`semrel corpus chunk` on PDF, HTML, .docx and TREC SGML; folders say what they skip; --whole."""

from __future__ import annotations

import json
from pathlib import Path

from document_helpers import HTML_PAGE, PAGE_ONE, PAGE_TWO, docx_file, pdf_bytes
from helpers import assert_one_error, read_lines, run, write
from semrel.golden.documents import html_text_document, trec_documents

TREC = """<DOC>
<DOCNO> FT911-1 </DOCNO>
<PROFILE>_AN-BEOA7AAIFT</PROFILE>
<DATE>910514</DATE>
<HEADLINE>FT  14 MAY 91 / Chains &amp; gears</HEADLINE>
<TEXT>
Clean the chain every 300 km.

Oil it <B>sparingly</B>.
</TEXT>
</DOC>
<DOC>
<DOCNO>FT911-2</DOCNO>
<TEXT>Brake pads wear faster in rain.</TEXT>
</DOC>
"""


def chunk(tmp_path: Path, *args) -> tuple[list[dict], str]:
    out = tmp_path / "corpus.jsonl"
    result = run("corpus", "chunk", *args, "-o", out)
    assert result.exit_code == 0, result.output
    return read_lines(out), result.stderr


def test_a_two_page_pdf_gives_chunks_with_their_pages(tmp_path):
    pdf = write(tmp_path / "manual.pdf", pdf_bytes([PAGE_ONE, PAGE_TWO], title="Bike manual"))
    rows, stderr = chunk(tmp_path, pdf, "--size", "12")
    assert "read 1 document: 1 PDF" in stderr
    text = "\n".join(PAGE_ONE) + "\n\n" + "\n".join(PAGE_TWO)  # what pypdf extracts: lines, pages a blank line apart
    assert [r["_id"] for r in rows] == [f"manual#{n}" for n in range(len(rows))]
    for r in rows:
        assert text[r["start"]:r["end"]] == r["text"] and r["doc_id"] == "manual" and r["title"] == "Bike manual"
    assert rows[0]["meta"] == {"pages": [1]} and rows[-1]["meta"] == {"pages": [2]}
    straddling = [r for r in rows if r["meta"]["pages"] == [1, 2]]
    assert len(straddling) == 1 and "oil it." in straddling[0]["text"] and "Brake" in straddling[0]["text"]


def test_ligature_glyphs_of_a_typeset_pdf_become_their_letters(tmp_path):
    """pypdf gives a ligature glyph as its presentation form ('\ufb01le', 'e\ufb03cient'), which the judge's tokenizer reads
    as an unknown token and BM25 as another word than 'file': a typeset PDF's every fi, fl and ffi missed both."""
    line = "the \x80le was e\x81cient and \x82at"
    pdf = write(tmp_path / "paper.pdf", pdf_bytes([[line]], differences="128 /fi 129 /ffi 130 /fl"))
    rows, _ = chunk(tmp_path, pdf)
    assert rows[0]["text"] == "the file was efficient and flat"


def test_an_html_page_gives_its_main_text_with_section_headings(tmp_path):
    page = write(tmp_path / "care.html", HTML_PAGE)
    rows, _ = chunk(tmp_path, page, "--size", "14", "--sentences")
    text = " ".join(r["text"] for r in rows)
    for boilerplate in ("Home", "free shipping", "tracking", "color", "Hidden coupon", "Cookie"):
        assert boilerplate not in text
    assert rows[0]["title"] == "Bicycle care"
    by_start = {r["text"].split("\n")[0]: r["meta"]["headings"] for r in rows}
    assert by_start["Chain care"] == ["Chain care"]
    assert by_start["Lubrication"] == ["Chain care", "Lubrication"]
    assert by_start["0.5% | replace the chain"] == ["Chain care", "Wear & replacement"]
    assert "0.5% | replace the chain" in text  # a table row, cells joined
    doc = html_text_document(HTML_PAGE, "care")
    assert [s.meta["headings"][-1] for s in doc.sections] == ["Chain care", "Lubrication", "Wear & replacement", "Cassette"]
    assert doc.sections[-1].meta["headings"] == ("Chain care", "Wear & replacement", "Cassette")
    assert "Clean the chain every 300 km with a degreaser and a rag." in doc.text  # <br> is a space


def test_html_without_main_drops_the_page_header_and_footer():
    doc = html_text_document("<body><header><h1>Site</h1></header><div><h2>Tyres</h2><p>Pump them.</p></div>"
                             "<footer>(c) 2024</footer></body>", "p")
    assert doc.text == "Tyres\n\nPump them."
    assert [s.meta["headings"] for s in doc.sections] == [("Tyres",)]


def test_a_docx_gives_paragraphs_tables_and_headings(tmp_path):
    rows, _ = chunk(tmp_path, docx_file(tmp_path / "notes.docx"), "--whole")
    assert len(rows) == 1 and rows[0]["_id"] == "notes" and rows[0]["title"] == "Workshop notes"
    assert "spoke key | tension" in rows[0]["text"] and rows[0]["meta"] == {"headings": ["Wheels"]}
    rows, _ = chunk(tmp_path, tmp_path / "notes.docx", "--size", "9")
    assert rows[-1]["meta"]["headings"] == ["Tyres"] and ["Wheels", "Spokes"] in [r["meta"]["headings"] for r in rows]


def test_trec_sgml_documents_are_read_by_suffix_or_by_their_first_tag(tmp_path):
    docs = [doc for _, doc in trec_documents(write(tmp_path / "a.trec", TREC))]
    assert [(d.id, d.title) for d in docs] == [("FT911-1", "FT 14 MAY 91 / Chains & gears"), ("FT911-2", "")]
    assert docs[0].text == "Clean the chain every 300 km.\n\nOil it sparingly ."
    write(tmp_path / "coll" / "ft911", TREC)  # no suffix, as TREC files come
    rows, stderr = chunk(tmp_path, tmp_path / "coll", "--whole")
    assert [r["_id"] for r in rows] == ["FT911-1", "FT911-2"] and "2 TREC SGML (1 file)" in stderr
    broken = write(tmp_path / "b.trec", "<DOC><TEXT>no number</TEXT></DOC>\n")
    assert_one_error(run("corpus", "chunk", broken, "-o", tmp_path / "x.jsonl"), "b.trec:1", "<DOCNO>")


def test_a_folder_lists_what_it_skipped_and_why(tmp_path):
    folder = tmp_path / "collection"
    write(folder / "README.md", "# About\n\nHow this collection was made.\n")
    write(folder / "notes.txt", "Wax is made by young workers.\n")
    write(folder / "empty.txt", "  \n")
    write(folder / ".DS_Store", "x")
    write(folder / "broken.pdf", "%PDF-1.4 nothing")
    for n in range(5):
        write(folder / "data" / f"part{n}.xml", "<doc/>")
    rows, stderr = chunk(tmp_path, folder)
    assert [r["doc_id"] for r in rows] == ["README", "notes"]
    lines = stderr.splitlines()
    assert "semrel: read 2 documents: 1 .md, 1 .txt" in lines
    assert "semrel: warning: skipped 5 (not a kind semrel reads: .xml): data/part0.xml, data/part1.xml, data/part2.xml "\
           "and 2 more" in lines
    assert "semrel: warning: skipped 1 (hidden): .DS_Store" in lines
    assert any(line.startswith("semrel: warning: skipped 1 (unreadable PDF): broken.pdf (not a readable PDF") for line in lines)
    # named by its file, as the other skips are (it said 'empty', the document's id)
    assert f"semrel: warning: skipped 1 (no text: nothing to chunk): {folder / 'empty.txt'}" in lines
    manifest = json.loads((tmp_path / "corpus.jsonl.manifest.json").read_text())
    assert manifest["params"]["documents"]["skipped"]["hidden"] == 1
    rows, stderr = chunk(tmp_path, folder, "--exclude", "README*", "--exclude", "data/*")
    assert [r["doc_id"] for r in rows] == ["notes"] and "skipped 6 (--exclude)" in stderr


def test_exclude_names_a_folder_as_gitignore_does(tmp_path):
    """`--exclude drafts` (or `drafts/`) read every file of the folder drafts: the name was matched against the file's
    name and whole path only, so a folder's name matched nothing, and nothing said so."""
    folder = tmp_path / "docs"
    for name in ("keep.md", "drafts/old.md", "sub/drafts/older.md", "sub dir/x.txt", "drafts.txt"):
        write(folder / name, "Some text.\n")
    for pattern in ("drafts", "drafts/"):
        rows, stderr = chunk(tmp_path, folder, "--exclude", pattern)
        assert [r["doc_id"] for r in rows] == ["drafts", "keep", "sub_dir/x"], pattern
    rows, _ = chunk(tmp_path, folder, "--exclude", "sub dir", "--exclude", "sub/*")
    assert [r["doc_id"] for r in rows] == ["drafts/old", "drafts", "keep"]


def test_whole_keeps_document_ids_and_refuses_a_size(tmp_path):
    write(tmp_path / "docs" / "a.txt", "Bees forage far. They return at dusk.\n")
    rows, _ = chunk(tmp_path, tmp_path / "docs", "--whole")
    assert [(r["_id"], r["text"]) for r in rows] == [("a", "Bees forage far. They return at dusk.")]
    assert_one_error(run("corpus", "chunk", tmp_path / "docs", "--whole", "--size", "5", "-o", tmp_path / "c.jsonl"),
                     "--whole", code=2)


def test_html_keeps_preformatted_lines_and_a_heading_with_blocks_inside():
    doc = html_text_document("<main><h2><span>Setup</span><div>notes</div></h2><pre>make install\n  make test</pre>"
                             "<p>Done.</p></main>", "p")
    assert doc.text == "Setup notes\n\nmake install\n  make test\n\nDone."
    assert doc.sections[0].meta["headings"] == ("Setup notes",)
