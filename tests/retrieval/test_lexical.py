"""The on-disk BM25 index: same top-k and scores as bm25s in memory, built once, grown by new chunks only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import semrel.retrieval.lexical as lexical
from helpers import run
from semrel.errors import FormatError, SemrelError
from semrel.formats.corpus import read_corpus
from semrel.formats.trec import read_run
from semrel.retrieval.corpus import Corpus
from semrel.retrieval.lexical import LexicalStore
from semrel.retrieval.retrieve import BM25_PARAMS, Bm25Index, StoredBm25

WORDS = ("virus protein cell infection patient study trial dose vaccine lung fever cough antibody receptor spike "
         "mutation variant hospital treatment symptom children adults mortality outbreak transmission the of and to in "
         "running runs ran runner studies studied infections infected").split()


def generated(n: int, seed: int = 0, start: int = 0) -> list[dict]:
    """`n` chunks of Zipf-drawn words (repeats, stopwords, stemmable forms), some titled, one empty."""
    rng = np.random.default_rng(seed)
    weights = 1 / np.arange(1, len(WORDS) + 1)
    weights /= weights.sum()
    rows = []
    for i in range(start, start + n):
        words = rng.choice(WORDS, size=int(rng.integers(0, 40)), p=weights)
        rows.append({"_id": f"c{i}", "title": "Study " + WORDS[i % len(WORDS)] if i % 7 == 0 else "", "text": " ".join(words)})
    return rows


def write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


QUERIES = ["virus spike protein", "running studies of infected children", "the of and", "vaccine vaccine dose",
           "nothing matches zebra", "Mutation VARIANT transmission outbreak hospital"]


@pytest.fixture
def small_segments(monkeypatch):
    """Segments of a few hundred postings, so a small corpus spans several of them."""
    monkeypatch.setattr(lexical, "SEGMENT_POSTINGS", 500)
    monkeypatch.setattr(lexical, "BLOCK", 64)


def bm25s_tokenize(texts, return_ids=True):
    """bm25s' own tokenizer with BM25_PARAMS' stopwords and stemmer: the reference for text without CJK."""
    import bm25s
    import Stemmer

    return bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=return_ids, show_progress=False)


def same_hits(a, b) -> bool:
    return all(np.array_equal(pa, pb) and np.array_equal(sa, sb) for (pa, sa), (pb, sb) in zip(a, b)) and len(a) == len(b)


def test_disk_index_gives_bm25s_scores_and_top_k(tmp_path, small_segments):
    corpus = write(tmp_path / "corpus.jsonl", generated(600))
    memory = Bm25Index(Corpus.read(corpus))
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus)
    assert len(index.segments) > 3 and index.built == 600 and index.reused == 0
    for query, tokens in zip(QUERIES, bm25s_tokenize(QUERIES, return_ids=False)):
        ids = memory._index.get_tokens_ids(tokens)
        expected = memory._index.get_scores_from_ids(ids) if ids else np.zeros(600, dtype=np.float32)
        assert np.array_equal(index.scores(query), expected), query  # bit for bit, float32
    for k in (1, 10, 1000):
        assert same_hits(StoredBm25(index).search(QUERIES, k), memory.search(QUERIES, k))


def test_scoring_settings_reuse_the_index_and_tokenizer_settings_do_not(tmp_path, small_segments):
    import bm25s

    corpus = write(tmp_path / "corpus.jsonl", generated(300))
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    store.index(corpus)
    for method in ("robertson", "atire"):
        params = {**BM25_PARAMS, "k1": 0.9, "b": 0.4, "method": method}
        other = LexicalStore(tmp_path / "cache", params)
        assert other.folder == store.folder  # k1, b and the variant are applied when scoring
        index = other.index(corpus)
        assert index.built == 0
        reference = bm25s.BM25(k1=0.9, b=0.4, method=method)
        chunks = read_corpus(corpus)
        tokenize = bm25s_tokenize
        reference.index(tokenize([(c.title + " " + c.text) if c.title else c.text for c in chunks]), show_progress=False)
        for query, tokens in zip(QUERIES, tokenize(QUERIES, return_ids=False)):
            ids = reference.get_tokens_ids(tokens)
            expected = reference.get_scores_from_ids(ids) if ids else np.zeros(300, dtype=np.float32)
            assert np.array_equal(index.scores(query), expected), (method, query)
    unstemmed = LexicalStore(tmp_path / "cache", {**BM25_PARAMS, "stemmer": "none"})
    assert unstemmed.folder != store.folder and unstemmed.index(corpus).built == 300
    assert unstemmed.index(corpus).scores("studies").max() > 0 and unstemmed.index(corpus).scores("study").max() > 0


def test_second_retrieve_builds_nothing_and_equals_the_in_memory_run(tmp_path, small_segments):
    corpus = write(tmp_path / "corpus.jsonl", generated(400))
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"query_id": f"q{i}", "query": q, "reference_answer": "x"}) + "\n" for i, q in enumerate(QUERIES)))
    cache = tmp_path / "cache"
    outputs = []
    for name, extra in (("first", ["--cache", cache]), ("second", ["--cache", cache]), ("memory", ["--no-cache"])):
        out = tmp_path / f"{name}.run"
        result = run("retrieve", "--corpus", corpus, "--golden", golden, "-k", "25", *extra, "-o", out)
        assert result.exit_code == 0, result.output
        outputs.append(out)
        manifest = json.loads((tmp_path / f"{name}.run.manifest.json").read_text())["params"]
        if name == "first":
            assert "bm25 index: 400 chunks indexed, 0 reused" in result.stderr and manifest["bm25_index"]["built"] == 400
        elif name == "second":
            assert "bm25 index: 0 chunks indexed, 400 reused" in result.stderr and manifest["bm25_index"]["built"] == 0
            assert "bm25 index: chunks" not in result.stderr  # no indexing progress: nothing was built
        else:
            assert "bm25_index" not in manifest
    texts = [o.read_text().replace(o.stem, "RUN") for o in outputs]
    assert texts[0] == texts[1] == texts[2]
    assert "q4" not in read_run(outputs[0]).to_dict()  # no query word in the corpus: no chunks, as in memory


def test_grown_corpus_indexes_only_its_new_chunks(tmp_path, small_segments):
    old_rows, new_rows = generated(300), generated(150, seed=1, start=300)
    old = write(tmp_path / "old.jsonl", old_rows)
    grown = write(tmp_path / "grown.jsonl", old_rows + new_rows)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    first = store.index(old)
    folder, segments = first.folder, len(first.segments)
    index = store.index(grown)
    assert (index.built, index.reused, index.folder) == (150, 300, folder) and len(index.segments) > segments
    assert same_hits(StoredBm25(index).search(QUERIES, 50), Bm25Index(Corpus.read(grown)).search(QUERIES, 50))
    assert index.chunk_ids(np.array([0, 299, 300, 449])) == ["c0", "c299", "c300", "c449"]
    again = store.index(old)  # the corpus it grew from: the first segments, nothing built
    assert (again.built, again.size, len(again.segments)) == (0, 300, segments)
    assert same_hits(StoredBm25(again).search(QUERIES, 50), Bm25Index(Corpus.read(old)).search(QUERIES, 50))

    # a chunk left out: shared up to the old chain's last boundary before it, then another corpus. A chain of its own
    # starts from that boundary's segments (linked, not copied) and indexes the rest alone; it rebuilt all 449 before.
    before = {f.name: f.read_bytes() for f in sorted(Path(folder).iterdir())}
    shared = max(end for end in first.chain.boundaries if end < 299)
    forked = write(tmp_path / "forked.jsonl", old_rows[:-1] + new_rows)
    index = store.index(forked)
    assert (index.built, index.reused) == (449 - shared, shared) and index.folder != folder and shared > 0
    assert same_hits(StoredBm25(index).search(QUERIES, 50), Bm25Index(Corpus.read(forked)).search(QUERIES, 50))
    assert index.chunk_ids(np.array([0, shared - 1, shared, 298, 299, 448])) == ["c0", f"c{shared - 1}", f"c{shared}", "c298",
                                                                                 "c300", "c449"]
    assert all((Path(folder) / f"{s['name']}.docs").samefile(Path(index.folder) / f"{s['name']}.docs")
               for s in index.segments if s["first"] + s["count"] <= shared)
    assert {f.name: f.read_bytes() for f in sorted(Path(folder).iterdir())} == before  # the chain it came from, as it was
    assert store.index(grown).built == 0 and store.index(forked).built == 0  # each corpus finds its own chain again


def test_a_killed_build_is_cut_back_to_its_last_commit(tmp_path, small_segments):
    rows = generated(200)
    corpus = write(tmp_path / "corpus.jsonl", rows[:120])
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.index(corpus).folder
    for name in ("lengths.u32", "ids.bin", "ids.end", "idkeys.u64", "terms.txt"):  # what a killed append leaves
        with open(folder / name, "ab") as handle:
            handle.write(b"\x07" * 24)
    grown = write(tmp_path / "grown.jsonl", rows)
    index = store.index(grown)
    assert (index.built, index.reused) == (80, 120)
    assert same_hits(StoredBm25(index).search(QUERIES, 30), Bm25Index(Corpus.read(grown)).search(QUERIES, 30))


@pytest.mark.parametrize("damaged", ["seg-00000.docs", "seg-00000.tf", "ids.bin"])
def test_an_index_file_cut_short_is_one_line_naming_it(tmp_path, small_segments, damaged):
    """A segment's postings or the chunk ids cut short (a copied cache, a failing disk) ended in numpy's traceback
    (`buffer size must be a multiple of element size`) or an empty chunk id blamed on the corpus."""
    corpus = write(tmp_path / "corpus.jsonl", generated(200))
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"query_id": f"q{i}", "query": q, "reference_answer": "x"}) + "\n" for i, q in enumerate(QUERIES)))
    cache = tmp_path / "cache"
    assert run("retrieve", "--corpus", corpus, "--golden", golden, "--cache", cache, "-o", tmp_path / "a.run").exit_code == 0
    (path,) = cache.glob(f"bm25/*/*/{damaged}")
    path.write_bytes(path.read_bytes()[:5])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--cache", cache, "-o", tmp_path / "b.run")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("semrel: error: ")]  # after the progress lines
    assert len(errors) == 1 and f"{damaged}: shorter than" in errors[0] and "to rebuild it" in errors[0], result.stderr
    assert not (tmp_path / "b.run").exists()


def test_repeated_chunk_id_is_an_error_naming_both_lines(tmp_path, small_segments):
    rows = generated(200)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    store.index(write(tmp_path / "old.jsonl", rows[:150]))
    rows[180]["_id"] = "c7"  # repeats a chunk of the part already indexed
    with pytest.raises(FormatError, match=r"grown.jsonl:181: chunk id 'c7' already used on line 8"):
        store.index(write(tmp_path / "grown.jsonl", rows))


def test_an_edited_file_is_hashed_again(tmp_path, small_segments):
    rows = generated(100)
    corpus = tmp_path / "corpus.jsonl"
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    assert store.index(write(corpus, rows)).built == 100
    assert store.index(str(corpus)).built == 0
    rows[50]["text"] = "vaccine " * 30
    write(corpus, rows)
    index = store.index(str(corpus))
    assert index.built == 100 and StoredBm25(index).search(["vaccine"], 1)[0][0].tolist() == [50]


def test_a_file_replaced_in_place_with_its_size_and_mtime_kept_is_hashed_again(tmp_path, small_segments, monkeypatch):
    """`cp -p` over the corpus (same inode, size and mtime) served the old index: only the ctime tells. The stamp of a
    file seconds old is not kept (RACY_NS), so the test keeps every stamp: otherwise it passed with the ctime left out."""
    import os

    import semrel.formats.files as files

    monkeypatch.setattr(files, "RACY_NS", 0)
    rows = generated(100)
    rows[10]["text"], rows[20]["text"] = "horse riding!", "zebra stripes"
    corpus = tmp_path / "corpus.jsonl"
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    assert store.index(write(corpus, rows)).built == 100
    was = os.stat(corpus)
    rows[10]["text"], rows[20]["text"] = rows[20]["text"], rows[10]["text"]
    write(corpus, rows)  # rewritten in place, then its mtime set back
    os.utime(corpus, ns=(was.st_atime_ns, was.st_mtime_ns))
    while os.stat(corpus).st_ctime_ns == was.st_ctime_ns:  # a clock coarser than the test: touch until the ctime moves
        os.utime(corpus, ns=(was.st_atime_ns, was.st_mtime_ns))
    now = os.stat(corpus)
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (was.st_size, was.st_mtime_ns, was.st_ino)
    index = store.index(str(corpus))
    assert index.built == 100 and StoredBm25(index).search(["zebra"], 1)[0][0].tolist() == [10]


@pytest.mark.parametrize("left", [b"stale\n", b"zebr"])
def test_terms_a_killed_append_left_are_cut_before_new_terms_follow(tmp_path, small_segments, left):
    """terms.txt gives a term its id by line number: a line a killed build appended past the commit, left in place,
    would shift every new term by one, and a query for a word only the grown corpus has would find nothing. A part
    of a line (killed mid-write) was kept too: the next term was glued to it ('zebrzebra')."""
    rows = generated(120)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.index(write(tmp_path / "old.jsonl", rows)).folder
    with open(folder / "terms.txt", "ab") as handle:
        handle.write(left)
    grown = write(tmp_path / "grown.jsonl", rows + [{"_id": "zebra", "text": "zebra stripes"}, {"_id": "okapi", "text": "okapi"}])
    index = store.index(grown)
    assert (index.built, index.reused) == (2, 120)
    for found in (index, store.index(grown)):  # as built, and as read back from disk
        assert [StoredBm25(found).search([word], 1)[0][0].tolist() for word in ("zebra", "okapi")] == [[120], [121]]


def test_blank_lines_in_the_corpus_are_no_chunks_and_keep_the_index_reused(tmp_path, small_segments):
    """The corpus reader skips blank lines; the digests a chain is matched by must skip them as the builder does,
    or a corpus with one would fail as changed while indexed, or never match its own chain."""
    rows = generated(150)
    lines = [json.dumps(r) for r in rows]
    text = "\n".join(lines[:70]) + "\n\n   \n" + "\n".join(lines[70:]) + "\n\n"
    (tmp_path / "a.jsonl").write_text(text)
    (tmp_path / "b.jsonl").write_text(text.replace("\n\n   \n", "\n"))
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    assert store.index(str(tmp_path / "a.jsonl")).built == 150
    index = store.index(str(tmp_path / "b.jsonl"))  # the same chunks without the blank lines
    assert (index.built, index.reused) == (0, 150)
    assert same_hits(StoredBm25(index).search(QUERIES, 20), Bm25Index(Corpus.read(str(tmp_path / "a.jsonl"))).search(QUERIES, 20))


def test_a_corpus_that_grows_while_it_is_indexed_is_an_error_not_an_index_of_either(tmp_path, small_segments, monkeypatch):
    """The chunks are counted (and hashed) before they are indexed: a file that gained a line in between is said to
    have changed, not indexed as far as the count it had."""
    corpus = write(tmp_path / "corpus.jsonl", generated(100))
    digests = lexical.line_digests

    def then_grown(path, at):
        found = digests(path, at)
        with open(path, "a") as handle:
            handle.write(json.dumps({"_id": "late", "text": "added while indexing"}) + "\n")
        return found

    monkeypatch.setattr(lexical, "line_digests", then_grown)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    with pytest.raises(SemrelError, match="corpus.jsonl: changed while it was being indexed; run again"):
        store.index(corpus)
    monkeypatch.setattr(lexical, "line_digests", digests)
    index = store.index(corpus)  # its committed segments are reused: their digests are of the lines they hold
    assert index.size == index.built + index.reused == 101
    assert same_hits(StoredBm25(index).search(QUERIES, 20), Bm25Index(Corpus.read(corpus)).search(QUERIES, 20))


def test_files_a_build_killed_before_its_first_commit_left_are_cleared(tmp_path, small_segments):
    """A chain folder without index.json holds only what a killed first build appended: built anew there, those
    bytes would sit before the new chunks' lengths and ids."""
    corpus = write(tmp_path / "corpus.jsonl", generated(100))
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.folder / f"chain-{lexical.line_digests(corpus, set())[1][:16]}"
    folder.mkdir()
    for name in ("lengths.u32", "ids.bin", "ids.end", "idkeys.u64", "terms.txt", "seg-00000.docs"):
        (folder / name).write_bytes(b"\x07" * 24)
    index = store.index(corpus)
    assert index.folder == folder and index.chunk_ids(np.array([0, 99])) == ["c0", "c99"]
    assert same_hits(StoredBm25(index).search(QUERIES, 20), Bm25Index(Corpus.read(corpus)).search(QUERIES, 20))


def test_a_copy_of_an_indexed_corpus_is_hashed_once(tmp_path, small_segments, monkeypatch):
    """A corpus that matches a chain whole is remembered by its stamp too, not hashed on every retrieve (seconds for
    a million chunks) because it was never built from."""
    import shutil

    import semrel.formats.files as files

    monkeypatch.setattr(files, "RACY_NS", 0)  # the corpus is seconds old: take its stamp all the same
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    store.index(write(tmp_path / "corpus.jsonl", generated(100)))
    copy = shutil.copy(tmp_path / "corpus.jsonl", tmp_path / "copy.jsonl")
    assert store.index(copy).built == 0

    def hashed(*args):
        raise AssertionError("hashed again")

    monkeypatch.setattr(lexical, "line_digests", hashed)
    assert store.index(copy).size == 100


def test_a_fork_killed_before_its_commit_is_started_again(tmp_path, small_segments, monkeypatch):
    """A new chain taken from another's first segments is committed by its index.json, written last: a run killed
    while it copied left a folder that the next run clears and fills again, and its index equals bm25s'."""
    rows = generated(300)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    first = store.index(write(tmp_path / "old.jsonl", rows))
    edited = write(tmp_path / "edited.jsonl", rows[:-1] + [{"_id": "c299", "text": "an edited last chunk about zebra"}])
    copy = lexical._copy_prefix

    def killed(source, target, size):
        if source.name == "ids.bin":
            raise KeyboardInterrupt
        copy(source, target, size)

    monkeypatch.setattr(lexical, "_copy_prefix", killed)
    with pytest.raises(KeyboardInterrupt):
        store.index(edited)
    monkeypatch.setattr(lexical, "_copy_prefix", copy)
    index = store.index(edited)
    assert index.reused == max(end for end in first.chain.boundaries if end < 300)
    assert index.built == 300 - index.reused and index.folder != first.folder
    assert same_hits(StoredBm25(index).search(QUERIES + ["zebra"], 20), Bm25Index(Corpus.read(edited)).search(QUERIES + ["zebra"], 20))
