"""`semrel eval` end to end: every output format, aliases, and one clear line for bad input."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest

from helpers import assert_one_error

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 1\nq3 0 d1 1\n"
RUN_A = "q1 Q0 d1 1 0.9 a\nq1 Q0 d3 2 0.8 a\nq1 Q0 d4 3 0.7 a\nq2 Q0 d10 1 0.5 a\nq2 Q0 d9 2 0.5 a\nq4 Q0 d1 1 1 a\n"
RUN_B = "q1 Q0 d2 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 d9 1 1 b\nq3 Q0 d1 1 1 b\n"


@pytest.fixture
def files(write):
    return write("qrels.txt", QRELS), write("a.run", RUN_A), write("b.run", RUN_B)


def test_table_has_one_column_per_run_and_warns_on_stderr(cli, files):
    result = cli("eval", *files, "-m", "P@1,RR")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["measure", "a", "b"]
    # a: q1 P@1=1 (d1), q2 P@1=1 (d9 above d10 on the tie), q3 missing -> 0
    assert lines[2].split() == ["P@1", "0.6667", "0.6667"]
    assert lines[3].split() == ["RR", "0.6667", "0.8333"]
    assert "1 of 3 queries" in result.stderr and "score 0" in result.stderr
    assert "not in" in result.stderr and "'q4'" in result.stderr


def test_runs_that_miss_the_same_queries_share_one_line(cli, write, files):
    """A golden set's unanswered queries are in no run: `semrel run` said so once per run and per qrels (six lines
    for two runs on the MS MARCO sample)."""
    qrels, a, b = files
    c = write("c.run", RUN_A.replace(" a\n", " c\n"))
    result = cli("eval", qrels, a, b, c, "-m", "RR")
    assert result.exit_code == 0
    said = [line for line in result.stderr.splitlines() if line.startswith("semrel: warning:")]
    assert said == [f"semrel: warning: 1 of 3 queries in {qrels} has no results in {a} and {c}; they score 0 (e.g. 'q3')",
                    f"semrel: warning: 1 query in {a} and {c} is not in {qrels} and is ignored (e.g. 'q4')"], said


def test_a_cutoff_past_every_ranking_is_said(cli, files):
    """`semrel init` retrieves 20 chunks a query and the default set holds R@100: the table said 'R@100' of
    recall at 20 without a word. The values stay trec_eval's; stderr says what they count."""
    result = cli("eval", *files, "-m", "P@3,R@100,nDCG@5,RR")
    assert result.exit_code == 0
    # run a, as pytrec_eval gives them (-c: q3 scores 0)
    assert [line.split()[:2] for line in result.stdout.splitlines()[2:]] == [["P@3", "0.3333"], ["R@100", "0.6667"],
                                                                           ["nDCG@5", "0.6667"], ["RR", "0.6667"]]
    said = [line for line in result.stderr.splitlines() if "no run ranks" in line]
    assert said == ["semrel: warning: R@100, nDCG@5: no run ranks more than 3 documents for a query, so these count the top 3 "
                    "(as trec_eval does); retrieve deeper (-k), unless the runs hold all their retriever found (BM25 ranks only the "
                    "chunks sharing a word with the query), or ask for a cutoff of 3 or less"]
    assert "no run ranks" not in cli("eval", *files, "-m", "P@3,RR").stderr
    # trec_eval's own default set, asked for as its output: P_1000 of 500-deep runs is what its users expect, unsaid
    assert "no run ranks" not in cli("eval", *files, "-f", "trec").stderr
    assert "no run ranks" in cli("eval", *files, "-f", "trec", "-m", "P.1000").stderr
    # compare and lift print the same measures of the same runs: they said nothing (estimate reads them as lift does)
    qrels, a, b = files
    for args in (["compare", qrels, a, b], ["lift", qrels, "--base", a, "--reranked", b]):
        result = cli(*args, "-m", "P@3,R@100,RR")
        assert result.exit_code == 0, result.output
        assert "semrel: warning: R@100: no run ranks more than 3 documents for a query, so it counts the top 3" in result.stderr


def test_a_cutoff_past_one_runs_ranking_is_said(cli, tmp_path):
    """COVID-QA's bm25 top 20 reranked by dense, beside bm25 at k=100: R@100 0.8244 -> 0.7450, 'significant' in lift and the
    report, though the rerank only dropped ranks 21-100; nothing was said, as one run (bm25) reached 100."""
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\nq1 0 d5 1\n")
    (tmp_path / "base.run").write_text("".join(f"q1 Q0 d{i} {i} {10 - i} s\n" for i in range(1, 6)))
    (tmp_path / "rr.run").write_text("q1 Q0 d2 1 2 s\nq1 Q0 d1 2 1 s\n")  # its top 2 reranked, the tail left out
    qrels, base, reranked = (str(tmp_path / name) for name in ("q.qrels", "base.run", "rr.run"))
    said = (f"semrel: warning: R@5: {reranked} ranks at most 2 documents for a query, other runs up to 5, so it counts fewer documents "
            "there and scores lower for that alone (a reranked run holds only the top it reranked): compare them at a cutoff of 2 or "
            "less, or rank as deep")
    lift = ["lift", qrels, "--base", base, "--reranked", reranked]
    for args in (["eval", qrels, base, reranked], ["compare", qrels, base, reranked], lift):
        result = cli(*args, "-m", "R@5,RR")
        assert result.exit_code == 0, result.output
        assert said in result.stderr.splitlines(), result.stderr
    assert "ranks at most" not in cli("eval", qrels, base, reranked, "-m", "R@2,RR").stderr


def test_jsonl_records_use_canonical_names(cli, files):
    result = cli("eval", files[0], files[2], "-m", "ndcg_cut.10,MRR@10,num_ret", "-q", "-f", "jsonl")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["measure"] for r in records} == {"nDCG@10", "RR@10", "NumRet"}
    assert {r["run"] for r in records} == {"b"}
    total = next(r for r in records if r["query_id"] == "all" and r["measure"] == "NumRet")
    assert total["value"] == 4 and isinstance(total["value"], int)
    q1 = next(r for r in records if r["query_id"] == "q1" and r["measure"] == "RR@10")
    assert q1["value"] == 0.5


def test_trec_format_uses_trec_eval_names_and_order(cli, files):
    """trec_eval's lines: its names, its measure order (not the order given), runid only when asked for."""
    result = cli("eval", files[0], files[1], "-m", "P@5,nDCG@10,AP,num_rel", "-f", "trec")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [(r[0].strip(), r[1]) for r in rows] == [("num_rel", "all"), ("map", "all"), ("P_5", "all"), ("ndcg_cut_10", "all")]
    assert rows[0][2] == "4" and rows[0][0] == f"{'num_rel':<22}"
    asked = cli("eval", files[0], files[1], "-m", "runid,num_q,P.5", "-f", "trec").stdout.splitlines()
    assert asked == [f"{'runid':<22}\tall\ta", f"{'num_q':<22}\tall\t3", f"{'P_5':<22}\tall\t0.2000"]


def test_trec_format_without_measures_prints_trec_eval_default_set(cli, files):
    names = [line.split("\t")[0].strip() for line in cli("eval", files[0], files[1], "-f", "trec").stdout.splitlines()]
    assert names[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"] and names[-1] == "P_1000"


def test_trec_format_names_each_run_before_its_summary(cli, files):
    """As trec_eval prints `runid all NAME`; with several runs it is what tells their blocks apart."""
    result = cli("eval", files[0], files[1], files[2], "-m", "P@1", "-f", "trec", "--per-query")
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    starts = [i for i, r in enumerate(lines) if r[0].strip() == "runid"]
    assert [lines[i][2] for i in starts] == ["a", "b"] and all(lines[i + 1][:2] == ["P_1                   ", "all"] for i in starts)
    assert [r[1] for r in lines[: starts[0]]] == ["q1", "q2", "q3"]  # per-query rows of run a come before its summary


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_delimited_formats(cli, files, fmt):
    result = cli("eval", *files, "-m", "P@1", "-f", fmt, "--places", "3")
    rows = list(csv.reader(io.StringIO(result.stdout), delimiter="," if fmt == "csv" else "\t"))
    assert rows == [["measure", "a", "b"], ["P@1", "0.667", "0.667"]]


def test_json_markdown_latex(cli, files):
    nested = json.loads(cli("eval", *files, "-m", "RR", "-f", "json").stdout)
    assert nested["b"]["all"]["RR"] == pytest.approx(2.5 / 3)
    markdown = cli("eval", *files, "-m", "RR", "-f", "markdown").stdout.splitlines()
    assert markdown[0] == "| measure |      a |      b |" and markdown[1].startswith("| ------- |")
    latex = cli("eval", *files, "-m", "RR", "-f", "latex").stdout
    assert "\\begin{tabular}{lrr}" in latex and "RR & 0.6667 & 0.8333 \\\\" in latex


def test_relevance_level_option(cli, files):
    result = cli("eval", files[0], files[1], "-m", "P@1", "-l", "2", "-f", "tsv")
    assert result.stdout.splitlines()[1] == "P@1\t0.3333"


def test_gzip_stdin_beir_and_messy_whitespace(cli, write, files):
    gz = write("a.run.gz", gzip.compress(RUN_A.encode()))
    beir = write("qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + QRELS.replace(" 0 ", "\t").replace(" ", "\t"))
    messy = write("messy.qrels", "\ufeff" + QRELS.replace(" ", " \t ").replace("\n", " \r\n"))
    expected = cli("eval", files[0], files[1], "-f", "tsv").stdout
    assert cli("eval", files[0], gz, "-f", "tsv").stdout == expected
    assert cli("eval", beir, files[1], "-f", "tsv").stdout.replace("a.run", "a") == expected
    assert cli("eval", messy, files[1], "-f", "tsv").stdout == expected
    piped = cli("eval", files[0], "-", "-f", "tsv", input=RUN_A)
    assert piped.stdout.splitlines()[1:] == expected.splitlines()[1:]


@pytest.mark.parametrize(
    "run_text,message",
    [
        ("q1 Q0 d1 1 0.9 a\nq1 Q0 d2 2\n", "bad.run:2: expected 6 columns"),
        ("q1 Q0 d1 1 0.9 a\n\nq1 Q0 d1 2 0.8 a\n", "bad.run:3: duplicate document in run"),
        ("q1 Q0 d1 1 high a\n", "bad.run:1: column 5 is 'high', expected a number"),
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 nan a\n", "bad.run:2: score nan is not a finite number"),
        (b"q1 Q0 d\xff 1 0.5 a\n", "bad.run:1: not valid UTF-8"),
    ],
)
def test_bad_run_gives_one_line(cli, write, files, run_text, message):
    bad = write("bad.run", run_text)
    result = cli("eval", files[0], bad)
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bad_qrels_missing_file_and_unknown_measure(cli, write, files):
    bad = write("bad.qrels", "q1 0 d1 1\nq1 0 d2 relevant\n")
    result = cli("eval", bad, files[1])
    assert result.exit_code == 1 and "bad.qrels:2: column 4 is 'relevant', expected an integer" in result.stderr
    result = cli("eval", files[0], "nowhere.run")
    assert result.exit_code == 1 and "nowhere.run: no such file" in result.stderr
    result = cli("eval", files[0], files[1], "-m", "nDCG@x")
    assert result.exit_code == 2 and "unknown measure 'nDCG@x'" in result.stderr
    result = cli("eval", files[0], files[1], "-m", "Judged")
    assert result.exit_code == 2 and "needs a cutoff" in result.stderr
    # trec_eval's families with default cutoffs stand for them when named alone, as in trec_eval
    names = [line.split("\t")[0].strip() for line in cli("eval", files[0], files[1], "-m", "P", "-f", "trec").stdout.splitlines()]
    assert names == ["P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"]


@pytest.mark.parametrize("measure,hint", [
    # ir_measures' rel=: one level for every measure, as trec_eval's -l (P(rel=2)@1 is P@1 with -l 2: 0.3333 on a.run)
    ("P(rel=2)@1", "measure P takes no parameters (got 'P(rel=2)@1'); the relevance level is one for all measures: "
                   "-l/--rel-level 2 (trec_eval's -l; rel_level=2 in Python)"),
    ("nDCG(rel=2)@10", "nDCG takes gains=, dcg= (got 'rel=2'); the relevance level is one for all measures: -l/--rel-level 2"),
    # ir_measures' other parameters that semrel spells otherwise (they said only "nDCG takes gains=")
    ("nDCG(cutoff=10)", "nDCG takes gains=, dcg= (got 'cutoff=10'); name the cutoff after @: nDCG@10"),
    ("P(cutoff=5)", "measure P takes no parameters (got 'P(cutoff=5)'); name the cutoff after @: P@5"),
    ("nDCG(judged_only=True)@10", "judged-only is one setting for all measures: -J/--judged-only (trec_eval's -J"),
    ("nDCG(dcg='exp')@10", "dcg is 'log2' or 'exp-log2' (the grade as the gain, or 2^grade - 1)"),
    ("P@10 AP", "unknown measure 'P@10 AP': measures are separated by commas, e.g. 'P@10,AP'"),  # ir_measures' command line
    ("nDCG@10;RR", "unknown measure 'nDCG@10;RR': measures are separated by commas, e.g. 'nDCG@10,RR'"),
    ("P10", "unknown measure 'P10': did you mean P@10?"), ("ndcg10", "unknown measure 'ndcg10': did you mean nDCG@10?"),
    ("ndgc@10", "unknown measure 'ndgc@10': did you mean nDCG@10?"), ("recal@100", "did you mean R@100?"),
    ("all_trek", "unknown measure 'all_trek': did you mean all_trec?"),
    ("ndcg_cut10", "measure 'ndcg_cut10': ndcg takes grade=gain pairs, e.g. ndcg.1=3,2=9; did you mean ndcg_cut.10?"),
    # a known name with letters added is another measure: no guess (ERR_IA is not ERR); ranx's hits@k is no hit rate
    ("ERR_IA@10", "unknown measure 'ERR_IA@10'; known:"), ("hits@10", "unknown measure 'hits@10': ranx's hits@k (the relevant"),
])
def test_a_near_miss_measure_name_says_what_was_meant(cli, files, measure, hint):
    """A name typed from ir_measures or ranx habits was refused with the list of 50 families and nothing more
    (`P(rel=2)@5`: "measure P takes no parameters", which in ir_measures it does)."""
    result = cli("eval", files[0], files[1], "-m", measure)
    assert_one_error(result, hint, code=2)
    assert cli("eval", files[0], files[1], "-m", "P@1", "-l", "2", "-f", "tsv").stdout.splitlines()[1] == "P@1\t0.3333"


@pytest.mark.parametrize("measure,message", [
    ("RBP(p=2)", "measure 'RBP(p=2)': p is a persistence, a number between 0 and 1 (exclusive), e.g. p=0.8"),
    ("RBP(p=-1)", "measure 'RBP(p=-1)': p is a persistence"), ("RBP(p=1)", "measure 'RBP(p=1)': p is a persistence"),
    ("rbp.p=0", "measure 'rbp.p=0': p is a persistence"), ("RBP(p=nan)", "measure 'RBP(p=nan)': p takes a number"),
    ("rbp_resid(p=inf)", "measure 'rbp_resid(p=inf)': p takes a number"),
    ("SetF(beta=nan)", "measure 'SetF(beta=nan)': beta takes a number"),
    ("SetF(beta=-1)", "measure 'SetF(beta=-1)': beta weighs recall against precision, a number of 0 or more"),  # was NaN
])
def test_measure_parameters_out_of_range_are_refused(cli, files, measure, message):
    result = cli("eval", files[0], files[1], "-m", measure)
    assert_one_error(result, message, code=2)
    assert result.stdout == ""


def test_qrels_from_stdin(cli, files):
    expected = cli("eval", files[0], files[1], "-f", "tsv").stdout
    assert cli("eval", "-", files[1], "-f", "tsv", input=QRELS).stdout == expected


def test_a_bad_score_on_stdin_names_its_line(cli, files):
    """The line was found by reading stdin a second time, which gives nothing: it was named '<stdin>:0'."""
    assert_one_error(cli("eval", files[0], "-", input="q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 nan a\n"),
                     "<stdin>:2: score nan is not a finite number")


@pytest.mark.parametrize("line", ["q1 P_5 nan 1", "q1 P_5 0.1 inf"])
def test_a_zscore_file_of_nan_is_refused_and_json_stays_json(cli, write, files, line):
    """A -Z line of nan (or inf) made every value nan, and `-f json` wrote NaN, which is not JSON."""
    assert_one_error(cli("eval", *files[:2], "-m", "P@5", "-Z", write("z.txt", line + "\n")),
                     "z.txt:1: expected 'qid measure mean stddev' (finite numbers)")


def test_options_of_another_mode_are_refused(cli, write, files, monkeypatch):
    """-Z with -R qrels_jg and --fill-depth without --fill-judgments were ignored in silence; SEMREL_EVAL_FILL_DEPTH is a
    default for whenever --fill-judgments is given."""
    zscores = write("z.txt", "q1 P_5 0.1 1\n")
    for args, message in [(["-R", "qrels_jg", "-Z", zscores], "-Z standardises the values of -R qrels; it does not go with -R qrels_jg"),
                          (["--fill-depth", "5"], "--fill-depth goes with --fill-judgments: it is how deep each run's holes are filled")]:
        result = cli("eval", *files[:2], *args)
        assert result.exit_code == 2 and result.stderr == f"semrel: error: {message}\n" and result.stdout == ""
    monkeypatch.setenv("SEMREL_EVAL_FILL_DEPTH", "5")
    assert cli("eval", *files[:2]).exit_code == 0


def test_a_zscore_file_not_in_utf8_names_its_line(cli, write, files):
    """Its bytes had been decoded with replacement: a query id in latin-1 silently matched no query, and its values
    became 0. It is read as every other input is: strict UTF-8, gzip and a BOM allowed."""
    assert_one_error(cli("eval", *files[:2], "-m", "P@5", "-Z", write("z.txt", b"q1 P_5 0.1 1\nq\xe9 P_5 0.1 1\n")),
                     "z.txt:2: not valid UTF-8")


def test_json_output_writes_an_undefined_value_as_null():
    from semrel.evaluation.api import evaluate_runs
    from semrel.evaluation.render import render_evaluations

    [result], _ = evaluate_runs({"q1": {"d1": 1}}, {"r": {"q1": {"d1": 1.0}}}, ["P@1"])
    for measure in result.values:
        result.values[measure] = result.values[measure] * float("nan")
    for fmt in ("json", "jsonl"):
        text = render_evaluations([result], fmt, per_query=True)
        assert "NaN" not in text and "null" in text, text


def test_a_run_of_derived_qrels_with_holes_in_its_top_is_told_to_fill_them(cli, write):
    """A user's own retriever, scored on labels derived from other runs' pool: 37% of its top chunks were unjudged,
    counted as not relevant, and compare called it significantly worse, with no word of `--fill-judgments`."""
    judgments = write("j.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": r, "R": r, "F": r}) + "\n"
                                        for q, c, r in [("q1", "a", 0.9), ("q1", "b", 0.3), ("q2", "c", 0.8), ("q2", "d", 0.2)]))
    derived = write("derived.qrels", "")
    assert cli("label", judgments, "-o", derived).exit_code == 0
    pooled, own = write("pooled.run", "q1 Q0 a 1 2 x\nq1 Q0 b 2 1 x\nq2 Q0 c 1 2 x\nq2 Q0 d 2 1 x\n"), \
        write("own.run", "q1 Q0 a 1 2 y\nq1 Q0 z 2 1 y\nq2 Q0 y 1 2 y\nq2 Q0 c 2 1 y\n")
    said = cli("eval", derived, pooled, own, "-m", "P@2").stderr
    assert f"{own} 50%: the share of its top 2 chunks that {derived} judges; derived labels judge only the pool" in said
    assert f"--fill-judgments {judgments} --corpus CORPUS --golden GOLDEN" in said and f"{pooled} 0%" not in said
    # holes below every cutoff asked for do not count (a depth-5 pool scored at @5); a measure without one sees to 10
    judged_first = write("first.run", "q1 Q0 a 1 2 y\nq1 Q0 z 2 1 y\nq2 Q0 c 1 2 y\nq2 Q0 y 2 1 y\n")
    assert "the share of" not in cli("eval", derived, judged_first, "-m", "P@1").stderr
    assert f"{judged_first} 50%: the share of its top 10 chunks" in cli("eval", derived, judged_first, "-m", "P@1,AP").stderr
    gold = write("gold.qrels", "q1 0 a 1\nq2 0 c 1\n")  # qrels without a judge behind them leave the unjudged out by design
    assert "the share of" not in cli("eval", gold, own, "-m", "P@2").stderr



def test_the_fill_command_for_holes_names_the_files_the_manifests_name(cli, write, tmp_path, monkeypatch):
    """The holes warning printed `semrel eval QRELS RUNS --fill-judgments j.jsonl --corpus CORPUS --golden GOLDEN`, with
    the judgments as the label's manifest recorded them (relative to the folder `semrel label` ran in): nothing to paste."""
    from semrel.formats.manifest import write_manifest

    rows = [("q1", "a", 0.9), ("q1", "b", 0.3), ("q2", "c", 0.8), ("q2", "d", 0.2)]
    write("judge/j.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": r, "R": r, "F": r}) + "\n" for q, c, r in rows))
    write("judge/corpus.jsonl", "".join(json.dumps({"chunk_id": c, "text": c}) + "\n" for c in "abcd"))
    write("judge/golden words.jsonl", json.dumps({"query_id": "q1", "query": "x", "answer": "y"}) + "\n")
    write("judge/pool.tsv", "".join(f"{q}\t{c}\tx\n" for q, c, _ in rows))
    (tmp_path / "label").mkdir()
    monkeypatch.chdir(tmp_path / "judge")  # each command in a folder of its own: the manifests' paths are relative to it
    write_manifest("j.jsonl", inputs=["corpus.jsonl", "golden words.jsonl", "pool.tsv"], params={"model": "m"}, rows=len(rows))
    monkeypatch.chdir(tmp_path / "label")
    assert cli("label", "../judge/j.jsonl", "-o", "derived.qrels").exit_code == 0
    monkeypatch.chdir(tmp_path)
    own = write("own.run", "q1 Q0 a 1 2 y\nq1 Q0 z 2 1 y\nq2 Q0 y 1 2 y\nq2 Q0 c 2 1 y\n")
    said = cli("eval", "label/derived.qrels", "own.run", "-m", "P@2").stderr
    assert ("`semrel eval label/derived.qrels own.run --fill-judgments judge/j.jsonl --corpus judge/corpus.jsonl "
            "--golden 'judge/golden words.jsonl'`") in said, said
    assert f"semrel eval label/derived.qrels {own} --fill" in cli("eval", "label/derived.qrels", own, "-m", "P@2").stderr
    (tmp_path / "judge" / "corpus.jsonl").unlink()  # moved since: not named
    said = cli("eval", "label/derived.qrels", "own.run", "-m", "P@2").stderr
    assert "--fill-judgments judge/j.jsonl --corpus CORPUS --golden 'judge/golden words.jsonl'`" in said, said

def test_per_query_table_with_zscores_keeps_fractions_and_leaves_relstring_without_an_all_value(cli, write, files):
    """-Z values of counts are fractions: printed as counts (int) they lost their fraction; relstring has no 'all' value."""
    zscores = write("z.txt", "# mean and deviation of num_ret\nq1 num_ret 2 2\nq2 num_ret 1 4\n")
    args = ("eval", files[0], files[1], "-m", "num_ret,relstring", "-Z", zscores, "-q")
    rows = [line.split("\t") for line in cli(*args, "-f", "tsv").stdout.splitlines()]
    # run a retrieves 3 documents for q1 ((3 - 2) / 2), 2 for q2 ((2 - 1) / 4), none for q3 (no line: 0); relstring as trec_eval's
    assert rows == [["query", "measure", "a"], ["q1", "ZNumRet", "0.5000"], ["q1", "relstring", "21-"], ["q2", "ZNumRet", "0.2500"],
                    ["q2", "relstring", "1-"], ["q3", "ZNumRet", "0.0000"], ["q3", "relstring", ""], ["all", "ZNumRet", "0.7500"],
                    ["all", "relstring", ""]]
    records = [json.loads(line) for line in cli(*args, "-f", "jsonl").stdout.splitlines()]
    assert [(r["query_id"], r["measure"], r["value"]) for r in records] == [
        ("q1", "ZNumRet", 0.5), ("q1", "relstring", "21-"), ("q2", "ZNumRet", 0.25), ("q2", "relstring", "1-"),
        ("q3", "ZNumRet", 0.0), ("q3", "relstring", ""), ("all", "ZNumRet", 0.75)]


def test_zscores_trec_eval_cannot_compute_are_its_missing_value_and_a_query_the_run_lacks_adds_zero(cli, write, files):
    """As trec_eval's convert_zscores.c: a value with no line, or with a deviation of 0 and not the mean, is -1000000 (it
    was 0, which hid it in the 'all' row), and the command says how many; a mean of deviation 0 reached exactly is 0. A
    query the run lacks (q3) is no query trec_eval standardises: -c averages it in as 0, whatever its line says (it was
    standardised as an empty ranking's 0 here, -0.5)."""
    zscores = write("z.txt", "q1 num_ret 3 0\nq2 num_ret 1 0\nq3 num_ret 1 2\nq1 num_rel_ret 1 2\n")
    result = cli("eval", files[0], files[1], "-m", "num_ret,num_rel_ret", "-Z", zscores, "-q", "-f", "tsv")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    # a: q1 retrieves 3 (2 relevant), q2 2 (1 relevant), q3 nothing
    assert rows == [["query", "measure", "a"], ["q1", "ZNumRet", "0.0000"], ["q1", "ZNumRelRet", "0.5000"],
                    ["q2", "ZNumRet", "-1000000.0000"], ["q2", "ZNumRelRet", "-1000000.0000"], ["q3", "ZNumRet", "0.0000"],
                    ["q3", "ZNumRelRet", "0.0000"], ["all", "ZNumRet", "-1000000.0000"], ["all", "ZNumRelRet", "-999999.5000"]]
    assert result.stderr.splitlines()[-1] == (
        "semrel: warning: a: 2 values with no 'qid measure mean stddev' line (e.g. q2 num_ret), or with a deviation of 0 and a "
        "value other than the mean, set to -1000000 as trec_eval sets them")


@pytest.mark.parametrize("line", ["q1 P_5 0.1", "q1 P_5 0.1 1 2"])
def test_a_zscore_line_of_other_than_four_fields_is_refused(cli, write, files, line):
    assert_one_error(cli("eval", *files[:2], "-m", "P@5", "-Z", write("z.txt", "q2 P_5 0.1 1\n" + line + "\n")),
                     "z.txt:2: expected 'qid measure mean stddev' (finite numbers)")


def test_several_runs_in_trec_format_are_told_apart_by_their_tag(cli, write, files):
    """The runid line of each block is the run's tag, as trec_eval's runid is; once, asked for or not. Tables name runs by file."""
    tagged = write("x.run", RUN_B.replace(" b\n", " tagX\n"))
    for measures in ("P.1", "runid,P.1"):
        lines = cli("eval", files[0], files[1], tagged, "-m", measures, "-f", "trec").stdout.splitlines()
        assert lines == [f"{'runid':<22}\tall\ta", f"{'P_1':<22}\tall\t0.6667", f"{'runid':<22}\tall\ttagX",
                         f"{'P_1':<22}\tall\t0.6667"], lines
    assert cli("eval", files[0], files[1], tagged, "-m", "P@1", "-f", "tsv").stdout.splitlines()[0] == "measure\ta\tx"
    # relstring has per-query lines only: without -q there is nothing to print, not an empty line
    assert cli("eval", files[0], files[1], "-m", "relstring", "-f", "trec").stdout == ""


def test_runs_of_one_stem_are_named_by_folder_and_one_name_twice_is_refused(cli, write, files):
    x, y = write("x/a.run", RUN_A), write("y/a.run", RUN_B)
    assert cli("eval", files[0], x, y, "-m", "P@1", "-f", "tsv").stdout.splitlines()[0] == "measure\tx/a\ty/a"
    trec = write("x/a.trec", RUN_B)
    assert_one_error(cli("eval", files[0], x, trec, "-m", "P@1"),
                     f"two runs are named 'x/a' ({x} and {trec}); give the run files distinct names", code=2)


def test_counts_of_queries_with_no_results_are_written_as_the_total_is(cli, write):
    """'37500 of 50,000 queries': the count had no thousands separator where the total beside it had one."""
    qrels = write("q.qrels", "".join(f"q{i} 0 d1 1\n" for i in range(1200)))
    run = write("r.run", "q0 Q0 d1 1 1 a\n")
    said = [line for line in cli("eval", qrels, run, "-m", "RR").stderr.splitlines() if "warning" in line]
    assert said == [f"semrel: warning: 1,199 of 1,200 queries in {qrels} have no results in {run}; they score 0 (e.g. 'q1')"]


def test_queries_on_one_side_are_counted_and_their_fate_said(cli, write, files):
    qrels, a, _ = files
    extra = write("extra.run", RUN_A + "q5 Q0 d1 1 1 a\n")
    said = [line for line in cli("eval", qrels, extra, "-m", "RR", "-C").stderr.splitlines() if "warning" in line]
    assert said == [f"semrel: warning: 1 of 3 queries in {qrels} has no results in {extra}; they are left out of the 'all' row "
                    "(--no-complete) (e.g. 'q3')",
                    f"semrel: warning: 2 queries in {extra} are not in {qrels} and are ignored (e.g. 'q4')"], said


def test_many_cutoffs_past_every_ranking_are_named_three_and_counted(cli, files):
    said = cli("eval", *files, "-m", "P@5,P@10,P@20,P@30,R@100").stderr
    assert "semrel: warning: P@5, P@10, P@20 and 2 more: no run ranks more than 3 documents for a query, so these count" in said


def test_empty_qrels_are_refused(cli, write, files):
    assert_one_error(cli("eval", write("empty.qrels", ""), files[1], "-m", "P@1"),
                     "empty.qrels: no judgments (the qrels are empty); every measure would be 0")


def test_the_depth_and_share_of_holes_that_are_said(cli, write):
    """Derived qrels judge q1's c0..c8 and q2's e0: a share of exactly 90% is enough, the share is over the queries a run
    has, the depth is the deepest cutoff asked for (text measures have none), and two runs with holes are each named."""
    rows = [("q1", f"c{i}", 0.9) for i in range(9)] + [("q2", "e0", 0.9)]
    judgments = write("j.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": r, "R": r, "F": r}) + "\n" for q, c, r in rows))
    derived = write("derived.qrels", "")
    assert cli("label", judgments, "-o", derived).exit_code == 0

    def ranked(name: str, *chunks: str) -> str:
        return write(name, "".join(f"q1 Q0 {c} {i + 1} {20 - i} r\n" for i, c in enumerate(chunks)))

    nine = ranked("nine.run", *[f"c{i}" for i in range(9)], "z")  # q1 only: 9 of its top 10 judged, q2 not asked
    assert "the share of" not in cli("eval", derived, nine, "-m", "P@10").stderr
    top_two = ranked("two.run", "c0", "c1", "z1", "z2", "z3")
    assert "the share of" not in cli("eval", derived, top_two, "-m", "P@2,runid").stderr
    top_one = ranked("one.run", "c0", "z1", "z2", "z3", "z4")
    both = cli("eval", derived, top_two, top_one, "-m", "P@2,P@5").stderr
    assert f"{top_two} 40%, {top_one} 20%: the share of each run’s top 5 chunks that {derived} judges" in both


def test_library_calls_behind_eval(write, files):
    from semrel.errors import UsageError
    from semrel.evaluation.files import baseline_name, derived_judgments, evaluate_files, run_names
    from semrel.formats.trec import read_run

    qrels, a, b = files
    # a run read already is named as its file is, whatever name it was read under
    [result] = evaluate_files(qrels, [a], "P@1", runs=[read_run(b, "other")])
    assert result.run_name == "a" and result.aggregate("P@1") == pytest.approx(2 / 3)  # b's rankings: q1 d2 (0), q2 d9, q3 d1
    with pytest.raises(UsageError, match=r"^relation='qrel': give qrels, qrels_jg, prefs or qrels_prefs$"):
        evaluate_files(qrels, [a], "P@1", relation="qrel")
    # --baseline as the path given, even one that is no file (stdin)
    assert baseline_name("-", ["-", b]) == run_names(["-", b])[0]
    # the judgments a `semrel fill` qrels was derived from are its second input; a manifest without inputs names none
    filled = write("filled.qrels", "q1 0 d1 1\n")
    write("filled.qrels.manifest.json", json.dumps({"params": {"rule": "F>=0.5", "filled": []},
                                                    "inputs": [{"path": "pool.qrels"}, {"path": "pool.jsonl"}]}))
    assert derived_judgments(filled) == "pool.jsonl"
    write("filled.qrels.manifest.json", json.dumps({"params": {"rule": "F>=0.5", "filled": []}, "inputs": [{"path": "pool.qrels"}]}))
    assert derived_judgments(filled) is None


def test_trec_format_keeps_the_places_asked_for(cli, files):
    assert cli("eval", files[0], files[1], "-m", "P.5,num_q", "-f", "trec", "--places", "2").stdout.splitlines() == [
        f"{'num_q':<22}\tall\t3", f"{'P_5':<22}\tall\t0.20"]
