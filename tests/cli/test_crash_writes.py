"""SIGKILL while semrel writes (`label`, `judge`, `review export`, `report`): afterwards every output
is the old complete file or the new complete file (byte for byte the output of a run left to
finish), never a part of one. Each command is killed before it writes, as it starts writing, and while it writes."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

import semrel.formats.files as files

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
OLD = b"the previous complete file\n"
MOMENTS = (0.5, "writing+0", "writing+20")  # at half a finished run's time; as the output's temp file appears; 20 ms later
STAMP = re.compile(rb" on \d{4}-\d\d-\d\d \d\d:\d\d UTC")  # the report's creation time


@dataclass
class Scenario:
    """A command writing `outputs` into a folder (after `prepare` put there what it needs), with
    what a finished run wrote and how long it took."""

    command: Callable[[Path], list[str]]
    outputs: tuple[str, ...]
    prepare: Callable[[Path], None] = lambda folder: None
    normalise: Callable[[bytes], bytes] = lambda data: data
    reference: dict[str, bytes] | None = None
    seconds: float = 0.0

    def finish(self, folder: Path) -> "Scenario":
        folder.mkdir(parents=True, exist_ok=True)
        self.prepare(folder)
        start = time.perf_counter()
        subprocess.run(self.semrel(folder), env=ENV, check=True, capture_output=True)
        self.seconds = time.perf_counter() - start
        self.reference = {name: self.normalise((folder / name).read_bytes()) for name in self.outputs}
        return self

    def semrel(self, folder: Path) -> list[str]:
        return [sys.executable, "-m", "semrel.cli", *self.command(folder)]

    def kill_at(self, folder: Path, moment: float | str) -> None:
        """Run over old outputs, SIGKILL it at the moment (a share of a finished run's time, or
        "writing+N" = N ms after the first output's temp file appears), check every output."""
        folder.mkdir(parents=True, exist_ok=True)
        self.prepare(folder)
        for name in self.outputs:
            (folder / name).write_bytes(OLD)
        process = subprocess.Popen(self.semrel(folder), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if isinstance(moment, float):
            time.sleep(moment * self.seconds)
        else:
            temp = re.compile(rf"\.{re.escape(self.outputs[0])}\.\w+\.tmp")  # atomic_writer's temp file
            while process.poll() is None and not any(temp.fullmatch(f) for f in os.listdir(folder)):
                time.sleep(0.001)
            time.sleep(int(moment.split("+")[1]) / 1000)
        process.send_signal(signal.SIGKILL)
        process.wait()
        for name in self.outputs:
            data = (folder / name).read_bytes()
            assert data == OLD or self.normalise(data) == self.reference[name], f"{name} is neither old nor new"
            print(f"{name} killed at {moment}: {'old' if data == OLD else 'new'}")


@pytest.mark.slow
def test_the_temp_files_a_killed_process_left_go_with_the_next_write(tmp_path, label_scenario):
    """SIGKILL leaves the hidden staging folder (or temp file) of an output behind, as nothing could
    remove it then. The next write of that output removes it, and only what ended processes left:
    a live writer's temp (here this test's own id), another output's and the user's files stay."""
    folder = tmp_path / "run"
    label_scenario.kill_at(folder, "writing+20")
    left = [f for f in os.listdir(folder) if f.startswith(".qrels.txt.")]
    assert left, "the kill left nothing to clean up"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = int(gone.stdout)
    kept = [f".qrels.txt.{os.getpid()}_live1234.tmp", f".other.txt.{dead}_abcd1234.tmp", ".qrels.txt.notes"]
    for name in kept + [f".qrels.txt.{dead}_abcd1234.tmp-wal"]:
        (folder / name).write_text("x")
    subprocess.run(label_scenario.semrel(folder), env=ENV, check=True, capture_output=True)
    assert sorted(f for f in os.listdir(folder) if f.startswith(".")) == sorted(kept)
    assert label_scenario.normalise((folder / "qrels.txt").read_bytes()) == label_scenario.reference["qrels.txt"]


def write_lines(path: Path, lines) -> str:
    path.write_text("".join(lines))
    return str(path)


@pytest.fixture(scope="module")
def label_scenario(tmp_path_factory):
    data = tmp_path_factory.mktemp("label")
    rng = random.Random(0)
    judgments = write_lines(data / "judgments.jsonl", (
        json.dumps({"query_id": f"q{i // 40}", "chunk_id": f"c{i}", "P": r, "R": r, "F": r, "source": "bm25"}) + "\n"
        for i, r in ((i, rng.random()) for i in range(60_000))))
    return Scenario(lambda folder: ["label", judgments, "-o", str(folder / "qrels.txt")], ("qrels.txt",)).finish(data / "ref")


@pytest.fixture(scope="module")
def judge_scenario(tmp_path_factory):
    """2,000 pooled pairs over 120 short texts; kills hit runs whose embedding cache is warm (a copy
    each), so most of their time is scoring and writing rather than encoding."""
    data = tmp_path_factory.mktemp("judge")
    rng = random.Random(0)
    words = "chain oil brake pad tyre wheel spoke rim gear cable saddle pedal crank bearing hub valve tube patch".split()
    corpus = write_lines(data / "corpus.jsonl", (
        json.dumps({"_id": f"c{i}", "text": t, "doc_id": f"d{i}", "start": 0, "end": len(t)}) + "\n"
        for i, t in ((i, " ".join(rng.choice(words) for _ in range(12))) for i in range(100))))
    golden = write_lines(data / "golden.jsonl", (
        json.dumps({"query_id": f"q{q}", "query": "x", "reference_answer": " ".join(rng.choice(words) for _ in range(8)),
                    "gold_chunk_ids": [f"c{q}"]}) + "\n" for q in range(20)))
    pool = write_lines(data / "pool.tsv", ["query_id\tchunk_id\tsources\n",
                                            *(f"q{q}\tc{c}\tbm25\n" for q in range(20) for c in range(100))])

    def command(folder: Path) -> list[str]:
        return ["judge", "--corpus", corpus, "--golden", golden, "--pool", pool, "--cache", str(folder / "cache"),
                "-o", str(folder / "judgments.jsonl")]

    scenario = Scenario(command, ("judgments.jsonl",)).finish(data / "ref")  # fills ref/cache
    scenario.prepare = lambda folder: shutil.copytree(data / "ref" / "cache", folder / "cache")
    return scenario


@pytest.fixture(scope="module")
def export_scenario(tmp_path_factory):
    """A review database with decisions, and derived labels of 80,000 pairs to export."""
    from review_helpers import reviewed_by_two

    data = tmp_path_factory.mktemp("export")
    pool, db, _, _ = reviewed_by_two(data)
    with open(pool["labels"], "a") as labels:
        labels.writelines(f"x{i // 50} 0 c{i} {i % 2}\n" for i in range(80_000))
    return Scenario(lambda folder: ["review", "export", "--db", db, "--labels", pool["labels"], "-o", str(folder / "reviewed.qrels")],
                    ("reviewed.qrels", "reviewed.qrels.sources.jsonl")).finish(data / "ref")


@pytest.fixture(scope="module")
def report_scenario(tmp_path_factory):
    """Two runs of 100 documents for 1,000 queries, with significance tests."""
    data = tmp_path_factory.mktemp("report")
    rng = random.Random(1)
    qrels = write_lines(data / "r.qrels", (f"q{i} 0 d{rng.randrange(200)}_{d} {rng.randint(0, 2)}\n"
                                           for i in range(1000) for d in range(5)))
    # the top 5 ids have the qrels' form (some are judged: a run sharing no document with the qrels is refused)
    runs = [write_lines(data / f"{name}.run", (f"q{i} Q0 d{rng.randrange(200)}_{r % 5}{'' if r < 5 else f'x{r}'} {r + 1} {100 - r} {name}\n"
                                              for i in range(1000) for r in range(100))) for name in "ab"]
    return Scenario(lambda folder: ["report", qrels, *runs, "--threshold", "0.5", "-o", str(folder / "report.html")],
                    ("report.html",), normalise=lambda data: STAMP.sub(b"", data)).finish(data / "ref")


@pytest.mark.slow
@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("name", ["label", "judge", "export", "report"])
def test_killed_mid_write_leaves_old_or_new_file(request, tmp_path, name, moment):
    scenario = request.getfixturevalue(f"{name}_scenario")
    assert all(scenario.reference.values()) and scenario.seconds > 0.5
    scenario.kill_at(tmp_path / "run", moment)


class Killed(BaseException):
    """Stands in for SIGKILL at one point of a write (BaseException: nothing may catch it)."""


def test_manifest_left_from_before_a_crash_is_not_trusted(tmp_path, monkeypatch):
    from semrel.cli.pipeline import Digests, up_to_date
    from semrel.cli.run_config import Step
    from semrel.errors import UsageError
    from semrel.formats.manifest import manifest_is_stale, manifest_path, read_params
    from semrel.judging import labels
    from semrel.review.tasks import parse_labelling

    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"query_id": "q1", "chunk_id": f"c{i}", "P": s, "R": s, "F": s, "source": "bm25"}) + "\n"
                                 for i, s in enumerate([0.3, 0.6, 0.95])))
    output = tmp_path / "qrels.txt"
    step = Step("label", ("label",), [str(judgments), "-o", str(output)], [str(judgments)], [str(output)])
    labels.label(str(judgments), str(output), threshold=0.5)
    assert read_params(output)["thresholds"] == [0.5] and not manifest_is_stale(output)
    recorded = {"settings": step.settings_hash(), **Digests().of(step)}  # as `semrel run` records the step
    assert up_to_date(step, recorded, Digests())
    assert parse_labelling(None, None, str(output)).thresholds == (0.5,)


    replace = os.replace

    def killed(source, target):
        if str(target) == str(output):
            raise Killed  # after the manifest was renamed into place, before the qrels were: the one moment left
        replace(source, target)

    monkeypatch.setattr(files.os, "replace", killed)
    with pytest.raises(Killed):
        labels.label(str(judgments), str(output), threshold=0.9)
    assert output.read_text() == "q1 0 c0 0\nq1 0 c1 1\nq1 0 c2 1\n"  # the old file, whole
    assert json.loads(open(manifest_path(output)).read())["params"]["thresholds"] == [0.9]  # the new manifest
    assert manifest_is_stale(output) and read_params(output) is None
    assert not up_to_date(step, recorded, Digests())  # `semrel run` makes the step again
    with pytest.raises(UsageError):  # review no longer takes 0.5 from a manifest of another file
        parse_labelling(None, None, str(output))

    monkeypatch.undo()
    labels.label(str(judgments), str(output), threshold=0.9)
    assert read_params(output)["thresholds"] == [0.9] and up_to_date(step, recorded, Digests())


@pytest.mark.slow
def test_sigterm_while_writing_stops_as_ctrl_c_does_leaving_the_old_output_and_no_temp_file(tmp_path):
    """SIGTERM ended the process at once and left the hidden half-written temp file beside the output."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"_id": f"d{i}", "text": " ".join(f"word{i}x{k}" for k in range(400))}) + "\n"
                            for i in range(20000)))
    output = tmp_path / "corpus.jsonl"
    output.write_bytes(OLD)
    process = subprocess.Popen([sys.executable, "-m", "semrel.cli", "corpus", "chunk", str(docs), "-o", str(output), "--size", "50"],
                               env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    temp = re.compile(r"\.corpus\.jsonl\.\w+\.tmp")
    while process.poll() is None and not any(temp.fullmatch(f) for f in os.listdir(tmp_path)):
        time.sleep(0.001)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr.decode().strip().endswith("semrel: error: interrupted")
    assert output.read_bytes() == OLD and not [f for f in os.listdir(tmp_path) if temp.fullmatch(f)]


def test_a_termination_signal_the_process_was_started_ignoring_stays_ignored(tmp_path):
    """`nohup semrel label ... &`: SIGHUP is ignored from the start, and semrel turned it into Ctrl-C (exit 130);
    one it may act on still stops a command as Ctrl-C does, and the handlers are restored after."""
    from semrel.interrupts import interrupts_recorded

    before = {s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM)}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with interrupts_recorded():
            signal.raise_signal(signal.SIGHUP)
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGTERM)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_a_ctrl_c_whose_exception_a_library_swallowed_still_stops_every_write(tmp_path):
    """Compiled code can swallow the KeyboardInterrupt of a Ctrl-C (pandas' modules did, while they
    initialised): the command ran on and replaced its output. The signal is remembered, and no file
    is replaced after it."""
    from semrel.formats.files import atomic_writer, files_as_one
    from semrel.interrupts import interrupts_recorded

    output = tmp_path / "out.txt"
    output.write_bytes(OLD)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    try:
        with interrupts_recorded():
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass  # what the library did
            for writer in (lambda: atomic_writer(output), lambda: files_as_one([str(output)])):
                with pytest.raises(KeyboardInterrupt):
                    with writer() as out:
                        if isinstance(out, dict):
                            open(out[str(output)], "w").write("new")
                        else:
                            out.write("new")
    finally:
        signal.signal(signal.SIGINT, before)
    assert output.read_bytes() == OLD and os.listdir(tmp_path) == ["out.txt"]
    with atomic_writer(output) as out:  # outside a command nothing is remembered
        out.write("new")
    assert output.read_text() == "new"


CTRL_C_WHILE_IMPORTING = """
import signal, sys
from importlib.abc import MetaPathFinder

class CtrlC(MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == MODULE:  # Ctrl-C while this module is imported
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                if EXCEPTION == "raised":
                    raise
                # else swallowed, as pandas' compiled modules did when it landed while they initialised
        return None

MODULE, EXCEPTION = sys.argv.pop(1), sys.argv.pop(1)
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
sys.meta_path.insert(0, CtrlC())
from semrel.cli import start
start()
"""


@pytest.mark.parametrize("module,exception", [("pandas", "swallowed"), ("click", "raised")])
def test_ctrl_c_while_modules_load_stops_the_command_in_one_line(tmp_path, module, exception):
    """pyarrow imported pandas at its first array, and a Ctrl-C landing while pandas' compiled modules
    initialised was lost: the command ran on and replaced its output (or ended in a traceback, pandas
    half-imported). Commands now import it first with signals held, and remember every signal. A
    Ctrl-C while the command's own modules load, before click runs, ended in a traceback."""
    pytest.importorskip(module)
    runs = [tmp_path / "a.run", tmp_path / "b.run"]
    runs[0].write_text("q1 Q0 d1 1 2.0 a\n")
    runs[1].write_text("q1 Q0 d2 1 2.0 b\n")
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_IMPORTING, module, exception, "fuse", *map(str, runs),
                           "-o", str(tmp_path / "f.run")], env=ENV, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr.strip()) == (130, "semrel: error: interrupted")
    assert sorted(os.listdir(tmp_path)) == ["a.run", "b.run"]


def test_an_error_after_a_swallowed_ctrl_c_is_the_interruption_not_a_traceback(tmp_path, monkeypatch):
    """A Ctrl-C swallowed mid-import (pandas, scipy) can leave a module half-imported, and the next use
    of it fails (AttributeError: partially initialized module): that was a traceback; it is the
    interruption it came from. The same error without a Ctrl-C stays a traceback (a bug to report)."""
    from helpers import run
    from semrel.cli import fuse

    runs = [tmp_path / "a.run", tmp_path / "b.run"]
    runs[0].write_text("q1 Q0 d1 1 2.0 a\n")
    runs[1].write_text("q1 Q0 d2 1 2.0 b\n")

    def half_imported(*args, ctrl_c=True, **kwargs):
        if ctrl_c:
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass  # swallowed
        raise AttributeError("partially initialized module 'pandas' has no attribute '_pandas_datetime_CAPI'")

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    try:
        monkeypatch.setattr(fuse, "fuse_files", half_imported)
        result = run("fuse", *runs, "-o", tmp_path / "f.run")
        assert (result.exit_code, result.stderr.strip()) == (130, "semrel: error: interrupted")
        monkeypatch.setattr(fuse, "fuse_files", lambda *args, **kwargs: half_imported(ctrl_c=False))
        with pytest.raises(AttributeError):
            run("fuse", *runs, "-o", tmp_path / "f.run")
    finally:
        signal.signal(signal.SIGINT, before)
    assert sorted(os.listdir(tmp_path)) == ["a.run", "b.run"]


def test_a_second_ctrl_c_while_temp_files_are_removed_leaves_none(tmp_path, monkeypatch):
    """Ctrl-C twice: the second, landing as the first one's temp files were removed, left the staging folder."""

    rmtree = shutil.rmtree

    def interrupted(path, **kwargs):
        signal.raise_signal(signal.SIGINT)  # the second Ctrl-C, as the cleanup starts
        rmtree(path, **kwargs)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    monkeypatch.setattr(files.shutil, "rmtree", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            with files.files_as_one([str(tmp_path / "out.txt")]) as staged:
                open(staged[tmp_path / "out.txt"], "w").write("new")
                raise KeyboardInterrupt  # the first
    finally:
        signal.signal(signal.SIGINT, before)
        monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_a_signal_as_the_interpreter_shuts_down_ends_with_the_commands_line_and_130():
    """After the command returned, a Ctrl-C in an atexit callback (torch's, ray's) printed "interrupted", then a
    traceback of SystemExit, and the process exited 0."""
    code = ("import atexit, signal, sys; sys.argv = ['semrel', '--version']; "
            "signal.signal(signal.SIGINT, signal.default_int_handler); "  # as in a terminal: a background job starts ignoring it
            "atexit.register(lambda: signal.raise_signal(signal.SIGINT)); from semrel.cli import start; start()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr.strip()) == (130, "semrel: error: interrupted"), done.stderr
    assert done.stdout.startswith("semrel, version")  # what the command printed is flushed


@pytest.mark.slow
@pytest.mark.parametrize("module", ["typing", "errno"])  # what semrel and semrel.cli loaded first
def test_a_ctrl_c_as_the_console_script_imports_semrel_ends_in_one_line(tmp_path, module):
    """The console script (`semrel`, as pip writes it) imports the semrel package before start() sets its handlers: a
    Ctrl-C in the first ~40 ms, while `typing` loaded for it, was a KeyboardInterrupt traceback from inside the import."""
    script = tmp_path / "semrel"
    script.write_text(
        "import builtins, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"  # as in a terminal: a background job starts ignoring it
        "load = builtins.__import__\n"
        f"def ctrl_c(name, *args, **kwargs):\n    if name == {module!r}:\n        signal.raise_signal(signal.SIGINT)\n"
        "    return load(name, *args, **kwargs)\n"
        "builtins.__import__ = ctrl_c\n"
        "from semrel.cli import start\n"
        "sys.exit(start())\n")
    done = subprocess.run([sys.executable, str(script), "--version"], env=ENV, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "semrel: error: interrupted\n")


def test_a_ctrl_c_before_the_command_runs_is_remembered_even_if_its_exit_is_swallowed(tmp_path):
    """Before a command runs, the console script's handler ends the process (SystemExit 130); a bare
    `except:` in some import could swallow that, and the command ran on to replace its output."""
    from semrel import interrupts
    from semrel.formats.files import atomic_writer

    output = tmp_path / "out.txt"
    output.write_bytes(OLD)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
        interrupts.stop_on_interrupts()
        try:
            signal.raise_signal(signal.SIGINT)
        except SystemExit:
            pass  # swallowed
        with interrupts.interrupts_recorded(), pytest.raises(KeyboardInterrupt):
            with atomic_writer(output) as out:
                out.write("new")
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    assert output.read_bytes() == OLD and os.listdir(tmp_path) == ["out.txt"]
    assert not interrupts._received  # forgotten once the command ended


def test_a_ctrl_c_during_the_renames_says_the_new_files_are_in_place(tmp_path, monkeypatch):
    """A signal held while a set of files is renamed into place is delivered after the last rename: the
    command stops (exit 130), but the files are new and whole, which the message used to hide behind a
    bare 'interrupted'. A checkpoint the set supersedes goes with the renames."""
    from helpers import run

    judgments = tmp_path / "j.jsonl"
    judgments.write_text('{"query_id": "q1", "chunk_id": "c1", "P": 0.9, "R": 0.8, "F": 0.85, "source": "bm25"}\n')
    replace, calls = os.replace, []

    def ctrl_c_at_the_first(source, target):
        if Path(target).parent == tmp_path:  # a rename into place, not a write of a staged file
            calls.append(target)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGINT)  # held until every file of the set is in place
        replace(source, target)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    monkeypatch.setattr(files.os, "replace", ctrl_c_at_the_first)
    try:
        result = run("label", judgments, "--threshold", "0.7", "-o", tmp_path / "out.qrels")
        (tmp_path / "done.partial").write_text("checkpoint")
        calls.clear()
        with pytest.raises(files.InterruptedAfterWriting) as raised:
            with files.files_as_one([str(tmp_path / "a.txt")], superseded=[str(tmp_path / "done.partial")]) as staged:
                open(staged[str(tmp_path / "a.txt")], "w").write("new")
    finally:
        signal.signal(signal.SIGINT, before)
    qrels = tmp_path / "out.qrels"
    assert (result.exit_code, result.stderr.strip()) == (130, f"semrel: error: interrupted after {qrels}.manifest.json, {qrels} "
                                                              "had been written in full (new and complete)")
    assert qrels.read_text() == "q1 0 c1 1\n" and json.loads(Path(f"{qrels}.manifest.json").read_text())["rows"] == 1
    assert raised.value.written == [str(tmp_path / "a.txt")] and (tmp_path / "a.txt").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "j.jsonl", "out.qrels", "out.qrels.manifest.json"]


def test_a_rename_failing_after_a_held_ctrl_c_says_which_files_hold_the_new_set(tmp_path, monkeypatch):
    """A Ctrl-C held during the renames and then a rename failing: the error that says which files already hold
    the new set is what the user needs; the signal, delivered as the renames end, replaced it with 'interrupted'."""
    from semrel.errors import SemrelError

    names = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    replace = os.replace

    def ctrl_c_then_failure(source, target):
        if target == names[0]:
            signal.raise_signal(signal.SIGINT)
        if target == names[1]:
            raise OSError(5, "Input/output error")
        replace(source, target)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    monkeypatch.setattr(files.os, "replace", ctrl_c_then_failure)
    try:
        with pytest.raises(SemrelError, match=r"b\.txt: cannot put it in place \(Input/output error\); .*a\.txt already hold the new"):
            with files.files_as_one(names) as staged:
                for name in names:
                    with open(staged[name], "w") as out:  # written directly: atomic_writer's own rename is not the one tested
                        out.write("new")
    finally:
        signal.signal(signal.SIGINT, before)
    assert open(names[0]).read() == "new" and not os.path.exists(names[1])


def test_the_first_rename_failing_says_the_old_files_are_kept_not_that_some_hold_the_new_set(tmp_path, monkeypatch):
    """Where the first rename fails, no file holds the new set: the error is the plain write error (the old file kept),
    not "..., already hold the new files: run it again" with no file named."""
    from semrel.errors import SemrelError

    names = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    for name in names:
        Path(name).write_text("old")

    def failure(source, target):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "replace", failure)
    with pytest.raises(SemrelError, match=r"a\.txt: cannot write \(Input/output error\); nothing was written, the old file is kept$"):
        with files.files_as_one(names) as staged:
            for name in names:
                with open(staged[name], "w") as out:
                    out.write("new")
    assert [open(name).read() for name in names] == ["old", "old"]


@pytest.mark.parametrize("maker", ["mkstemp", "mkdtemp"])
def test_a_signal_as_the_temp_file_is_made_leaves_no_temp_file(tmp_path, monkeypatch, maker):
    """SIGTERM in the full suite left `.corpus.jsonl.<pid>_x.tmp` behind: a signal landing after the temp file (or
    staging folder) was made, before the writer had its name, skipped the clean-up."""
    made = getattr(tempfile, maker)

    def signalled(*args, **kwargs):
        result = made(*args, **kwargs)
        signal.raise_signal(signal.SIGINT)  # Ctrl-C, the instant the file is there
        return result

    monkeypatch.setattr(tempfile, maker, signalled)
    output = tmp_path / "out.txt"
    output.write_bytes(OLD)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever earlier tests left
    try:
        with pytest.raises(KeyboardInterrupt):
            if maker == "mkstemp":
                with files.atomic_writer(output) as out:
                    out.write("new\n")
            else:
                with files.files_as_one([str(output)]) as staged:
                    Path(staged[str(output)]).write_text("new\n")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert output.read_bytes() == OLD and sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_signals_held_in_a_block_reach_the_handlers_there_were_once_it_ends_the_first_of_them(tmp_path):
    """One delivery, of the first signal held (a Ctrl-C and then a SIGTERM is the person's Ctrl-C), and the handlers
    are those of before the block again: a signal after it is not held, nor lost."""
    from semrel.interrupts import signals_held

    got: list = []
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        signal.signal(signal.SIGINT, lambda signum, frame: got.append(("Ctrl-C handler", signum)))
        signal.signal(signal.SIGTERM, lambda signum, frame: got.append(("SIGTERM handler", signum)))
        handlers = {s: signal.getsignal(s) for s in before}
        with signals_held():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGTERM)
            assert got == []  # held
        assert got == [("Ctrl-C handler", signal.SIGINT)] and {s: signal.getsignal(s) for s in before} == handlers
        signal.raise_signal(signal.SIGTERM)
        assert got == [("Ctrl-C handler", signal.SIGINT), ("SIGTERM handler", signal.SIGTERM)]
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_signals_are_left_alone_outside_the_main_thread():
    """Python sets handlers in the main thread only (elsewhere signal.signal raises ValueError): a file written from
    another thread (a review server's) is written without holding them."""
    import threading

    from semrel.interrupts import interrupts_recorded, signals_held

    done: list = []

    def write():
        with signals_held():
            done.append("held")
        with interrupts_recorded() as received:
            done.append(received)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    assert done == ["held", []]


def test_a_command_inside_a_command_leaves_the_outer_one_its_signals_and_sigterm_or_sighup_is_a_termination():
    from semrel.interrupts import check_interrupted, interrupts_recorded, terminated

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        for number in before:  # a Ctrl-C as in a terminal (a background job starts ignoring it); SIGTERM and SIGHUP never end pytest
            signal.signal(number, signal.default_int_handler)
        with interrupts_recorded() as received:
            with interrupts_recorded():
                try:
                    signal.raise_signal(signal.SIGINT)
                except KeyboardInterrupt:
                    pass  # swallowed
            assert received == [signal.SIGINT] and not terminated()  # a person's Ctrl-C
            with pytest.raises(KeyboardInterrupt):
                check_interrupted()
            for number in (signal.SIGHUP, signal.SIGTERM):
                received[1:] = []
                with pytest.raises(KeyboardInterrupt):
                    signal.raise_signal(number)
                assert received == [signal.SIGINT, number] and terminated()  # the process was told to end
        assert received == [] and not terminated()
        check_interrupted()
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def test_a_signal_after_the_command_flushes_what_it_printed_and_exits_130():
    """os._exit flushes nothing: output still in stdout's buffer (a pipe's is not flushed at each line) was lost."""
    code = ("import signal, sys; from semrel.interrupts import stop_at_exit; "
            "signal.signal(signal.SIGINT, signal.default_int_handler); stop_at_exit(); "
            "sys.stdout.write('the last rows'); signal.raise_signal(signal.SIGINT); print('never')")
    buffered = {name: value for name, value in ENV.items() if name != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", code], env=buffered, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (130, "the last rows", "semrel: error: interrupted\n")
