"""Mutation audit of the converters of public QA sets (golden/converters.py) and of the locating of gold chunks
(golden/locate.py): what a golden set's ids, answers, queries and meta must be, pinned on small real files."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error, read_lines, run, write
from semrel.golden.converters import smart_records
from semrel.golden.locate import ContextMatcher, find_answer, least_shares
from semrel.records import Chunk, GoldenItem


def imported(tmp_path, name: str, data, *options: str) -> tuple[list[dict], list[dict], str]:
    """(golden items, corpus chunks, stderr) of `semrel golden import` on `data` written as `name`."""
    source = write(tmp_path / name, data if isinstance(data, str) else json.dumps(data))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl", *options)
    assert result.exit_code == 0, result.output
    return read_lines(tmp_path / "g.jsonl"), read_lines(tmp_path / "c.jsonl"), result.stderr


# ---------------------------------------------------------------- PubMedQA


def test_pubmedqa_strips_question_and_answer_and_keeps_labels_and_decision(tmp_path):
    data = {"11": {"QUESTION": "  Does it work?\n", "CONTEXTS": ["First part.", "Second part."], "LABELS": ["BACKGROUND", "RESULTS"],
                   "LONG_ANSWER": "  It works.\n", "final_decision": "yes"},
            "12": {"QUESTION": "Is it safe?", "CONTEXTS": ["Only part."], "LABELS": ["METHODS"], "LONG_ANSWER": " \n ",
                   "final_decision": "no"}}
    items, chunks, stderr = imported(tmp_path, "ori_pqal.json", data, "--format", "pubmedqa")
    assert [(i["query_id"], i["query"], i["reference_answer"], i["gold_chunk_ids"], i["meta"]) for i in items] == [
        ("11", "Does it work?", "It works.", ["11#0", "11#1"], {"final_decision": "yes", "labels": ["BACKGROUND", "RESULTS"]}),
        ("12", "Is it safe?", [], ["12#0"], {"final_decision": "no", "labels": ["METHODS"], "no_answer": True})]
    assert "semrel: warning: queries without an answer: 1" in stderr  # a blank LONG_ANSWER is none
    assert "queries whose contexts are all blank" not in stderr


# ---------------------------------------------------------------- MS MARCO


def test_msmarco_answers_are_stripped_deduplicated_across_both_fields_and_no_answer_text_dropped(tmp_path):
    data = [{"query_id": 7, "query": "  what is rba \n", "query_type": "DESCRIPTION",
             "answers": [" Reserve Bank of Australia ", "Reserve Bank of Australia", " No Answer Present. "],
             "wellFormedAnswers": ["Reserve Bank of Australia", "The RBA is Australia's central bank."],
             "passages": [{"is_selected": 1, "passage_text": "The RBA is a bank.", "url": "u0"}]},
            {"query_id": 8, "query": "is it safe", "answers": None, "wellFormedAnswers": None,  # null: no answer, not an error
             "passages": [{"is_selected": 0, "passage_text": "Maybe."}]}]
    items, _, stderr = imported(tmp_path, "train_v1.1.json", data, "--format", "msmarco")
    assert [(i["query_id"], i["query"], i["reference_answer"], i["meta"]) for i in items] == [
        ("7", "what is rba", ["Reserve Bank of Australia", "The RBA is Australia's central bank."], {"query_type": "DESCRIPTION"}),
        ("8", "is it safe", [], {"query_type": None, "no_answer": True})]
    assert "queries without an answer: 1" in stderr and "queries with no passage marked is_selected (no gold): 1" in stderr


def test_msmarco_parallel_lists_keep_each_url_with_its_passage(tmp_path):
    """Hugging Face's layout: passage i's url is url[i], a blank passage in between or a short url list shifting nothing."""
    data = [{"query_id": 34300, "query": "what is cost of sales", "answers": ["Costs."],
             "passages": {"is_selected": [0, 1, 0, 1], "passage_text": ["A.", " ", "C.", "D."], "url": ["u0", "u1", "u2"]}},
            {"query_id": 34301, "query": "q", "answers": ["a"], "passages": {"is_selected": [1], "passage_text": ["E."]}}]
    items, chunks, _ = imported(tmp_path, "hf.json", data, "--format", "msmarco")
    assert [(c["_id"], c["doc_id"], c["text"], c.get("meta")) for c in chunks] == [
        ("34300p0", "34300p0", "A.", {"url": "u0"}), ("34300p2", "34300p2", "C.", {"url": "u2"}),
        ("34300p3", "34300p3", "D.", None), ("34301p0", "34301p0", "E.", None)]  # no url: no meta, not an empty url
    assert [i["gold_chunk_ids"] for i in items] == [["34300p3"], ["34301p0"]]  # the blank selected passage is no gold


def test_msmarco_official_layout_without_a_url_has_no_url_meta(tmp_path):
    data = [{"query_id": 5, "query": "q", "answers": ["a"],
             "passages": [{"is_selected": 1, "passage_text": "P.", "url": ""}, {"is_selected": 0, "passage_text": "Q."}]}]
    _, chunks, _ = imported(tmp_path, "v11.json", data, "--format", "msmarco")
    assert [(c["_id"], c.get("meta")) for c in chunks] == [("5p0", None), ("5p1", None)]


@pytest.mark.parametrize("flag", [1.0, 0.0, "1", None])
def test_msmarco_is_selected_that_is_not_a_whole_0_or_1_is_refused(tmp_path, flag):
    data = [{"query_id": 5, "query": "q", "answers": ["a"], "passages": [{"is_selected": flag, "passage_text": "P."}]}]
    source = write(tmp_path / "m.json", json.dumps(data))
    refused = run("golden", "import", source, "--format", "msmarco", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert_one_error(refused, f"m.json: record 0.passages[0].is_selected should be 0 or 1, found {flag!r}")


# ---------------------------------------------------------------- Cranfield


def test_cranfield_grades_every_chunk_of_a_judged_document(tmp_path):
    """With --size a document is several chunks: each holds its document's grade, and each is gold when the grade is."""
    folder = tmp_path / "cran"
    write(folder / "cran.all.1400", ".I 1\n.T\nwing\n.W\none two three four five six\n.I 2\n.T\nshock\n.W\nseven eight nine\n")
    write(folder / "cran.qry", ".I 001\n.W\nwings ?\n")
    write(folder / "cranqrel", "1 1 2\n1 2 -1\n")
    result = run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl", "--size", "3",
                 "--qrels-out", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    assert [c["_id"] for c in read_lines(tmp_path / "c.jsonl")] == ["1#0", "1#1", "2#0"]
    [item] = read_lines(tmp_path / "g.jsonl")
    assert item["gold_chunk_ids"] == ["1#0", "1#1"] and item["meta"]["grades"] == {"1#0": 3, "1#1": 3, "2#0": 0}
    assert (tmp_path / "q.txt").read_text() == "1 0 1#0 3\n1 0 1#1 3\n1 0 2#0 0\n"


def test_smart_fields_on_their_marker_line_and_text_before_any_field(tmp_path):
    path = write(tmp_path / "cran.qry", ".I 7\n.T A title\ngoes on\n.W\ntext\n")
    assert smart_records(path) == [{"I": "7", "T": "A title\ngoes on", "W": "\ntext\n"}]
    stray = write(tmp_path / "bad.qry", ".I 7\nno field yet\n.W\ntext\n")  # a line after .I and before its first field
    with pytest.raises(Exception, match=r"bad.qry:2: text outside a \.I record"):
        smart_records(stray)


# ---------------------------------------------------------------- LlamaIndex question-context pairs


def test_llamaindex_pairs_query_without_relevant_docs_is_kept_without_gold_and_stripped(tmp_path):
    pairs = {"queries": {"q1": "  Where is honey?\n", "q2": "Drones?"}, "corpus": {"n1": "Honey.", "n2": "Drones."},
             "relevant_docs": {"q1": ["n2", "n1"]}}
    items, _, _ = imported(tmp_path, "qa_pairs.json", pairs)
    assert [(i["query_id"], i["query"], i["gold_chunk_ids"]) for i in items] == [
        ("q1", "Where is honey?", ["n2", "n1"]), ("q2", "Drones?", [])]


def test_llamaindex_pairs_relevant_node_that_is_no_id_is_refused_by_name(tmp_path):
    pairs = {"queries": {"q1": "Where?"}, "corpus": {"n1": "Honey."}, "relevant_docs": {"q1": [["n1"]]}}
    source = write(tmp_path / "qa_pairs.json", json.dumps(pairs))
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "qa_pairs.json: relevant_docs['q1'] names ['n1'], which 'corpus' does not hold")


def test_llamaindex_pairs_node_listed_twice_is_gold_once(tmp_path):
    pairs = {"queries": {"q1": "Where?"}, "corpus": {"n1": "Honey.", "n2": "Drones."}, "relevant_docs": {"q1": ["n1", "n2", "n1"]}}
    items, _, _ = imported(tmp_path, "qa_pairs.json", pairs)
    assert items[0]["gold_chunk_ids"] == ["n1", "n2"]


def test_llamaindex_pairs_blank_node_is_no_chunk_and_no_gold_and_is_counted(tmp_path):
    """As the PubMedQA and MS MARCO importers' blank passages: a blank node was a blank chunk, and gold."""
    pairs = {"queries": {"q1": "Where?", "q2": "Who?"}, "corpus": {"n1": "Honey.", "n2": "  \n", "n3": ""},
             "relevant_docs": {"q1": ["n1", "n2"], "q2": ["n3"]}}
    items, chunks, said = imported(tmp_path, "qa_pairs.json", pairs)
    assert [(i["query_id"], i["gold_chunk_ids"]) for i in items] == [("q1", ["n1"]), ("q2", [])]
    assert [c["_id"] for c in chunks] == ["n1"]
    assert "blank nodes (empty or only spaces; not made chunks or gold): 2" in said
    assert "queries whose relevant nodes are all blank (no gold): 1" in said


# ---------------------------------------------------------------- locate


def test_find_answer_tie_goes_to_the_earlier_occurrence_and_no_offset_means_the_first():
    assert find_answer("ab xx ab", "ab", 3) == (0, 2)  # 3 before the offset and 3 after: the earlier
    assert find_answer("x ab ab ab", "ab", None) == (2, 4)
    assert find_answer("x ab ab ab", "ab", 9) == (8, 10)


def test_find_answer_lets_spacing_differ_but_not_vanish():
    assert find_answer("the big\n dog", "big dog", 0) == (4, 12)
    assert find_answer("the bigdog", "big dog", 0) is None  # words run together are not the answer


def test_a_context_with_spaces_around_it_is_held_exactly_by_the_chunk_it_opens():
    matcher = ContextMatcher(["  Bees forage widely \n"], threshold=0.5)
    matcher.add(Chunk("d#0", "Bees forage widely. The hive holds wax.", "d", 0, 39))
    found = matcher.match("  Bees forage widely \n")
    assert (found.ids, found.how, found.score, found.words) == (["d#0"], "exact", 1.0, 3)


def test_least_shares_names_the_lowest_pair_shares_first():
    def item(query_id: str, share: float, how: str = "pairs") -> GoldenItem:
        return GoldenItem(query_id, "q", ("a",), ("d#0",), {"answer_chunks": {"d": {"how": how, "score": share}}})

    items = [item("q1", 0.5), item("q2", 0.08), item("q3", 0.9), item("q4", 0.01, "text"), item("q5", 0.2)]
    assert least_shares(items) == "'q2' 0.08, 'q5' 0.20, 'q1' 0.50"
    assert least_shares(items, 1) == "'q2' 0.08" and least_shares([item("q4", 0.01, "text")]) == ""
