"""A 10M-line run (10,000 queries x 1,000 documents) evaluates within memory: `semrel eval` keeps
columns, not a Python object per line, and its values equal the exact formulas computed here with
numpy on the same relevance matrix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

QUERIES, DEPTH, SPREAD = 10_000, 1_000, 997  # doc of rank j in query q: (j * SPREAD + q * 7919) mod 10^6, distinct per query
# Peak RSS of the eval process. Python objects per line (a tuple of 3 str and a float, ~300 bytes)
# would need > 3 GB for 10M lines; columns need about a third of that.
RSS_LIMIT_MB = 2_000


def digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of non-negative integers, zero-padded."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((values[:, None] // powers) % 10 + 48).astype(np.uint8)


def fixed_width_lines(columns: list[np.ndarray | bytes], rows: int) -> bytes:
    """Rows of fixed-width fields (digit arrays or constant bytes) joined into lines."""
    parts = [np.broadcast_to(np.frombuffer(c, dtype=np.uint8), (rows, len(c))) if isinstance(c, bytes) else c for c in columns]
    return np.hstack([*parts, np.full((rows, 1), 10, dtype=np.uint8)]).tobytes()


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """The run file, the qrels file, and the (queries x depth) 0/1 matrix of retrieved relevant docs
    with each query's number of relevant docs."""
    folder = tmp_path_factory.mktemp("large")
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(QUERIES, dtype=np.int64), DEPTH)
    j = np.tile(np.arange(DEPTH, dtype=np.int64), QUERIES)
    doc = (j * SPREAD + q * 7919) % 1_000_000
    score = 999_999 - j * 1000  # "0.999999", "0.998999", ...: strictly decreasing with rank
    run = folder / "large.run"
    with open(run, "wb") as out:
        for block in np.array_split(np.arange(len(q)), 20):
            out.write(fixed_width_lines([b"q", digits(q[block], 5), b" Q0 d", digits(doc[block], 7), b" ",
                                         digits(j[block] + 1, 4), b" 0.", digits(score[block], 6), b" r"], len(block)))
    relevant = rng.random((QUERIES, DEPTH)) < 0.02 * np.exp(-np.arange(DEPTH) / 200)  # denser near the top
    unretrieved = rng.integers(0, 4, QUERIES)  # relevant docs the run never returns (ids >= 10^6)
    rows_q, rows_j = np.nonzero(relevant)
    qrels_docs = (rows_j * SPREAD + rows_q * 7919) % 1_000_000
    extra_q = np.repeat(np.arange(QUERIES), unretrieved)
    extra_docs = 1_000_000 + np.arange(len(extra_q))
    not_relevant_q = np.arange(QUERIES)  # one judged non-relevant retrieved doc per query (rank 500 unless relevant)
    keep = ~relevant[not_relevant_q, 500]
    all_q = np.concatenate([rows_q, extra_q, not_relevant_q[keep]])
    all_docs = np.concatenate([qrels_docs, extra_docs, ((500 * SPREAD + not_relevant_q * 7919) % 1_000_000)[keep]])
    grades = np.concatenate([np.ones(len(rows_q) + len(extra_q), dtype=np.int64), np.zeros(keep.sum(), dtype=np.int64)])
    qrels = folder / "large.qrels"
    qrels.write_bytes(fixed_width_lines([b"q", digits(all_q, 5), b" 0 d", digits(all_docs, 7), b" ", digits(grades, 1)], len(all_q)))
    return run, qrels, relevant.astype(np.float64), relevant.sum(axis=1) + unretrieved


def reference(relevant: np.ndarray, total: np.ndarray) -> dict[str, float]:
    """trec_eval's formulas on the matrix (queries with no relevant doc score 0 and count)."""
    ranks = np.arange(1, DEPTH + 1)
    safe = np.maximum(total, 1)
    found = np.cumsum(relevant, axis=1)
    first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, np.inf)
    discount = 1 / np.log2(np.arange(2, 12))
    ideal = np.array([discount[: min(t, 10)].sum() for t in total])
    return {
        "P@10": (relevant[:, :10].sum(axis=1) / 10).mean(),
        "R@1000": np.where(total > 0, found[:, -1] / safe, 0).mean(),
        "AP": np.where(total > 0, (relevant * found / ranks).sum(axis=1) / safe, 0).mean(),
        "RR": (1 / first).mean(),
        "nDCG@10": np.where(ideal > 0, (relevant[:, :10] * discount).sum(axis=1) / np.where(ideal > 0, ideal, 1), 0).mean(),
    }


@pytest.mark.slow
def test_ten_million_line_run_evaluates_exactly_within_memory(collection):
    run, qrels, relevant, total = collection
    assert os.path.getsize(run) == QUERIES * DEPTH * len(b"q00000 Q0 d0000000 0001 0.999999 r\n")  # 10M fixed-width lines
    # The eval runs as a grandchild, so RUSAGE_CHILDREN of its parent is its own peak alone.
    measure = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
               "sys.stdout.flush(); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")
    command = [sys.executable, "-c", measure, sys.executable, "-m", "semrel.cli", "eval", str(qrels), str(run),
               "-m", "P@10,R@1000,AP,RR,nDCG@10", "-f", "json", "--places", "17"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    *report, rss_kb = done.stdout.strip().splitlines()
    values = json.loads("\n".join(report))["large"]["all"]
    expected = reference(relevant, total)
    assert expected["P@10"] > 0.01 and 0.5 < expected["R@1000"] < 0.9  # the collection is neither empty nor trivial
    assert values == pytest.approx(expected, rel=1e-12, abs=1e-15)
    rss_mb = int(rss_kb) / 1024
    print(f"peak RSS of semrel eval on {QUERIES * DEPTH:,} lines: {rss_mb:.0f} MB")
    assert rss_mb < RSS_LIMIT_MB
