"""Readers and writers: round trips, atomic writes, id checks, manifests."""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import re
import stat
from pathlib import Path

import pytest

from helpers import run, write
from semrel.errors import FormatError, SemrelError
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats import manifest, read_qrels, read_run, write_qrels, write_run
from semrel.formats.files import atomic_writer, file_digest, files_as_one, locked, open_input
from semrel.formats.manifest import write_manifest
from semrel.records import Qrels, Run
from semrel.retrieval.fusion import fuse_files


def test_run_round_trip_ranks_like_trec_eval(tmp_path):
    run = Run.from_dict({"q2": {"d1": 0.5}, "q1": {"d10": 1.0, "d9": 1.0, "d2": 3.0}}, name="bm25")
    path = tmp_path / "out.run"
    write_run(run, path)
    lines = path.read_text().splitlines()
    assert lines[:3] == ["q2 Q0 d1 1 0.5 bm25", "q1 Q0 d2 1 3.0 bm25", "q1 Q0 d9 2 1.0 bm25"]
    assert read_run(path).to_dict() == run.to_dict()
    assert read_run(path).name == "out"


def test_qrels_round_trip_and_gzip(tmp_path):
    qrels = Qrels.from_dict({"1": {"a": 3, "b": -1}, "2": {"a": 0}})
    path = tmp_path / "gold.qrels.gz"
    write_qrels(qrels, path)
    assert read_qrels(path).to_dict() == {"1": {"a": 3, "b": -1}, "2": {"a": 0}}


def test_writers_refuse_ids_with_whitespace(tmp_path):
    with pytest.raises(SemrelError, match="contains whitespace"):
        write_qrels(Qrels.from_dict({"q 1": {"d": 1}}), tmp_path / "x.qrels")
    assert not (tmp_path / "x.qrels").exists()


def test_atomic_writer_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old complete content\n")
    with pytest.raises(RuntimeError):
        with atomic_writer(path) as out:
            out.write("half of the new")
            raise RuntimeError("crash mid-write")
    assert path.read_text() == "old complete content\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_empty_run_is_valid_and_empty_lines_are_skipped(write):
    assert len(read_run(write("empty.run", ""))) == 0
    assert len(read_run(write("gaps.run", "\nq Q0 d 1 1 r\n\n"))) == 1


def test_a_tab_at_a_line_edge_or_beside_a_space_separates_fields(write):
    """Arrow splits on spaces alone: a tab there stayed in the id (query 'TAB q1', doc 'd1 TAB'), which matched
    nothing in the other file and scored 0 without a word."""
    assert read_run(write("t.run", "\tq1 Q0 d1 1 2 r\nq1 Q0 d2\t 2 1 r\n")).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}
    assert read_qrels(write("t.qrels", "q1 0 d1\t 1\n\tq1 0 d2 0\n")).to_dict() == {"q1": {"d1": 1, "d2": 0}}


@pytest.mark.parametrize(
    "name,text,line",
    [("dup.qrels", "q 0 a 1\n\nq 0 b 1\nq 0 a 0\n", 4), ("test.tsv", "query-id\tcorpus-id\tscore\nq\ta\t1\nq\ta\t0\n", 3)],
)
def test_duplicate_judgment_names_its_line(write, name, text, line):
    run = Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(FormatError) as caught:
        evaluate(read_qrels(write(name, text)), run, parse_measures(["P@1"]))
    assert caught.value.line == line and "duplicate judgment" in str(caught.value)


def test_manifest_records_inputs_and_versions(write, tmp_path):
    source = write("in.qrels", "q 0 a 1\nq 0 b 0\n")
    out = tmp_path / "derived.qrels"
    out.write_text("x\n")
    manifest = json.loads(open(write_manifest(out, [source], {"threshold": 0.5}, rows=1)).read())
    assert manifest["inputs"][0]["lines"] == 2 and len(manifest["inputs"][0]["sha256"]) == 64
    assert manifest["params"] == {"threshold": 0.5} and "numpy" in manifest["versions"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        with atomic_writer(tmp_path / "out.txt") as out:
            out.write("x\n")
        write_manifest(tmp_path / "out.txt")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "out.txt.manifest.json").stat().st_mode) == mode


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "shared.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    with atomic_writer(target) as out:
        out.write("new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_read_only_output_is_not_replaced(tmp_path):
    """A rename replaced a file its owner had made read-only (or another user's: the folder's permission was enough)."""
    target = write(tmp_path / "kept.run", "old\n")
    target.chmod(0o444)
    runs = [write(tmp_path / "a.run", "q1 Q0 d1 1 2.0 a\n"), write(tmp_path / "b.run", "q1 Q0 d2 1 2.0 b\n")]
    result = run("fuse", *runs, "-o", target)
    assert result.exit_code == 1 and "kept.run: is read-only; semrel does not replace" in result.stderr
    with pytest.raises(SemrelError, match="kept.run: is read-only"):
        with atomic_writer(target) as out:
            out.write("new\n")
    assert target.read_text() == "old\n" and sorted(os.listdir(tmp_path)) == ["a.run", "b.run", "kept.run"]


def test_locked_holds_its_lock_exclusively_until_the_block_ends(tmp_path):
    """Two processes building one BM25 index take turns by it: a shared lock would let the second in beside the first."""
    lock = tmp_path / "index.lock"
    with locked(lock), open(lock) as other:
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
    with open(lock) as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again once the block has ended


def test_an_output_named_gz_is_gzip_compressed(tmp_path):
    """Readers take plain text under a .gz name as readily as gzip, so a writer that forgot to compress passed every
    round trip; gunzip and other tools refuse such a file."""
    target = tmp_path / "run.txt.gz"
    with atomic_writer(target) as out:
        out.write("q1 Q0 d1 1 2.0 a\n")
    assert target.read_bytes()[:2] == b"\x1f\x8b" and gzip.decompress(target.read_bytes()) == b"q1 Q0 d1 1 2.0 a\n"


def test_a_fifo_opened_without_an_earlier_check_is_refused_not_read(tmp_path):
    """The stat before opening can be raced (a FIFO put at the path after it): the descriptor opened is checked too, so
    the read that would hang on the FIFO never starts."""
    fifo = tmp_path / "corpus.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SemrelError, match="corpus.jsonl: is a FIFO .named pipe., not a file"):
        open_input(fifo)


def test_an_output_named_through_a_link_replaces_the_file_it_points_at(tmp_path):
    """The link stays and follows the new content, as after open(link, "w"); the temp file is made
    beside the real file (so the rename stays on its file system) and none is left behind."""
    store = write(tmp_path / "store" / "fused.run", "old\n")
    (tmp_path / "work").mkdir()
    link = tmp_path / "work" / "fused.run"
    link.symlink_to(store)
    runs = [write(tmp_path / "a.run", "q1 Q0 d1 1 2.0 a\n"), write(tmp_path / "b.run", "q1 Q0 d2 1 2.0 b\n")]
    assert run("fuse", *runs, "-o", link).exit_code == 0  # the run and its manifest are written as one
    assert link.is_symlink() and os.readlink(link) == str(store)
    assert "d1" in store.read_text() and "d2" in store.read_text()
    with atomic_writer(tmp_path / "work" / "fused.run.manifest.json") as out:  # a plain file: written beside the link
        out.write("{}")
    assert sorted(os.listdir(tmp_path / "store")) == ["fused.run"]
    assert sorted(os.listdir(tmp_path / "work")) == ["fused.run", "fused.run.manifest.json"]
    dangling = tmp_path / "work" / "later.txt"
    dangling.symlink_to(tmp_path / "store" / "later.txt")
    with atomic_writer(dangling) as out:
        out.write("made\n")
    assert dangling.is_symlink() and (tmp_path / "store" / "later.txt").read_text() == "made\n"


def test_the_cli_writes_files_other_users_can_read(tmp_path):
    previous = os.umask(0o022)
    try:
        docs = write(tmp_path / "docs" / "a.txt", "Bees forage far.\n").parent
        assert run("corpus", "chunk", docs, "-o", tmp_path / "corpus.jsonl").exit_code == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "corpus.jsonl").stat().st_mode) == 0o644


def test_files_written_as_one_are_put_in_place_together_or_not_at_all(tmp_path, monkeypatch):
    """A set of files (e.g. an output and its manifest): an error while staging leaves every old file
    and names the target; a rename failing after the first says which files already hold the new set."""
    names = [str(tmp_path / "a.txt"), str(tmp_path / "a.txt.extra")]
    for name in names:
        open(name, "w").write("old")
    with pytest.raises(SemrelError, match=r"a\.txt\.extra: bad; the old files are kept$") as raised:
        with files_as_one(names) as staged:
            open(staged[names[0]], "w").write("new")
            raise SemrelError(f"{staged[names[1]]}: bad; no file was made")
    assert ".tmp" not in str(raised.value)
    assert [open(name).read() for name in names] == ["old", "old"] and sorted(os.listdir(tmp_path)) == ["a.txt", "a.txt.extra"]
    fresh = [str(tmp_path / "new.txt"), names[0]]
    for failing, said in ((fresh[0], "new.txt: bad; no file was made, the old files beside it are kept"),
                          (fresh[1], "a.txt: bad; the old file is kept")):
        with pytest.raises(SemrelError, match=f"{re.escape(said)}$"):
            with files_as_one(fresh) as staged:
                raise SemrelError(f"{staged[failing]}: bad; no file was made")
    assert not os.path.exists(fresh[0])
    replace = os.replace

    def second_fails(source, target):
        if target == names[1]:
            raise OSError(5, "Input/output error")
        replace(source, target)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(SemrelError, match=r"a\.txt\.extra: cannot put it in place \(Input/output error\); .*a\.txt already hold"):
        with files_as_one(names) as staged:
            for name in names:
                open(staged[name], "w").write("new")
    assert [open(name).read() for name in names] == ["new", "old"] and len(os.listdir(tmp_path)) == 2


def test_files_in_two_folders_are_written_as_one_and_a_file_named_twice_is_refused(tmp_path, monkeypatch):
    """Each folder gets its own staging area (a rename stays on one file system); an interrupt before
    the renames leaves every old file and no staging folder."""
    names = [str(tmp_path / "a" / "out.jsonl"), str(tmp_path / "b" / "out.jsonl")]
    with files_as_one(names) as staged:
        assert {Path(staged[n]).parent.parent for n in names} == {tmp_path / "a", tmp_path / "b"}
        for name in names:
            open(staged[Path(name)], "w").write("old")  # looked up by a path as by a str
    with pytest.raises(KeyboardInterrupt):
        with files_as_one(names) as staged:
            for name in names:
                open(staged[name], "w").write("new")
            raise KeyboardInterrupt
    assert [open(n).read() for n in names] == ["old", "old"]
    assert os.listdir(tmp_path / "a") == ["out.jsonl"] and os.listdir(tmp_path / "b") == ["out.jsonl"]
    monkeypatch.chdir(tmp_path / "a")
    with pytest.raises(SemrelError, match="out.jsonl: named for two outputs of one command"):
        with files_as_one([names[0], "out.jsonl"]):
            pass


def test_an_output_and_its_manifest_are_replaced_together(tmp_path, monkeypatch):
    """An interrupt after the output was written but before its manifest was leaves the old pair,
    where the new output used to stand beside the old manifest."""
    runs = [write(tmp_path / "a.run", "q1 Q0 d1 1 2.0 a\n"), write(tmp_path / "b.run", "q1 Q0 d2 1 2.0 b\n")]
    out = tmp_path / "fused.run"
    assert run("fuse", *runs, "-o", out).exit_code == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    write(runs[1], "q1 Q0 d3 1 2.0 b\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(manifest, "save_manifest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fuse_files(runs, str(out))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "b.run"} == {
        k: v for k, v in before.items() if k != "b.run"}
    monkeypatch.undo()
    fuse_files(runs, str(out))
    assert "d3" in out.read_text() and manifest.read_manifest(out)["inputs"][1]["sha256"] == file_digest(runs[1])["sha256"]


@pytest.mark.parametrize("compressed", [False, True])
def test_an_input_read_from_stdin_is_hashed_in_the_manifest_as_a_file_would_be(tmp_path, compressed):
    import gzip

    runs = tmp_path / "a.run.gz" if compressed else tmp_path / "a.run"
    text = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n"
    runs.write_bytes(gzip.compress(text.encode(), mtime=0) if compressed else text.encode())
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 b\n")
    result = run("fuse", "-", tmp_path / "b.run", "-o", tmp_path / "fused.run", input=runs.read_bytes())
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "fused.run.manifest.json").read_text())
    assert manifest["inputs"][0] == {"path": "-", **file_digest(runs)} and len(file_digest(runs)["sha256"]) == 64
    assert file_digest(runs)["lines"] == 2


def test_stdin_has_no_manifest(tmp_path, monkeypatch):
    """A file named '-.manifest.json' beside the command was read as the manifest of stdin: the label rule of qrels piped in."""
    monkeypatch.chdir(tmp_path)
    Path("-.manifest.json").write_text(json.dumps({"params": {"rule": "threshold", "on": "R", "thresholds": [0.7]}}))
    assert manifest.read_params("-") is None and not manifest.manifest_is_stale("-")


def test_a_manifest_names_the_command_as_typed_under_python_m(tmp_path):
    """`python -m semrel` runs semrel/__main__.py: manifests (and run's messages quoting them) named `__main__.py`."""
    import subprocess
    import sys

    golden = write(tmp_path / "g.jsonl", '{"query_id": "q1", "query": "what", "reference_answers": ["a"], "gold_chunk_ids": ["d#0"]}\n')
    done = subprocess.run([sys.executable, "-m", "semrel", "golden", "qrels", str(golden), "-o", str(tmp_path / "q.qrels")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")})
    assert done.returncode == 0, done.stderr
    command = manifest.read_manifest(tmp_path / "q.qrels")["command"]
    assert command == ["semrel", "golden", "qrels", str(golden), "-o", str(tmp_path / "q.qrels")]
