"""SIGKILL while semrel writes: afterwards the output is the old complete file or the new
complete file, never a part of one."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

PAIRS = 120_000


@pytest.fixture(scope="module")
def judgments(tmp_path_factory):
    path = tmp_path_factory.mktemp("crash") / "judgments.jsonl"
    rng = random.Random(0)
    with open(path, "w") as out:
        for i in range(PAIRS):
            r = rng.random()
            out.write(json.dumps({"query_id": f"q{i // 40}", "chunk_id": f"c{i}", "P": r, "R": r, "F": r, "source": "bm25"}) + "\n")
    return path


@pytest.mark.parametrize("seed", range(6))
def test_label_killed_mid_write_leaves_old_or_new_file(tmp_path, judgments, seed):
    output = tmp_path / "qrels.txt"
    old = "q0 0 c0 1\n"
    output.write_text(old)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "semrel.cli", "label", str(judgments), "-o", str(output)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.Random(seed).uniform(0.5, 2.9))
    process.send_signal(signal.SIGKILL)
    process.wait()
    text = output.read_text()
    if text != old:  # the new file, whole: one line per judged pair
        lines = text.splitlines()
        assert len(lines) == PAIRS and all(len(line.split()) == 4 for line in lines)
