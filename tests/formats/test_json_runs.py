"""Runs and qrels as ranx saves them in JSON (`run.save("run.json")`: {q_id: {doc_id: score}}, also how pytrec_eval and
BEIR's scripts hold them) read back what semrel writes, and a broken one is one line naming what is wrong (that they score
as the same TREC files do: tests/formats/test_parquet_runs.py).

The files are written as ranx's save writes them (its save_json: the dict, indented by 2), not by ranx itself: ranx
compiles with numba on first use (tests/formats/test_parquet_runs.py says why that is kept out of the tests)."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error, run, write
from semrel.errors import FormatError
from semrel.formats import read_qrels, read_run, write_qrels
from semrel.formats.trec import write_judgment_groups


@pytest.mark.parametrize("text,message", [
    ('[["q", "a", 1.0]]', "r.json: holds [[\"q\", \"a\", 1.0]], not an object of queries (a run in JSON is one object, {query_id: "
                          "{doc_id: score}}, as ranx saves it (a golden set is JSON Lines, .jsonl; "
                          "TREC text is read from a file not named .json))"),
    ('{"q": [["a", 1.0]]}', "r.json: query 'q' maps to [[\"a\", 1.0]], not an object of documents"),
    ('{"q": {"a": "high"}}', "r.json: query 'q', doc 'a': score \"high\" is not a finite number"),
    ('{"q": {"a": NaN}}', "r.json: query 'q', doc 'a': score NaN is not a finite number"),
    ('{"q": {"a": 1e999}}', "r.json: query 'q', doc 'a': score Infinity is not a finite number"),
    ('{"q": {"a b": 1.0}}', "r.json: doc id 'a b' is empty or contains whitespace; ids must be single tokens"),
    ('{"#q": {"a": 1.0}}', "r.json: query id '#q' starts with '#'"),
    ('{"q": {\n "a": 1.0,\n "a": 2.0}}', "r.json:3: the key 'a' is given twice in one object, and JSON keeps only the last"),
    ('{"q": {"a": 1.0}', "r.json:1: invalid JSON"),
])
def test_a_broken_json_run_is_one_line(tmp_path, text, message):
    qrels = write(tmp_path / "q.txt", "q 0 a 1\nq 0 b 0\n")
    assert_one_error(run("eval", qrels, write(tmp_path / "r.json", text)), message)


@pytest.mark.parametrize("grade", [0.5, 1e30, True])  # 1e30 is whole as a float, and past every int64 grade
def test_json_qrels_grades_are_whole_numbers(tmp_path, grade):
    qrels = write(tmp_path / "q.json", json.dumps({"q": {"a": 1, "b": grade}}))
    assert_one_error(run("eval", qrels, write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     f"q.json: query 'q', doc 'b': grade {json.dumps(grade)} is not a whole number (a relevance grade)")


def test_a_golden_set_named_json_is_told_apart_from_qrels(tmp_path):
    """Qrels opening with '{' were read as a golden set; a .json file is ranx's qrels, and a golden set so named is
    told to be JSON Lines."""
    golden = write(tmp_path / "golden.json", json.dumps({"query_id": "q", "query": "what?", "reference_answer": "this"}) + "\n")
    assert_one_error(run("eval", golden, write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     "golden.json: query 'query_id' maps to \"q\", not an object of documents", "(a golden set is JSON Lines, .jsonl;")


def test_runs_and_qrels_written_to_a_json_name_are_ranx_json_that_reads_back(tmp_path):
    """An output named .json was TREC text under that name, which the readers then took for JSON and refused."""
    write(tmp_path / "a.run", "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d1 1 1.0 a\n")
    write(tmp_path / "b.run", "q1 Q0 d2 1 5.0 b\nq2 Q0 d3 1 4.0 b\nq2 Q0 d1 2 0.5 b\n")
    for output in ("f.run", "f.json"):
        assert run("fuse", tmp_path / "a.run", tmp_path / "b.run", "-o", tmp_path / output).exit_code == 0
    fused = read_run(tmp_path / "f.json")
    assert fused.to_dict() == read_run(tmp_path / "f.run").to_dict() and len(fused) == 4
    assert json.loads((tmp_path / "f.json").read_text()) == fused.to_dict()  # plain JSON, as ranx's Run.from_file reads it
    assert list(json.loads((tmp_path / "f.json").read_text())["q1"]) == ["d2", "d1"]  # ranked, as the TREC run is
    write(tmp_path / "q.txt", "q2 0 d3 1\nq1 0 d2 2\nq1 0 d1 0\n")
    qrels = read_qrels(tmp_path / "q.txt")
    write_qrels(qrels, tmp_path / "q.json")
    assert json.loads((tmp_path / "q.json").read_text()) == {"q2": {"d3": 1}, "q1": {"d2": 2, "d1": 0}}
    assert read_qrels(tmp_path / "q.json") == qrels
    scored = run("eval", tmp_path / "q.txt", tmp_path / "f.run", "-m", "nDCG@10", "-q", "-f", "trec")
    assert scored.stdout.count("\n") == 3 and run("eval", tmp_path / "q.json", tmp_path / "f.json", "-m", "nDCG@10", "-q", "-f",
                                                   "trec").stdout == scored.stdout


def test_a_json_run_on_stdin_is_told_to_come_as_a_file(tmp_path):
    """It was read as TREC text: 'expected 6 columns (qid Q0 docid rank score tag ...), found 3'."""
    qrels = write(tmp_path / "q.txt", "q 0 a 1\n")
    assert_one_error(run("eval", qrels, "-", input='{"q": {"a": 1.0}}\n'),
                     "<stdin>: holds JSON, which semrel reads as a run from a file named .json only (write it to run.json")


@pytest.mark.parametrize("name,text,role", [
    ("golden.json", "".join(json.dumps({"query_id": q, "query": "what?", "reference_answer": "this"}) + "\n" for q in "ab"), "qrels"),
    ("q.json", "q 0 a 1\n", "qrels"),
    ("r.json", "q Q0 a 1 1.0 r\n", "run"),
])
def test_a_golden_set_or_trec_text_named_json_is_told_what_the_name_means(tmp_path, name, text, role):
    """A golden set of two lines, or TREC text, so named was 'invalid JSON (Extra data)' or '(Expecting value)' alone."""
    given = write(tmp_path / name, text)
    other = write(tmp_path / "r.run", "q Q0 a 1 1 r\n") if role == "qrels" else write(tmp_path / "q.txt", "q 0 a 1\n")
    assert_one_error(run("eval", *((given, other) if role == "qrels" else (other, given))), f"{name}:", "invalid JSON",
                     "(a golden set is JSON Lines, .jsonl",
                     "TREC text is read from a file not named .json")


def test_json_grades_read_back_exactly_as_a_trec_qrels_line_takes_them(tmp_path):
    """Grades went through a float: 2**53 + 1 came back as 2**53, and 2**62, which write_qrels wrote, was refused."""
    write(tmp_path / "q.txt", f"q 0 a {2**53 + 1}\nq 0 b {2**62}\nq 0 c {-2**63}\nq 0 d {2**63 - 1}\n")
    qrels = read_qrels(tmp_path / "q.txt")
    write_qrels(qrels, tmp_path / "q.json")
    assert read_qrels(tmp_path / "q.json") == qrels and read_qrels(tmp_path / "q.json").relevance.tolist()[0] == 2**53 + 1
    assert_one_error(run("eval", write(tmp_path / "q.json", json.dumps({"q": {"a": 2**63}})), write(tmp_path / "r.run", "q Q0 a 1 1 r\n")),
                     f"q.json: query 'q', doc 'a': grade {2**63} is not a whole number (a relevance grade)")


@pytest.mark.parametrize("text,message", [
    ("null", "r.json: holds null, not an object of queries"),
    ('{"q": "abc"}', "r.json: query 'q' maps to \"abc\", not an object of documents"),
    ('{"q": {"a": null}}', "r.json: query 'q', doc 'a': score null is not a finite number"),
    ('{"q": {"a": %s}}' % json.dumps(list(range(10_000))),
     "r.json: query 'q', doc 'a': score [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11... is"),
    ('{"q": {"a": 1%s}}' % ("0" * 4000), "r.json: query 'q', doc 'a': score 1000000000000000000000000000000000000... is"),
])
def test_a_json_value_in_error_is_quoted_as_json_and_cut_short(tmp_path, text, message):
    """Values were quoted as Python writes them, whole: 'a JSON NoneType', 'score None', a list of 10,000 numbers."""
    error = assert_one_error(run("eval", write(tmp_path / "q.txt", "q 0 a 1\n"), write(tmp_path / "r.json", text)), message)
    assert len(error) < 400


def test_judgment_groups_are_text_not_json_where_a_file_is_named_json(tmp_path):
    """`-R qrels_jg` of ranx's JSON was 'expected 4 columns (qid group docid rel), found 1'; judgment groups written to a
    .json name were text that plain eval then took for ranx's JSON and refused."""
    run_file = write(tmp_path / "r.run", "q Q0 a 1 1 r\n")
    ranx_json = write(tmp_path / "q.json", json.dumps({"q": {"a": 1}}))
    for relation, what in (("qrels_jg", "judgment groups"), ("prefs", "preferences")):
        assert_one_error(run("eval", "-R", relation, ranx_json, run_file),
                         f"q.json: JSON holds plain qrels ({{query_id: {{doc_id: grade}}}}), not {what}", "give a TREC text file")
    as_before = write(tmp_path / "by.json", "q alice a 1\nq bob a 0\n")  # what `review export --by-reviewer by.json` wrote
    assert run("eval", "-R", "qrels_jg", as_before, run_file, "-m", "P_avgjg@1").stdout.split()[-1] == "0.5000"
    with pytest.raises(FormatError, match="judgment groups are TREC text .* and a file named .json is read as ranx's JSON"):
        write_judgment_groups([("alice", read_qrels(ranx_json))], tmp_path / "groups.json")
    assert not (tmp_path / "groups.json").exists()


def test_a_query_id_of_no_documents_is_checked_too(tmp_path):
    assert_one_error(run("eval", write(tmp_path / "q.txt", "q 0 a 1\n"), write(tmp_path / "r.json", '{"q a": {}, "q": {"a": 1}}')),
                     "r.json: query id 'q a' is empty or contains whitespace")


def test_a_run_given_where_the_qrels_go_is_told_to_come_second(tmp_path):
    """JSON cannot tell a run from qrels as TREC text's columns do; a fractional score read as a grade said only that it
    was not a whole number."""
    ranked = write(tmp_path / "bm25.json", json.dumps({"q": {"a": 3.25, "b": 1.5}}))
    assert_one_error(run("eval", ranked, write(tmp_path / "q.json", json.dumps({"q": {"a": 1}}))),
                     "bm25.json: query 'q', doc 'a': grade 3.25 is not a whole number (a relevance grade) (is it a run? commands "
                     "that take runs take the qrels first)")


def test_qrels_given_as_a_run_are_told_by_their_manifest(tmp_path):
    """Whole grades are valid scores, so `eval gold.json derived.json` scored the derived qrels as a run; the manifest
    semrel writes beside each output says which command made it, and so which file it is."""
    golden = write(tmp_path / "golden.jsonl", "".join(json.dumps({"query_id": q, "query": f"{q}?", "reference_answer": "An answer.",
                                                                  "gold_chunk_ids": [f"{q}#0"]}) + "\n" for q in ("q1", "q2")))
    assert run("golden", "qrels", golden, "-o", tmp_path / "gold.json").exit_code == 0
    copied = write(tmp_path / "copy.json", (tmp_path / "gold.json").read_text())  # no manifest: scored, as ranx would
    assert_one_error(run("eval", copied, tmp_path / "gold.json", "-m", "P@1"),
                     "gold.json: holds qrels, not a run, its manifest says (commands that take runs take the qrels first; "
                     "`semrel agree REF TEST` compares two qrels)")
    assert run("eval", tmp_path / "gold.json", copied, "-m", "P@1", "-f", "json").exit_code == 0
    write(tmp_path / "a.run", "q1 Q0 q1#0 1 3 a\nq2 Q0 x 1 2 a\n")
    write(tmp_path / "b.run", "q1 Q0 x 1 4 b\n")
    assert run("fuse", tmp_path / "a.run", tmp_path / "b.run", "-o", tmp_path / "f.json", "--method", "combsum", "--norm",
               "none").exit_code == 0
    assert_one_error(run("eval", tmp_path / "f.json", tmp_path / "a.run"),
                     "f.json: holds a run, not qrels, its manifest says (commands that take runs take the qrels first)")
