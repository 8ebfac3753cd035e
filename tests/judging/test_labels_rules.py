"""The label rules at their edges, found by mutation testing: cuts reached exactly, the fallback's record, the
calibration flags, the manifest's grade counts and the warnings' boundaries; small in-memory judgments, no model."""

from __future__ import annotations

import json

import pytest

import semrel
from semrel.errors import ValidationError
from semrel.judging import labels
from semrel.records import Judgment

FEATURES = {"relR_idf": 0.5, "R_idf_max": 0.0, "own_idf": 0.5, "F_max": 0.0, "P_max": 0.0, "lenratio": 0.0, "lexR_rel": 0.5,
            "with_gold": 1.0}


def test_a_p_exactly_on_each_graded_cut_reaches_it():
    """Grades count cuts with p >= cut: a p equal to cut/2 (0.19), the cut or the top cut reaches that grade, and the
    manifest's thresholds are the cuts themselves, not a float's round trip through logit and sigmoid (0.19000000000000006)."""
    low, middle, high = labels.GRADE_CUTS
    assert (low, middle, high) == (0.19, 0.38, 0.69)
    rule = labels.ProbabilityRule(graded=True)
    judged = [Judgment("q", str(k), 0.5, 0.5, 0.5, p=p) for k, p in enumerate((0.1899, low, middle, high, 0.6899))]
    assert rule.grades(judged).tolist() == [0, 1, 2, 3, 2]
    assert rule.params()["thresholds"] == [0.19, 0.38, 0.69]


def test_thresholds_of_zero_and_one_on_p_are_accepted():
    """A probability's own ends are valid thresholds on p: 0 labels every pair, 1 only p = 1."""
    rule = labels.ThresholdRule("p", (0.0, 1.0))
    judged = [Judgment("q", str(k), 0.5, 0.5, 0.5, p=p) for k, p in enumerate((0.0, 0.5, 1.0))]
    assert rule.grades(judged).tolist() == [1, 1, 2]


def test_on_a_component_without_thresholds_labels_are_binary_unless_graded():
    """`label --on R` without --threshold is R >= 0.70 (grades 0 and 1); with graded, the default grades 0.6, 0.7, 0.8."""
    judged = [Judgment("q", c, 0.5, r, 0.5, "bm25") for c, r in (("a", 0.55), ("b", 0.65), ("c", 0.75), ("d", 0.85))]
    assert semrel.label(judged, on="R").to_dict() == {"q": {"a": 0, "b": 0, "c": 1, "d": 1}}
    assert semrel.label(judged, on="R", graded=True).to_dict() == {"q": {"a": 0, "b": 1, "c": 2, "d": 3}}


def test_a_partial_feature_set_takes_the_fallback_under_a_refit():
    """A refit needs every feature: a pair missing one (lexR_rel) must get R >= 0.70, not a p computed from a NaN
    feature, which reached every cut and labelled it relevant."""
    refit = labels.ProbabilityRule(refit=(0.0,) * (len(labels.FEATURES) + 2), calibration={"fit": "features"})
    partial = {k: v for k, v in FEATURES.items() if k != "lexR_rel"}
    judged = [Judgment("q", "full", 0.5, 0.5, 0.5, p=0.5, features=FEATURES),
              Judgment("q", "partial", 0.3, 0.3, 0.3, p=0.9, features=partial)]
    x, gold = labels.feature_rows(judged[:1])
    expected = int(labels.probability(x, gold)[0] >= labels.CUT)
    assert refit.unscored(judged).tolist() == [False, True]
    assert refit.grades(judged).tolist() == [expected, 0]


def test_the_manifest_records_what_the_fallback_pairs_lack_and_every_grade_count(tmp_path):
    """The manifest's fallback says whether pairs lacked p or, under a refit, the features; grade_counts lists every grade
    of the rule, with 0 for a grade no pair reached (grade 3 here)."""
    rows = [Judgment("q1", "a", 0.5, 0.65, 0.5, "bm25", p=0.3, features=FEATURES),
            Judgment("q1", "b", 0.5, 0.75, 0.5, "bm25", p=0.5, features=FEATURES),
            Judgment("q2", "c", 0.5, 0.62, 0.5, "bm25")]  # no p, no features: the fallback, R at 0.6, 0.7, 0.8
    out = tmp_path / "q.txt"
    semrel.label(rows, out, graded=True, warn=lambda _: None)
    params = json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]
    assert params["fallback"]["lacking"] == "p" and params["fallback"]["pairs"] == 1
    assert params["grade_counts"] == {"0": 0, "1": 2, "2": 1, "3": 0}
    refit = labels.ProbabilityRule(refit=(0.0,) * (len(labels.FEATURES) + 2), calibration={"fit": "features"})
    semrel.label(rows, tmp_path / "r.txt", calibration=refit, warn=lambda _: None)
    params = json.loads((tmp_path / "r.txt.manifest.json").read_text())["params"]
    assert params["fallback"]["lacking"] == "features" and params["fallback"]["pairs"] == 1
    assert set(params["grade_counts"]) == {"0", "1"}


def test_a_calibration_that_kept_slope_and_shift_is_still_a_calibration():
    """A rule from `semrel calibrate` whose fit left slope 1 and shift 0 (its cut moved) is calibrated: the manifest records
    how it was fitted, and the warnings do not send the user to calibrate again."""
    rule = labels.ProbabilityRule(cut=0.3, calibration={"fit": "shift", "pairs": 100})
    assert rule.is_calibrated
    assert rule.params()["calibration"] == {"slope": 1.0, "shift": 0.0, "fit": "shift", "pairs": 100}
    judged = [Judgment(f"q{i}", "g", 0.5, 0.5, 0.5, "gold", p=0.1) for i in range(3)]
    (gold, empty) = labels.label_warnings(judged, rule.grades(judged), rule)
    assert "already fitted to reviewed pairs" in gold and "already fitted to reviewed pairs" in empty
    assert "review about 100 pairs" not in gold + empty


def test_no_gold_warning_is_not_given_where_gold_pairs_are_known():
    """Features say the judge saw no gold chunks, but the caller lists the gold pairs: the golden set does have gold, so
    'the golden set lists no gold chunks' would be false."""
    features = {**FEATURES, "with_gold": 0.0}
    judged = [Judgment(f"q{i}", c, 0.5, 0.5, 0.5, "bm25", p=p, features=features)
              for i in range(4) for c, p in (("a", 0.9), ("b", 0.1))]
    rule = labels.ProbabilityRule()
    grades = rule.grades(judged)
    assert any("lists no gold chunks" in n for n in labels.label_warnings(judged, grades, rule))
    known = {(f"q{i}", "a") for i in range(4)}
    assert labels.label_warnings(judged, grades, rule, gold_pairs=known) == []


def test_the_gold_share_split_is_shown_from_a_gap_of_ten_points():
    """Lone gold chunks labelled relevant at 75% and several-per-query ones at 60% (a 15-point gap, past the 10 the
    warning uses) show the split; a 5-point gap does not."""
    def judged_and_grades(lone_relevant: int, many_relevant: int) -> tuple[list[Judgment], list[int]]:
        judged, grades = [], []
        for i in range(20):  # 20 queries listing one gold chunk
            judged.append(Judgment(f"l{i}", "g", 0.5, 0.5, 0.5, "gold"))
            grades.append(int(i < lone_relevant))
        for i in range(20):  # 10 queries listing two
            judged.append(Judgment(f"m{i // 2}", f"g{i % 2}", 0.5, 0.5, 0.5, "gold"))
            grades.append(int(i < many_relevant))
        return judged, grades

    note = labels.label_warnings(*judged_and_grades(15, 12), labels.ThresholdRule())[0]
    assert note.startswith("only 68% of the 40 gold chunks")  # 27 of 40: 67.5% shown as 68%
    assert "; 75% where a query lists one gold chunk, 60% where it lists several" in note
    note = labels.label_warnings(*judged_and_grades(13, 12), labels.ThresholdRule())[0]
    assert note.startswith("only 62% of the 40 gold chunks") and "lists several" not in note


@pytest.mark.parametrize("moved, refused", [(0.004, False), (0.02, True)])
def test_an_edited_threshold_in_a_calibration_file_is_refused_past_rounding(tmp_path, moved, refused):
    """"thresholds" follow from the cut, slope and shift: written to two places by hand they are accepted, but moved by
    0.02 (an edit that `label` would silently ignore) the file is refused."""
    params = labels.ProbabilityRule(slope=1.2, shift=0.3, calibration={"fit": "anchored"}).params()
    params["thresholds"] = [params["thresholds"][0] + moved]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(params))
    if refused:
        with pytest.raises(ValidationError, match='"thresholds" is'):
            labels.read_calibration(path)
    else:
        assert labels.read_calibration(path).slope == 1.2

