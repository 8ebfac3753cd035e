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


class Killed(BaseException):
    """Stands in for SIGKILL at one point of a write (BaseException: nothing may catch it)."""


def test_manifest_left_from_before_a_crash_is_not_trusted(tmp_path, monkeypatch):
    from semrel import labels
    from semrel.errors import UsageError
    from semrel.manifest import manifest_is_stale, manifest_path, read_params
    from semrel.pipeline import Step, up_to_date
    from semrel.review.tasks import parse_labelling

    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"query_id": "q1", "chunk_id": f"c{i}", "P": s, "R": s, "F": s, "source": "bm25"}) + "\n"
                                 for i, s in enumerate([0.3, 0.6, 0.95])))
    output = tmp_path / "qrels.txt"
    step = Step("label", ("label",), [str(judgments), "-o", str(output)], [str(judgments)], [str(output)])
    labels.label(str(judgments), str(output), threshold=0.5)
    assert read_params(output)["thresholds"] == [0.5] and not manifest_is_stale(output)
    assert up_to_date(step, step.settings_hash())
    assert parse_labelling(None, None, str(output)).thresholds == (0.5,)

    def killed(*args, **kwargs):
        raise Killed  # after the qrels were renamed into place, before their manifest was

    monkeypatch.setattr(labels, "write_manifest", killed)
    with pytest.raises(Killed):
        labels.label(str(judgments), str(output), threshold=0.9)
    assert output.read_text() == "q1 0 c0 0\nq1 0 c1 0\nq1 0 c2 1\n"  # the new file, whole
    assert json.loads(open(manifest_path(output)).read())["params"]["thresholds"] == [0.5]  # the old manifest
    assert manifest_is_stale(output) and read_params(output) is None
    assert not up_to_date(step, step.settings_hash())  # `semrel run` makes the step again
    with pytest.raises(UsageError):  # review no longer takes 0.5 from a manifest of another file
        parse_labelling(None, None, str(output))

    monkeypatch.undo()
    labels.label(str(judgments), str(output), threshold=0.9)
    assert read_params(output)["thresholds"] == [0.9] and up_to_date(step, step.settings_hash())
