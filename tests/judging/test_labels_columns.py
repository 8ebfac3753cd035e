"""`semrel label` reads judgments as columns (formats.judgments.JudgmentColumns): the labels, written bytes and warnings
must be those of the per-pair records (Judgment) it read before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import semrel
from helpers import drawn_features
from semrel.formats.judgments import JudgmentColumns, read_judgment_columns, read_judgments
from semrel.judging import labels

SAMPLE = Path(__file__).with_name("judged_sample.jsonl")  # 162 lines of out/bench-labels judgments: 4 COVID-QA queries with
# their gold judged (with_gold 1), 4 PubMedQA queries without (with_gold 0)
REFIT = (0.3, 0.1, -0.2, 0.05, 0.4, -0.3, 0.02, 0.1, -0.05)

# sha256 of the qrels `semrel label` wrote for SAMPLE before it read columns (commit b981006), and its grade counts
WRITTEN_BEFORE = {
    "binary": ({}, "e09fae6a3093d68356bf11c1548a02f508c67925f19a9a46cc59e231a732dd16", [149, 13]),
    "graded": ({"graded": True}, "3a8e0ffc74b757d1a2d27cdfc90984e6cd3b789f2c82b76b2fa42179348c112e", [148, 1, 3, 10]),
    "refit": ({"calibration": labels.ProbabilityRule(refit=REFIT, calibration={"fit": "features"})},
              "779ba4ce76ccbed0934558454fd7114bb7a5050b455ace263dbc349fa2cd1437", [148, 14]),
    "refit graded": ({"calibration": labels.ProbabilityRule(graded=True, refit=REFIT, calibration={"fit": "features"})},
                     "1b5affa33da96526eca73bc71cdb11b21099ad5c201c8e5e9b1a5ee838891835", [148, 0, 2, 12]),
    "platt graded": ({"calibration": labels.ProbabilityRule(slope=0.7, shift=-0.3, calibration={"fit": "platt"}), "graded": True},
                     "283e865090392714d6123f583a6086e1a8031f252294773c67d334f3f11cca43", [148, 1, 6, 7]),
    "grades on R": ({"grades": [0.5, 0.6, 0.7]}, "090b0601be6efe1a5d5b5cd09a3e72d587d12e3814a394fdf08d8c7fa6c544f0", [125, 18, 13, 6]),
}


@pytest.mark.parametrize("name", WRITTEN_BEFORE)
def test_a_real_judgments_file_labels_to_the_bytes_it_gave_before(name, tmp_path):
    options, digest, counts = WRITTEN_BEFORE[name]
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_bytes(SAMPLE.read_bytes())
    labelled = labels.label_with_rule(judgments, tmp_path / "qrels.txt", **options)
    assert hashlib.sha256((tmp_path / "qrels.txt").read_bytes()).hexdigest() == digest
    params = json.loads((tmp_path / "qrels.txt.manifest.json").read_text())["params"]
    assert list(params["grade_counts"].values()) == counts and params["fallback"] is None
    # the same records given to the Python API (JudgmentColumns.of) label alike
    assert labels.label_with_rule(read_judgments(judgments), **options).qrels.relevance.tolist() == labelled.qrels.relevance.tolist()


def _mixed(tmp_path: Path) -> Path:
    """Three queries, with_gold 1, 0 and unsaid, whose pairs mix p with every feature, p with no features, with some, with an
    empty features object, with an extra one, neither p nor features; some gold, some beyond the fitted range."""
    rng = np.random.default_rng(7)
    x = drawn_features(rng, 150)
    lines = []
    for i in range(150):
        query, kind = i // 50, i % 6
        row = {"query_id": f"q{query}", "chunk_id": f"{i % 17}#{i}", "P": float(rng.uniform(0.3, 0.9)),
               "R": float(rng.uniform(0.4, 0.9)), "F": float(rng.uniform(0.3, 0.9)), "source": "bm25,gold" if i % 7 == 0 else "bm25"}
        features = dict(zip(labels.FEATURES, x[i].tolist()))
        features |= {labels.WITH_GOLD_FLAG: 1.0} if query == 0 else {labels.WITH_GOLD_FLAG: 0.0} if query == 1 else {}
        if i % 11 == 0:
            features["lenratio"] = 9.0  # beyond the range: held at its edge
        if kind != 5:
            row["p"] = float(rng.uniform())
        if kind in (0, 1):
            row["features"] = features
        elif kind == 2:
            row["features"] = {k: v for k, v in features.items() if k != "own_idf"}
        elif kind == 3:
            row["features"] = {}
        elif kind == 4:
            row["features"] = {**features, "extra": 2.0}
        lines.append(json.dumps(row))
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _alone(judgment: semrel.Judgment, rule: labels.ProbabilityRule) -> int:
    """The grade of one pair computed by itself: probability() of its one row of features, or its calibrated p."""
    features = judgment.features or {}
    if rule.cuts_on_p and judgment.p is not None:
        return int(labels.reached(rule.calibrated(np.array([judgment.p])), rule.thresholds)[0])
    if not rule.cuts_on_p and all(f in features for f in labels.FEATURES):
        p = labels.probability(np.array([[features[f] for f in labels.FEATURES]]), bool(features.get(labels.WITH_GOLD_FLAG)), rule.refit)
        return int(labels.reached(p, rule.thresholds)[0])
    return int(labels.reached(np.array([judgment.R]), rule.fallback.thresholds)[0])


@pytest.mark.parametrize("rule", [
    labels.ProbabilityRule(), labels.ProbabilityRule(graded=True),
    labels.ProbabilityRule(graded=True, slope=1.4, shift=0.5, calibration={"fit": "platt"}),
    labels.ProbabilityRule(refit=REFIT, calibration={"fit": "features"}),
    labels.ProbabilityRule(graded=True, refit=REFIT, calibration={"fit": "features"}),
], ids=["binary", "graded", "platt", "refit", "refit graded"])
def test_a_file_mixing_pairs_with_and_without_p_and_features_labels_each_pair_as_alone(rule, tmp_path):
    path = _mixed(tmp_path)
    records = read_judgments(path)
    from_file = labels.label_with_rule(path, calibration=rule)
    expected = [_alone(j, rule) for j in records]
    assert from_file.qrels.relevance.tolist() == expected
    assert len(set(expected)) == len(rule.thresholds) + 1  # every grade met: the test would see a shifted cut
    from_records = labels.label_with_rule(records, calibration=rule)
    assert from_records.qrels.relevance.tolist() == expected
    assert [w.replace(str(path), "JUDGMENTS") for w in from_file.warnings] == from_records.warnings
    missing = sum(j.p is None for j in records) if rule.cuts_on_p else sum(
        not (j.features and all(f in j.features for f in labels.FEATURES)) for j in records)
    assert from_file.warnings[0].startswith(f"{missing} of 150 pairs hold no ")  # the fallback, counted on the columns


def test_the_columns_hold_what_the_records_hold(tmp_path):
    path = _mixed(tmp_path)
    read, converted = read_judgment_columns(path), JudgmentColumns.of(read_judgments(path))
    for field in ("query_ids", "chunk_ids", "sources"):
        assert getattr(read, field) == getattr(converted, field)
    for field in ("P", "R", "F", "p", "features", "with_gold", "has_features"):
        assert np.array_equal(getattr(read, field), getattr(converted, field), equal_nan=True), field
    assert int(np.isnan(read.p).sum()) == 25 and int(read.featured.sum()) == 75 and int(read.has_features.sum()) == 100
    assert read.with_gold.tolist() == [i < 50 and i % 6 in (0, 1, 2, 4) for i in range(150)]
    assert read.query_ids[0] is read.query_ids[1]  # a query's rows share its id
