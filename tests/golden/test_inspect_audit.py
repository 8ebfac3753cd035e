"""What `semrel init` reads of a golden-set source (golden/inspect.py): context lengths, answer counts, the documents
folder beside a testset and the column naming each answer's document, on small files worked out by hand."""

from __future__ import annotations

import json
import statistics

import pytest

from semrel.golden.inspect import SourceSummary, document_column, summarise_source


def summary(words: list[int]) -> SourceSummary:
    return SourceSummary("llamaindex", len(words), 0, False, words)


def test_median_context_is_the_mean_of_the_middle_two_for_an_even_count():
    """statistics.median of 10, 20, 30, 41 is 25 (not the upper middle, 30): init prints it and sizes chunks by it."""
    assert summary([41, 10, 30, 20]).median_context == int(statistics.median([10, 20, 30, 41])) == 25
    assert summary([7]).median_context == 7 and summary([]).median_context is None


@pytest.mark.parametrize("words, expected", [
    ([10, 20, 30, 40, 50], 50),  # 9 in 10 of 5 is 4.5: all 5 must fit
    (list(range(1, 11)), 9),  # 9 of 10
    (list(range(1, 21)), 18),  # 18 of 20
    (list(range(1, 12)), 10),  # 9.9 of 11: 10 of them
    ([3], 3),
])
def test_long_context_is_the_smallest_length_at_least_9_in_10_contexts_stay_within(words, expected):
    """The rank is ceil(0.9 n), not floor: 4 of 5 contexts is not 9 in 10."""
    assert summary(words[::-1]).long_context == expected
    assert sum(w <= expected for w in words) >= 0.9 * len(words)


@pytest.fixture
def testset(tmp_path):
    """A LlamaIndex dataset with two examples, one without a reference answer, and two folders of documents beside it."""
    (tmp_path / "rag" / "data").mkdir(parents=True)
    (tmp_path / "rag" / "data" / "b.txt").write_text("x")
    (tmp_path / "rag" / "source_files").mkdir()
    (tmp_path / "rag" / "source_files" / "a.txt").write_text("Bees forage.")
    examples = [{"query": "Why?", "reference_contexts": ["one two three"], "reference_answer": "So."},
                {"query": "How?", "reference_contexts": ["one two"], "reference_answer": ""}]
    (tmp_path / "rag" / "rag_dataset.json").write_text(json.dumps({"examples": examples}))
    return tmp_path / "rag"


def test_a_testset_counts_only_the_queries_with_an_answer_and_prefers_source_files(testset):
    """An example with an empty answer is no query with a reference answer (init turns the judge off on none); LlamaHub's
    source_files/ is the documents folder before a data/ beside it."""
    found = summarise_source(str(testset / "rag_dataset.json"))
    assert (found.queries, found.with_answers, found.context_words) == (2, 1, [3, 2])
    assert found.docs_folder == str(testset / "source_files")


def test_a_documents_folder_is_found_by_suffixes_in_any_case(tmp_path):
    """NOTES.TXT is a document as notes.txt is."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "NOTES.TXT").write_text("Bees forage.")
    (tmp_path / "rag_dataset.json").write_text(json.dumps({"examples": [
        {"query": "Why?", "reference_contexts": ["one"], "reference_answer": "So."}]}))
    assert summarise_source(str(tmp_path / "rag_dataset.json")).docs_folder == str(tmp_path / "docs")


def test_trec_topics_have_no_reference_answers(tmp_path):
    """Topics hold no answers: init must see none (and turn the BERTScore judge off)."""
    topics = tmp_path / "topics.txt"
    topics.write_text("<top>\n<num> Number: 401\n<title> foreign minorities\n<desc> Description:\nWhat?\n</top>\n")
    found = summarise_source(str(topics), "trec")
    assert (found.format, found.queries, found.with_answers) == ("trec", 1, 0)


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "docs").mkdir()
    for name in ("alpha", "beta", "gamma", "delta", "epsilon"):
        (tmp_path / "docs" / f"{name}.txt").write_text(f"{name} text")
    return tmp_path / "docs"


def test_a_document_column_needs_4_in_5_lines_naming_a_document(tmp_path, docs):
    """A column naming documents on 3 of 5 lines is no gold column; on 4 of 5 it is, with the line it fails on."""
    three = tmp_path / "three.csv"
    three.write_text("question,answer,file\nq1?,a,alpha.txt\nq2?,b,beta.txt\nq3?,c,gamma.txt\nq4?,d,zzz.txt\nq5?,e,yyy.txt\n")
    assert document_column(str(three), "csv", str(docs)) is None
    four = tmp_path / "four.csv"
    four.write_text("question,answer,file\nq1?,a,alpha.txt\nq2?,b,beta.txt\nq3?,c,gamma.txt\nq4?,d,zzz.txt\nq5?,e,epsilon.txt\n")
    assert document_column(str(four), "csv", str(docs)) == ("file", [(5, "zzz.txt")])


def test_of_two_columns_naming_documents_equally_often_the_first_is_taken(tmp_path, docs):
    """A tie goes to the column that comes first in the header, whatever the order of the values."""
    source = tmp_path / "g.csv"
    source.write_text("question,source,file\nq1?,alpha,beta.txt\nq2?,gamma,delta.txt\n")
    assert document_column(str(source), "csv", str(docs)) == ("source", [])
    later = tmp_path / "later.csv"  # the first line names a document in `file` only: counted first, still not taken
    later.write_text("question,source,file\nq1?,zzz,beta.txt\nq2?,gamma,zzz.txt\n" + "q?,alpha,beta.txt\n" * 8)
    assert document_column(str(later), "csv", str(docs)) == ("source", [(2, "zzz")])


def test_files_in_hidden_folders_are_no_documents_a_column_can_name(tmp_path, docs):
    """As `semrel corpus chunk` skips them (.git, .cache): a value naming one would make gold of a file never chunked."""
    (docs / ".git").mkdir()
    (docs / ".git" / "notes.txt").write_text("notes text")
    source = tmp_path / "g.csv"
    source.write_text("question,file\n" + "q?,alpha.txt\n" * 9 + "q?,.git/notes.txt\n")
    assert document_column(str(source), "csv", str(docs)) == ("file", [(11, ".git/notes.txt")])
