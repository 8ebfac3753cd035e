"""`golden validate` and `golden stats` on small sets whose every issue and count is worked out by hand."""

from __future__ import annotations

import json

import pytest

from semrel.errors import FormatError
from semrel.golden.validate import golden_stats, lacks_answer, normalised_query, validate_golden
from semrel.records import Chunk, GoldenItem


def line(qid, query, answer="An answer.", gold=("a#0",), meta=None) -> str:
    return json.dumps({"query_id": qid, "query": query, "reference_answer": answer, "gold_chunk_ids": list(gold),
                       "meta": meta or {}}) + "\n"


def issues(tmp_path, text, chunks=None) -> list[tuple[int, str, str]]:
    path = tmp_path / "golden.jsonl"
    path.write_text(text)
    found = validate_golden(path, chunks).issues
    return [(i.line, i.severity, i.message) for i in found]


def chunks(*places: tuple[str, str, int, int]) -> list[Chunk]:
    return [Chunk(chunk_id, "text", doc, start, end) for chunk_id, doc, start, end in places]


def test_a_third_repeat_points_to_the_first_line_for_ids_and_texts(tmp_path):
    """Every repeat names the line where the id (or text) was first seen, not the repeat before it."""
    assert issues(tmp_path, line("q1", "Where?") + line("q1", "where?") + line("q1", "WHERE?")) == [
        (2, "error", "query id 'q1' already used on line 1"),
        (2, "warning", "query 'q1' has the same text as line 1"),
        (3, "error", "query id 'q1' already used on line 1"),
        (3, "warning", "query 'q1' has the same text as line 1"),
    ]


def test_the_same_text_ignores_case_as_unicode_folds_it_and_spacing():
    """casefold, not lower: 'Straße' and 'STRASSE' are one word in any case, as are the tab and spaces between words."""
    assert normalised_query("Wie lang ist die Straße?") == normalised_query("WIE  LANG\tIST DIE STRASSE?")


def test_a_file_of_blank_lines_is_refused_as_empty(tmp_path):
    """Not 'valid, 0 queries': a golden set of no query is a file written wrong or cut short."""
    path = tmp_path / "golden.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(FormatError, match=r"golden\.jsonl: no queries \(the file is empty\)$"):
        validate_golden(path)


def test_one_blank_answer_beside_a_real_one_is_no_error(tmp_path):
    """Only a query whose answers are all blank lacks a reference answer."""
    assert issues(tmp_path, line("q1", "Where?", answer=["Up there.", " "])) == []
    assert issues(tmp_path, line("q1", "Where?", answer=["", " "])) == [(1, "error", "query 'q1' has an empty reference answer")]


def test_every_gold_chunk_missing_from_the_corpus_is_reported(tmp_path):
    """Each unknown gold chunk of a query is its own error, not only the first."""
    assert issues(tmp_path, line("q1", "Where?", gold=("x#0", "a#0", "y#3")), chunks(("a#0", "a", 0, 4))) == [
        (1, "error", "gold chunk 'x#0' of query 'q1' is not in the corpus"),
        (1, "error", "gold chunk 'y#3' of query 'q1' is not in the corpus"),
    ]


@pytest.mark.parametrize("answer", [
    "This is not detailed in the provided context.",
    "The answer cannot be inferred from the given text.",
    "The answer cannot be determined from the passage.",
    "The excerpt given does not specify a date.",
    "The information provided doesn't say.",
    "It is not explicitly mentioned in the document.",
])
def test_each_phrase_of_an_answer_lacking_its_context_is_recognised(answer):
    """Every wording of the rule is heard: dropping one from the pattern let such answers pass validate in silence."""
    assert lacks_answer(GoldenItem("q", "Why?", (answer,)))


def test_stats_count_distinct_gold_chunks_across_queries_and_documents_by_id():
    """A chunk that is gold for two queries is one distinct gold chunk; two documents with the same number of chunks are
    two documents."""
    items = [GoldenItem("q1", "one two", ("x",), ("a#0", "b#0")), GoldenItem("q2", "three", ("y",), ("a#0",))]
    chunks = [Chunk(f"{d}#{n}", "w " * (n + 1), d, 0, 1) for d in ("a", "b") for n in range(2)]
    stats = golden_stats(items, chunks)
    assert stats["counts"]["gold chunk ids"] == 3 and stats["counts"]["distinct gold chunks"] == 2
    assert stats["counts"]["corpus documents"] == 2 and stats["counts"]["corpus chunks"] == 4
    assert stats["lengths"]["chunks per document"] == {"count": 2, "min": 2.0, "p25": 2.0, "median": 2.0, "mean": 2.0,
                                                       "p75": 2.0, "max": 2.0}
    assert stats["lengths"]["chunk words"]["median"] == 1.5 and stats["lengths"]["chunk words"]["mean"] == 1.5


def test_stats_count_a_gold_chunk_listed_twice_for_one_query_once():
    """validate warns of a gold chunk listed twice and says it counts once everywhere, as the qrels write it once: stats
    counted it twice, in the gold chunk ids and in the gold chunks per query."""
    items = [GoldenItem("q1", "one", ("x",), ("a#0", "a#0", "b#0")), GoldenItem("q2", "two", ("y",), ("a#0",))]
    stats = golden_stats(items)
    assert stats["counts"]["gold chunk ids"] == 3 and stats["counts"]["distinct gold chunks"] == 2
    assert stats["lengths"]["gold chunks per query"] == {"count": 2, "min": 1.0, "p25": 1.25, "median": 1.5, "mean": 1.5,
                                                         "p75": 1.75, "max": 2.0}


def test_a_chunk_graded_above_0_that_the_gold_chunks_lack_is_warned_of(tmp_path):
    """The qrels (and eval) take meta.grades: a chunk dropped from gold_chunk_ids by hand stayed relevant, in silence."""
    text = line("q1", "Where?", gold=("a#0",), meta={"grades": {"a#0": 2, "b#0": 1, "c#0": 0}}) + line("q2", "Who?")
    assert issues(tmp_path, text) == [
        (1, "warning", "query 'q1' has grade 1 for chunk 'b#0' in meta.grades, which its gold_chunk_ids lack: the qrels and "
                       "eval count it relevant; add it to gold_chunk_ids, or give it grade 0"),
    ]


def test_a_gold_chunk_outside_its_answer_spans_is_a_warning_and_one_the_corpus_lacks_an_error(tmp_path):
    """A golden set imported at another chunk size names ids this corpus has too, over other text: the judge refuses it
    (half or more such), and validate, where a user checks a golden set against a corpus, said nothing."""
    spans = {"doc_id": "d", "answer_spans": [[120, 140]]}
    text = line("q1", "Where?", gold=("d#1",), meta=spans) + line("q2", "What?", gold=("d#0", "d#9"), meta=spans)
    assert issues(tmp_path, text, chunks(("d#0", "d", 0, 100), ("d#1", "d", 100, 200), ("e#0", "e", 0, 50))) == [
        (2, "error", "gold chunk 'd#9' of query 'q2' is not in the corpus"),
        (2, "warning", "gold chunk 'd#0' of query 'q2' (characters 0-100 of document 'd') holds none of its answer's spans "
                       "(meta.answer_spans): a chunk of another chunking? `semrel judge` refuses a golden set where half or more are"),
    ]


@pytest.mark.parametrize("gold, meta", [("[true]", "{}"), ('""', "{}"), ("{}", "{}"), ("false", "{}"), ("[]", "[]"), ("[]", '""')])
def test_gold_chunk_ids_and_meta_of_another_type_are_errors_not_read_as_a_chunk_or_as_none(tmp_path, gold, meta):
    """`true` passed the int check and became the chunk 'True' in the qrels; an empty string, object or false read as no
    gold, an empty list or string as no meta, where every other wrong type is refused. null stays 'none'."""
    text = f'{{"query_id": "q1", "query": "Where?", "reference_answer": "Here.", "gold_chunk_ids": {gold}, "meta": {meta}}}\n'
    found = issues(tmp_path, text)
    assert [(n, severity) for n, severity, _ in found] == [(1, "error")]
    assert found[0][2] in ("gold_chunk_ids should be a list of chunk ids", "meta should be an object")
    assert issues(tmp_path, '{"query_id": "q1", "query": "Where?", "reference_answer": "Here.", "gold_chunk_ids": null, '
                  '"meta": null}\n') == [(1, "warning", "query 'q1' has no gold chunks")]
