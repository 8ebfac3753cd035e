"""The Python API (`from semrel import Qrels, Run, evaluate, compare`): the same numbers as the CLI on
the same data, whatever form the data comes in; round trips; a light `import semrel`."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import semrel
import small_corpus
from semrel import Qrels, Run
from semrel.analysis.compare import comparison_json, render_comparison
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.evaluation.measures import DEFAULT_MEASURES, Measure, parse_measure
from semrel.evaluation.metrics import evaluate as evaluate_objects
from semrel.judging.judge import JudgeResult
from semrel.records import Chunk, GoldenItem, Judgment

pd = pytest.importorskip("pandas")

MEASURES = ["nDCG@10", "ndcg_cut.5", "AP", "RR", "R@20", "P@5", "Success@3", "Judged@10", "Rprec", "NumRet"]


def collection(seed: int = 0, queries: int = 30):
    """Graded qrels and two runs as DataFrames: tied scores, negative grades, and queries missing on
    either side (q0 judged but never retrieved by run b; r99 retrieved but never judged)."""
    rng = np.random.default_rng(seed)
    judged = [(f"q{q}", f"d{d}", int(rng.choice([-1, 0, 0, 1, 1, 2, 3])))
              for q in range(queries) for d in rng.choice(40, 12, replace=False)]
    qrels = pd.DataFrame(judged, columns=["q_id", "doc_id", "score"])
    runs = {}
    for name in ("a", "b"):
        rows = [(f"q{q}", f"d{d}", float(rng.choice([0.25, 0.5, 1.0, rng.normal()])))
                for q in range(queries) if not (name == "b" and q == 0) for d in rng.choice(40, 25, replace=False)]
        rows += [("r99", "d1", 1.0)]
        runs[name] = pd.DataFrame(rows, columns=["q_id", "doc_id", "score"])
    return qrels, runs


def write_trec(write, qrels: pd.DataFrame, runs: dict[str, pd.DataFrame]) -> tuple[str, list[str]]:
    qrels_path = write("test.qrels", "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    run_paths = [write(f"{name}.run", "".join(f"{q} Q0 {d} {i + 1} {s!r} {name}\n"
                                              for i, (q, d, s) in enumerate(df.itertuples(index=False))))
                 for name, df in runs.items()]
    return qrels_path, run_paths


def cli_json(cli, *args) -> dict:
    result = cli(*args, "-f", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_dataframe_run_gives_what_semrel_eval_gives_on_files(cli, write):
    qrels, runs = collection()
    qrels_path, run_paths = write_trec(write, qrels, runs)
    printed = cli_json(cli, "eval", qrels_path, *run_paths, "-m", ",".join(MEASURES), "--per-query")
    with pytest.warns(UserWarning, match="not in the qrels"):
        ours = semrel.evaluate(qrels, runs["a"], ["nDCG@10"])
    assert ours == {"nDCG@10": printed["a"]["all"]["nDCG@10"]}
    for name in ("a", "b"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # checked above
            means = semrel.evaluate(qrels, runs[name], MEASURES)
            per_query = semrel.evaluate(qrels, runs[name], MEASURES, per_query=True)
        assert means == {m: v for m, v in printed[name]["all"].items()}  # exact: the same computation
        assert list(means) == ["nDCG@10", "nDCG@5", "AP", "RR", "R@20", "P@5", "Success@3", "Judged@10", "Rprec", "NumRet"]
        assert {q: {m: per_query[m][q] for m in per_query} for q in per_query["AP"]} == \
            {q: v for q, v in printed[name].items() if q != "all"}


@pytest.mark.filterwarnings("ignore:.*quer")
def test_every_input_form_gives_the_same_numbers(write):
    qrels, runs = collection(seed=1)
    qrels_path, run_paths = write_trec(write, qrels, runs)
    expected = semrel.evaluate(qrels_path, run_paths, MEASURES)
    assert list(expected) == ["a", "b"]
    qrels_forms = [qrels, qrels_path, Qrels.from_df(qrels), Qrels.from_file(qrels_path), Qrels.from_df(qrels).to_dict()]
    for judged in qrels_forms:
        assert semrel.evaluate(judged, {"a": runs["a"], "b": run_paths[1]}, MEASURES) == expected
    run_objects = [Run.from_df(runs["a"], name="a"), Run.from_file(run_paths[1])]
    assert semrel.evaluate(qrels, run_objects, MEASURES) == expected
    assert semrel.evaluate(qrels, (path for path in run_paths), MEASURES) == expected  # "runs: give a Run ..., not generator" before
    assert semrel.evaluate(qrels, {"a": run_objects[0].to_dict(), "b": runs["b"]}, MEASURES) == expected
    assert semrel.evaluate(qrels, run_paths[0], MEASURES) == expected["a"]
    assert semrel.evaluate(qrels, run_objects[0].to_dict(), MEASURES) == expected["a"]


@pytest.mark.filterwarnings("ignore:.*no run ranks more than")  # nDCG@10 over runs of two documents: the point here is names
def test_measures_by_name_in_any_spelling_or_as_objects():
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}})
    run = Run.from_dict({"q1": {"d1": 0.2, "d2": 0.9}, "q2": {"d3": 1.0}})
    expected = semrel.evaluate(qrels, run, [Measure("nDCG", 10), Measure("RR")])
    assert semrel.evaluate(qrels, run, "ndcg_cut.10,recip_rank") == expected
    assert semrel.evaluate(qrels, run, ["NDCG@10", "MRR"]) == expected
    assert list(semrel.evaluate(qrels, run)) == list(DEFAULT_MEASURES)
    (lower_level,) = evaluate_objects(qrels, run, ["nDCG@10", "RR"])  # the inner API takes names too
    assert lower_level.aggregates() == expected and lower_level.per_query("RR") == {"q1": 1.0, "q2": 1.0}
    assert semrel.evaluate(qrels, run, ["P@1"], rel_level=2) == {"P@1": 0.0}


def test_round_trips():
    judged = {"q1": {"d1": 2, "d2": 0, "d3": -1}, "q2": {"d1": 1}}
    ranked = {"q1": {"d1": 0.5, "d2": 1.25}, "q2": {"d9": -3.0}}
    qrels, run = Qrels.from_dict(judged), Run.from_dict(ranked, name="x")
    assert Qrels.from_df(qrels.to_df()).to_dict() == judged
    assert Run.from_df(run.to_df(), name="x").to_dict() == ranked
    frame = qrels.to_df()
    assert list(frame.columns) == ["q_id", "doc_id", "score"] and frame["score"].tolist() == [2, 0, -1, 1]
    renamed = run.to_df().rename(columns={"q_id": "qid", "doc_id": "docno", "score": "s"})
    assert Run.from_df(renamed, q_id_col="qid", doc_id_col="docno", score_col="s").to_dict() == ranked
    numbered = pd.DataFrame({"q_id": [1, 1], "doc_id": [7, 8], "score": [1.0, 0.0]})  # ids as numbers: their text
    assert Qrels.from_df(numbered).to_dict() == {"1": {"7": 1, "8": 0}}
    mixed = pd.DataFrame({"q_id": [1, "q2"], "doc_id": ["d", 7], "score": [1.0, 0.5]})  # pyarrow's ArrowInvalid before
    assert Run.from_df(mixed).to_dict() == {"1": {"d": 1.0}, "q2": {"7": 0.5}}
    assert repr(run) == "Run('x': 3 results, 2 queries)" and repr(qrels) == "Qrels(4 judgments, 2 queries)"


def test_qrels_and_runs_are_equal_by_their_rows_not_their_identity(write):
    """Qrels and Run compared by identity: a qrels file and the dict it was read into, or two reads of one file, were unequal."""
    path = write("j.qrels", "q2 0 d3 1\nq1 0 d1 2\nq1 0 d2 0\n")
    judged = Qrels.from_file(path)
    assert judged == Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}) == Qrels.from_df(judged.to_df())
    assert hash(judged) == hash(Qrels.from_dict(judged.to_dict())) and len({judged, Qrels.from_file(path)}) == 1
    assert judged != Qrels.from_dict({"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}})  # another grade
    assert judged != Qrels.from_dict({"q1": {"d1": 2}, "q2": {"d3": 1}})  # a pair judged 0 is not a pair left unjudged
    run = Run.from_file(write("x.run", "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"))
    assert run == Run.from_dict({"q1": {"d2": 1.5, "d1": 2.5}}, name="x") and run != Run.from_dict({"q1": {"d2": 1.5, "d1": 2.5}})
    assert run != Run.from_dict({"q1": {"d1": 2.5, "d2": 1.25}}, name="x") and run != judged
    assert hash(run) == hash(Run.from_df(run.to_df(), name="x"))


def test_file_round_trip(write):
    path = write("r.run", "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n")
    run = Run.from_file(path)
    assert run.name == "r" and run.to_dict() == {"q1": {"d1": 2.5, "d2": 1.5}}
    assert Run.from_file(path, name="mine").name == "mine"
    assert run.tag == "t" and semrel.evaluate({"q1": {"d1": 1}}, run, ["runid", "P@1"]) == {"runid": "t", "P@1": 1.0}


def test_a_table_that_is_not_a_pandas_frame_is_refused_by_kind():
    import pyarrow as pa

    table = pa.table({"q_id": ["q"], "doc_id": ["d"], "score": [1]})  # it has .columns, as a DataFrame has
    with pytest.raises(TypeError, match=r"^qrels: give a Qrels, .* or a file path, not Table$"):
        semrel.evaluate(table, {"q": {"d": 1.0}})
    with pytest.raises(TypeError, match=r"^runs: give a Run, .* or a file path, not Table$"):
        semrel.evaluate({"q": {"d": 1}}, table)


@pytest.mark.parametrize("frame,call,message", [
    ({"q": ["a"], "doc_id": ["d"], "score": [1]}, Qrels.from_df, r"no column 'q_id' \(q_id_col='q_id'\)"),
    ({"q_id": ["a"], "doc_id": ["d"], "score": [0.5]}, Qrels.from_df, r"'score' \(score_col=\) must hold whole-number"),
    ({"q_id": ["a", None], "doc_id": ["d", "e"], "score": [1, 2]}, Run.from_df, r"'q_id' \(q_id_col=\) is empty at index 1"),
    ({"q_id": ["a"], "doc_id": ["d"], "score": [np.inf]}, Run.from_df, r"must hold finite numbers; index 0 holds inf"),
])
def test_dataframe_errors_name_the_parameter(frame, call, message):
    with pytest.raises(ValidationError, match=message):
        call(pd.DataFrame(frame))


def test_without_pandas_to_df_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"Qrels.to_df needs pandas: pip install 'semrel\[pandas\]'"):
        Qrels.from_dict({"q": {"d": 1}}).to_df()


def test_api_errors_name_parameters():
    qrels = {"q": {"d": 1}}
    with pytest.raises(UsageError, match="runs: two runs are named 'run'"):
        semrel.evaluate(qrels, [{"q": {"d": 1.0}}, {"q": {"d": 2.0}}])
    with pytest.raises(TypeError, match="qrels: give a Qrels"):
        semrel.evaluate(3, {"q": {"d": 1.0}})
    with pytest.raises(TypeError, match="measures: give a name, a Measure or a list of them, not int"):
        semrel.evaluate(qrels, {"q": {"d": 1.0}}, 5)  # "'int' object is not iterable" before
    with pytest.raises(UsageError, match="unknown measure 'nDCG@x'"):
        semrel.evaluate(qrels, {"q": {"d": 1.0}}, ["nDCG@x"])
    for option, message in [({"depth": 0}, r"^depth=0: give a whole number of documents, at least 1$"),
                            ({"num_docs": -1}, r"^num_docs=-1: give the collection size, a whole number of 0 or more$"),
                            ({"rel_level": -1}, r"^rel_level=-1: give the lowest relevant grade, a whole number of 0 or more$")]:
        with pytest.raises(UsageError, match=message):
            semrel.evaluate(qrels, {"q": {"d": 1.0}}, ["P@1"], **option)
    assert semrel.evaluate(qrels, {"q": {"e": 2.0, "d": 1.0}}, ["P@1", "P@2"], depth=1, num_docs=0) == {"P@1": 0.0, "P@2": 0.0}
    runs = {"a": {"q": {"d": 1.0}}, "b": {"q": {"e": 1.0, "d": 0.5}}}
    with warnings.catch_warnings():  # a call refused is refused first: no warning of its one query before the error
        warnings.simplefilter("error")
        with pytest.raises(UsageError, match=r"baseline='zzz' is none of the runs \(a, b\)"):
            semrel.compare(qrels, runs, ["RR"], baseline="zzz")
        with pytest.raises(UsageError, match="give baseline= or all_pairs=True, not both"):
            semrel.compare(qrels, runs, ["RR"], baseline="a", all_pairs=True)
        with pytest.raises(UsageError, match="runs: give two or more runs"):
            semrel.compare(qrels, runs["a"], ["RR"])
    # an AttributeError or an unpacking error from deep inside before
    chunk, item = Chunk("c#0", "text", "c", 0, 4), GoldenItem("q", "query?", ("answer",))
    for args, message in (((5, [item], []), "corpus: give a file path or a list of Chunk, not int"),
                          (([chunk], 5, []), "golden: give a file path or a list of GoldenItem, not int"),
                          (([chunk], [item], 5), r"pool: give a file path or a list of \(query_id, chunk_id, sources\) tuples, not int")):
        with pytest.raises(TypeError, match=message):
            semrel.judge(*args, cache=False)
    for args, message in ((([], [item]), "corpus: the list is empty; give at least one Chunk"),
                          (([chunk], [item], [("q",)]), r"pool: item 0: \('q',\) is not \(query_id, chunk_id, sources\)"),
                          (([chunk], [item], [("q", "c#0", "bm25")]), r"pool: item 0: .* sources a tuple of names"),
                          (([chunk], [item], [("q", "c#0", ("bm25",))] * 2), r"pool: item 1: pair \('q', 'c#0'\) is given twice")):
        with pytest.raises(ValidationError, match=message):  # as a pool.tsv's lines are checked
            semrel.judge(*args, cache=False)
    for call, message in ((lambda: Qrels.from_dict({"q": ["d"]}), r"Qrels.from_dict: give \{query_id: \{doc_id: grade\}\}, not dict"),
                          (lambda: Run.from_dict([("q", "d", 1.0)]), r"Run.from_dict: give \{query_id: \{doc_id: score\}\}, not list"),
                          (lambda: semrel.judge([chunk], [{"query_id": "q"}], []), r"golden: .* not of dict \(item 0: \{'query_id'"),
                          (lambda: semrel.label(5), "judgments: give a file path or a list of Judgment, not int"),
                          (lambda: semrel.label([], warn=5), "warn: give a function taking one message, not int")):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(UsageError, match="engine='spark': choose one of"):  # an engine by name, as --engine gives it
        semrel.judge([chunk], [item], [], engine="spark")
    # a truthy "no" was taken as True, an engine of the wrong kind failed deep in the encoder, None or "" as a run's name
    for call, message in ((lambda: semrel.evaluate(qrels, {"q": {"d": 1.0}}, per_query="no"), "per_query: give True or False, not str"),
                          (lambda: semrel.evaluate(qrels, {"q": {"d": 1.0}}, judged_only=1), "judged_only: give True or False, not int"),
                          (lambda: semrel.compare(qrels, runs, all_pairs="yes"), "all_pairs: give True or False, not str"),
                          (lambda: semrel.judge([chunk], [item], [], idf="no"), "idf: give True or False, not str"),
                          (lambda: semrel.judge([chunk], [item], [], cache=3), "cache: give a folder, or False for no cache, not int"),
                          (lambda: semrel.judge([chunk], [item], [], engine=3), r"engine: give a name \(local, ray\) or"),
                          # "expected str, bytes or os.PathLike object, not int", naming no parameter
                          (lambda: semrel.judge([chunk], [item], [], model=3), "model: give a model name or folder, not int"),
                          (lambda: semrel.judge([chunk], [item], [], output=3), "output: give a file path, not int"),
                          (lambda: Run.from_dict({"q": {"d": 1.0}}, None), "name: give a run name, not None"),
                          (lambda: semrel.label([], graded="no"), "graded: give True or False, not str"),  # graded labels before
                          # an open file or a Run where a path goes was "no such file (check the path)"; an open run file
                          # was taken for a list of runs, each line a missing file
                          (lambda: Qrels.from_file(io.StringIO("q 0 d 1\n")), "path: give a file path, not StringIO"),
                          (lambda: Qrels.from_file(Run.from_dict({"q": {"d": 1.0}})), "path: give a file path, not Run"),
                          (lambda: Run.from_file(None), "path: give a file path, not None"),
                          (lambda: Run.from_file("r.run", name=5), "name: give a run name, not int"),
                          (lambda: semrel.evaluate(qrels, io.StringIO("q Q0 d 1 1.0 t\n")), "runs: give a Run, .* not StringIO"),
                          (lambda: render_comparison(None, "table"), "c: give the Comparison semrel.compare returns, not None")):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(UsageError, match="name: a run name may not be empty"):
        Run.from_dict({"q": {"d": 1.0}}, "")
    with pytest.raises(UsageError, match="measures: none named"):  # it evaluated the default measures
        semrel.evaluate(qrels, {"q": {"d": 1.0}}, [])


@pytest.mark.parametrize("measures, message", [
    (b"nDCG@10", "measures: give a name, a Measure or a list of them, not bytes"),  # "unknown measure '110'" before
    ({"nDCG@10": 1}, "measures: give a name, a Measure or a list of them, not dict"),  # its keys were taken
    (["RR", None], "measures: give names or Measures, not None"),  # "unknown measure 'None'" before
    ([10], "measures: give names or Measures, not int"),
])
def test_measures_of_the_wrong_kind_are_a_type_error_naming_measures(measures, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        semrel.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, measures)


NAN = float("nan")


@pytest.mark.parametrize("call, message", [
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": NAN, "d2": 0.5}}, ["RR"]),  # ranked first or last by dict order
     r"Run 'run': scores must be finite numbers; \('q1', 'd1'\) has nan"),
    (lambda: semrel.evaluate({"q1": {"d1": 0.5, "d2": 1}}, {"q1": {"d1": 1.0}}, ["NumRel"]),  # 0.5 was cut to 0
     r"Qrels: grades must be whole numbers; \('q1', 'd1'\) has 0.5"),
    (lambda: Qrels.from_dict({"q1": {"d1": 2**70}}), "grades must be whole numbers"),
    (lambda: Qrels.from_dict({"q1": {"d1": None}}), r"grades must be numbers; \('q1', 'd1'\) has None"),  # was "has nan"
    (lambda: Qrels.from_dict({"q1": {"d1": "1"}}), r"grades must be numbers; \('q1', 'd1'\) has '1'"),  # was grade 1
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": True, "d2": 0.5}}, ["RR"]),  # was score 1.0
     r"Run 'run': scores must be numbers; \('q1', 'd1'\) has True"),
    (lambda: Run.from_columns(["q1", "q2"], ["d1"], [1.0, 2.0]), "2 query ids, 1 doc ids and 2 scores"),
    (lambda: Run.from_columns([None], ["d"], [1.0]), "an id is None"),
    (lambda: Run.from_dict({"q1": {"d1": "abc"}}), "scores must be numbers"),
    (lambda: Run.from_dict({"q1": {"d1": 1 + 2j}}), "scores must be real numbers, not complex"),  # 1.0, with a numpy warning
    (lambda: semrel.evaluate({}, {"q1": {"d1": 1.0}}, ["P@5"]), "the qrels have no rows, the run has 'q1'"),  # "have , the run"
    (lambda: semrel.split_golden([GoldenItem("q1", "oil?", ("chain oil",))], seed=-1), r"seed=-1: give 0 or more"),  # numpy's
    (lambda: semrel.calibrate([Judgment("q1", "d1", 0.5, 0.5, 0.5, p=0.9)], "human.qrels", seed=-1), r"seed=-1: give 0 or more"),
    (lambda: semrel.retrieve([Chunk("a#0", "chain oil", "a", 0, 9)], [GoldenItem("q1", "oil?", ("chain oil",))], "dense",
                             bm25_k1=1.0, cache=False), "bm25_k1=1.0 is BM25's; it does not apply to method='dense'"),  # ignored
    (lambda: semrel.retrieve([Chunk("a#0", "chain oil", "a", 0, 9)], [GoldenItem("q1", "oil?", ("chain oil",))], "bm25",
                             model="x", cache=False), "model='x' is the dense encoder; it does not apply to method='bm25'"),  # ignored
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, [], ["P@1"]), "runs: none given"),
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [Measure("P", 0)]), "the cutoff must be at least 1"),
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, [Measure("P", 1.5)]), "the cutoff must be a whole number"),
    (lambda: semrel.label([Judgment("q1", "d1", 0.5, 0.5, 0.5, p=NAN)]), "p must be a probability between 0 and 1, found nan"),
    (lambda: semrel.label([Judgment("q1", "d1", 0.5, 0.5, 0.5, p=0.9), Judgment("q1", "d1", 0.5, 0.5, 0.5, p=0.1)]),
     "is given twice"),
    (lambda: semrel.judge([Chunk("a#0", "chain oil", "a", 0, 9)], [GoldenItem("q1", "oil?", ("chain oil",), ("a#0",))],
                          rescale="corpus", baseline_pairs=0, cache=False), "rescale='corpus' needs 1 or more unrelated pairs"),
])
def test_what_the_file_readers_refuse_is_refused_from_python_objects_too(call, message):
    """Dicts, columns, Measure and Judgment objects get the checks files get, instead of wrong numbers."""
    with pytest.raises((UsageError, ValidationError), match=message):
        call()


J1 = [Judgment("q1", "d1", 0.5, 0.5, 0.5, p=0.9)]
TWO_RUNS = {"a": {"q": {"d": 1.0}}, "b": {"q": {"d": 0.5, "e": 1.0}}}
ONE_ITEM = ([Chunk("a#0", "chain oil", "a", 0, 9)], [GoldenItem("q1", "oil?", ("chain oil",), ("a#0",))])


@pytest.mark.parametrize("call, message", [
    # each was a UsageError, where retrieve(k="x"), fuse(depth=1.5), pool(depth="x") and the others were TypeErrors
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, depth=1.5),
     "depth: give a whole number of documents, at least 1, not float"),
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, num_docs=float("inf")),
     "num_docs: give the collection size, a whole number of 0 or more, not float"),
    (lambda: semrel.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, rel_level="1"),
     "rel_level: give the lowest relevant grade, a whole number, not str"),
    (lambda: semrel.compare({"q": {"d": 1}}, TWO_RUNS, permutations=1.5), "permutations: give a whole number, not float"),
    (lambda: semrel.compare({"q": {"d": 1}}, TWO_RUNS, alpha="0.05"), "alpha: give a number, not str"),
    (lambda: semrel.compare({"q": {"d": 1}}, TWO_RUNS, test=3), "test: give one of t, randomization, bootstrap, not int"),
    (lambda: semrel.compare({"q": {"d": 1}}, TWO_RUNS, baseline=3), "baseline: give a run's name, not int"),
    (lambda: semrel.sensitivity([Judgment("q", "d", 0.5, 0.5, 0.5, p=0.9)], TWO_RUNS, alpha="0.05"), "alpha: give a number, not str"),
    # int(None) deep inside, naming no parameter
    (lambda: semrel.sensitivity([Judgment("q", "d", 0.5, 0.5, 0.5, p=0.9)], TWO_RUNS, rel_level=None),
     "rel_level: give a whole number, not None"),
    (lambda: semrel.agree({"q": {"d": 1}}, {"q": {"d": 1}}, TWO_RUNS, rel_level=None), "rel_level: give a whole number, not None"),
    # named the parameter `runs`, which lift has not
    (lambda: semrel.lift({"q": {"d": 1}}, 5, TWO_RUNS["a"]),
     "base: give a Run, a dict {query: {doc: score}}, a pandas DataFrame or a file path, not int"),
    (lambda: semrel.lift({"q": {"d": 1}}, TWO_RUNS["a"], None),
     "reranked: give a Run, a dict {query: {doc: score}}, a pandas DataFrame or a file path, not NoneType"),
    (lambda: semrel.label(J1, grades="0.5,0.7"),  # its characters became thresholds
     "grades: give increasing thresholds as a list, e.g. [0.6, 0.7, 0.8], not str"),
    (lambda: semrel.label(J1, grades=["0.5"]), "grades: give numbers, not str"),
    (lambda: semrel.label(J1, threshold="0.5"), "threshold: give a number, not str"),
    (lambda: semrel.label(J1, on=3), "on: give one of p, P, R, F, not int"),
    (lambda: semrel.label(J1, 5), "output: give a file path, not int"),  # wrote to fd 5; judge(output=5) was a TypeError already
    (lambda: semrel.label(J1, calibration={"cut": 0.5}), "calibration: give the file `semrel calibrate -o` wrote, or a rule, not dict"),
    (lambda: semrel.judge(*ONE_ITEM, layer=1.5, cache=False), "layer: give a whole number, not float"),  # transformers' own error before
    (lambda: semrel.judge(*ONE_ITEM, rescale=3, cache=False), "rescale: give one of none, baseline, corpus, not int"),
    (lambda: semrel.simulate_review("never-made.sqlite", {"q": {"d": 1}}, reviewer="a", order=3),
     "order: give one of uncertain, random, query, query-sample, not int"),
])
def test_an_argument_of_the_wrong_kind_is_a_type_error_in_every_function(call, message):
    """One rule across the API (docs/python.md): a wrong kind is a TypeError naming the parameter, a bad value a UsageError."""
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        call()


def test_results_show_in_a_notebook_as_one_line_not_every_per_query_value():
    """A Comparison of runs over 1,000 queries printed every query id and per-query array of each Evaluation and a
    Measure's every field: tens of thousands of characters where a notebook cell shows its last value."""
    queries = [f"q{i}" for i in range(1000)]
    runs = {"a": {q: {"d1": 1.0, "d2": 0.5} for q in queries}, "b": {q: {"d2": 1.0, "d1": 0.5} for q in queries}}
    c = semrel.compare({q: {"d1": 1} for q in queries}, runs, ["P@1", "nDCG(dcg='exp-log2')@2"], permutations=100, bootstrap=100)
    assert repr(c) == ("Comparison(runs 'a', 'b' on P@1, nDCG(dcg='exp-log2')@2; 2 paired tests against baseline 'a', "
                       "2 significant (randomization, holm, alpha 0.05))")
    assert repr(c.evaluations[1]) == "Evaluation('b': 1,000 queries; P@1, nDCG(dcg='exp-log2')@2)"
    assert [repr(m) for m in c.measures] == ["Measure('P@1')", "Measure(\"nDCG(dcg='exp-log2')@2\")"]
    assert [parse_measure(m.name) for m in c.measures] == c.measures  # the name shown reads back as the measure
    result = JudgeResult(judgments=[Judgment("q1", "c1", 0.5, 0.5, 0.5)] * 3, params={"model": "x"}, encoded=4, null_pairs=25,
                         warnings=["w"])
    assert repr(result) == "JudgeResult(3 judgments; 4 texts encoded, 0 cached, 0 pairs resumed, 25 null pairs; 1 warning)"


def test_a_comparison_refuses_runs_measures_and_formats_it_does_not_hold():
    queries = [f"q{i}" for i in range(1, 6)]  # enough for paired tests to mean something: no warning
    qrels = {q: {"d1": 1} for q in queries}
    c = semrel.compare(qrels, {"a": {q: {"d1": 1.0} for q in queries}, "b": {q: {"d2" if q == "q1" else "d1": 1.0} for q in queries}},
                       ["P@1"])
    assert c.value("a", "P@1") == 1.0 and c.value("b", "P@1") == 0.8
    with pytest.raises(UsageError, match="run 'zz' was not compared"):
        c.value("zz", "P@1")
    with pytest.raises(UsageError, match="AP was not compared"):
        c.marks("a", "AP")
    with pytest.raises(UsageError, match="format 'html'"):
        render_comparison(c, "html")
    with pytest.warns(UserWarning, match="the runs are compared on 1 query: paired tests of so few differences mean little"):
        one = semrel.compare({"q1": {"d1": 1}}, {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 1.0, "d1": 0.5}}}, ["P@1"],
                             test="bootstrap")
    assert one.tests[0].bootstrap_p == 1.0 and not one.tests[0].significant  # one query resamples to itself


def test_warnings_point_at_the_callers_line():
    with pytest.warns(UserWarning, match=r"1 of 2 queries in the qrels has no results in run 'run'") as caught:
        semrel.evaluate({"q1": {"d": 1}, "q2": {"d": 1}}, {"q1": {"d": 1.0}}, ["RR"])
    assert caught[0].filename == __file__


def test_a_cutoff_past_every_runs_depth_is_warned_of_as_semrel_eval_warns(cli, write):
    """R@100 over runs of 20 is recall at 20 (trec_eval's semantics): `semrel eval` and `semrel compare` said so on stderr,
    evaluate and compare said nothing, and a notebook's R@100 (a default measure) read as recall at 100."""
    qrels = {"q1": {"d1": 1, "d9": 1}, "q2": {"d2": 1}}
    runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0, "d3": 0.5}, "q2": {"d2": 1.0}}, "b": {"q1": {"d9": 1.0}, "q2": {"d1": 1.0, "d2": 0.5}}}
    qrels_path = write("q.qrels", "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    run_paths = [write(f"{name}.run", "".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in run.items() for d, s in docs.items()))
                 for name, run in runs.items()]
    for command in ("eval", "compare"):
        printed = cli(command, qrels_path, *run_paths, "-m", "R@5,P@3,RR").stderr.splitlines()
        said = [line.removeprefix("semrel: warning: ") for line in printed if "no run ranks more than" in line]
        assert len(said) == 1 and said[0].startswith("R@5: no run ranks more than 3 documents")
        with pytest.warns(UserWarning) as caught:
            (semrel.evaluate if command == "eval" else semrel.compare)(qrels, runs, ["R@5", "P@3", "RR"])
        assert [str(w.message) for w in caught if "no run ranks" in str(w.message)] == said
        assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cutoff the deepest run reaches is no news
        semrel.evaluate(qrels, runs, ["P@3", "RR"])


def test_runs_with_holes_in_derived_qrels_are_warned_of_as_semrel_eval_warns(cli, write):
    """`semrel eval` and `compare` on qrels that `semrel label` derived warn of a run whose top the pool left unjudged
    (scored as not relevant); semrel.evaluate and semrel.compare on the same file said nothing."""
    judgments = write("j.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": r, "R": r, "F": r}) + "\n"
                                        for q, c, r in [("q1", "a", 0.9), ("q1", "b", 0.3), ("q2", "c", 0.8), ("q2", "d", 0.2)]))
    derived = write("derived.qrels", "")
    assert cli("label", judgments, "-o", derived).exit_code == 0
    runs = {"pooled": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}},
            "own": {"q1": {"a": 2.0, "z": 1.0}, "q2": {"y": 2.0, "c": 1.0}}}
    for command in (semrel.evaluate, semrel.compare):
        with pytest.warns(UserWarning) as caught:
            command(derived, runs, ["P@2"])
        said = [str(w.message) for w in caught if "the share of" in str(w.message)]
        assert len(said) == 1 and said[0].startswith(f"run 'own' 50%: the share of its top 2 chunks that {derived} judges"), said
        assert f"--fill-judgments {judgments} --corpus CORPUS" in said[0] and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same labels given as a dict have no judgments behind them to name
        semrel.evaluate(Qrels.from_file(derived).to_dict(), runs["own"], ["P@2"])


def test_compare_refuses_one_run_before_evaluating_it_and_reads_a_generator_of_runs_once():
    """One run was evaluated first: its warnings (a cutoff past its ranking) came before the error that ended the call."""
    qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
    runs = {"x": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0}}, "y": {"q1": {"b": 2.0}, "q2": {"c": 1.0, "d": 0.5}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for one in (runs["x"], [runs["x"]], {"x": runs["x"]}):
            with pytest.raises(UsageError, match=r"^runs: give two or more runs to compare"):
                semrel.compare(qrels, one, ["P@10"])
    with pytest.warns(UserWarning, match="compared on 2 queries"):
        generated = semrel.compare(qrels, (Run.from_dict(run, name) for name, run in runs.items()), ["P@1"], permutations=100)
    assert generated.value("x", "P@1") == 1.0 and generated.value("y", "P@1") == 0.5


def test_compare_warns_of_few_queries_from_the_callers_line():
    """The warning came from semrel/analysis/compare.py, where the evaluation's came from the caller's line."""
    runs = {"x": {"q1": {"a": 2.0}, "q2": {"b": 1.0}}, "y": {"q1": {"a": 1.0}, "q2": {"c": 1.0}}}
    with pytest.warns(UserWarning) as caught:
        semrel.compare({"q1": {"a": 1}, "q2": {"b": 1}}, runs, ["P@1"], permutations=10, bootstrap=10)
    said = [(str(w.message), w.filename) for w in caught]
    assert said == [("the runs are compared on 2 queries: paired tests of so few differences mean little (p-values and intervals "
                     "are shown as computed); compare on more queries", __file__)]


@pytest.mark.parametrize("option,value", [("confidence", 2.0), ("alpha", 1.5)])
def test_compare_names_the_level_out_of_range(option, value):
    """confidence=2 said 'alpha= and the confidence level must lie ...': alpha was never given."""
    runs = {"x": {"q1": {"a": 2.0}}, "y": {"q1": {"a": 1.0}}}
    with pytest.raises(UsageError, match=f"^{option}={value}: give a number strictly between 0 and 1$"):
        semrel.compare({"q1": {"a": 1}}, runs, ["P@1"], **{option: value})


@pytest.mark.filterwarnings("ignore:.*quer")
def test_compare_gives_what_semrel_compare_gives(cli, write):
    qrels, runs = collection(seed=2)
    qrels_path, run_paths = write_trec(write, qrels, runs)
    printed = cli_json(cli, "compare", qrels_path, *run_paths, "-m", "nDCG@10,RR", "--permutations", "500",
                       "--bootstrap", "500")
    comparison = semrel.compare(qrels, runs, ["nDCG@10", "RR"], permutations=500, bootstrap=500)
    assert comparison_json(comparison) == printed
    assert comparison.value("b", "RR") == printed["runs"][1]["values"]["RR"]
    assert comparison.marks("a", "RR") == "".join(
        comparison.letter(r) for r in printed["runs"][0]["beats"]["RR"])


HEAVY = ("torch", "pandas", "transformers", "scipy", "matplotlib")


def test_compare_takes_the_options_of_semrel_compare_that_change_the_lists_scored(cli, write):
    """-J, -M and --corpus of `semrel compare` had no keyword in semrel.compare: its tests could not be run on the values
    `semrel eval -J -M` (and `evaluate(judged_only=, depth=)`) gives, nor a run's unlisted chunks be warned of."""
    qrels, runs = collection(seed=3)
    qrels_path, run_paths = write_trec(write, qrels, runs)
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": f"d{d}", "text": "t"}) + "\n" for d in range(39)))  # not d39
    args = ["-m", "nDCG@10,RR", "--permutations", "300", "--bootstrap", "300", "-J", "-M", "8", "--corpus", corpus]
    result = cli("compare", qrels_path, *run_paths, *args, "-f", "json")
    assert result.exit_code == 0, result.stderr
    with pytest.warns(UserWarning) as heard:
        comparison = semrel.compare(qrels, runs, ["nDCG@10", "RR"], permutations=300, bootstrap=300, judged_only=True, depth=8,
                                    corpus=corpus)
        evaluated = semrel.evaluate(qrels, runs["a"], "RR", judged_only=True, depth=8)["RR"]
    assert comparison_json(comparison) == json.loads(result.stdout)
    assert comparison.value("a", "RR") == evaluated
    said = [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if "does not list" in line]
    assert len(said) == 2 and [str(w.message) for w in heard if "does not list" in str(w.message)] == said  # runs a and b


def test_import_semrel_is_light():
    code = (
        "import sys, json; import semrel; bare = sorted(m for m in sys.modules if m.split('.')[0] in HEAVY + LIGHT); "
        "from semrel import Qrels, Run, evaluate; api = sorted(m for m in sys.modules if m.split('.')[0] in HEAVY); "
        "print(json.dumps([bare, api]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(semrel.__file__)),
                                                         os.environ.get("PYTHONPATH", "")])}
    prelude = f"HEAVY = {HEAVY!r}; LIGHT = ('numpy', 'pyarrow'); "
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env, check=True)
    bare, api = json.loads(done.stdout)
    assert bare == [], f"`import semrel` loaded {bare}"
    assert api == [], f"`from semrel import Qrels, Run, evaluate` loaded {api}"


def test_the_lazy_names():
    assert {"Qrels", "Run", "evaluate", "compare", "judge", "label", "__version__"} <= set(dir(semrel))
    assert semrel.compare.__name__ == "compare" and semrel.evaluate.__module__ == "semrel.evaluation.api"
    with pytest.raises(TypeError, match=r"^compare\(\) got an unexpected keyword argument 'run'"):  # named as the user calls it
        semrel.compare({"q1": {"d1": 1}}, run={"q1": {"d1": 1.0}})
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        semrel.nope  # noqa: B018
    labelled = semrel.label([Judgment("q1", "d1", 0.9, 0.9, 0.9)], warn=lambda message: None)
    assert isinstance(labelled, semrel.Qrels) and labelled.to_dict() == {"q1": {"d1": 1}}  # the class semrel names, from_file too
    assert (Path(semrel.__file__).parent / "py.typed").is_file()  # PEP 561: type checkers read the annotations


@pytest.mark.slow
def test_a_script_using_the_api_as_documented_type_checks(tmp_path):
    """mypy takes the constructors' results for the class they are called on: Run.from_df gave a semrel.records.Run,
    which a `run: semrel.Run` annotation refused (and which has no from_file); semrel.__version__ was Any. Under
    --strict (disallow_untyped_calls) `run.to_df()` was an error: to_df had no annotations."""
    script = tmp_path / "user.py"
    script.write_text("import semrel\n"
                      "run: semrel.Run = semrel.Run.from_dict({'q': {'d': 1.0}}, 'r')\n"
                      "qrels: semrel.Qrels = semrel.Qrels.from_dict({'q': {'d': 1}})\n"
                      "frame = semrel.Run.from_df(run.to_df())\n"
                      "values: dict = semrel.evaluate(qrels, [run, frame], ['nDCG@10'])\n"
                      "fused: semrel.Run = semrel.fuse([run, frame])\n"
                      "version: int = semrel.__version__  # wrong on purpose: mypy must know it is a str\n")
    heavy = "torch,transformers,pandas,scipy,matplotlib,sklearn,ray,bert_score,pyarrow,numpy,flask,rich,jinja2,click"
    (tmp_path / "mypy.ini").write_text(  # the libraries below semrel are not what is checked here (and take minutes)
        "[mypy]\nignore_missing_imports = True\ndisallow_untyped_calls = True\n"
        "[mypy-" + ",".join(f"{m}.*" for m in heavy.split(",")) + "]\nfollow_imports = skip\n")
    src = os.path.dirname(os.path.dirname(semrel.__file__))
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental", "--cache-dir", os.devnull,
                           "user.py"], capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "MYPYPATH": src})
    found = [line for line in done.stdout.splitlines() if line.startswith("user.py")]
    assert found == ['user.py:7: error: Incompatible types in assignment (expression has type "str", variable has type "int")'
                     "  [assignment]"]


@pytest.mark.slow
def test_judge_and_label_from_python_never_write_over_what_they_read_and_warn_at_the_callers_line(tmp_path):
    """semrel.label(j, output=j) replaced the judgments with their qrels, and judge(..., output=golden) the golden set:
    the CLI's guard ran only inside commands. Judge's warnings were kept in its result alone."""
    corpus, golden = tmp_path / "corpus.jsonl", tmp_path / "golden.jsonl"
    small_corpus.write_corpus(corpus)
    small_corpus.write_golden(golden, [("q1", "Why do cats purr?", "Why do cats purr?", ["cats#0"])])  # the question as answer
    before = golden.read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.judge(corpus, golden, None, golden, cache=tmp_path / "cache")
    assert golden.read_bytes() == before
    with pytest.raises(SemrelError, match="is an input of this command"):  # the corpus, streamed later: refused before the work
        semrel.judge(corpus, golden, None, corpus, cache=tmp_path / "cache")
    assert not (tmp_path / "corpus.jsonl.partial").exists()
    with pytest.warns(UserWarning, match="question") as caught:
        result = semrel.judge(corpus, golden, None, tmp_path / "j.jsonl", cache=tmp_path / "cache")
    assert caught[0].filename == __file__ and any("question" in w for w in result.warnings)
    heard: list[str] = []
    semrel.judge(corpus, golden, None, cache=tmp_path / "cache", warn=heard.append, engine="local")  # an engine by name
    assert heard == result.warnings
    judgments = (tmp_path / "j.jsonl").read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.label(tmp_path / "j.jsonl", output=tmp_path / "j.jsonl", warn=lambda message: None)
    assert (tmp_path / "j.jsonl").read_bytes() == judgments
    settings = (tmp_path / "j.jsonl.manifest.json").read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):  # label reads the judge's settings there
        semrel.label(tmp_path / "j.jsonl", output=tmp_path / "j.jsonl.manifest.json", warn=lambda message: None)
    assert (tmp_path / "j.jsonl.manifest.json").read_bytes() == settings


@pytest.mark.parametrize("names,module", [(("retrieve", "fuse", "pool"), "semrel.retrieval.api"),
                                          (("sensitivity", "calibrate", "agree", "lift"), "semrel.analysis.api"),
                                          (("import_golden", "split_golden", "dedup_golden", "validate_golden", "golden_stats"),
                                           "semrel.golden.api"),
                                          (("export_reviews", "simulate_review", "review_stats", "estimate"), "semrel.review.api"),
                                          (("fill",), "semrel.judging.fill")])
def test_the_names_load_no_model_library_until_called(names, module):
    assert set(names) <= set(dir(semrel)) and set(names) <= set(semrel.__all__)
    assert {getattr(semrel, name).__module__ for name in names} == {module}
    code = (f"import sys, json; from semrel import {', '.join(names)}; "
            "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'pandas', 'scipy', 'sklearn', 'bm25s') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(semrel.__file__).parents[1]),
                                                                            os.environ.get("PYTHONPATH", "")])})
    assert json.loads(done.stdout) == []
