"""`semrel corpus chunk`: ids, offsets, overlap, sentence boundaries, token counts, stable output."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import assert_one_error, run, write
from semrel.encoding.models import load_encoder
from semrel.errors import UsageError
from semrel.golden.chunking import ChunkSettings, Document, chunk_document

TEXT = (
    "Bees forage within three kilometres of the hive. A strong colony holds forty thousand workers!\n\n"
    "Drones do not sting. Queens mate in flight, early in life, and then lay for years."
)


def test_word_windows_have_ids_offsets_and_overlap():
    doc = Document("bees notes", TEXT)
    chunks = chunk_document(doc, ChunkSettings(size=10, overlap=3))
    assert [c.id for c in chunks] == ["bees notes#0", "bees notes#1", "bees notes#2", "bees notes#3"]
    words = TEXT.split()
    assert len(words) == 31
    assert [c.text.split() for c in chunks] == [words[:10], words[7:17], words[14:24], words[21:]]
    for c in chunks:
        assert TEXT[c.start : c.end] == c.text and c.doc_id == "bees notes"


def test_sentence_boundaries_keep_sentences_whole():
    chunks = chunk_document(Document("d", TEXT), ChunkSettings(size=12, overlap=0, sentences=True))
    assert [c.text for c in chunks] == [
        "Bees forage within three kilometres of the hive.",
        "A strong colony holds forty thousand workers!\n\nDrones do not sting.",
        "Queens mate in flight, early in life, and then lay for years.",
    ]


def test_a_blank_line_ends_a_sentence_whatever_the_line_breaks():
    """The blank-line rule knew only \\n: in a file saved on Windows (\\r\\n) or with lone \\r, a heading ran on into
    the next sentence."""
    for newline in ("\n", "\r\n", "\r"):
        text = f"Chain care{newline}{newline}Clean the chain every week with a rag{newline}and a degreaser."
        chunks = chunk_document(Document("d", text), ChunkSettings(size=12, sentences=True))
        assert [c.text for c in chunks] == ["Chain care", f"Clean the chain every week with a rag{newline}and a degreaser."], newline


def test_a_sentence_longer_than_the_size_is_cut_between_words():
    chunks = chunk_document(Document("d", "one two three four five six seven. eight nine."), ChunkSettings(size=3, sentences=True))
    # the tail of the long sentence and the next (whole) sentence fit in one window
    assert [c.text for c in chunks] == ["one two three", "four five six", "seven. eight nine."]


def test_no_size_keeps_the_document_whole_without_outer_blanks():
    chunks = chunk_document(Document("d", "\n  Hello there.  \n"), ChunkSettings())
    assert [(c.text, c.start, c.end) for c in chunks] == [("Hello there.", 3, 15)]
    assert chunk_document(Document("e", " \n "), ChunkSettings()) == []


def test_token_windows_count_the_model_tokenizer():
    tokenizer = load_encoder(None)[0]
    text = "Hyperparameterisation complicates reproducibility. Cats sleep."
    chunks = chunk_document(Document("t", text), ChunkSettings(size=6, unit="tokens"), tokenizer)
    for c in chunks:
        assert len(tokenizer(c.text, add_special_tokens=False)["input_ids"]) <= 6 or len(c.text.split()) == 1
    assert "".join(c.text + " " for c in chunks).split() == text.split()
    assert len(chunks) > len(chunk_document(Document("t", text), ChunkSettings(size=6)))


@pytest.mark.parametrize("size, overlap", [(0, 0), (5, 5), (5, -1)])
def test_impossible_settings_are_refused(size, overlap):
    with pytest.raises(UsageError):
        ChunkSettings(size=size, overlap=overlap)


@pytest.mark.parametrize("given", [{"overlap": 5}, {"sentences": True}, {"unit": "tokens"}, {"whole": True, "overlap": 1}])
def test_options_that_do_nothing_without_a_size_are_refused(given):
    """They were accepted, ignored, and recorded in the manifest as if the chunks had been cut with them."""
    with pytest.raises(UsageError, match=f"^{next(iter(given.keys() - {'whole'}))}= only applies to chunks of size="):
        ChunkSettings(**given)


def test_cli_refuses_overlap_with_whole(tmp_path):
    docs = write(tmp_path / "a.txt", "Bees forage far.\n")
    assert_one_error(run("corpus", "chunk", docs, "--whole", "--overlap", "2", "-o", tmp_path / "c.jsonl"),
                     "--overlap only applies to chunks of --size", "--whole keeps each document as one chunk", code=2)
    assert not (tmp_path / "c.jsonl").exists()


def test_a_tokenizer_without_unit_tokens_is_refused(tmp_path, monkeypatch):
    """--model without --unit tokens was ignored in silence (and recorded in the manifest); from the environment it is a
    default for whenever tokens are counted, and does not stop chunks of words."""
    with pytest.raises(UsageError, match="^model= is the tokenizer that counts unit='tokens': give unit='tokens' too, or leave "
                                         "model= out$"):
        ChunkSettings(size=10, model="bert-base-uncased")
    docs = write(tmp_path / "a.txt", "Bees forage far.\n")
    result = run("corpus", "chunk", docs, "--model", "bert-base-uncased", "-o", tmp_path / "c.jsonl")
    assert result.exit_code == 2 and result.stderr == ("semrel: error: --model is the tokenizer that counts --unit tokens: give "
                                                       "--unit tokens too, or leave --model out\n")
    assert not (tmp_path / "c.jsonl").exists()
    monkeypatch.setenv("SEMREL_CORPUS_CHUNK_MODEL", "bert-base-uncased")
    assert run("corpus", "chunk", docs, "-o", tmp_path / "c.jsonl").exit_code == 0


def test_cli_reads_folders_jsonl_and_beir_and_writes_identical_bytes(tmp_path):
    write(tmp_path / "docs" / "a.md", "# Hives\n\nBees forage far. They return at dusk.\n")
    write(tmp_path / "docs" / "sub" / "b c.txt", "Wax is made by young workers.\n")
    jsonl = write(tmp_path / "more.jsonl", '{"id": "j 1", "title": "T", "text": "Honey keeps for years."}\n')
    write(tmp_path / "beir" / "corpus.jsonl", '{"_id": "x9", "title": "", "text": "Propolis seals gaps."}\n')
    outputs = []
    for n in (1, 2):
        out = tmp_path / f"corpus{n}.jsonl"
        result = run("corpus", "chunk", tmp_path / "docs", jsonl, tmp_path / "beir", "-o", out, "--size", "4")
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    rows = [json.loads(line) for line in outputs[0].decode().splitlines()]
    assert [r["_id"] for r in rows] == ["a#0", "a#1", "a#2", "sub/b_c#0", "sub/b_c#1", "j_1#0", "x9#0"]
    assert rows[0] == {"_id": "a#0", "title": "Hives", "text": "# Hives\n\nBees forage", "doc_id": "a", "start": 0, "end": 20,
                       "meta": {"headings": ["Hives"]}}
    assert "meta" not in rows[3]  # plain text: nothing to say
    manifest = json.loads((tmp_path / "corpus1.jsonl.manifest.json").read_text())
    assert manifest["rows"] == 7 and manifest["params"]["size"] == 4 and len(manifest["inputs"]) == 3


def test_a_parquet_corpus_chunks_as_the_same_jsonl_does(tmp_path):
    """A corpus as Hugging Face's hub serves one (BEIR's: `_id`, `title`, `text` columns) gives the chunks its JSON Lines
    would; in a folder it is skipped with a reason, as JSON Lines is; a table without a text column is one line."""
    rows = [{"_id": "d 1", "title": "Hives", "text": "Bees forage far. They return at dusk."}, {"_id": 7, "title": None, "text": "Wax."}]
    pq.write_table(pa.Table.from_pylist([{**row, "_id": str(row["_id"])} for row in rows]), tmp_path / "corpus.parquet")
    jsonl = write(tmp_path / "corpus.jsonl", "".join(json.dumps({**row, "_id": str(row["_id"])}) + "\n" for row in rows))
    for source in (jsonl, tmp_path / "corpus.parquet"):
        result = run("corpus", "chunk", source, "-o", tmp_path / f"{source.name}.out", "--size", "4")
        assert result.exit_code == 0, result.output
    assert (tmp_path / "corpus.parquet.out").read_bytes() == (tmp_path / "corpus.jsonl.out").read_bytes()
    assert "2 documents: 2 Parquet (1 file)" in result.stderr
    write(tmp_path / "docs" / "a.md", "# Hives\n\nBees forage far.\n")
    (tmp_path / "corpus.parquet").rename(tmp_path / "docs" / "corpus.parquet")
    result = run("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    assert result.exit_code == 0 and "skipped 1 (Parquet in a folder: give the file itself): corpus.parquet" in result.stderr
    pq.write_table(pa.table({"id": [1], "passage": ["Bees."]}), tmp_path / "passages.parquet")
    assert_one_error(run("corpus", "chunk", tmp_path / "passages.parquet", "-o", tmp_path / "p.jsonl"),
                     "passages.parquet:1: missing field 'text'")


def test_the_manifest_records_an_input_folder_by_its_files_bytes(tmp_path):
    """A folder was recorded by its path alone: nothing said which documents a corpus was cut from. Hidden files (the
    staged output, when it is written inside the folder) do not count."""
    docs = tmp_path / "docs"
    write(docs / "a.txt", "Bees forage far.\n")
    write(docs / "sub" / "b.md", "Wax is made by young workers.\n")

    def recorded(output: Path) -> dict:
        assert run("corpus", "chunk", docs, "-o", output).exit_code == 0
        [folder] = json.loads(Path(f"{output}.manifest.json").read_text())["inputs"]
        return folder

    first = recorded(tmp_path / "c1.jsonl")
    assert first["path"] == str(docs) and first["files"] == 2 and len(first["sha256"]) == 64
    assert recorded(docs / ".hidden.jsonl") == first == recorded(tmp_path / "c2.jsonl")
    write(docs / "a.txt", "Bees forage farther.\n")
    assert recorded(tmp_path / "c3.jsonl")["sha256"] != first["sha256"]


def test_cli_errors_are_one_line(tmp_path):
    bad = write(tmp_path / "bad.jsonl", '{"id": "a", "text": "fine"}\n{"id": "b", "text": \n')
    assert_one_error(run("corpus", "chunk", bad, "-o", tmp_path / "c.jsonl"), "bad.jsonl:2", "invalid JSON")
    missing = write(tmp_path / "nt.jsonl", '{"id": "a"}\n')
    assert_one_error(run("corpus", "chunk", missing, "-o", tmp_path / "c.jsonl"), "nt.jsonl:1", "'text'")
    pdf = write(tmp_path / "x.pdf", "%PDF")
    assert_one_error(run("corpus", "chunk", pdf, "-o", tmp_path / "c.jsonl"), "x.pdf", "not a readable PDF")
    odd = write(tmp_path / "x.odt", "zip")
    assert_one_error(run("corpus", "chunk", odd, "-o", tmp_path / "c.jsonl"), "x.odt", "unknown kind of input", ".pdf, .html")
    twice = write(tmp_path / "twice.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    assert_one_error(run("corpus", "chunk", twice, "-o", tmp_path / "c.jsonl"), "'a'", "twice")
    assert_one_error(run("corpus", "chunk", twice, "-o", tmp_path / "c.jsonl", "--size", "3", "--overlap", "3"),
                     "--overlap", code=2)
    assert not (tmp_path / "c.jsonl").exists()


def test_a_line_without_text_names_the_fields_it_has(tmp_path):
    """LangChain's documents saved as JSON Lines hold page_content: "missing field 'text'" alone left the user to guess
    why a line that plainly holds text was refused."""
    lines = write(tmp_path / "lc.jsonl", '{"id": "a", "page_content": "Oil the chain.", "metadata": {"source": "a.md"}}\n')
    assert_one_error(run("corpus", "chunk", lines, "-o", tmp_path / "c.jsonl"),
                     "lc.jsonl:1: missing field 'text' (the line has: id, page_content, metadata)")
