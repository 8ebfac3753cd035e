"""A small judged pool (3 queries x 4 chunks) written as real files for review tests."""

from __future__ import annotations

import json
from pathlib import Path

from semrel.review.engine import QueueSettings, Session, create_queue
from semrel.review.store import open_db
from semrel.review.tasks import Labelling, load_tasks

CHUNKS = {
    "c1": "To fix a flat tyre, remove the wheel and find the puncture.",
    "c2": "Patch the inner tube with glue and a rubber patch, then let it dry.",
    "c3": "Chains last longer when cleaned and oiled every few hundred kilometres.",
    "c4": "A worn chain skips on the cassette; measure it with a chain checker.",
}
QUERIES = {
    "q1": ("How do I repair a puncture?", "Patch the inner tube."),
    "q2": ("How often should a chain be oiled?", "Every few hundred kilometres."),
    "q3": ("How do I know my chain is worn?", "Use a chain checker."),
}
# R scores spread so that distances to 0.5 differ: (query, chunk) -> R
R_SCORES = {
    ("q1", "c1"): 0.48, ("q1", "c2"): 0.91, ("q1", "c3"): 0.12, ("q1", "c4"): 0.20,
    ("q2", "c1"): 0.15, ("q2", "c2"): 0.22, ("q2", "c3"): 0.83, ("q2", "c4"): 0.53,
    ("q3", "c1"): 0.05, ("q3", "c2"): 0.10, ("q3", "c3"): 0.45, ("q3", "c4"): 0.88,
}
THRESHOLD = 0.5


def write_pool(folder: Path) -> dict[str, str]:
    """corpus, golden, judgments and binary labels (R >= 0.5) in `folder`; returns their paths."""
    return write_judged(folder, CHUNKS, QUERIES, R_SCORES)


def write_judged(folder: Path, chunks: dict[str, str], queries: dict[str, tuple[str, str]],
                 r_scores: dict[tuple[str, str], float]) -> dict[str, str]:
    """Any judged pool as the four files a review is built from."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: str(folder / file) for name, file in
             [("corpus", "corpus.jsonl"), ("golden", "golden.jsonl"), ("judgments", "judgments.jsonl"), ("labels", "labels.qrels")]}
    Path(paths["corpus"]).write_text("".join(
        json.dumps({"_id": c, "title": "", "text": t, "doc_id": "d", "start": 0, "end": len(t)}) + "\n" for c, t in chunks.items()
    ))
    Path(paths["golden"]).write_text("".join(
        json.dumps({"query_id": q, "query": text, "reference_answer": answer, "gold_chunk_ids": []}) + "\n"
        for q, (text, answer) in queries.items()
    ))
    Path(paths["judgments"]).write_text("".join(
        json.dumps({"query_id": q, "chunk_id": c, "P": r - 0.05, "R": r, "F": r - 0.02, "source": "bm25"}) + "\n"
        for (q, c), r in r_scores.items()
    ))
    Path(paths["labels"]).write_text("".join(f"{q} 0 {c} {int(r >= THRESHOLD)}\n" for (q, c), r in r_scores.items()))
    return paths


def queued_db(folder: Path, settings=None, labelling=None):
    """(connection, pool files) of a review database whose queue is built from write_pool's files."""
    from semrel.review.engine import QueueSettings, create_queue
    from semrel.review.store import open_db
    from semrel.review.tasks import Labelling, load_tasks

    pool = write_pool(folder / "pool")
    labelling = labelling or Labelling("R", (0.5,))
    conn = open_db(folder / "r.sqlite")
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling),
                 labelling, settings or QueueSettings())
    return conn, pool


def reviewed_by_two(tmp_path):
    """alice and bob both grade the three shared tasks (disagreeing on the second); alice grades one more."""
    pool = write_pool(tmp_path / "pool")
    labelling = Labelling("R", (0.5,))
    db = str(tmp_path / "r.sqlite")
    conn = open_db(db)
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling),
                 labelling, QueueSettings(overlap=3))
    alice, bob = Session(conn, "alice"), Session(open_db(db), "bob")
    pairs = []
    for grade_a, grade_b in ((1, 1), (1, 0), (0, 0)):
        task = alice.next_task()
        alice.grade(task, grade_a)
        assert bob.next_task().id == task.id
        bob.grade(task, grade_b)
        pairs.append(task)
    extra = alice.next_task()
    alice.grade(extra, 1 - extra.proposed)
    for connection in (alice.conn, bob.conn):  # closed now, not whenever the collector gets to them: the last
        connection.close()  # to close folds the WAL into the file, which would change an input between two exports
    return pool, db, pairs, extra
