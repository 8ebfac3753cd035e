"""`semrel corpus chunk` audit: document ids made of file names, Cranfield folders, what the manifest records."""

from __future__ import annotations

import json

from helpers import SHARED_DATA, assert_one_error, needs_shared, read_lines, run, write


def test_a_file_name_blank_before_its_suffix_makes_no_empty_document_id(tmp_path):
    """' .txt' gave the document id '' and the chunk '#0' (with --whole the chunk id ''), which no qrels line can name."""
    write(tmp_path / "docs" / " .txt", "Bees forage far.\n")
    write(tmp_path / "docs" / "ok.txt", "Wax is made by young workers.\n")
    result = run("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    assert result.exit_code == 0, result.output
    assert [row["_id"] for row in read_lines(tmp_path / "c.jsonl")] == ["ok#0"]
    assert "skipped 1 (file name blank before its suffix: rename the file):  .txt" in result.stderr
    assert_one_error(run("corpus", "chunk", tmp_path / "docs" / " .txt", "-o", tmp_path / "d.jsonl"),
                     " .txt: the file name is blank before its suffix", "rename the file")
    assert not (tmp_path / "d.jsonl").exists()


CRAN = ".I 1\r\n.T\r\nwing flow .\r\n.A\r\nsmith\r\n.W\r\nwing flow .\r\nthe wing was tested .\r\n.I 2\r\n.T\r\nempty body\r\n.W\r\n"


def test_a_cranfield_folder_chunks_its_documents_not_its_readme(tmp_path):
    """A Cranfield folder gave its SOURCE.md as the one document (cran.all.1400 skipped as 'not a kind semrel reads:
    .1400'), and the file itself was 'unknown kind of input': now both give its documents by `.I`, as golden import does."""
    folder = tmp_path / "cranfield"
    write(folder / "cran.all.1400", CRAN)
    write(folder / "SOURCE.md", "# Cranfield\n\nWhere it came from.\n")
    write(folder / "cran.qry", ".I 001\r\n.W\r\nwing ?\r\n")
    for source, out in ((folder, tmp_path / "a.jsonl"), (folder / "cran.all.1400", tmp_path / "b.jsonl")):
        result = run("corpus", "chunk", source, "-o", out, "--size", "3")
        assert result.exit_code == 0, result.output
        assert "read 2 documents: 2 Cranfield (1 file)" in result.stderr
    rows = read_lines(tmp_path / "a.jsonl")
    assert [(r["_id"], r["text"], r["title"]) for r in rows] == [
        ("1#0", "wing flow .", "wing flow ."), ("1#1", "the wing was", "wing flow ."), ("1#2", "tested .", "wing flow ."),
        ("2#0", "empty body", "empty body")]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


@needs_shared("cranfield/cran.all.1400")
def test_the_real_cranfield_chunks_as_golden_import_cuts_it(tmp_path):
    """The corpus cut of the real folder is the one `golden import --format cranfield` writes, so its qrels name it."""
    folder = SHARED_DATA / "cranfield"
    assert run("corpus", "chunk", folder, "-o", tmp_path / "c.jsonl", "--whole").exit_code == 0
    assert run("golden", "import", folder, "--format", "cranfield", "-o", tmp_path / "g.jsonl", "--corpus-out",
               tmp_path / "i.jsonl", "--whole").exit_code == 0
    rows = read_lines(tmp_path / "c.jsonl")
    assert len(rows) == 1398 and rows[0]["_id"] == "1" and rows[0]["title"].startswith("experimental investigation")
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "i.jsonl").read_bytes()


def test_the_manifest_records_the_libraries_that_extract_the_text(tmp_path):
    """The versions recorded left out pypdf, selectolax, python-docx and tokenizers, which make the text each chunk id
    holds (and count --unit tokens): a corpus cut again after an upgrade could differ with nothing to say why."""
    from importlib import metadata

    write(tmp_path / "docs" / "a.md", "# Hives\n\nBees forage far.\n")
    assert run("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl").exit_code == 0
    recorded = json.loads((tmp_path / "c.jsonl.manifest.json").read_text())["versions"]
    for library in ("pypdf", "selectolax", "python-docx", "tokenizers"):
        assert recorded[library] == metadata.version(library)
