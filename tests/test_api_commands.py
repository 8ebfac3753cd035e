"""`semrel.lift`, `estimate`, `validate_golden`, `golden_stats` and `review_stats`: the values the commands print (their
`-f json`), from the same inputs, as the typed results the commands print from."""

from __future__ import annotations

import json

import pytest

import semrel
from helpers import SHARED_DATA, ok, run
from review_helpers import R_SCORES, queued_db, reviewed_by_two, write_pool
from semrel.analysis.lift import Lift, lift_json
from semrel.formats.jsonl import json_text
from semrel.golden.validate import Issue, Validation
from semrel.review.engine import QueueSettings, Session

TREC = SHARED_DATA / "trec_eval_test"


def test_lift_gives_what_semrel_lift_prints(tmp_path):
    """results.test reranked: each query's top 20 in reverse order, the rest as they were (trec_eval's own run and qrels)."""
    rows = [line.split() for line in (TREC / "results.test").read_text().splitlines()]
    by_query: dict[str, list[list[str]]] = {}
    for row in rows:
        by_query.setdefault(row[0], []).append(row)
    reranked = tmp_path / "reranked.run"
    with reranked.open("w") as out:
        for q, ranked in by_query.items():
            ranked = sorted(ranked, key=lambda r: -float(r[4]))
            order = ranked[:20][::-1] + ranked[20:]
            out.writelines(f"{q} Q0 {r[2]} {i + 1} {len(order) - i} rr\n" for i, r in enumerate(order))
    args = ["-m", "RR,P@10", "--permutations", "300", "--bootstrap", "300", "--base-latency-ms", "10", "--reranked-latency-ms", "30"]
    printed = json.loads(ok("lift", TREC / "qrels.test", "--base", TREC / "results.test", "--reranked", reranked, *args,
                            "-f", "json").stdout)
    heard: list[str] = []
    result = semrel.lift(TREC / "qrels.test", TREC / "results.test", reranked, ["RR", "P@10"], permutations=300, bootstrap=300,
                         base_ms=10, reranked_ms=30, warn=heard.append)
    assert isinstance(result, Lift) and lift_json(result) == printed
    assert round(result.rows[0].base, 4) == 0.4064  # recip_rank of trec_eval's out.test
    assert result.latency is not None and result.latency.extra_ms == 20
    assert any("3 queries" in message for message in heard)  # the few-queries warning the command prints
    with pytest.raises(semrel.errors.UsageError, match="^base_ms= and reranked_ms= go together$"):
        semrel.lift(TREC / "qrels.test", TREC / "results.test", reranked, "RR", base_ms=10)
    with pytest.raises(semrel.errors.UsageError, match="base and reranked are one file"):
        semrel.lift(TREC / "qrels.test", TREC / "results.test", TREC / "results.test", "RR")


def test_golden_validate_and_stats_give_what_the_commands_print(tmp_path):
    pool = write_pool(tmp_path / "pool")
    bad = tmp_path / "bad.jsonl"
    lines = (tmp_path / "pool" / "golden.jsonl").read_text().splitlines()
    bad.write_text("\n".join([*lines, lines[0], "not json"]) + "\n")
    printed = run("golden", "validate", bad, "--corpus", pool["corpus"])
    assert printed.exit_code == 1
    found = semrel.validate_golden(bad, pool["corpus"])
    assert isinstance(found, Validation) and all(isinstance(i, Issue) for i in found.issues)
    assert [f"{bad}:{i.line}: {i.severity}: {i.message}" for i in found.issues] == printed.stdout.splitlines()
    assert (found.queries, found.errors) == (len(lines) + 1, 2)
    assert semrel.validate_golden(pool["golden"]).errors == 0
    stats = semrel.golden_stats(pool["golden"], pool["corpus"])
    assert stats == json.loads(ok("golden", "stats", pool["golden"], "--corpus", pool["corpus"], "-f", "json").stdout)
    assert stats["counts"]["queries"] == len(lines)


def test_review_stats_gives_what_semrel_review_stats_prints(tmp_path):
    pool, db, _, _ = reviewed_by_two(tmp_path)
    stats = semrel.review_stats(db, resamples=50, seed=3)
    printed = ok("review", "stats", "--db", db, "--resamples", "50", "--seed", "3", "-f", "json").stdout
    assert json.loads(json_text(stats.to_json())) == json.loads(printed)  # untimed grades: nan, JSON's null
    assert (stats.tasks, stats.reviewed) == (len(read_lines(pool["labels"])), 4)


def test_estimate_gives_what_semrel_estimate_prints(tmp_path):
    """Six pairs of the review's random sample graded against the judge (as tests/analysis/test_ppi.py reviews)."""
    conn, pool = queued_db(tmp_path, QueueSettings(order="random", seed=1))
    session = Session(conn, "alice")
    for _ in range(6):
        task = session.next_task()
        session.grade(task, 1 - task.proposed)
    conn.close()
    db, system = str(tmp_path / "r.sqlite"), tmp_path / "sys.run"
    system.write_text("".join(f"{q} Q0 {c} 1 {r} sys\n" for (q, c), r in R_SCORES.items()))
    printed = json.loads(ok("estimate", pool["labels"], system, "--reviewed", db, "-m", "P@4,RR", "-f", "json").stdout)
    estimates = semrel.estimate(pool["labels"], [system], db, ["P@4", "RR"], warn=lambda message: None)
    assert [e.to_json() for e in estimates] == printed
    assert [(e.measure, e.sampled, e.changed, e.pool) for e in estimates] == [("P@4", 6, 6, 12), ("RR", 6, 6, 12)]


def read_lines(path) -> list[str]:
    return [line for line in open(path).read().splitlines() if line.strip()]
