"""Tests that kill mutants of today's additions which the existing suite let live (a hand-made mutation audit of
measures.py's yaap/dcg/ideal_dcg/ERR, eval -n, ranx's Parquet runs and qrels, and the Parquet golden sets). Every
expected trec_eval line was printed by trec_eval 10.0 (built from NIST's source) on the same files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import assert_one_error, run, write
from semrel.evaluation.measures import parse_measure
from semrel.formats.manifest import read_manifest

# the files of tests/evaluation/test_trec_eval_edges.py
GRADED = ("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d9 1\nq3 0 d7 1\nq3 0 d6 3\nq3 0 d5 -1\nq4 0 d1 1\nq4 0 d2 2\nq5 0 d1 0\n"
          "q6 0 d1 1\n")
GRADED_RUN = ("q1 Q0 d5 1 9 r\nq1 Q0 d3 2 8 r\nq1 Q0 d2 3 7 r\nq1 Q0 d1 4 6 r\nq2 Q0 d9 1 5 r\nq3 Q0 d7 1 3 r\nq3 Q0 d5 2 2 r\n"
              "q3 Q0 d6 3 1 r\nq4 Q0 d2 1 1 r\nq4 Q0 d8 2 0 r\nq5 Q0 d1 1 1 r\nq5 Q0 d4 2 0 r\nq6 Q0 d9 1 1 r\n")
JUDGMENT_GROUPS = ("".join(f"q1 1 d{i} 1\n" for i in range(7)) + "q1 2 d0 1\nq1 2 d1 1\n" + "".join(f"q1 0 d{i} 1\n" for i in range(6))
                   + "q2 0 x 1\nq3 0 x 1\nq4 0 x 1\n")
GROUPS_RUN = "".join(f"q1 Q0 d{i} {i + 1} {10 - i} r\n" for i in range(7)) + "q2 Q0 y 1 1 r\nq3 Q0 y 1 1 r\nq4 Q0 y 1 1 r\n"

# ---------------------------------------------------------------- measures


def test_dcg_keeps_negative_gains_as_trec_eval_does(cli, write):
    """dcg.1=-2: trec_eval sums a negative gain like any other (nDCG hid it; the raw DCG prints it)."""
    result = cli("eval", write("q.qrels", GRADED), write("r.run", GRADED_RUN), "-q", "-m", "dcg.1=-2", "-f", "trec")
    expected = zip(["q1", "q2", "q3", "q4", "q5", "q6", "all"], "0.4005 -2.0000 -0.5000 2.0000 0.0000 0.0000 -0.0166".split())
    assert result.stdout == "".join(f"dcg_1=-2              \t{q}\t{v}\n" for q, v in expected), result.output


def test_trec_eval_10_measures_print_in_trec_evals_order(cli, write):
    """trec_eval prints dcg, ideal_dcg, yaap, rbp in that order whatever order -m names them in."""
    result = cli("eval", write("q.qrels", GRADED), write("r.run", GRADED_RUN), "-m", "rbp,yaap,ideal_dcg,dcg", "-f", "trec")
    assert result.stdout == ("dcg                   \tall\t1.1988\nideal_dcg             \tall\t1.8155\n"
                             "yaap                  \tall\t0.1155\nrbp                   \tall\t0.0735\n"), result.output


def test_cut_dcg_and_rbp_at_its_own_p_are_not_named_as_trec_evals(cli, write):
    """trec_eval's dcg takes no cutoff, so DCG@2 keeps semrel's name (not 'dcg', which is the uncut value); RBP's own
    p of 0.8 prints as trec_eval's rbp.p=0.8 does (0.1343 there too), not as `rbp` (p=0.9)."""
    result = cli("eval", write("q.qrels", GRADED), write("r.run", GRADED_RUN), "-m", "DCG@2,ideal_dcg@1,RBP", "-f", "trec")
    assert result.stdout == ("rbp_p=0.8             \tall\t0.1343\nDCG@2                 \tall\t0.8770\n"
                             "ideal_dcg@1           \tall\t1.5000\n"), result.output


def test_rbp_resid_drops_the_gains_trec_eval_ignores():
    """rbp_resid.p=0.9,1=3 is rbp_resid.p=0.9: trec_eval takes the gain pair and ignores it (it prints one line for both)."""
    assert parse_measure("rbp_resid.p=0.9,1=3") == parse_measure("rbp_resid.p=0.9")
    assert parse_measure("rbp_resid.1=3").params == (("p", 0.9),)


# ---------------------------------------------------------------- eval -n


def test_no_summary_leaves_all_out_of_json_and_jsonl(cli, write):
    qrels, run = write("q.qrels", GRADED), write("r.run", GRADED_RUN)
    lines = cli("eval", qrels, run, "-n", "-m", "map", "-f", "jsonl").stdout.splitlines()
    aps = {"q1": 0.5, "q2": 1.0, "q3": 0.8333, "q4": 0.5, "q5": 0.0, "q6": 0.0}
    assert [json.loads(line)["query_id"] for line in lines] == list(aps)
    assert {r["query_id"]: r["value"] for r in map(json.loads, lines)} == pytest.approx(aps, abs=5e-5)
    nested = json.loads(cli("eval", qrels, run, "-n", "-m", "map", "-f", "json").stdout)
    assert list(nested) == ["r"] and list(nested["r"]) == list(aps) and nested["r"]["q3"]["AP"] == pytest.approx(5 / 6)


def test_no_summary_with_judgment_groups_prints_what_trec_eval_q_n_prints(cli, write):
    """-R qrels_jg goes its own way through eval; trec_eval -q -n -c -R qrels_jg printed these lines."""
    result = cli("eval", "-R", "qrels_jg", write("q.qrels", JUDGMENT_GROUPS), write("r.run", GROUPS_RUN), "-n", "-m", "P_avgjg.200",
                 "-f", "trec")
    assert result.stdout == "".join(f"P_avgjg_200           \t{q}\t{v}\n" for q, v in
                                    [("q1", "0.0250"), ("q2", "0.0000"), ("q3", "0.0000"), ("q4", "0.0000")]), result.output


def test_no_summary_takes_several_runs_in_a_table(cli, write):
    """Only -f trec's lines lack the run's name: a table names each run in its header."""
    qrels = write("q.qrels", GRADED)
    result = cli("eval", qrels, write("a.run", GRADED_RUN), write("b.run", GRADED_RUN), "-n", "-m", "AP", "-f", "csv")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "query,measure,a,b" and lines[1] == "q1,AP,0.5000,0.5000" and len(lines) == 7


# ---------------------------------------------------------------- ranx's Parquet runs and qrels


def _table(path, **columns):
    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize("table,message", [
    ({"q_id": ["q", "q"], "doc_id": ["a", None], "score": [2.0, 1.0]}, "r.parquet: row 2 has no doc_id"),
    ({"q_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, None]}, "r.parquet: row 2 has no score"),
    ({"q_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, float("inf")]}, "r.parquet: row 2: score inf is not a finite number"),
], ids=["no-doc_id", "no-score", "inf"])
def test_a_parquet_run_without_a_doc_id_or_a_finite_score_is_named(tmp_path, table, message):
    qrels = write(tmp_path / "q.txt", "q 0 a 1\nq 0 b 0\n")
    assert_one_error(run("eval", qrels, _table(tmp_path / "r.parquet", **table)), message)


@pytest.mark.parametrize("grade,shown", [(-1e30, "-1e+30"), (2.0**54, "1.80144e+16")], ids=["-1e30", "2^54"])
def test_parquet_grades_past_what_a_float_holds_whole_are_refused(tmp_path, grade, shown):
    """A grade beyond 2^53 either way is no whole number a float keeps (2^54 is whole as a float, and fits an int64)."""
    qrels = _table(tmp_path / "q.parquet", q_id=["q", "q"], doc_id=["a", "b"], score=[1.0, grade])
    assert_one_error(run("eval", qrels, write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     f"q.parquet: row 2: score {shown} is not a whole number (a relevance grade)")


def test_parquet_is_told_by_its_suffix_in_any_case(tmp_path):
    qrels = _table(tmp_path / "Q.PARQUET", q_id=["q", "q"], doc_id=["a", "b"], score=[1, 0])
    ranked = _table(tmp_path / "R.Parquet", q_id=["q", "q"], doc_id=["a", "b"], score=[1.0, 2.0])
    result = run("eval", qrels, ranked, "-m", "AP", "-f", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == "AP,0.5000"


def test_parquet_runs_of_one_name_are_told_apart_by_their_folders(tmp_path):
    """Two runs saved as r.parquet in two folders are named by the folders (as two r.run files are)."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = _table(tmp_path / "a" / "r.parquet", q_id=["q", "q"], doc_id=["a", "b"], score=[2.0, 1.0])
    second = _table(tmp_path / "b" / "r.parquet", q_id=["q", "q"], doc_id=["a", "b"], score=[1.0, 2.0])
    result = run("eval", write(tmp_path / "q.txt", "q 0 a 1\nq 0 b 0\n"), first, second, "-m", "AP", "-f", "csv")
    assert result.stdout.splitlines() == ["measure,a/r,b/r", "AP,1.0000,0.5000"], result.output


def test_a_judgment_twice_in_parquet_qrels_names_the_file_and_row(tmp_path):
    qrels = _table(tmp_path / "dup.parquet", q_id=["q", "q"], doc_id=["a", "a"], score=[1, 0])
    assert_one_error(run("eval", qrels, write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     "dup.parquet: duplicate judgment for query 'q' and doc 'a' (row 2)")


def test_a_parquet_run_is_not_held_to_the_document_size_limit(tmp_path, monkeypatch):
    """SEMREL_MAX_DOCUMENT_MB limits a table read as records (a golden set), not a run, which is read as a TREC run is."""
    docs = [f"document-{i:05d}" for i in range(2000)]
    ranked = _table(tmp_path / "r.parquet", q_id=["q"] * len(docs), doc_id=docs, score=[float(-i) for i in range(len(docs))])
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.001")
    result = run("eval", write(tmp_path / "q.txt", "q 0 document-00001 1\n"), ranked, "-m", "AP,num_ret", "-f", "csv")
    assert result.stdout.splitlines()[1:] == ["AP,0.5000", "NumRet,2000"], result.output
    assert_one_error(run("golden", "import", ranked, "--format", "parquet", "-o", tmp_path / "g.jsonl"),
                     "r.parquet: the table, uncompressed, is longer than the limit of 0.001 MB")


def test_parquet_is_not_read_from_stdin(tmp_path):
    assert_one_error(run("golden", "import", "-", "--format", "parquet", "-o", tmp_path / "g.jsonl", input="q\n"),
                     "a Parquet file is read from a path, not from stdin", code=2)


def _undecodable(tmp_path):
    """A Parquet file whose footer reads and whose first data page does not: its rows fail while they are read."""
    source = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"query": [f"question number {i}" for i in range(50)], "answer": [f"answer {i}" for i in range(50)]}),
                   source, compression="snappy", use_dictionary=False)
    column = pq.ParquetFile(source).metadata.row_group(0).column(0)
    data = bytearray(source.read_bytes())
    start, end = column.data_page_offset, column.data_page_offset + column.total_compressed_size
    data[start:end] = b"\xff" * (end - start)  # the page header and its values
    source.write_bytes(bytes(data))
    return source


def test_a_parquet_table_whose_pages_cannot_be_decoded_is_an_error_naming_the_row(tmp_path):
    result = run("golden", "import", _undecodable(tmp_path), "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.stderr.startswith(f"semrel: error: {tmp_path / 'bad.parquet'}: cannot read row 1 (Couldn't deserialize thrift")
    assert not (tmp_path / "g.jsonl").exists()


def test_a_parquet_table_whose_pages_cannot_be_decoded_is_one_line(tmp_path):
    """pyarrow's message runs over several lines; the error keeps its first, as every other error is one line."""
    assert_one_error(run("golden", "import", _undecodable(tmp_path), "-o", tmp_path / "g.jsonl"), "bad.parquet: cannot read row 1 (")


# ---------------------------------------------------------------- golden sets as Hugging Face's rows (Parquet, JSON Lines)

CORPUS = [{"_id": "chain-care#0", "doc_id": "chain-care", "title": "", "text": "Oil is applied on the rollers."},
          {"_id": "chain-care#1", "doc_id": "chain-care", "title": "", "text": "Wipe the chain after oiling."}]
HIVE = "Bees forage widely. The hive holds wax combs."


def _jsonl(path, rows):
    return write(path, "".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize("columns", [
    {"query": ["what is rba"], "answers": [["A bank."]]},  # a plain table, as MS MARCO's rows lack `passages`
    {"question": ["Where?"], "context": ["On the rollers."], "answer": ["There."]},  # SQuAD's rows have `answers`
    {"question": ["Where?"], "context": ["On the rollers."], "long_answer": ["There."], "answer": ["There."]},  # PubMedQA's have `pubid`
], ids=["query-answers", "question-context", "no-pubid"])
def test_a_parquet_table_with_only_some_of_a_public_sets_columns_is_a_plain_table(tmp_path, columns):
    source = _table(tmp_path / "t.parquet", **columns)
    result = run("golden", "import", source, "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert read_manifest(tmp_path / "g.jsonl")["params"]["format"] == "parquet"
    assert [item["query"] for item in map(json.loads, (tmp_path / "g.jsonl").read_text().splitlines())] == [
        columns.get("query", columns.get("question"))[0]]


def _squad_row(**changes):
    return {"id": "q1", "title": "Hive", "context": HIVE, "question": "What does the hive hold?",
            "answers": {"text": ["wax combs"], "answer_start": [35]}, **changes}


@pytest.mark.parametrize("row,message", [
    (_squad_row(title=5), ("s.jsonl:1: 'context' and 'title' should be strings, found \"Bees forage", " and 5")),
    (_squad_row(answers={"text": ["wax combs"], "answer_start": 35}),
     ("s.jsonl:1: 'answers' should hold lists 'text' and 'answer_start'",)),
], ids=["title", "answer_start"])
def test_a_squad_row_of_the_wrong_shape_is_one_line(tmp_path, row, message):
    source = _jsonl(tmp_path / "s.jsonl", [row])
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"), *message)


def test_a_squad_row_with_fewer_offsets_than_answers_finds_the_rest_by_their_text(tmp_path):
    source = _jsonl(tmp_path / "s.jsonl", [_squad_row(answers={"text": ["wax combs", "forage"], "answer_start": [35]})])
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    (item,) = map(json.loads, (tmp_path / "g.jsonl").read_text().splitlines())
    assert item["reference_answer"] == ["wax combs", "forage"] and item["gold_chunk_ids"] == ["Hive#0"]


def test_squad_rows_gzipped_import_as_the_plain_file_does(tmp_path):
    rows = [_squad_row(), _squad_row(id="q2", question="Who forages?", answers={"text": ["Bees"], "answer_start": [0]})]
    plain = _jsonl(tmp_path / "s.jsonl", rows)
    (tmp_path / "z.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    made = []
    for source in (plain, tmp_path / "z.jsonl.gz"):
        result = run("golden", "import", source, "--corpus-out", f"{source}.corpus", "-o", f"{source}.golden")
        assert result.exit_code == 0, result.output
        made.append((Path(f"{source}.corpus").read_bytes(), Path(f"{source}.golden").read_bytes()))
    assert made[0] == made[1] and made[0][1].count(b"\n") == 2


def _pubmed_row(pubid, **changes):
    return {"pubid": pubid, "question": "Do bees sting?", "context": {"contexts": ["Bees sting.", "Drones do not."],
            "labels": ["A", "B"]}, "long_answer": "Some do.", "final_decision": "maybe", **changes}


@pytest.mark.parametrize("rows,message", [
    ([_pubmed_row(1), _pubmed_row(1)], "p.jsonl:2: pubid '1' is on two rows"),
    ([_pubmed_row(1, context="Bees sting.")], "p.jsonl:1: 'context' should hold 'contexts' and 'labels', found \"Bees sting.\""),
    ([_pubmed_row(None)], "p.jsonl:1: no pubid (the PMID, which names the question and its chunks)"),
], ids=["twice", "context-text", "no-pubid"])
def test_a_pubmedqa_row_of_the_wrong_shape_is_one_line(tmp_path, rows, message):
    source = _jsonl(tmp_path / "p.jsonl", rows)
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"), message)


def test_an_msmarco_row_error_names_its_row_from_1(tmp_path):
    row = {"query_id": 7, "query": "what is rba", "answers": ["A bank."], "passages": [{"is_selected": 2, "passage_text": "Bees."}]}
    assert_one_error(run("golden", "import", _jsonl(tmp_path / "m.jsonl", [row]), "--corpus-out", tmp_path / "c.jsonl",
                         "-o", tmp_path / "g.jsonl"), "row 1.passages[0].is_selected should be 0 or 1, found 2")


def test_a_parquet_set_of_document_ids_takes_doc_qrels(tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", CORPUS)
    source = _table(tmp_path / "g.parquet", query_id=["q1"], query=["Where is oil applied?"], answer=["On the rollers."],
                    gold_chunk_ids=[["chain-care"]])
    result = run("golden", "import", source, "--corpus", corpus, "--doc-qrels", "all-chunks", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "g.jsonl").read_text())["gold_chunk_ids"] == ["chain-care#0", "chain-care#1"]


def test_a_ragas_evaluation_file_in_parquet_is_refused_with_the_parquet_hint(tmp_path):
    source = _table(tmp_path / "e.parquet", question=["Where?"], answer=["Lower"], contexts=[["x"]], ground_truth=["Upper"])
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "g.jsonl"), "e.parquet: a ragas evaluation file",
                     "(or this file without gold: --format parquet with --answer-col ground_truth)")


def test_a_parquet_corpus_row_is_named_by_id_before__id_and_keeps_its_title(tmp_path):
    source = _table(tmp_path / "docs.parquet", id=["bees"], _id=["other"], title=["Bees"], text=["Bees forage widely."])
    result = run("corpus", "chunk", source, "-o", tmp_path / "c.jsonl")
    assert result.exit_code == 0, result.output
    chunks = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [(c["_id"], c["doc_id"], c["title"], c["text"]) for c in chunks] == [("bees#0", "bees", "Bees", "Bees forage widely.")]
