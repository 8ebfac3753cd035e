"""Exporting reviewed qrels: human grades override derived ones, conflicts settled by rule."""

from __future__ import annotations

import json

import pytest

from review_helpers import reviewed_by_two
from semrel.errors import UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.review.adjudicate import adjudicate, export_reviewed, settle


def test_settle_rules():
    assert settle({"a": 2, "b": 2, "c": 1}, "majority") == 2
    assert settle({"a": 2, "b": 1}, "majority") == 1  # a tie goes to the lowest tied grade
    assert settle({"a": 2, "b": 1}, "a") == 2
    assert settle({"b": 1, "c": 1, "d": 0}, "a") == 1  # the named reviewer did not grade it: majority


def test_strict_lists_conflicts_and_unknown_reviewers_are_refused():
    by_pair = {("q1", "c1"): {"a": 1, "b": 0}, ("q1", "c2"): {"a": 1, "b": 1}}
    with pytest.raises(ValidationError, match=r"1 reviewed pairs have conflicting grades: q1/c1: a=1, b=0"):
        adjudicate(by_pair, "strict", {"a", "b"})
    assert adjudicate({("q1", "c2"): {"a": 1, "b": 1}}, "strict", {"a", "b"}) == {("q1", "c2"): 1}
    with pytest.raises(UsageError, match="not majority, strict or a reviewer"):
        adjudicate(by_pair, "zed", {"a", "b"})


def test_export_overrides_and_writes_sources(tmp_path):
    pool, db, pairs, extra = reviewed_by_two(tmp_path)
    out = tmp_path / "reviewed.qrels"
    counts = export_reviewed(db, pool["labels"], out, "majority")
    assert counts == {"review": 3, "adjudicated:majority": 1, "judge": 8}
    labels = read_qrels(out).to_dict()
    assert labels[pairs[1].query_id][pairs[1].chunk_id] == 0  # 1 vs 0: lowest tied grade
    assert labels[extra.query_id][extra.chunk_id] == 1 - extra.proposed
    sources = {(r["query_id"], r["chunk_id"]): r for r in map(json.loads, open(f"{out}.sources.jsonl"))}
    assert sources[pairs[1].query_id, pairs[1].chunk_id]["reviewers"] == {"alice": 1, "bob": 0}
    assert sources[extra.query_id, extra.chunk_id]["judge"] == extra.proposed

    by_bob = export_reviewed(db, pool["labels"], out, "bob")
    assert by_bob["adjudicated:bob"] == 1
    assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == 0
    export_reviewed(db, pool["labels"], out, "alice")
    assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == 1


def test_strict_export_is_one_line_error_and_writes_nothing(tmp_path, cli):
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "strict.qrels"
    result = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out), "--adjudicate", "strict")
    assert result.exit_code == 1
    assert f"{pairs[1].query_id}/{pairs[1].chunk_id}: alice=1, bob=0" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_stats_report_agreement_between_reviewers(tmp_path, cli):
    _, db, _, _ = reviewed_by_two(tmp_path)
    report = json.loads(cli("review", "stats", "--db", db, "--format", "json", "--resamples", "200").stdout)
    between = next(a for a in report["agreement"] if a["second"] == "bob")
    assert between["first"] == "alice" and between["n"] == 3
    assert between["percent_agreement"] == pytest.approx(200 / 3)
    assert between["confusion"] == [[1, 0], [1, 1]]
    assert {a["second"] for a in report["agreement"]} == {"bob", "judge"}


def test_labels_of_another_set_are_refused(tmp_path, cli):
    """Derived qrels that share no query with the reviewed pairs would be merged with them into one file."""
    _, db, _, _ = reviewed_by_two(tmp_path)
    other = tmp_path / "other.qrels"
    other.write_text("elsewhere 0 x#0 1\n")
    out = tmp_path / "mixed.qrels"
    result = cli("review", "export", "--db", db, "--labels", str(other), "-o", str(out))
    assert result.exit_code == 1 and "other.qrels shares no query with the pairs reviewed in" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()
