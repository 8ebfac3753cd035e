"""`semrel label`: thresholds and grades on hand-made judgments; no model is involved."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import semrel
from helpers import assert_one_error, drawn_features, run
from semrel.analysis.calibrate import expected_kappa_cut
from semrel.errors import UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.formats.judgments import read_judgments
from semrel.judging import labels
from semrel.records import Judgment
from semrel.review.tasks import parse_labelling

ROWS = [  # query, chunk, P, R, F
    ("q1", "a", 0.90, 0.80, 0.85),
    ("q1", "b", 0.20, 0.50, 0.29),
    ("q1", "c", 0.10, 0.30, 0.15),
    ("q2", "a", 0.50, 0.65, 0.56),
    ("q2", "d", 0.70, 0.40, 0.51),
]


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps({"query_id": q, "chunk_id": c, "P": p, "R": r, "F": f, "source": "bm25"}) + "\n"
                            for q, c, p, r, f in ROWS))
    (tmp_path / "judgments.jsonl.manifest.json").write_text(json.dumps({"params": {"model": "all-MiniLM-L6-v2", "layer": 6}}))
    return path


def _run(*args):
    result = run(*args)
    return result.exit_code, result.output


def test_binary_threshold_on_recall_keeps_every_pair(judgments, tmp_path):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", "--threshold", 0.5)
    assert code == 0, text
    assert (tmp_path / "qrels.txt").read_text().splitlines() == [
        "q1 0 a 1", "q1 0 b 1", "q1 0 c 0", "q2 0 a 1", "q2 0 d 0",  # 0.50 reaches 0.5; below it is judged 0
    ]
    manifest = json.loads((tmp_path / "qrels.txt.manifest.json").read_text())
    assert manifest["params"]["on"] == "R" and manifest["params"]["thresholds"] == [0.5]
    assert manifest["params"]["grade_counts"] == {"0": 2, "1": 3} and manifest["params"]["judge"]["layer"] == 6
    assert "3 relevant, 2 not" in text


def test_grades_count_the_thresholds_reached(judgments, tmp_path):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", "--on", "P", "--grades", "0.2,0.5,0.9")
    assert code == 0, text
    assert read_qrels(tmp_path / "qrels.txt").to_dict() == {"q1": {"a": 3, "b": 1, "c": 0}, "q2": {"a": 2, "d": 2}}


def test_python_api_matches_the_command(judgments):
    rows = [Judgment(q, c, p, r, f) for q, c, p, r, f in ROWS]
    assert semrel.label(rows, on="F", threshold=0.5).to_dict() == {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"a": 1, "d": 1}}
    assert semrel.label(judgments, on="F", grades=[0.3, 0.55]).to_dict() == {"q1": {"a": 2, "b": 0, "c": 0}, "q2": {"a": 2, "d": 1}}
    with pytest.raises(TypeError, match="unexpected keyword argument 'thresold'"):  # not silently the default rule
        semrel.label(rows, on="F", thresold=0.5)  # type: ignore[call-arg]


@pytest.mark.slow
def test_labelling_loads_no_model(judgments, tmp_path):
    import subprocess

    code = ("import sys, semrel; semrel.label(sys.argv[1], sys.argv[2]); "
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code, str(judgments), str(tmp_path / "q.txt")], check=True)


@pytest.mark.parametrize("args, expected", [
    (["--grades", "0.5,0.4"], "strictly increasing"),
    (["--grades", "0.5,0.5"], "strictly increasing"),
    (["--grades", "0.4,x"], "comma-separated numbers"),
    (["--threshold", "0.5", "--grades", "0.4,0.6"], "not both"),
])
def test_bad_thresholds_are_one_clear_line(judgments, tmp_path, args, expected):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", *args)
    assert code == UsageError.exit_code and expected in text and text.count("\n") == 1
    assert not (tmp_path / "qrels.txt").exists()


@pytest.mark.parametrize("line, expected", [
    ('{"query_id": "q1", "chunk_id": "b", "P": 0.1, "F": 0.2}', "judgments.jsonl:2: missing field 'R'"),
    ('{"query_id": "q1", "chunk_id": "b", "P": 0.1, "R": "high", "F": 0.2}', "judgments.jsonl:2: field 'R' should be"),
    ('{"query_id": "q1", "chunk_id": "a", "P": 0.1, "R": 0.2, "F": 0.2}', "judgments.jsonl:2: pair ('q1', 'a') already judged on line 1"),
    ("not json", "judgments.jsonl:2: invalid JSON"),
])
def test_bad_judgments_name_file_and_line(tmp_path, line, expected):
    path = tmp_path / "judgments.jsonl"
    path.write_text('{"query_id": "q1", "chunk_id": "a", "P": 0.1, "R": 0.2, "F": 0.15}\n' + line + "\n")
    code, text = _run("label", path, "-o", tmp_path / "qrels.txt")
    assert code == 1 and expected in text and text.count("\n") == 1


# ---------------------------------------------------------------- the probability rule (the default)

def _with_p(path, rows, manifest=True, lenratio=0.0):
    """judgments.jsonl rows (query, chunk, R, p, source) as the judge writes them."""
    path.write_text("".join(json.dumps({"query_id": q, "chunk_id": c, "P": r, "R": r, "F": r, "source": s, "p": p,
                                        "features": {"relR_idf": 0.5, "R_idf_max": 0.0, "own_idf": 0.5, "F_max": 0.0, "P_max": 0.0,
                                                     "lenratio": lenratio, "lexR_rel": 0.5, "with_gold": float("gold" in s)}}) + "\n"
                            for q, c, r, p, s in rows))
    if manifest:
        (path.parent / f"{path.name}.manifest.json").write_text(json.dumps({"params": {"model": "all-MiniLM-L6-v2"}}))
    return path


PROBABLE = [  # query, chunk, R, p, source
    ("q1", "a", 0.80, 0.90, "bm25,gold"),
    ("q1", "b", 0.75, 0.30, "bm25"),
    ("q1", "c", 0.40, 0.02, "bm25"),
    ("q2", "d", 0.60, 0.55, "gold"),
    ("q2", "e", 0.72, 0.15, "bm25"),
]


def test_default_labels_threshold_p_and_the_manifest_records_the_rule(tmp_path):
    judgments = _with_p(tmp_path / "j.jsonl", PROBABLE)
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt")
    assert code == 0, text
    assert read_qrels(tmp_path / "q.txt").to_dict() == {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1, "e": 0}}
    params = json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]
    assert params["rule"] == "probability" and params["on"] == "p" and params["thresholds"] == [labels.CUT] and params["cut"] == labels.CUT
    assert params["model"]["with_gold"]["relR_idf"] == labels.WITH_GOLD.weights[0] and params["calibration"] is None
    assert f"by p >= {labels.CUT}: 2 relevant, 3 not" in text
    code, text = _run("label", judgments, "-o", tmp_path / "g.txt", "--graded")
    assert read_qrels(tmp_path / "g.txt").to_dict() == {"q1": {"a": 3, "b": 1, "c": 0}, "q2": {"d": 2, "e": 0}}
    # a count per grade: "3 relevant" took grade 1, below the binary cut, for relevant where the binary labels say 2
    assert "0.69: grades 0-3: 2, 1, 1, 1" in text
    # the same rule, from the manifest, for judgments judged later (hole filling in `semrel eval`)
    assert labels.relabel([Judgment("q3", "z", 0, 0, 0, p=0.5)], params).to_dict() == {"q3": {"z": 1}}


def test_judgments_without_p_still_label_with_the_threshold_rule(judgments, tmp_path):
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt")
    assert code == 0, text
    assert read_qrels(tmp_path / "q.txt").to_dict() == {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"a": 0, "d": 0}}  # R >= 0.70
    # judgments of an older judge, or of --null-sample 0 (which the message said was an older judge)
    assert ("hold no probability p (judged with a null sample of 0 chunks, against a corpus with no chunk outside each query's "
            "pool, or by a semrel judge older than p): labelled with the threshold rule R >= 0.7; judge again with a null sample "
            "(the default), against a corpus larger than the pool, for the probability rule") in " ".join(text.split())
    assert json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]["rule"] == "threshold"


def test_on_p_asked_of_judgments_without_p_is_refused_naming_the_null_sample(judgments, tmp_path):
    """`--on p` asks for labels by p: judgments of `--null-sample 0` were labelled R >= 0.7 under a warning, as if no
    score had been named (`--on p --threshold 0.38` refused them), and the refusal blamed an older judge alone."""
    for options in ([], ["--threshold", "0.38"], ["--graded"]):
        assert_one_error(run("label", judgments, "-o", tmp_path / "q.txt", "--on", "p", *options),
                         "judgments.jsonl: 5 of 5 judgments hold no probability p (judged with a null sample of 0 chunks",
                         "judge again with a null sample (the default), against a corpus larger than the pool, or label on P, R or F")
        assert not (tmp_path / "q.txt").exists()
    with pytest.raises(ValidationError, match="5 of 5 judgments hold no probability p"):
        semrel.label(judgments, on="p")


def test_threshold_options_still_put_thresholds_on_a_component_or_on_p(tmp_path):
    judgments = _with_p(tmp_path / "j.jsonl", PROBABLE)
    with pytest.warns(UserWarning, match="only 50% of the 2 gold chunks are labelled relevant"):  # warn= not given
        assert semrel.label(judgments, threshold=0.7).to_dict() == {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"d": 0, "e": 1}}
    assert semrel.label(judgments, on="p", threshold=0.5).to_dict() == {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1, "e": 0}}
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt", "--graded", "--threshold", "0.5")
    assert code == UsageError.exit_code and "--graded grades by p" in text


def test_calibrate_then_label_round_trip(tmp_path):
    """Reviewers call more pairs relevant than p expects: calibrate shifts p up, and label applies it."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0.01, 0.99, 300)
    truth = rng.uniform(size=300) < labels.sigmoid(labels.logit(p) + 1.5)  # reviewers: one logit unit and a half more
    judgments = _with_p(tmp_path / "j.jsonl", [(f"q{i % 30}", f"c{i}", 0.5, float(v), "bm25") for i, v in enumerate(p)])
    (tmp_path / "human.qrels").write_text("".join(f"q{i % 30} 0 c{i} {int(t)}\n" for i, t in enumerate(truth)))
    code, text = _run("calibrate", judgments, tmp_path / "human.qrels", "--fit", "anchored", "-o", tmp_path / "cal.json")
    assert code == 0, text
    written = json.loads((tmp_path / "cal.json").read_text())
    calibration = written["calibration"]
    assert written["rule"] == "probability" and calibration["fit"] == "anchored"
    assert 1.0 < calibration["shift"] < 2.0 and abs(calibration["slope"] - 1) < 0.2  # an offset, the spread kept
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt", "--calibration", tmp_path / "cal.json")
    assert code == 0, text
    # the cut moves to the highest expected kappa over every judged pair's refitted p (most pairs are relevant here)
    refitted = labels.sigmoid(calibration["slope"] * labels.logit(p) + calibration["shift"])
    assert written["cut"] == expected_kappa_cut(refitted) > labels.CUT and "expected kappa" in calibration["cut_from"]
    moved = labels.sigmoid((labels.logit(written["cut"]) - calibration["shift"]) / calibration["slope"])
    assert written["thresholds"] == [pytest.approx(moved)]
    got = read_qrels(tmp_path / "q.txt").to_dict()
    assert [got[f"q{i % 30}"][f"c{i}"] for i in range(300)] == (p >= moved).astype(int).tolist()
    params = json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]
    assert params["calibration"]["shift"] == written["calibration"]["shift"] and params["calibration"]["fit"] == "anchored"
    # the default refit is every coefficient; judgments holding p without its features fall back to anchored, saying so
    code, text = _run("calibrate", judgments, tmp_path / "human.qrels", "-o", tmp_path / "default.json")
    assert code == 0 and json.loads((tmp_path / "default.json").read_text())["calibration"]["fit"] == "features"
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "features"}) + "\n"
                            for line in judgments.read_text().splitlines()))
    code, text = _run("calibrate", bare, tmp_path / "human.qrels", "-o", tmp_path / "bare.json")
    assert code == 0 and json.loads((tmp_path / "bare.json").read_text())["calibration"]["fit"] == "anchored"
    assert "without the features it came from" in text and "--fit anchored" in text
    # a threshold calibration (--on R) goes through the same option
    code, text = _run("calibrate", judgments, tmp_path / "human.qrels", "--on", "R", "-o", tmp_path / "r.json")
    assert code == 0, text
    code, text = _run("label", judgments, "-o", tmp_path / "r.txt", "--calibration", tmp_path / "r.json")
    assert code == 0 and "by R >= " in text


def test_a_refit_of_every_coefficient_labels_from_the_features(tmp_path):
    """Reviewers who weigh relR_idf less than the shipped model: `calibrate --fit features` moves every coefficient, `label`
    recomputes p from each pair's features (no longer a cut on the judge's p), and the review queue orders by that p."""
    rng = np.random.default_rng(3)
    x = drawn_features(rng, 400)
    planted = np.zeros(len(labels.FEATURES) + 2)
    planted[0], planted[1 + labels.FEATURES.index("relR_idf")] = 2.0, -3.0
    truth = rng.uniform(size=400) < labels.probability(x, True, tuple(planted))
    rows = [{"query_id": f"q{i % 40}", "chunk_id": f"c{i}", "P": 0.5, "R": 0.5, "F": 0.5, "source": "bm25",
             "p": float(labels.probability(x[i], True)[0]), "features": {**dict(zip(labels.FEATURES, x[i].tolist())), "with_gold": 1.0}}
            for i in range(400)]
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "human.qrels").write_text("".join(f"q{i % 40} 0 c{i} {int(t)}\n" for i, t in enumerate(truth)))
    code, text = _run("calibrate", judgments, tmp_path / "human.qrels", "--fit", "features", "-o", tmp_path / "cal.json")
    assert code == 0, text
    assert "every coefficient moved" in text and "p recomputed from each pair's features" in text
    written = json.loads((tmp_path / "cal.json").read_text())
    refit = written["calibration"]["refit"]
    assert written["calibration"]["fit"] == "features" and written["thresholds"] is None and len(refit) == len(labels.FEATURES) + 2
    assert refit[0] > 0.5 and refit[1 + labels.FEATURES.index("relR_idf")] < -0.5  # the planted move, shrunk by the prior
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt", "--calibration", tmp_path / "cal.json")
    assert code == 0, text
    got = read_qrels(tmp_path / "q.txt").to_dict()
    expected = labels.probability(x, True, tuple(refit)) >= written["cut"]
    assert [got[f"q{i % 40}"][f"c{i}"] for i in range(400)] == expected.astype(int).tolist()
    assert expected.tolist() != (np.array([r["p"] for r in rows]) >= written["cut"]).tolist()  # not a cut on the judge's p
    rule = labels.read_calibration(tmp_path / "cal.json")
    assert rule == labels.rule_from_params(rule.params()) and not rule.cuts_on_p
    with pytest.raises(UsageError, match="not cuts on the judge's p"):
        assert rule.judge_thresholds is None  # never reached: the property raises
    queue = parse_labelling(None, str(tmp_path / "cal.json"))  # the review queue orders by the refitted p
    assert (queue.on, queue.thresholds, queue.refit) == ("p", (written["cut"],), tuple(refit))
    assert np.allclose(queue.scores(read_judgments(judgments)), labels.probability(x, True, tuple(refit)), rtol=0, atol=1e-12)
    with pytest.raises(UsageError, match="give it without on=$"):
        parse_labelling("R", str(tmp_path / "cal.json"))
    bare = [Judgment("q", "c", 0.5, 0.5, 0.5, p=0.5)]
    with pytest.raises(ValidationError, match="1 of 1 judgment lacks some of p.s features"):
        rule.grades(bare)


def test_labels_that_look_wrong_are_warned_about_with_what_to_do(tmp_path):
    """A deliberately bad rule (R >= 0.95) leaves every gold chunk out and every query with nothing relevant."""
    judgments = _with_p(tmp_path / "j.jsonl", PROBABLE)
    code, text = _run("label", judgments, "-o", tmp_path / "q.txt", "--threshold", "0.95")
    assert code == 0, text
    assert "only 0% of the 2 gold chunks are labelled relevant by R >= 0.95" in text
    assert "2 of 2 queries have no pair labelled relevant" in text
    assert "semrel calibrate" in text and "semrel label" in text and text.count("warning") == 2
    assert len(json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]["warnings"]) == 2
    code, text = _run("label", judgments, "-o", tmp_path / "ok.txt")  # the default labels both gold chunks: no warning
    assert code == 0 and "warning" not in text


def test_pairs_unlike_the_development_sets_are_warned_about(tmp_path):
    """References far shorter than their chunks (lenratio under the fitted range) on every pair: `label` says so."""
    k = labels.FEATURES.index("lenratio")
    far = min(labels.WITH_GOLD.lower[k], labels.WITHOUT_GOLD.lower[k]) - 1
    code, text = _run("label", _with_p(tmp_path / "j.jsonl", PROBABLE, lenratio=far), "-o", tmp_path / "q.txt")
    assert code == 0, text
    assert "5 of 5 pairs (100%) lie beyond the development sets p was fitted on (most often lenratio: references far" in text
    assert "semrel calibrate" in text and text.count("warning") == 1
    code, text = _run("label", _with_p(tmp_path / "j.jsonl", PROBABLE, lenratio=far), "-o", tmp_path / "r.txt", "--threshold", "0.5")
    assert code == 0 and "beyond" not in text  # a threshold on R does not rest on the model
    calibrated = labels.ProbabilityRule(slope=1.2, shift=0.3, calibration={"fit": "anchored"})
    judged = read_judgments(tmp_path / "j.jsonl")
    assert labels.label_warnings(judged, calibrated.grades(judged), calibrated) == []  # refitted on the user's reviewed pairs


def test_the_share_beyond_the_range_that_is_warned_about():
    x = np.zeros((100, len(labels.FEATURES)))
    x[:, labels.FEATURES.index("relR_idf")] = 0.5
    x[:5, labels.FEATURES.index("R_idf_max")] = 2.0  # 5%: as many as a development pool may hold (0.5% at most there)
    found = labels.beyond_range(labels.outside_range(x, True))
    assert found == {"pairs": 5, "of": 100, "by_feature": {f: 5 * (f == "R_idf_max") for f in labels.FEATURES}}
    assert labels.beyond_range_note(found, "do this") is None
    x[5, labels.FEATURES.index("relR_idf")] = -500.0
    found = labels.beyond_range(labels.outside_range(x, True))
    assert labels.beyond_range_note(found, "do this") == (
        "6 of 100 pairs (6%) lie beyond the development sets p was fitted on (most often R_idf_max: chunks that copy the reference); "
        "p holds at the edge of that range there and is less sure; do this")


@pytest.mark.parametrize("feature", labels.FEATURES)
def test_each_feature_beyond_the_range_is_named_in_the_warning(feature):
    """The warning names the feature most often beyond the range, whichever it is (lexR_rel, added later, once had no
    entry and raised a KeyError mid-judge)."""
    found = {"pairs": 10, "of": 100, "by_feature": {f: 10 * (f == feature) for f in labels.FEATURES}}
    assert f"(most often {feature}" in (labels.beyond_range_note(found, "do this") or "")


def test_no_gold_in_the_golden_set_is_warned_about(tmp_path):
    rows = [(q, c, r, p, "bm25") for q, c, r, p, _ in PROBABLE]
    code, text = _run("label", _with_p(tmp_path / "j.jsonl", rows), "-o", tmp_path / "q.txt")
    assert code == 0 and "the golden set lists no gold chunks" in text


def test_the_wrong_label_warnings_start_just_past_their_shares():
    """Gold chunks warn below 80% labelled relevant, and queries with nothing relevant above 10% of them: 8 of 10 gold
    chunks relevant and 1 of 10 queries empty is no warning; 7 of 10 and 2 of 10 are both."""
    judged = [Judgment(f"q{i}", c, 0.5, 0.5, 0.5, source) for i in range(10) for c, source in (("g", "gold"), ("x", "bm25"))]

    def grades(gold_relevant: int, empty: int) -> list[int]:
        return [g for i in range(10) for g in (int(i < gold_relevant), int(i < 10 - empty))]

    rule = labels.ThresholdRule()
    assert labels.label_warnings(judged, grades(8, 1), rule) == []
    notes = labels.label_warnings(judged, grades(7, 2), rule)
    assert len(notes) == 2
    assert notes[0].startswith("only 70% of the 10 gold chunks are labelled relevant by R >= 0.7")
    assert notes[1].startswith("2 of 10 queries have no pair labelled relevant (e.g. 'q8')")
    assert "lists several" not in notes[0]  # every query lists one gold chunk: no split to show


def test_queries_with_nothing_relevant_whose_gold_was_judged_are_not_blamed_on_their_pools():
    """MS MARCO, 120 queries: 12 of 116 had no pair labelled relevant, and the warning said 'either their pools miss the
    answer or p >= 0.38 is too strict'; 10 of them had their gold chunk judged (the judge adds it to the pool), 9 with the
    answer 'Yes'. Where a gold chunk was judged the pool holds the answer, and the warning says so."""
    judged = [Judgment(f"q{i}", c, 0.5, 0.5, 0.5, source) for i in range(10) for c, source in (("g", "gold"), ("x", "bm25"))]
    grades = [int(i < 7) for i in range(10) for _ in range(2)]
    notes = labels.label_warnings(judged, grades, labels.ThresholdRule())
    assert notes[1].startswith("3 of 10 queries have no pair labelled relevant (e.g. 'q7'): 3 of them have a gold chunk judged "
                               "and labelled not relevant, so the answer is in their pools and R >= 0.7 misses it (too strict "
                               "for this data, or reference answers that do not say what the gold chunks say: too short to "
                               "match, as 'Yes', or written for other text); review about 100 pairs"), notes
    without = [Judgment(j.query_id, j.chunk_id, 0.5, 0.5, 0.5, "bm25") if j.query_id == "q9" else j for j in judged]
    notes = labels.label_warnings(without, grades, labels.ThresholdRule())
    assert "2 of them have a gold chunk judged" in notes[1] and "; the other 1 may have pools that miss the answer; " in notes[1]
    # q9's golden item lists no gold chunk (the judge's with_gold feature): not a pool that misses it, nothing to look for
    listless = [Judgment(j.query_id, j.chunk_id, 0.5, 0.5, 0.5, j.source, 0.5, {"with_gold": 0.0}) if j.query_id == "q9" else j
                for j in without]
    notes = labels.label_warnings(listless, grades, labels.ThresholdRule())
    assert "2 of them have a gold chunk judged" in notes[1] and "; the other 1 lists no gold chunk in the golden set; " in notes[1]
    also = [Judgment(j.query_id, j.chunk_id, 0.5, 0.5, 0.5, "bm25") if j.query_id == "q8" else j for j in listless]
    [empty] = [n for n in labels.label_warnings(also, grades, labels.ThresholdRule()) if n.startswith("3 of 10 queries")]
    assert "; of the other 2, 1 lists no gold chunk in the golden set and 1 may have pools that miss the answer; " in empty
    no_gold = [Judgment(j.query_id, j.chunk_id, 0.5, 0.5, 0.5, "bm25") for j in judged]
    assert labels.label_warnings(no_gold, grades, labels.ThresholdRule())[0].startswith(
        "3 of 10 queries have no pair labelled relevant (e.g. 'q7'): either their pools miss the answer or R >= 0.7 is too strict")


def test_a_gold_share_just_under_the_bound_does_not_read_as_the_bound():
    """PubMedQA after a refit on 100 reviewed pairs: 313 of 392 gold chunks relevant (79.8%) read 'only 80% of the 392
    gold chunks ... (expected 80% or more ...)', a warning that seemed to contradict itself."""
    judged = [Judgment(f"q{i}", "g", 0.5, 0.5, 0.5, "gold") for i in range(392)]
    note = labels.label_warnings(judged, [int(i < 313) for i in range(392)], labels.ThresholdRule())[0]
    assert note.startswith("only 79.8% of the 392 gold chunks are labelled relevant by R >= 0.7 (expected 80% or more"), note
    judged = [Judgment(f"q{i}", "g", 0.5, 0.5, 0.5, "gold") for i in range(10_000)]  # 79.996%: a decimal is not enough
    assert labels.label_warnings(judged, [int(i < 7_999) for i in range(10_000)], labels.ThresholdRule())[0].startswith("only 79.99% ")


def test_the_gold_share_warning_says_when_queries_with_several_gold_chunks_are_the_ones_missed():
    """On generated multi-hop questions p labelled 94% of lone gold chunks relevant and 52-68% of the others: the
    warning shows the split where it is that large, so the user sees where the labels miss."""
    judged = [Judgment(f"q{i}", c, 0.5, 0.5, 0.5, "gold") for i in range(10) for c in (("a",) if i < 5 else ("a", "b"))]
    grades = [int(i < 5 or c == "a") for i in range(10) for c in (("a",) if i < 5 else ("a", "b"))]
    note = labels.label_warnings(judged, grades, labels.ThresholdRule())[0]
    assert note.startswith("only 67% of the 15 gold chunks are labelled relevant by R >= 0.7 (expected 80% or more where the "
                           "rule fits the data; 100% where a query lists one gold chunk, 50% where it lists several: answers "
                           "drawn from several chunks match each less well): the labels likely miss relevant chunks;")


def test_logit_holds_p_of_zero_and_one_short_of_infinity():
    """A judge's p of exactly 0 or 1 maps to logit(1e-9) and its negative, finite, so a refit on it stays finite."""
    assert labels.logit(np.array([0.0, 1.0])) == pytest.approx([np.log(1e-9 / (1 - 1e-9)), np.log((1 - 1e-9) / 1e-9)])
    assert labels.logit(0.5) == 0.0


def test_the_tally_writes_counts_as_the_line_does(tmp_path):
    """'labelled 2,435 pairs by p >= 0.38: 275 relevant, 2160 not': the tally's counts lacked the line's thousands separator."""
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps({"query_id": f"q{i}", "chunk_id": "a", "P": 0.1, "R": 0.9 if i < 1000 else 0.1, "F": 0.1,
                                        "source": "bm25"}) + "\n" for i in range(2200)))
    code, text = _run("label", path, "-o", tmp_path / "q.txt", "--threshold", 0.5)
    assert code == 0, text
    assert "labelled 2,200 pairs by R >= 0.5: 1,000 relevant, 1,200 not" in text and "1,200 of 2,200 queries have no pair" in text
