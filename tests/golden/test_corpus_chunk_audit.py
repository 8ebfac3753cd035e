"""`semrel corpus chunk` audit: document ids made of file names, Cranfield folders, what the manifest records."""

from __future__ import annotations

from helpers import assert_one_error, read_lines, run, write


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
