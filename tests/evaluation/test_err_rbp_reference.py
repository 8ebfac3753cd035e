"""ERR@k and RBP against independent implementations, to 1e-9: ERR against the TREC Web track's gdeval.pl (the perl
script ir_measures ships and runs for its ERR), RBP against ranx's rbp.

gdeval prints 5 decimals and takes numeric query ids only ("format error on line 1" for `q1`: ir_measures then
raises CalledProcessError), so it is run here directly, its printf widened to 17 digits, on queries renumbered.
Its conventions are semrel's: a stop chance of (2^grade - 1) / 2^4 whatever the qrels' scale, negative grades as
0, ties by score then docno, both descending (trec_eval's); a query with nothing relevant it leaves out, semrel
scores 0. ranx's RBP gains the raw grade (so a graded RBP can pass 1) where semrel, as trec_eval, scales the
grades of a query into [0, 1] by its top grade (Moffat and Zobel's gains lie in [0, 1]); on binary qrels they are
one measure, and on graded qrels semrel's is ranx's over the top grade. ranx breaks score ties its own way, so it
is given each ranking in trec_eval's order.
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings

from helpers import SHARED_DATA, needs_shared
from random_collections import collections
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats import read_qrels
from semrel.formats.trec import read_run
from semrel.records import Qrels, Run

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (the test extra) ships gdeval.pl, the reference ERR")
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl, the reference ERR, needs perl")
SUITE = "trec_eval_test"
CUTOFFS = (1, 3, 5, 10, 20, 1000)  # 1000: past the run's 500 documents


def _ours(qrels: dict, run: dict, names: list[str]) -> dict[str, dict[str, float]]:
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), parse_measures(names))
    return {m.name: dict(zip(result.query_ids, result.values[m].tolist())) for m in result.values}


@pytest.fixture(scope="module")
def gdeval(tmp_path_factory):
    """gdeval(qrels, run, k) -> {query: ERR@k}: ir_measures' gdeval.pl, printing 17 significant digits, not 5."""
    folder = tmp_path_factory.mktemp("gdeval")
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl")
    assert script is not None and b"%.5f,%.5f" in script
    (folder / "gdeval.pl").write_bytes(script.replace(b"%.5f,%.5f", b"%.17g,%.17g"))

    def score(qrels: dict, run: dict, k: int) -> dict[str, float]:
        (folder / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
        (folder / "run").write_text("".join(f"{q} Q0 {d} {i} {s!r} x\n" for q, docs in run.items()
                                            for i, (d, s) in enumerate(docs.items())))
        out = subprocess.run(["perl", str(folder / "gdeval.pl"), str(folder / "qrels"), str(folder / "run"), str(k)],
                             capture_output=True, text=True, check=True).stdout
        return {line.split(",")[1]: float(line.split(",")[3]) for line in out.splitlines()[1:] if line}

    return score


def _assert_err_equals_gdeval(gdeval, qrels: dict, run: dict) -> None:
    ours = _ours(qrels, run, [f"ERR@{k}" for k in CUTOFFS])
    for k in CUTOFFS:
        found = gdeval(qrels, run, k)
        for q in qrels:  # a query gdeval leaves out (nothing relevant, or no ranking) scores 0 in semrel
            assert ours[f"ERR@{k}"][q] == pytest.approx(found.get(q, 0.0), abs=1e-9), (k, q)


PERSISTENCES = (0.5, 0.8, 0.9, 0.95)


def _ranx_rbp(ranx, qrels: dict, run: dict) -> dict[float, dict[str, float]]:
    """ranx's RBP of each query at each p, its ranking given in trec_eval's order (score, then docno, both descending)."""
    scored = {q: judged for q, judged in qrels.items() if run.get(q) and any(g >= 1 for g in judged.values())}
    found = {p: dict.fromkeys(qrels, 0.0) for p in PERSISTENCES}  # ranx refuses a query with no ranking or nothing relevant
    if not scored:
        return found
    order = {q: sorted(run[q], key=lambda d: (run[q][d], d.encode()), reverse=True) for q in scored}
    ranked = ranx.Run({q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in order.items()})
    judged = ranx.Qrels({q: dict(docs) for q, docs in scored.items()})
    values = ranx.evaluate(judged, ranked, [f"rbp.{round(p * 100):02d}" for p in PERSISTENCES], return_mean=False)
    for p, column in zip(PERSISTENCES, values.values()):
        found[p].update(zip(judged.get_query_ids(), column.tolist()))
    return found


def _assert_rbp_equals_ranx(ranx, qrels: dict, run: dict) -> None:
    found = _ranx_rbp(ranx, qrels, run)
    ours = _ours(qrels, run, [f"RBP(p={p})" for p in PERSISTENCES])
    for p in PERSISTENCES:
        for q, judged in qrels.items():
            top = max(1, *judged.values())
            assert ours[f"RBP(p={p})"][q] == pytest.approx(found[p][q] / top, abs=1e-9), (p, q)


@pytest.fixture(scope="module")
def suite() -> tuple[dict, dict, dict]:
    """trec_eval's test files: binary qrels, the same pairs graded -1 to 4, and a run of 500 documents a query."""
    folder = SHARED_DATA / SUITE
    return (read_qrels(folder / "qrels.test").to_dict(), read_qrels(folder / "qrels.rel_level").to_dict(),
            read_run(folder / "results.test").to_dict())


@needs_perl
@needs_shared(f"{SUITE}/qrels.rel_level", f"{SUITE}/results.test")
def test_err_equals_gdeval_on_trec_eval_test_files(gdeval, suite):
    binary, graded, run = suite
    _assert_err_equals_gdeval(gdeval, graded, run)
    _assert_err_equals_gdeval(gdeval, binary, run)
    assert _ours(graded, run, ["ERR@10"])["ERR@10"]["302"] == pytest.approx(0.6226462967693805, abs=1e-12)


@needs_shared(f"{SUITE}/qrels.rel_level", f"{SUITE}/results.test")
def test_rbp_equals_ranx_on_trec_eval_test_files(ranx, suite):
    binary, graded, run = suite
    _assert_rbp_equals_ranx(ranx, binary, run)
    _assert_rbp_equals_ranx(ranx, graded, run)  # 302's top grade is 3: its gains are the grades over 3


# ties (0.0 and -0.0 tie; then docno descending, bytewise), grades -2 to 4, a query with nothing relevant (q3),
# one the run lacks (q4), one only in the run (q5), and rankings shorter than most cutoffs
ADVERSARIAL = [
    ({"1": {"a": 4, "b": 3, "c": 0, "d": -2, "e": 1}, "2": {"x": 2, "y": 1, "z": -1}, "3": {"a": 0, "b": -1},
      "4": {"a": 4}},
     {"1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.0, "e": 0.0, "f": -0.0}, "2": {"y": 0.5, "x": 0.5, "w": 0.5, "z": 3.0},
      "3": {"a": 1.0, "b": 2.0}, "5": {"a": 1.0}}),
    ({"1": {"d9": 1, "d10": 4, "10": 2, "9": 3, "é": 4, "e": 1}},
     {"1": {"d9": 0.0, "d10": 0.0, "10": 0.0, "9": 0.0, "é": 0.0, "e": 0.0, "日本": 0.0}}),
    ({"1": {"a": 4, "b": 4, "c": 4, "d": 4}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}}),  # the stop chance compounds
    ({"1": {"a": 1, "b": 1}}, {"1": {"b": 1e-300, "a": -1e-300, "c": 1e300}}),  # binary qrels: 1/16, not 1/2
]


@needs_perl
@pytest.mark.parametrize("qrels, run", ADVERSARIAL, ids=["ties-grades-empty-queries", "tied-ids", "all-top", "binary"])
def test_err_equals_gdeval_on_adversarial_cases(gdeval, qrels, run):
    _assert_err_equals_gdeval(gdeval, qrels, run)


@pytest.mark.parametrize("qrels, run", ADVERSARIAL, ids=["ties-grades-empty-queries", "tied-ids", "all-top", "binary"])
def test_rbp_equals_ranx_on_adversarial_cases(ranx, qrels, run):
    _assert_rbp_equals_ranx(ranx, qrels, run)


def _numbered(qrels: dict, run: dict) -> tuple[dict, dict]:
    """The queries renumbered 1, 2, ...: gdeval takes numeric query ids only."""
    number = {q: str(i) for i, q in enumerate(sorted(set(qrels) | set(run)), start=1)}
    return {number[q]: docs for q, docs in qrels.items()}, {number[q]: docs for q, docs in run.items()}


@pytest.mark.slow
@needs_perl
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(collections())
def test_err_equals_gdeval_on_random_collections(gdeval, data):
    qrels, run, _ = data
    _assert_err_equals_gdeval(gdeval, *_numbered(qrels, run))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_rbp_equals_ranx_on_random_collections(ranx, data):
    qrels, run, _ = data
    _assert_rbp_equals_ranx(ranx, qrels, run)


@needs_perl
def test_gdeval_takes_numeric_query_ids_only(gdeval):
    """Why ir_measures' gdeval 'refused the file': a query id like q1 is a format error to gdeval.pl."""
    with pytest.raises(subprocess.CalledProcessError) as raised:
        gdeval({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, 10)
    assert "format error on line 1" in raised.value.stderr
    assert gdeval({"1": {"a": 1}}, {"1": {"a": 1.0}}, 10) == {"1": 1 / 16}

