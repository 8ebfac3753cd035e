"""One embedding cache file shared by processes: two readers read every entry while a third
process writes new ones, all at once; every read equals what was written and none fails with
"database is locked"."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from semrel.encoding.cache import EmbeddingCache, Encoded

FILLED = range(0, 240)  # written before the readers start
ADDED = range(1000, 1240)  # written by the writer process while they read
ROUNDS = 4


def entry(k: int) -> Encoded:
    """A text's entry as the judge stores it: 20-99 tokens of 384-dim vectors (one, two or three windows)."""
    rng = np.random.default_rng(k)
    tokens = 20 + k % 80
    starts = np.arange(0, tokens, 40, dtype=np.int64)
    return Encoded(rng.integers(0, 30000, tokens, dtype=np.int32), starts, rng.standard_normal((tokens, 384), dtype=np.float32))


def key(k: int) -> bytes:
    return hashlib.sha256(f"text {k}".encode()).digest()


def digest(e: Encoded) -> str:
    return hashlib.sha256(e.ids.tobytes() + e.starts.tobytes() + e.vectors.tobytes()).hexdigest()


def _wait(path: str | Path) -> None:
    while not os.path.exists(path):
        time.sleep(0.01)


def reader(folder: str, go: str, name: str) -> None:
    """Read all filled entries (128 at a time, or one by one) round after round, at least ROUNDS
    times and until the writer is done; print their digests."""
    cache = EmbeddingCache(folder)
    _wait(go)
    seen: dict[str, set[str]] = {}
    keys = [key(k) for k in FILLED]
    rounds = 0
    while rounds < ROUNDS or not os.path.exists(f"{go}.written"):
        found = cache.get_many(keys, overlap=10) if rounds % 2 == 0 else (f for k in keys for f in cache.get_many([k], overlap=10))
        for k, e in found:
            seen.setdefault(k.hex(), set()).add(digest(e))
        rounds += 1
        Path(f"{go}.{name}").touch()  # the writer waits for a round of each reader before its second half
    cache.close()
    print(json.dumps({"rounds": rounds, "digests": {k: sorted(v) for k, v in seen.items()}}))


def writer(folder: str, go: str, name: str) -> None:
    """Add entries five per transaction, as a judge run does batch by batch: half of them, then the
    rest once both readers are reading, so reads and writes surely overlap."""
    cache = EmbeddingCache(folder)
    _wait(go)
    added = list(ADDED)
    for begin in range(0, len(added), 5):
        if begin == len(added) // 2:
            _wait(f"{go}.reader1")
            _wait(f"{go}.reader2")
        cache.put_many(((key(k), entry(k)) for k in added[begin : begin + 5]), overlap=10)
    cache.close()
    Path(f"{go}.written").touch()
    print(json.dumps({"writes": len(added)}))


def _start(role: str, name: str, folder: Path, go: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    code = f"import test_cache_concurrency as t; t.{role}({str(folder)!r}, {str(go)!r}, {name!r})"
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_two_readers_and_a_writer_share_one_cache_file(tmp_path):
    folder, go = tmp_path / "cache", tmp_path / "go"
    cache = EmbeddingCache(folder)
    cache.put_many(((key(k), entry(k)) for k in FILLED), overlap=10)
    cache.close()
    processes = [_start(role, name, folder, go) for role, name in (("reader", "reader1"), ("reader", "reader2"), ("writer", "writer"))]
    time.sleep(3)  # every process has opened the cache and waits
    go.touch()
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (_, err) in zip(processes, outputs):
        assert process.returncode == 0 and "locked" not in err, err
    readers, written = [json.loads(out) for out, _ in outputs[:2]], json.loads(outputs[2][0])
    expected = {key(k).hex(): [digest(entry(k))] for k in FILLED}
    for found in readers:
        assert found["digests"] == expected  # every entry read, each time the same bytes as written
        assert found["rounds"] >= ROUNDS
    assert written["writes"] == len(ADDED)
    cache = EmbeddingCache(folder)
    stored = {k.hex(): digest(e) for k, e in cache.get_many([key(k) for k in [*FILLED, *ADDED]], overlap=10)}
    cache.close()
    assert stored == {key(k).hex(): digest(entry(k)) for k in [*FILLED, *ADDED]}
