"""`semrel fuse` and retrieval/fusion.py: the methods and normalisations equal ranx's, a fused run gets
a manifest, and hybrid retrieval's fusion is the same code."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import semrel
from helpers import assert_one_error
from semrel.errors import UsageError, ValidationError
from semrel.formats.trec import read_run
from semrel.records import Run
from semrel.retrieval.fusion import FusionSpec, fuse_runs
from semrel.retrieval.retrieve import fuse

RANX = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "wsum": "wsum"}
RANX_NORM = {"none": None, "minmax": "min-max", "zscore": "zmuv", "sum": "sum"}


def _random_runs(seed: int, count: int = 3) -> list[dict]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    runs = []
    for _ in range(count):
        run = {}
        for q in ("q1", "q2", "q3"):
            chosen = rng.choice(docs, int(rng.integers(2, 15)), replace=False)
            run[q] = {str(d): float(s) for d, s in zip(chosen, rng.permutation(len(chosen)) * 1.7 + rng.random(len(chosen)))}
        runs.append(run)
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("method,norm", [(m, n) for m in RANX for n in RANX_NORM if m != "rrf" or n == "none"])  # rrf: ranks only
def test_fusion_equals_ranx(ranx, method, norm):
    for seed in range(3):
        given = _random_runs(seed)
        weights = (0.5, 0.2, 0.3) if method == "wsum" else None
        spec = FusionSpec(method, norm, weights)
        ours = fuse_runs([Run.from_dict(r, f"r{i}") for i, r in enumerate(given)], spec).to_dict()
        params = {"weights": list(weights)} if weights else {"k": 60} if method == "rrf" else {}
        theirs = ranx.fuse([ranx.Run(r, name=f"r{i}") for i, r in enumerate(given)], norm=RANX_NORM[norm],
                           method=RANX[method], params=params).to_dict()
        assert ours.keys() == theirs.keys()
        for q in ours:
            assert ours[q].keys() == theirs[q].keys()
            for d, score in ours[q].items():
                assert score == pytest.approx(theirs[q][d], rel=1e-9, abs=1e-12), (method, norm, q, d)


def test_rrf_and_combmnz_by_hand():
    a = Run.from_dict({"q": {"x": 3.0, "y": 2.0, "z": 1.0}})
    b = Run.from_dict({"q": {"y": 9.0, "w": 8.0}, "p": {"x": 1.0}})
    rrf = fuse_runs([a, b]).to_dict()
    assert rrf["q"] == pytest.approx({"x": 1 / 61, "y": 1 / 62 + 1 / 61, "z": 1 / 63, "w": 1 / 62})
    assert rrf["p"] == pytest.approx({"x": 1 / 61})  # a query of one run only is fused too
    mnz = fuse_runs([a, b], FusionSpec("combmnz", "minmax")).to_dict()
    assert mnz["q"] == pytest.approx({"x": 1.0, "y": 2 * (0.5 + 1.0), "z": 0.0, "w": 0.0})
    top = fuse_runs([a, b], FusionSpec("rrf", depth=2)).to_dict()
    assert set(top["q"]) == {"x", "y"}


def test_hybrid_retrieval_fuses_with_the_same_code():
    """retrieve.fuse (hits as corpus positions) equals fuse_runs on the same rankings, best k per query."""
    first = [(np.array([4, 1, 7]), np.array([3.0, 2.0, 1.0])), (np.array([2]), np.array([1.0]))]
    second = [(np.array([1, 9]), np.array([0.9, 0.8])), (np.array([], dtype=np.int64), np.array([]))]
    hits = fuse([first, second], k=10)
    as_runs = [Run.from_dict({f"q{i}": {f"c{p}": s for p, s in zip(pos.tolist(), sc.tolist())} for i, (pos, sc) in enumerate(h)})
               for h in (first, second)]
    expected = fuse_runs(as_runs).to_dict()
    for i, (positions, scores) in enumerate(hits):
        assert [f"c{p}" for p in positions.tolist()] == sorted(expected[f"q{i}"], key=lambda d: (-expected[f"q{i}"][d], int(d[1:])))
        assert scores[0] == pytest.approx(max(expected[f"q{i}"].values()))


def test_cli_writes_the_fused_run_and_its_manifest(cli, write, tmp_path):
    a = write("a.run", "q Q0 x 1 3 a\nq Q0 y 2 2 a\n")
    b = write("b.run", "q Q0 y 1 0.9 b\nq Q0 z 2 0.1 b\n")
    out = tmp_path / "fused.run"
    result = cli("fuse", a, b, "-o", out, "--method", "wsum", "--norm", "minmax", "--weights", "0.25,0.75")
    assert result.exit_code == 0, result.output
    fused = read_run(out).to_dict()
    assert fused["q"] == pytest.approx({"x": 0.25, "y": 0.75, "z": 0.0})
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"fused"}  # the run is named after its file
    manifest = json.loads((tmp_path / "fused.run.manifest.json").read_text())
    assert manifest["params"]["fusion"]["method"] == "wsum" and manifest["params"]["fusion"]["weights"] == {"a": 0.25, "b": 0.75}
    assert [i["path"] for i in manifest["inputs"]] == [a, b]


def test_runs_of_one_file_name_keep_their_own_weights_in_the_manifest(cli, write, tmp_path):
    """Both were named 'bm25', and the manifest kept one weight of the two: {'bm25': 0.7}."""
    a, b = write("first/bm25.run", "q Q0 x 1 3 a\n"), write("second/bm25.run", "q Q0 y 1 3 b\n")
    out = tmp_path / "fused.run"
    assert cli("fuse", a, b, "-o", out, "--method", "wsum", "--weights", "0.3,0.7").exit_code == 0
    fusion = json.loads((tmp_path / "fused.run.manifest.json").read_text())["params"]["fusion"]
    assert fusion["weights"] == {"first/bm25": 0.3, "second/bm25": 0.7} and fusion["runs"] == ["first/bm25", "second/bm25"]


def test_cli_refuses_what_cannot_work(cli, write, tmp_path):
    a, b = write("a.run", "q Q0 x 1 3 a\n"), write("b.run", "q Q0 y 1 2 b\n")
    out = str(tmp_path / "f.run")
    assert_one_error(cli("fuse", a, "-o", out), "at least two runs", code=2)
    assert_one_error(cli("fuse", a, b, "-o", out, "--norm", "zscore"), "does not apply to --method rrf", code=2)
    assert_one_error(cli("fuse", a, b, "-o", out, "--method", "wsum", "--weights", "1"), "one weight per run", code=2)
    assert_one_error(cli("fuse", a, b, "-o", out, "--method", "wsum", "--weights", "0.3,a"),
                     "--weights '0.3,a': give comma-separated numbers, one per run, e.g. 0.3,0.7", code=2)
    for weights in ("nan,1", "1,-0.5", "inf,1"):
        assert_one_error(cli("fuse", a, b, "-o", out, "--method", "wsum", "--weights", weights),
                         f"--weights {weights}: weights must be finite numbers of 0 or more", code=2)
    assert_one_error(cli("fuse", a, b, "-o", out, "--method", "wsum", "--weights", "0,0"),  # every score 0: ordered by id alone
                     "--weights 0,0: give at least one weight above 0", code=2)
    assert_one_error(cli("fuse", a, b, "-o", out, "--weights", "1,2"), "--weights go with --method wsum", code=2)  # rrf ignored them
    result = cli("fuse", a, b, "-o", out, "--method", "combsum", "--rrf-k", "10")  # combsum ignored it, in silence
    assert result.exit_code == 2 and result.stderr == "semrel: error: --rrf-k 10 is rrf's k; it does not apply to --method combsum\n"
    # one file twice counted twice (fused with itself, or its weight doubled) and the manifest kept one weight for both
    assert_one_error(cli("fuse", a, a, "-o", out), f"the run file {a} is given twice; give each run once", code=2)
    assert not (tmp_path / "f.run").exists()


def test_an_rrf_k_from_the_environment_is_a_default_for_rrf_alone(cli, write, tmp_path, monkeypatch):
    a, b = write("a.run", "q Q0 x 1 3 a\n"), write("b.run", "q Q0 y 1 2 b\n")
    monkeypatch.setenv("SEMREL_FUSE_RRF_K", "10")
    assert cli("fuse", a, b, "-o", str(tmp_path / "f.run"), "--method", "combsum").exit_code == 0


def test_a_document_twice_in_a_run_is_refused_as_eval_refuses_it(cli, write, tmp_path):
    """It counted twice: 1/61 + 1/63 from one run under rrf, and as held by two runs under combmnz."""
    a = write("a.run", "q Q0 x 1 3 a\nq Q0 y 2 2 a\nq Q0 x 3 1 a\n")
    b = write("b.run", "q Q0 y 1 3 b\n")
    for method in ("rrf", "combmnz"):
        assert_one_error(cli("fuse", b, a, "-o", str(tmp_path / "f.run"), "--method", method),
                         f"{a}:3: duplicate document in run for query 'q' and doc 'x'")
    assert not (tmp_path / "f.run").exists()


def test_scores_past_float64s_span_keep_their_order_or_are_refused(cli, write, tmp_path):
    """1e308 - -1e308 overflows: min-max scales such a query first (order kept, no numpy warning on stderr); a fused
    score that is still not finite (no normalisation, or huge weights) is refused in one line, nothing written."""
    rows = "q1 Q0 d1 1 1e308 r\nq1 Q0 d2 2 -1e308 r\nq2 Q0 d1 1 2 r\nq2 Q0 d2 2 1 r\n"
    big, twin = write("big.run", rows), write("twin.run", rows)
    out = tmp_path / "f.run"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the command
        for norm in ("minmax", "zscore", "sum"):
            result = cli("fuse", big, twin, "-o", out, "--method", "combsum", "--norm", norm)
            assert result.exit_code == 0 and result.stderr == "fused 2 runs (combsum): 4 rows to " + str(out) + "\n", result.output
            fused = read_run(out).to_dict()
            assert fused["q1"]["d1"] > fused["q1"]["d2"] and fused["q1"] == pytest.approx(fused["q2"]), norm
        out.unlink()
        (tmp_path / "f.run.manifest.json").unlink()
        assert_one_error(cli("fuse", big, twin, "-o", out, "--method", "combsum", "--norm", "none"),
                         "--method combsum --norm none gives fused scores past float64's range: scale the runs' scores "
                         "with --norm minmax, zscore or sum", code=2)
        assert_one_error(cli("fuse", big, twin, "-o", out, "--method", "wsum", "--weights", "1e308,1e308"),
                         "--method wsum --norm minmax gives fused scores past float64's range: give smaller --weights", code=2)
    assert not out.exists()
    runs = {"big": big, "twin": twin}  # semrel.fuse names its parameters, where the command names its options
    with pytest.raises(UsageError, match=re.escape("method='combsum' norm='none' gives fused scores past float64's range: scale the "
                                                   "runs' scores with norm=minmax, zscore or sum") + "$"):
        semrel.fuse(runs, "combsum", norm="none")
    with pytest.raises(UsageError, match=re.escape("method='wsum' norm='minmax' gives fused scores past float64's range: give smaller "
                                                   "weights=") + "$"):
        semrel.fuse(runs, "wsum", weights=[1e308, 1e308])


def test_an_empty_run_is_said_to_add_nothing(cli, write, tmp_path):
    """pool says so of a run with no rows; fuse said nothing and wrote the other runs' fusion."""
    a, empty, b = write("a.run", "q Q0 x 1 3 a\n"), write("empty.run", ""), write("b.run", "q Q0 y 1 2 b\n")
    result = cli("fuse", a, empty, b, "-o", str(tmp_path / "f.run"))
    assert result.exit_code == 0, result.output
    assert "semrel: warning: run empty holds no row: it adds nothing to the fusion" in result.stderr
    assert cli("fuse", a, b, "-o", str(tmp_path / "g.run")).stderr.count("warning") == 0
    with pytest.warns(UserWarning, match="run empty holds no row"):
        fused = semrel.fuse({"a": Run.from_dict({"q": {"x": 3.0}}), "empty": Run.from_dict({})})
    assert fused.to_dict() == {"q": {"x": pytest.approx(1 / 61)}}
    heard: list[str] = []
    semrel.fuse({"a": Run.from_dict({"q": {"x": 3.0}}), "empty": Run.from_dict({})}, warn=heard.append)
    assert heard == ["run empty holds no row: it adds nothing to the fusion"]
    for method in ("combsum", "combmnz", "wsum"):  # normalised per query: an empty run has no query to normalise
        fused = semrel.fuse({"a": Run.from_dict({"q": {"x": 3.0, "y": 1.0}}), "empty": Run.from_dict({})}, method=method, warn=heard.append)
        assert fused.to_dict() == {"q": {"x": 1.0 if method != "wsum" else 0.5, "y": 0.0}}


def test_rrf_uses_the_given_k_and_k_0_is_plain_reciprocal_rank():
    """rrf_k must reach the formula 1 / (k + rank), not fall back to 60, and k = 0, which the command and the spec
    accept, gives 1 / rank rather than being refused."""
    a = Run.from_dict({"q": {"x": 3.0, "y": 2.0, "z": 1.0}})
    b = Run.from_dict({"q": {"y": 9.0, "w": 8.0}})
    for k in (0, 10):
        fused = fuse_runs([a, b], FusionSpec("rrf", rrf_k=k)).to_dict()
        assert fused["q"] == pytest.approx({"x": 1 / (k + 1), "y": 1 / (k + 2) + 1 / (k + 1), "z": 1 / (k + 3), "w": 1 / (k + 2)})
    assert semrel.fuse({"a": a, "b": b}, rrf_k=0).to_dict()["q"]["y"] == pytest.approx(1 / 2 + 1)
    with pytest.raises(UsageError, match=r"^rrf_k=-1: give 0 or more$"):  # k = -1 divides the top document's 1 by 0
        semrel.fuse({"a": a, "b": b}, rrf_k=-1)


def test_wsum_without_weights_weighs_each_run_equally_and_says_so(cli, write, tmp_path):
    """wsum's default weights are 1 / number of runs (the mean of the normalised scores), in the fused scores and
    in the manifest alike."""
    a = write("a.run", "q Q0 x 1 4 a\nq Q0 y 2 2 a\nq Q0 z 3 1 a\n")
    b = write("b.run", "q Q0 y 1 0.9 b\nq Q0 z 2 0.1 b\nq Q0 w 3 0.3 b\n")
    out = tmp_path / "fused.run"
    assert cli("fuse", a, b, "-o", out, "--method", "wsum").exit_code == 0
    # min-max: a x 1, y 1/3, z 0; b y 1, w 0.25, z 0
    assert read_run(out).to_dict()["q"] == pytest.approx({"x": 0.5, "y": (1 / 3 + 1) / 2, "z": 0.0, "w": 0.125})
    fusion = json.loads((tmp_path / "fused.run.manifest.json").read_text())["params"]["fusion"]
    assert fusion["weights"] == {"a": 0.5, "b": 0.5}


def test_zscore_and_sum_normalisations_by_hand():
    """zscore is ranx's zmuv, (s - mean) / population standard deviation (ddof 0, not the sample's); sum is
    (s - min) / (sum of s - min x count); both per run and query, summed over the runs (combsum)."""
    first = {"q": {"a": 5.0, "b": 1.0, "c": 3.5, "d": -2.0}, "p": {"a": 10.0, "e": 7.0}}
    second = {"q": {"b": 2.0, "e": 8.0}}
    runs = [Run.from_dict(first), Run.from_dict(second)]

    def by_hand(run: dict, norm: str) -> dict:
        out = {}
        for q, docs in run.items():
            s = np.array(list(docs.values()))
            value = (s - s.mean()) / max(s.std(ddof=0), 1e-9) if norm == "zscore" else (s - s.min()) / max(s.sum() - s.min() * len(s), 1e-9)
            out[q] = dict(zip(docs, value.tolist()))
        return out

    for norm in ("zscore", "sum"):
        one, two = by_hand(first, norm), by_hand(second, norm)
        expected = {q: {d: one.get(q, {}).get(d, 0.0) + two.get(q, {}).get(d, 0.0) for d in {*one.get(q, {}), *two.get(q, {})}}
                    for q in ("q", "p")}
        fused = fuse_runs(runs, FusionSpec("combsum", norm)).to_dict()
        assert fused.keys() == expected.keys()
        for q in expected:
            assert fused[q] == pytest.approx(expected[q], rel=1e-12, abs=1e-12), (norm, q)


def test_a_normalisation_denominator_below_1e9_counts_as_1e9_not_more():
    """ranx's floor of a zero denominator is 1e-9: a run whose scores differ by 2e-8 still spans 0 to 1 under min-max,
    and one whose scores differ by 5e-10 spans 0 to 0.5 (a larger floor would flatten small-scored runs)."""
    a = Run.from_dict({"q": {"x": 3e-8, "y": 1e-8}, "p": {"x": 5e-10, "y": 0.0}})
    b = Run.from_dict({"q": {"z": 1.0}})
    fused = fuse_runs([a, b], FusionSpec("combsum", "minmax")).to_dict()
    assert fused["q"] == pytest.approx({"x": 1.0, "y": 0.0, "z": 0.0}, abs=1e-9)
    assert fused["p"] == pytest.approx({"x": 0.5, "y": 0.0}, abs=1e-6)


def test_only_a_query_of_huge_scores_is_scaled():
    """The power-of-two scaling is for queries past 2^400 only: a query of tiny scores in the same run keeps its
    scores (scaling it up by 2^(400 - its exponent) would overflow 1e-200 to infinity)."""
    a = Run.from_dict({"big": {"x": 1e300, "y": -1e300}, "tiny": {"x": 3e-200, "y": 1e-200}})
    b = Run.from_dict({"big": {"z": 1.0}, "tiny": {"z": 1.0}})
    fused = fuse_runs([a, b], FusionSpec("combsum", "minmax")).to_dict()
    assert fused["big"] == pytest.approx({"x": 1.0, "y": 0.0, "z": 0.0})
    assert fused["tiny"]["x"] == pytest.approx(2e-200 / 1e-9, rel=1e-12) and fused["tiny"]["y"] == 0.0 and fused["tiny"]["z"] == 0.0


def test_ties_are_ranked_as_trec_eval_ranks_them():
    """Tied scores in a run rank by doc id descending, not in the order the run lists them (rrf's ranks), and a
    fused tie at the depth cut keeps the doc with the larger id."""
    a = Run.from_dict({"q": {"x": 1.0, "y": 1.0, "a": 0.5}})  # x listed first, y ranked first
    b = Run.from_dict({"q": {"w": 2.0}})
    assert fuse_runs([a, b]).to_dict()["q"] == pytest.approx({"y": 1 / 61, "x": 1 / 62, "a": 1 / 63, "w": 1 / 61})
    top = fuse_runs([Run.from_dict({"q": {"b": 1.0}}), Run.from_dict({"q": {"c": 1.0}})], FusionSpec("rrf", depth=1)).to_dict()
    assert top == {"q": {"c": pytest.approx(1 / 61)}}
    top = fuse_runs([Run.from_dict({"q": {"c": 1.0}}), Run.from_dict({"q": {"b": 1.0}})], FusionSpec("rrf", depth=1)).to_dict()
    assert top == {"q": {"c": pytest.approx(1 / 61)}}


def test_combmnz_counts_a_run_whose_normalised_score_for_the_doc_is_0():
    """CombMNZ multiplies by the number of runs that hold the document (ranx's len(scores)), a run where it is the
    minimum (min-max 0) included: y, last in one run and 0.5 in the other, scores 2 x 0.5, not 1 x 0.5."""
    a = Run.from_dict({"q": {"x": 3.0, "y": 1.0}})
    b = Run.from_dict({"q": {"z": 4.0, "y": 3.0, "x": 2.0}})
    fused = fuse_runs([a, b], FusionSpec("combmnz", "minmax")).to_dict()
    assert fused["q"] == pytest.approx({"x": 2 * (1.0 + 0.0), "y": 2 * (0.0 + 0.5), "z": 1.0})


def test_a_query_of_huge_negative_scores_is_scaled_too():
    """The scaling looks at the scores' size, not their sign: -1e308 beside 1 under zscore gives -1 and 1 (unscaled,
    the squares overflow, the spread is infinite and both score 0, the order lost)."""
    a = Run.from_dict({"q": {"x": 1.0, "y": -1e308}})
    b = Run.from_dict({"q": {"z": 1.0}})
    assert fuse_runs([a, b], FusionSpec("combsum", "zscore")).to_dict()["q"] == pytest.approx({"x": 1.0, "y": -1.0, "z": 0.0})


def test_documents_whose_contributions_are_the_same_numbers_tie_exactly(cli, write, tmp_path):
    """b ranks 1, 7, 2 and a ranks 2, 1, 7 in three runs: the same rrf score, so b (the larger id) goes first. Summed
    in run order, 1/61 + 1/67 + 1/62 came out an ulp below 1/62 + 1/61 + 1/67, a ranked above b, and -k 2 kept a."""
    fillers = ["f1", "f2", "f3", "f4", "f5"]
    orders = (["b", "a", *fillers], ["a", *fillers, "b"], ["f1", "b", *fillers[1:], "a"])
    paths = [write(f"r{i}.run", "".join(f"q Q0 {d} {r + 1} {10 - r} r{i}\n" for r, d in enumerate(order)))
             for i, order in enumerate(orders)]
    out = tmp_path / "fused.run"
    assert cli("fuse", *paths, "-o", out, "-k", "2").exit_code == 0
    rows = [line.split() for line in out.read_text().splitlines()]
    assert [row[2] for row in rows] == ["f1", "b"]
    fused = fuse_runs([read_run(p) for p in paths]).to_dict()["q"]
    assert fused["a"] == fused["b"] == pytest.approx(1 / 61 + 1 / 62 + 1 / 67, rel=1e-15)
    # scores too: in run order a's 0.2 + 0.1 + 0.7 was 1.0 and b's 0.1 + 0.7 + 0.2 0.9999999999999999
    scores = [Run.from_dict({"q": {"a": x, "b": y}}) for x, y in ((0.2, 0.1), (0.1, 0.7), (0.7, 0.2))]
    fused = fuse_runs(scores, FusionSpec("combsum", "none"))
    assert fused.to_dict()["q"]["a"] == fused.to_dict()["q"]["b"]
    assert fuse_runs(scores, FusionSpec("combsum", "none", depth=1)).to_dict() == {"q": {"b": pytest.approx(1.0)}}


def test_an_rrf_k_past_1e9_is_refused_not_crashed_or_wrapped(cli, write, tmp_path):
    """--rrf-k 1e24 printed an OverflowError traceback; 2^63 - 1 wrapped k + rank negative and ranked d2 (in both runs)
    below d1; semrel.fuse(weights=[10**400, 1]) raised an OverflowError, not the UsageError of a weight too large."""
    a, b = write("a.run", "q1 Q0 d1 1 2.5 a\nq1 Q0 d2 2 1.5 a\n"), write("b.run", "q1 Q0 d2 1 9 b\n")
    out = str(tmp_path / "f.run")
    for k in ("1000000000000000000000000", str(2**63 - 1), "1000000001"):
        assert_one_error(cli("fuse", a, b, "-o", out, "--rrf-k", k),
                         f"Invalid value for '--rrf-k': {k} is not in the range 0<=x<=1000000000.", code=2)
    assert cli("fuse", a, b, "-o", out, "--rrf-k", "1000000000").exit_code == 0
    assert list(read_run(out).to_dict()["q1"]) == ["d2", "d1"]
    for k in (10**30, 2**63 - 1):
        with pytest.raises(UsageError, match=r"^rrf_k=\d+: give at most 1,000,000,000 "):
            semrel.fuse({"a": a, "b": b}, rrf_k=k)
    for weights in ([10**400, 1], [-(10**400), 1]):
        with pytest.raises(UsageError, match=r"weights must be finite numbers of 0 or more"):
            semrel.fuse({"a": a, "b": b}, "wsum", weights=weights)


def test_runs_that_all_hold_no_row_are_refused(cli, write, tmp_path):
    """An empty fused run was written with exit 0 (and failed only at `semrel eval`); one empty run among others still
    adds nothing, with a warning."""
    first, second = write("first.run", ""), write("second.json", "{}")
    out = tmp_path / "f.run"
    assert_one_error(cli("fuse", first, second, "-o", out), "nothing to fuse: no run holds a row (first, second)")
    assert not out.exists() and not (tmp_path / "f.run.manifest.json").exists()
    with pytest.raises(ValidationError, match="nothing to fuse"):
        semrel.fuse({"a": Run.from_dict({}), "b": Run.from_dict({})}, warn=lambda _: None)


def test_the_manifest_records_every_setting(cli, write, tmp_path):
    a, b = write("a.run", "q Q0 x 1 3 a\nq Q0 y 2 2 a\n"), write("b.json", '{"q": {"y": 0.9, "z": 0.1}}')
    out = tmp_path / "fused.run"
    assert cli("fuse", a, b, "-o", out, "--rrf-k", "10", "-k", "2").exit_code == 0
    fusion = json.loads((tmp_path / "fused.run.manifest.json").read_text())["params"]["fusion"]
    assert {k: fusion[k] for k in ("method", "norm", "weights", "rrf_k", "depth", "runs")} == {
        "method": "rrf", "norm": None, "weights": None, "rrf_k": 10, "depth": 2, "runs": ["a", "b"]}
    assert cli("fuse", a, b, "-o", out, "--method", "combmnz", "--norm", "zscore").exit_code == 0
    manifest = json.loads((tmp_path / "fused.run.manifest.json").read_text())
    fusion = manifest["params"]["fusion"]
    assert (fusion["method"], fusion["norm"], fusion["rrf_k"], fusion["depth"]) == ("combmnz", "zscore", None, None)
    assert [i["path"] for i in manifest["inputs"]] == [a, b] and all(len(i["sha256"]) == 64 for i in manifest["inputs"])
