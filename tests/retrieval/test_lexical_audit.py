"""The on-disk BM25 index (semrel.retrieval.lexical) where test_lexical.py left it unpinned (a mutation audit):

- what decides the stored postings: single letters are no tokens, stopwords "none" and a stopword file
  (lowercased), a stopword in a query even when an indexed word stems to it, the 'snowball-' stemmer prefix,
  and the key (tokenizer.json) that keeps another stopword list out of an index built with this one;
- term counts of 2**16 and more (stored as uint32), bm25s' order of operations in the length normalisation,
  a corpus that ends in chunks with no token, a prefix of a grown chain searched with atire for a word only
  the later chunks hold (df 0);
- damage and crashes: a committed file cut short before the index grows, lengths that disagree with
  index.json, an unreadable index.json, a cache folder that cannot be made, another chain's folder holding
  the name a new chain would take, a killed first build's segment files;
- a repeated chunk id at the first new chunk, the lock held while building, a build remembered by the
  corpus's stamp, an empty corpus, a BM25 variant the
  index cannot score refused before anything is written;
- two bugs the audit found, fixed: a corpus edited in place (same line count) while its grown part was indexed
  left a chain that served the old postings for the edited corpus; a terms.txt cut short was served silently.

Scores are compared with bm25s bit for bit, as the module docstring promises.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import re

import numpy as np
import pytest

import semrel.retrieval.lexical as lexical
from helpers import file_size_limit
from semrel.errors import FormatError, SemrelError, UsageError
from semrel.retrieval.lexical import TOKEN_PATTERN, Bm25Settings, Chain, DiskBm25, LexicalStore, stem_function
from semrel.retrieval.retrieve import BM25_PARAMS

ROWS = [{"_id": f"c{i}", "text": text} for i, text in enumerate([
    "virus protein spike", "vaccine dose trial in children", "the lung and the fever", "virus virus cough",
    "antibody receptor spike protein", "hospital treatment of patients", "running studies studied", "mutation variant outbreak",
])]


@pytest.fixture
def small_segments(monkeypatch):
    """Segments of a few hundred postings, so a small corpus spans several of them."""
    monkeypatch.setattr(lexical, "SEGMENT_POSTINGS", 500)
    monkeypatch.setattr(lexical, "BLOCK", 64)


def corpus_file(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def many(n: int, start: int = 0, extra: str = "") -> list[dict]:
    """`n` chunks of a few words each, every one with a word of its own (so a block holds hundreds of postings)."""
    words = "virus protein cell infection patient study trial dose vaccine lung fever cough".split()
    return [{"_id": f"c{i}", "text": f"{words[i % 12]} {words[(i * 5) % 12]} {words[(i * 7) % 12]} word{i} {extra}"}
            for i in range(start, start + n)]


def bm25s_scores(texts, queries, k1=1.5, b=0.75, method="lucene", stopwords="en", stemmer="english") -> list[np.ndarray]:
    """bm25s' scores of every text for each query, tokenized as bm25s does."""
    import bm25s
    import Stemmer

    tokenize = functools.partial(bm25s.tokenize, stopwords=stopwords, show_progress=False,
                                 stemmer=None if stemmer == "none" else Stemmer.Stemmer(stemmer))
    reference = bm25s.BM25(k1=k1, b=b, method=method)
    reference.index(tokenize(list(texts)), show_progress=False)
    rows = []
    for tokens in tokenize(list(queries), return_ids=False):
        ids = reference.get_tokens_ids(tokens)
        rows.append(reference.get_scores_from_ids(ids) if ids else np.zeros(len(texts), dtype=np.float32))
    return rows


def assert_bm25s_scores(index, texts, queries, **params) -> None:
    for query, expected in zip(queries, bm25s_scores(texts, queries, **params)):
        assert np.array_equal(index.scores(query), expected), query


def test_single_letters_are_no_tokens_as_in_bm25s(tmp_path):
    """bm25s (and scikit-learn) take words of two characters or more: 'vitamin d' and 'x ray' match on their long
    word only; indexing single letters would score chunks bm25s does not."""
    texts = ["vitamin d deficiency", "x ray of the lung", "vitamin c and e", "d x y z", "e coli outbreak"]
    corpus = corpus_file(tmp_path / "corpus.jsonl", [{"_id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus)
    assert_bm25s_scores(index, texts, ["vitamin d", "x ray", "e coli", "d x y"])
    assert not index.scores("d x y z").any()


def test_the_index_key_is_what_decides_the_postings_and_stopwords_none_keeps_every_word(tmp_path):
    """tokenizer.json says what the folder's postings depend on; no stopwords is a folder of its own, and its index
    scores 'the of and' as bm25s does with no stopword list (reusing the English-stopword postings found nothing)."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    english = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    english.index(corpus)
    assert json.loads((english.folder / "tokenizer.json").read_text()) == {
        "format": lexical.FORMAT, "pattern": TOKEN_PATTERN, "cjk": "bigrams, widths folded", "lower": True, "stopwords": "en",
        "stemmer": "english"}
    every = LexicalStore(tmp_path / "cache", {**BM25_PARAMS, "stopwords": "none"})
    assert every.folder != english.folder
    index = every.index(corpus)
    assert index.built == len(ROWS) and index.scores("the of and").max() > 0
    assert_bm25s_scores(index, [r["text"] for r in ROWS], ["the of and", "virus in the lung"], stopwords=[])


def test_a_stopword_file_is_read_lowercased(tmp_path):
    """Tokens are lowercased, so a stopword file's 'Vaccine' must drop 'vaccine' (as Bm25Index does with the same file)."""
    words = tmp_path / "stop.txt"
    words.write_text("# medical words\nVaccine\n\n  DOSE  \n")
    params = {**BM25_PARAMS, "stopwords": {"file": str(words), "sha256": "unused"}}
    index = LexicalStore(tmp_path / "cache", params).index(corpus_file(tmp_path / "corpus.jsonl", ROWS))
    assert not index.scores("vaccine dose").any()
    assert_bm25s_scores(index, [r["text"] for r in ROWS], ["vaccine dose trial", "virus the"], stopwords=["vaccine", "dose"])


def test_a_query_stopword_finds_nothing_even_where_an_indexed_word_stems_to_it(tmp_path):
    """'wills' is no stopword but stems to 'will', which is one: the query 'will' is dropped as bm25s drops it."""
    texts = ["wills and testaments", "the will of the people", "a last will", "wills wills"]
    corpus = corpus_file(tmp_path / "corpus.jsonl", [{"_id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus)
    assert index.scores("wills").max() > 0 and not index.scores("will").any()
    assert_bm25s_scores(index, texts, ["will", "wills", "will testaments"])


def test_a_snowball_prefix_names_the_same_stemmer():
    """stem_function's docstring accepts 'snowball-english' for PyStemmer's 'english'."""
    assert stem_function("snowball-english")("running") == stem_function("english")("running") == "run"
    assert stem_function("none")("running") == "running"


def test_a_term_counted_2_to_the_16_times_in_a_chunk_is_stored_as_uint32(tmp_path):
    """Counts are uint16 until one needs more: 65536 of one word in a chunk wraps to 0 as uint16, and its score with it."""
    texts = ["zebra " * 65536, "zebra stripes " * 3, "okapi zebra", "horse"]
    corpus = corpus_file(tmp_path / "corpus.jsonl", [{"_id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus)
    assert [s["tf"] for s in index.segments] == ["<u4"]
    assert int(np.argmax(index.scores("zebra"))) == 0
    assert_bm25s_scores(index, texts, ["zebra", "zebra okapi", "stripes"])
    most = corpus_file(tmp_path / "most.jsonl", [{"_id": "a", "text": "zebra " * 65535}])
    small = LexicalStore(tmp_path / "cache2", BM25_PARAMS).index(most)
    assert [s["tf"] for s in small.segments] == ["<u2"]  # the most uint16 holds


def test_length_normalisation_rounds_as_bm25s_does(tmp_path):
    """k1 * ((1 - b) + b * l / avg) in that order: l / avg taken first rounds otherwise in float64, and with these
    k1, b and lengths (found by a search) the float32 score of the first chunk changes in its last bit."""
    texts = ["zebra " + "alpha " * 53] + ["beta " * 11] * 6 + ["beta " * 12]  # lengths 54, 11 x 6, 12: average 16.5
    corpus = corpus_file(tmp_path / "corpus.jsonl", [{"_id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    index = LexicalStore(tmp_path / "cache", {**BM25_PARAMS, "k1": 2.01, "b": 0.36}).index(corpus)
    assert index.scores("zebra")[0] == np.float32(0.38494834)
    assert_bm25s_scores(index, texts, ["zebra", "zebra beta alpha"], k1=2.01, b=0.36)


def test_a_corpus_ending_in_chunks_without_a_token_keeps_their_lengths(tmp_path):
    """Chunks of stopwords only (or no text) at the end of a block still have a length (0): the lengths file must
    hold one per chunk, or the index is cut short and the average length wrong."""
    texts = ["virus protein", "vaccine dose", "the of and", ""]
    corpus = corpus_file(tmp_path / "corpus.jsonl", [{"_id": f"c{i}", "text": t} for i, t in enumerate(texts)])
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    index = store.index(corpus)
    assert index.size == 4 and (index.folder / "lengths.u32").stat().st_size == 16
    for found in (index, store.index(corpus)):  # as built, and read back
        assert_bm25s_scores(found, texts, ["virus", "dose protein"])


def test_a_prefix_searched_with_atire_for_a_word_only_later_chunks_hold(tmp_path, small_segments):
    """The corpus a chain grew from is searched on its first segments: a query word of the later ones only has
    df 0 there, which atire's log(n / df) cannot take; it scores nothing, as in bm25s over that corpus."""
    old_rows = many(200)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    store.index(corpus_file(tmp_path / "old.jsonl", old_rows))
    store.index(corpus_file(tmp_path / "grown.jsonl", old_rows + many(100, start=200, extra="zebra")))
    atire = LexicalStore(tmp_path / "cache", {**BM25_PARAMS, "method": "atire"})
    index = atire.index(str(tmp_path / "old.jsonl"))
    assert (index.built, index.size) == (0, 200) and not index.scores("zebra").any()
    assert_bm25s_scores(index, [r["text"] for r in old_rows], ["zebra virus", "zebra", "cough word7"], method="atire")


@pytest.mark.parametrize("name", ["lengths.u32", "ids.end", "idkeys.u64", "ids.bin", "terms.txt"])
def test_a_committed_file_cut_short_is_an_error_before_the_index_grows(tmp_path, small_segments, name):
    """Before a chain grows, what its index.json commits must all be there: appending after a file cut short would
    put the new chunks' lengths, ids or terms at the wrong positions."""
    rows = many(150)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.index(corpus_file(tmp_path / "old.jsonl", rows[:100])).folder
    path = folder / name
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1] if name == "terms.txt" else data[:-4])
    with pytest.raises(SemrelError, match=rf"{name}: shorter than .*index.json says; delete .* to rebuild it"):
        store.index(corpus_file(tmp_path / "grown.jsonl", rows))


def test_lengths_that_disagree_with_index_json_are_an_error(tmp_path):
    """lengths.u32 of the right size but other values (a damaged disk, another chain's file copied in) must not score."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    path = store.index(corpus).folder / "lengths.u32"
    path.write_bytes((np.frombuffer(path.read_bytes(), dtype="<u4") + 1).astype("<u4").tobytes())
    with pytest.raises(SemrelError, match="lengths disagree with index.json; delete the folder to rebuild it"):
        store.index(corpus)


DISAGREES = r"id of chunk 4 in ids.bin and ids.end disagrees with idkeys.u64 .*; delete .* to rebuild it"


@pytest.mark.parametrize("name, damage, message", [
    ("ids.bin", lambda data: data.replace(b"c3", b"c9"), DISAGREES),
    ("ids.end", lambda data: data[:24] + (2**40).to_bytes(8, "little") + data[32:], "ids.bin: shorter than .*; delete .* to rebuild it"),
    ("ids.end", lambda data: data[:24] + (1).to_bytes(8, "little") + data[32:], DISAGREES),
], ids=["another id", "an end past the file", "an end before its start"])
def test_a_damaged_chunk_id_is_an_error_not_another_id_in_the_run(tmp_path, name, damage, message):
    """ids.bin and ids.end are checked against idkeys.u64: a damaged ids.bin put 'c9' in the run for chunk c3, and an
    end past ids.bin stopped the run with 'Invalid argument' (one line naming neither file nor a remedy)."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus)
    assert index.chunk_ids(np.array([3, 0])) == ["c3", "c0"]
    path = index.folder / name
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(SemrelError, match=message):
        index.chunk_ids(np.array([3]))
    assert index.chunk_ids(np.array([0])) == ["c0"]


@pytest.mark.parametrize("damage", [lambda meta: '{"chunks": 8, "segm', lambda meta: "[]",
                                    lambda meta: json.dumps({**meta, "chunks": "8"}),
                                    lambda meta: json.dumps({**meta, "segments": [{**meta["segments"][0], "tf": "zz"}]})],
                         ids=["cut short", "a list", "a count as text", "an unknown tf type"])
def test_an_unreadable_index_json_is_one_error_naming_it(tmp_path, damage):
    """A damaged commit point is a SemrelError saying which folder to delete, not json's traceback; nor a TypeError for
    JSON of another shape."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.index(corpus).folder
    (folder / "index.json").write_text(damage(json.loads((folder / "index.json").read_text())))
    with pytest.raises(SemrelError, match=r"index.json: unreadable BM25 index \(.*\); delete .* to rebuild it"):
        store.index(corpus)


def test_a_cache_folder_that_cannot_be_made_is_one_error(tmp_path):
    """A cache path that is a file is a SemrelError saying what to pass instead, not mkdir's traceback."""
    (tmp_path / "cache").write_text("a file, not a folder")
    with pytest.raises(SemrelError, match=r"cannot create the BM25 index \(.*\); pass cache='DIR' or cache=False"):
        LexicalStore(tmp_path / "cache", BM25_PARAMS)


def test_a_variant_the_index_cannot_score_is_refused_before_anything_is_written(tmp_path):
    """bm25l and bm25+ are bm25s' alone (--no-cache): refused by the store before it makes a folder, and by the index."""
    with pytest.raises(UsageError, match=r"BM25 method 'bm25l': the on-disk index scores lucene, robertson, atire"):
        LexicalStore(tmp_path / "cache", {**BM25_PARAMS, "method": "bm25l"})
    assert not (tmp_path / "cache").exists()
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(corpus_file(tmp_path / "corpus.jsonl", ROWS))
    with pytest.raises(UsageError, match=r"BM25 method 'bm25\+'"):
        DiskBm25(Chain(index.folder), len(ROWS), Bm25Settings(method="bm25+"))


def test_a_new_chain_does_not_take_the_folder_of_another(tmp_path):
    """A new chain is named by its corpus's digest; a folder of that name holding another chain's index (a copied
    cache, a digest prefix shared) is left as it is and the new chain gets a name of its own."""
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    other = corpus_file(tmp_path / "other.jsonl", ROWS[:5])
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS[3:])
    taken = store.folder / f"chain-{lexical.line_digests(corpus, set())[1][:16]}"
    store.index(other).folder.rename(taken)
    index = store.index(corpus)
    assert index.folder == taken.with_name(taken.name + "-1") and index.built == 5
    assert store.index(other).built == 0 and store.last.folder == taken


def test_segment_files_a_killed_first_build_left_are_removed(tmp_path):
    """A first build killed before it committed leaves segments no index.json names: they would sit in the cache
    (hundreds of MB for a large corpus) for as long as the chain does."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.folder / f"chain-{lexical.line_digests(corpus, set())[1][:16]}"
    folder.mkdir()
    for name in ("seg-00007.indptr", "seg-00007.docs", "seg-00007.tf"):
        (folder / name).write_bytes(b"\x07" * 4096)
    index = store.index(corpus)
    assert index.folder == folder and not list(folder.glob("seg-00007.*"))
    assert sorted(p.name for p in folder.glob("seg-*")) == ["seg-00000.docs", "seg-00000.indptr", "seg-00000.tf"]


@pytest.mark.parametrize("old", [0, 100])
def test_a_repeated_id_of_the_first_new_chunk_is_the_corpus_error(tmp_path, small_segments, old):
    """The first chunk a build adds (the corpus's first, or the first past a reused part) repeated later is the
    corpus's repeated-id error naming both lines, as any other chunk's."""
    rows = many(200)
    rows[150]["_id"] = f"c{old}"
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    if old:
        store.index(corpus_file(tmp_path / "old.jsonl", rows[:old]))
    with pytest.raises(FormatError, match=rf"grown.jsonl:151: chunk id 'c{old}' already used on line {old + 1}"):
        store.index(corpus_file(tmp_path / "grown.jsonl", rows))


def test_the_tokenizer_key_lock_is_held_while_an_index_is_built(tmp_path):
    """Two runs building the same index at once would append to the same files: the second must wait for the
    lock. Asked from inside the build (its progress), the lock is not to be had."""
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    seen = []

    @contextlib.contextmanager
    def steps(label, total):
        with open(store.folder / "lock", "a") as handle:  # another open file: flock treats it as another holder
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        seen.append((label, total))
        yield lambda n: None

    store.index(corpus_file(tmp_path / "corpus.jsonl", ROWS), steps)
    assert seen == [("bm25 index: chunks", len(ROWS))]


def test_a_corpus_just_indexed_is_not_hashed_again(tmp_path, monkeypatch):
    """The module docstring: a file seen before (same path, size, mtime, ctime, inode) is not hashed again, also
    right after the build that indexed it."""
    import semrel.formats.files as files

    monkeypatch.setattr(files, "RACY_NS", 0)  # the corpus is seconds old: take its stamp all the same
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS)
    assert store.index(corpus).built == len(ROWS)

    def hashed(*args):
        raise AssertionError("hashed again")

    monkeypatch.setattr(lexical, "line_digests", hashed)
    index = store.index(corpus)
    assert (index.built, index.reused) == (0, len(ROWS))


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_corpus_is_the_corpus_error(tmp_path, text):
    """No chunks is the error read_corpus gives, not an empty index that finds nothing for every query."""
    (tmp_path / "corpus.jsonl").write_text(text)
    with pytest.raises(FormatError, match=r"corpus.jsonl: no chunks \(the file is empty\)"):
        LexicalStore(tmp_path / "cache", BM25_PARAMS).index(str(tmp_path / "corpus.jsonl"))


def test_a_reused_line_edited_while_the_index_grows_is_never_served_stale(tmp_path, monkeypatch):
    """The corpus grows and, after it was hashed and before the builder reads it, a line of the part the chain
    already holds is edited (same line count). Whatever that run does, the edited corpus must afterwards score as
    bm25s scores it: 'zebra' (only in the edited line) must find that chunk."""
    rows = [{"_id": f"c{i}", "text": f"virus protein cell number{i}"} for i in range(40)]
    corpus = tmp_path / "corpus.jsonl"
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    assert store.index(corpus_file(corpus, rows[:30])).built == 30
    edited = [dict(r) for r in rows]
    edited[5]["text"] = "zebra zebra zebra"
    digests = lexical.line_digests

    def then_edited(path, at):
        found = digests(path, at)
        corpus_file(corpus, edited)
        return found

    corpus_file(corpus, rows)
    monkeypatch.setattr(lexical, "line_digests", then_edited)
    with contextlib.suppress(SemrelError):  # "changed while it was being indexed" is a fine answer
        store.index(str(corpus))
    monkeypatch.setattr(lexical, "line_digests", digests)
    index = store.index(str(corpus))
    assert_bm25s_scores(index, [r["text"] for r in edited], ["zebra", "virus number5"])


def test_a_terms_file_cut_short_is_an_error_not_missing_query_words(tmp_path):
    """A terms.txt cut short (a copied cache, a failing disk) dropped the last terms from every query silently: the
    index was reused and 'zebra', the last term, scored nothing."""
    corpus = corpus_file(tmp_path / "corpus.jsonl", ROWS + [{"_id": "z", "text": "zebra"}])
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    path = store.index(corpus).folder / "terms.txt"
    assert store.last.scores("zebra").max() > 0
    path.write_bytes(b"".join(line + b"\n" for line in path.read_bytes().split(b"\n")[:5]))
    with pytest.raises(SemrelError, match=r"terms.txt: shorter than"):
        store.index(corpus)
    path.unlink()  # gone: a bare FileNotFoundError before
    with pytest.raises(SemrelError, match=r"terms.txt: shorter than .* delete .* to rebuild it"):
        store.index(corpus)



def test_a_full_disk_while_the_index_grows_names_the_file_and_keeps_the_committed_index(tmp_path, small_segments):
    """A write to an index file failed with an OSError naming no file, which the CLI reported as 'stdout: No space left
    on device'; the error names the file, and the next run grows the index from its last commit."""
    rows = many(150)
    store = LexicalStore(tmp_path / "cache", BM25_PARAMS)
    folder = store.index(corpus_file(tmp_path / "old.jsonl", rows[:100])).folder
    grown = corpus_file(tmp_path / "grown.jsonl", rows)
    with file_size_limit(256), pytest.raises(SemrelError) as caught:
        store.index(grown)
    assert re.fullmatch(rf"{re.escape(str(folder))}/[\w.-]+: cannot write \(file too large for this system or its limits\); the "
                        "index is kept as last committed; pass cache='DIR' or cache=False", str(caught.value))
    index = store.index(grown)
    assert (index.built, index.size) == (50, 150)
    assert_bm25s_scores(index, [r["text"] for r in rows], ["virus word120", "word7 cough"])
