"""Readers and writers: round trips, atomic writes, id checks, manifests."""

from __future__ import annotations

import errno
import fcntl
import gzip
import hashlib
import io
import json
import os
import re
import stat
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from helpers import run, write
from semrel.errors import FormatError, SemrelError, UsageError, ValidationError
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats import manifest, read_qrels, read_run, write_qrels, write_run
from semrel.formats.files import (
    MB,
    STAMP,
    StampMemo,
    atomic_writer,
    check_id,
    check_input_file,
    file_digest,
    files_as_one,
    input_guard,
    line_id,
    locked,
    not_plain,
    open_input,
    read_bytes,
    read_head,
    read_lines,
    read_text,
    stamp,
    stdin_digest,
)
from semrel.formats.manifest import write_manifest
from semrel.records import GoldenItem, Qrels, QuerySample, Run
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


def test_a_parquet_input_is_recorded_with_its_rows_not_its_newline_bytes(tmp_path, monkeypatch):
    """A Parquet input's 'lines' counted the newline bytes of a binary file (16 for a table of 3 rows): its rows are
    recorded instead, its bytes hashed without counting the lines dropped; a file named .parquet that is none keeps its lines."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "t.parquet"
    pq.write_table(pa.table({"question": ["a\nb", "c", "d\n\n"], "answer": ["x\n"] * 3}), table)
    counted = []
    monkeypatch.setattr(manifest, "file_digest", lambda path, digest=manifest.file_digest: counted.append(path) or digest(path))
    assert manifest.describe_input(table) == {"path": str(table), "sha256": hashlib.sha256(table.read_bytes()).hexdigest(), "rows": 3}
    assert counted == []
    fake = tmp_path / "fake.parquet"
    fake.write_text("no\ntable\n")
    assert manifest.describe_input(fake)["lines"] == 2


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


def test_a_file_on_a_read_only_mount_is_named_so_not_a_file_to_make_writable(tmp_path, monkeypatch):
    """On a read-only mount no file may be written whatever its mode: the error said 'is read-only ... make it
    writable', which no chmod can do. (A mount cannot be made here: access() and statvfs() say what one would.)"""
    import types

    target = write(tmp_path / "kept.run", "old\n")
    monkeypatch.setattr(os, "access", lambda path, mode, **kwargs: False)
    monkeypatch.setattr(os, "statvfs", lambda path: types.SimpleNamespace(f_flag=os.ST_RDONLY))
    with pytest.raises(SemrelError) as caught:
        with atomic_writer(target) as out:
            out.write("new\n")
    assert str(caught.value) == f"{target}: cannot write (read-only file system); nothing was written, the old file is kept"
    assert target.read_text() == "old\n"


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


# ---------------------------------------------------------------- mutation audit of files.py


def test_not_plain_names_what_stands_where_a_kept_file_goes(tmp_path):
    """A link to a plain file is 'a link' (lstat, not stat): its target would be rewritten through it."""
    plain = tmp_path / "state.json"
    plain.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(plain)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert [not_plain(p) for p in (tmp_path / "missing", plain, link, tmp_path, fifo)] == [
        None, None, "a link", "a folder", "a FIFO (named pipe)"]


def test_an_input_through_a_link_is_named_with_where_it_leads(tmp_path):
    dangling = tmp_path / "gone.run"
    dangling.symlink_to(tmp_path / "nowhere.run")
    with pytest.raises(SemrelError) as caught:
        open_input(dangling)
    assert str(caught.value) == f"{dangling}: a link to {tmp_path / 'nowhere.run'}, which does not exist (check the link)"
    device = tmp_path / "null.run"
    device.symlink_to("/dev/null")
    with pytest.raises(SemrelError) as caught:
        open_input(device)
    assert str(caught.value) == (f"{device}: is a character device (it links to /dev/null), not a file; semrel reads regular files "
                                 "(use '-' to read a stream from stdin)")
    with pytest.raises(SemrelError) as caught:
        open_input("/dev/null")
    assert str(caught.value) == ("/dev/null: is a character device, not a file; semrel reads regular files "
                                 "(use '-' to read a stream from stdin)")


def test_a_line_over_the_limit_names_the_limit_and_a_value_that_raises_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "1")
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"{}\n" + b"x" * (MB + 1) + b"\n")
    with pytest.raises(FormatError) as caught:
        list(read_lines(path))
    assert str(caught.value) == (f"{path}:2: the line is longer than the limit of 1 MB "
                                 "(raise it with the environment variable SEMREL_MAX_LINE_MB, in MB, e.g. SEMREL_MAX_LINE_MB=4)")


def test_check_input_file_refuses_devices_and_folders_unless_asked(tmp_path):
    with pytest.raises(SemrelError, match=r"^/dev/null: is a character device, not a file; semrel reads regular files"):
        check_input_file("/dev/null")
    with pytest.raises(SemrelError, match=f"^{tmp_path}: is a folder, expected a file$"):
        check_input_file(tmp_path)
    assert check_input_file(tmp_path, folder_ok=True).st_ino == tmp_path.stat().st_ino


def test_text_not_utf8_names_the_line_it_breaks_on(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_bytes(b"one\ntwo \xff\nthree\nfour\n")
    with pytest.raises(FormatError) as caught:
        read_text(path)
    assert str(caught.value) == f"{path}:2: not valid UTF-8 (re-save the file as UTF-8)"


def test_read_lines_drops_the_files_bom_and_newlines_only(tmp_path):
    """A BOM opens the file, not each line; what ends a line before its newline (a TSV's empty last field, a CR) is data."""
    path = tmp_path / "pool.tsv"
    path.write_bytes(b"\xef\xbb\xbfq1\tc1\t\n\xef\xbb\xbfq2 \r\nlast")
    assert list(read_lines(path)) == [(1, "q1\tc1\t"), (2, "\ufeffq2 \r"), (3, "last")]


def test_read_head_gives_the_decompressed_start_without_its_bom(tmp_path):
    packed = tmp_path / "golden.json.gz"
    packed.write_bytes(gzip.compress(b"\xef\xbb\xbf[{\"query\": 1}]" + b" " * 500))
    plain = tmp_path / "golden.json"
    plain.write_bytes(b"\xef\xbb\xbf{\"a\": 1}")
    assert read_head(packed).startswith(b'[{"query": 1}]') and read_head(plain) == b'{"a": 1}'
    assert read_text(packed).startswith('[{"query": 1}]') and read_text(plain) == '{"a": 1}'


def test_the_line_count_of_a_digest_counts_a_last_line_without_its_newline(tmp_path):
    counts = {}
    for name, data in (("empty", b""), ("one", b"a\n"), ("open", b"a\nb"), ("blank", b"\n\n")):
        (tmp_path / name).write_bytes(data)
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress(data))
        counts[name] = (file_digest(tmp_path / name)["lines"], file_digest(tmp_path / f"{name}.gz")["lines"])
    assert counts == {"empty": (0, 0), "one": (1, 1), "open": (2, 2), "blank": (2, 2)}


def test_an_atomic_write_is_synced_to_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    """Without the fsync a power cut after the rename can leave the new name on an empty file (ext4, xfs)."""
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append((os.fstat(fd).st_size, target.read_text())))
    with atomic_writer(target) as out:
        out.write("new content\n")
    assert synced == [(12, "old\n")] and target.read_text() == "new content\n"


def test_what_was_read_from_stdin_is_hashed_and_counted_as_a_file_would_be(monkeypatch):
    """Empty stdin has no lines (an empty block ends none); a last line without its newline counts."""
    for data, lines in ((b"", 0), (b"a\nb", 2), (b"\xef\xbb\xbfa\n", 1)):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
        with input_guard():
            assert read_bytes("-") == data.removeprefix(b"\xef\xbb\xbf")
            assert stdin_digest() == {"sha256": hashlib.sha256(data).hexdigest(), "lines": lines}


def test_a_file_is_taken_by_its_stamp_only_while_it_is_unchanged_and_not_just_changed(tmp_path, monkeypatch):
    """A memo kept past a change of the file gave the old sha256 for new bytes; one taken as the file changed
    (within RACY_NS) could be kept for bytes written later in the same clock tick."""
    memo, weights = StampMemo(tmp_path / "memo.json"), tmp_path / "weights.bin"
    weights.write_bytes(b"first")
    assert StampMemo(tmp_path / "memo.json").recall(weights) == (None, None)  # changed just now
    monkeypatch.setattr("semrel.formats.files.RACY_NS", -10**9)  # as if it had changed long ago
    known, taken = memo.recall(weights)
    assert known is None and taken == stamp(weights.stat())
    memo.remember(weights, taken, {"sha256": "abc"})
    assert memo.recall(weights)[0] == {**dict(zip(STAMP, taken)), "sha256": "abc"}
    weights.write_bytes(b"second")
    assert memo.recall(weights)[0] is None
    memo.remember(weights, None, {"sha256": "def"})  # no stamp: nothing kept
    assert json.loads((tmp_path / "memo.json").read_text())[os.path.realpath(weights)]["sha256"] == "abc"


def test_gzip_that_expands_past_the_ratio_or_ends_early_is_one_format_error(tmp_path):
    """The ratio is checked once 4 MB came out: 6 MB of newlines (a few KB of gzip) is a bomb, 1 MB of them is read;
    a gzip cut short (a download stopped) raised EOFError, a traceback."""
    bomb, small, cut = tmp_path / "bomb.jsonl.gz", tmp_path / "small.jsonl.gz", tmp_path / "cut.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (6 << 20)))
    small.write_bytes(gzip.compress(b"\n" * (1 << 20)))
    cut.write_bytes(gzip.compress(b"{}\n" * 1000)[:-12])
    for read in (read_bytes, lambda path: list(read_lines(path))):
        with pytest.raises(FormatError, match=rf"^{bomb}: gzip data expands more than 100 times \(a decompression bomb\?\); "
                                              r"refused before it fills memory \(raise the limit with the environment variable "
                                              r"SEMREL_MAX_GZIP_RATIO\)$"):
            read(bomb)
        with pytest.raises(FormatError, match=rf"^{cut}: broken gzip data \("):
            read(cut)
    assert read_bytes(small) == b"\n" * (1 << 20)


def test_a_gzip_or_stdin_one_byte_over_the_document_limit_is_refused_not_cut(tmp_path, monkeypatch):
    """Only a plain file's size is known before reading: the others must be read one byte past the limit to be
    refused, or their first MB was taken as the whole file."""
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "1")
    at, over = tmp_path / "at.json.gz", tmp_path / "over.json.gz"
    at.write_bytes(gzip.compress(b"x" * MB))
    over.write_bytes(gzip.compress(b"x" * (MB + 1)))
    assert len(read_bytes(at)) == MB
    with pytest.raises(FormatError, match=rf"^{over}: the decompressed content is longer than the limit of 1 MB"):
        read_bytes(over)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x" * (MB + 1))))
    with pytest.raises(FormatError, match=r"^<stdin>: the content is longer than the limit of 1 MB"):
        read_bytes("-")


def test_ids_are_single_tokens_and_only_a_query_id_may_not_open_with_a_hash(tmp_path):
    """'#' opens a comment only where a line starts (the query id): a doc id 'd#3' or '#3' is data."""
    assert check_id("#3", "doc id") == "#3" and check_id("q#1", "query id") == "q#1"
    with pytest.raises(SemrelError, match=r"^query id '#1' starts with '#', which makes its lines comments in TREC qrels and runs; "
                                          r"rename the query$"):
        check_id("#1", "query id")
    for bad in ("", "a b", "a\tb", "a\u00a0b", "a\u2003b"):
        with pytest.raises(SemrelError, match=rf"^doc id {re.escape(repr(bad))} is empty or contains whitespace; ids must be single"):
            check_id(bad, "doc id")
    with pytest.raises(FormatError, match=r"^pool.tsv:7: chunk id 'a\\u2003b' is empty or contains whitespace"):
        line_id("a\u2003b", "chunk id", "pool.tsv", 7)


def test_one_file_named_twice_in_a_set_is_refused_before_anything_is_made(tmp_path):
    target = str(tmp_path / "out" / "a.txt")
    with pytest.raises(UsageError, match=r"a\.txt: named for two outputs of one command"):
        with files_as_one([target, target]):
            pass
    assert os.listdir(tmp_path) == []


def test_a_set_of_files_keeps_the_permissions_of_the_files_it_replaces(tmp_path):
    names = [str(tmp_path / "a.txt"), str(tmp_path / "a.txt.manifest.json")]
    for name, mode in zip(names, (0o640, 0o600)):
        open(name, "w").write("old")
        os.chmod(name, mode)
    with files_as_one(names) as staged:
        for name in names:
            open(staged[name], "w").write("new")
    assert [(open(n).read(), stat.S_IMODE(os.stat(n).st_mode)) for n in names] == [("new", 0o640), ("new", 0o600)]


def test_a_rename_that_fails_is_one_line_naming_the_output(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def refused(source, destination):
        raise PermissionError(errno.EACCES, "Permission denied", source)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(SemrelError) as caught:
        with atomic_writer(target) as out:
            out.write("new\n")
    assert str(caught.value) == f"{target}: cannot write (Permission denied); nothing was written, the old file is kept"
    assert os.listdir(tmp_path) == ["out.txt"] and target.read_text() == "old\n"


# ---------------------------------------------------------------- mutation audit of records.py


def test_grades_are_whole_numbers_kept_exactly_and_refused_otherwise():
    """Ints are taken as they are (2**62 + 1 as a float64 is 2**62); a fraction is refused, not cut to a grade."""
    assert Qrels.from_columns(["q"], ["d"], [2**62 + 1]).relevance.tolist() == [2**62 + 1]
    assert Qrels.from_columns(["q", "q"], ["a", "b"], [1.0, -2.0]).relevance.tolist() == [1, -2]
    for grades, shown in (([1, 0.5], "0.5"), ([1, 2.0**63], "9.22337e+18"), ([1, float("nan")], "nan")):
        with pytest.raises(ValidationError, match=rf"^Qrels: grades must be whole numbers; \('q', 'b'\) has {re.escape(shown)}$"):
            Qrels.from_columns(["q", "q"], ["a", "b"], grades)
    with pytest.raises(ValidationError, match=r"\('q', 'a'\) has 0.5$"):  # the first of two
        Qrels.from_columns(["q", "q"], ["a", "b"], [0.5, 1.5])
    with pytest.raises(ValidationError, match=r"^Qrels: grades must be real numbers, not complex$"):
        Qrels.from_columns(["q"], ["a"], [1 + 2j])
    assert Run.from_columns(["q", "q"], ["a", "b"], [Decimal("1.5"), 2]).scores.tolist() == [1.5, 2.0]
    with pytest.raises(ValidationError, match=r"^Qrels: grades must be numbers; \('q', 'b'\) has True$"):
        Qrels.from_columns(["q", "q"], ["a", "b"], [1, True])  # numpy reads [1, True] as [1, 1]
    with pytest.raises(ValidationError, match=r"^Qrels: 2 query ids, 1 doc ids and 2 grades; give one of each per row$"):
        Qrels.from_columns(["q", "r"], ["a"], [1, 2])


def test_ids_may_be_whole_numbers_never_none_or_fractions():
    assert Run.from_columns([1, "q2"], [np.int64(7), "d"], [0.5, 1.0]).to_dict() == {"1": {"7": 0.5}, "q2": {"d": 1.0}}
    with pytest.raises(ValidationError, match="^an id is None"):
        Qrels.from_columns(["q", None], ["a", "b"], [1, 1])
    with pytest.raises(ValidationError, match="^ids must be strings or whole numbers$"):
        Qrels.from_columns(["q", 1.5], ["a", "b"], [1, 1])
    with pytest.raises(ValidationError, match="^ids must be strings or whole numbers$"):
        Qrels.from_columns(["q", True], ["a", "b"], [1, 1])


def test_a_run_needs_a_name_that_names_something():
    for name in ("", "  "):
        with pytest.raises(UsageError, match="^name: a run name may not be empty$"):
            Run.from_columns(["q"], ["d"], [1.0], name=name)
        with pytest.raises(UsageError, match="^name: a run name may not be empty$"):
            Run.from_dict({"q": {"d": 1.0}}, name=name)


def test_a_query_sample_is_at_least_one_query_drawn_in_file_order():
    for bad, message in (({"limit": 0}, "limit=0"), ({"size": 0}, "sample=0")):  # the Python API's names, not the CLI's flags
        with pytest.raises(UsageError, match=f"^{message}: give a number of queries, at least 1$"):
            QuerySample(**bad)
    with pytest.raises(UsageError, match="^sample=0: give a number of queries, at least 1$"):
        QuerySample.of(0)
    items = list(range(50))
    drawn = QuerySample(size=10, seed=3).apply(items)
    assert drawn == sorted(drawn) and len(set(drawn)) == 10 and drawn != items[:10]
    assert QuerySample(size=50).apply(items) == items and QuerySample(limit=3).apply(items) == [0, 1, 2]


def test_nested_dicts_must_be_dicts_of_dicts():
    with pytest.raises(TypeError, match=r"^Qrels.from_dict: give \{query_id: \{doc_id: grade\}\}, not dict of non-mappings$"):
        Qrels.from_dict({"q": [("d", 1)]})


def test_a_query_of_blanks_is_blank():
    assert GoldenItem("q", "  ", ("a",)).blank and not GoldenItem("q", "x", ()).blank


def test_to_dict_keeps_the_last_grade_or_score_of_a_pair_listed_twice():
    """As formats.trec.graded_pairs says of Qrels.to_dict (which refuses the repeat instead): the last row wins, not the first."""
    assert Qrels.from_columns(["q", "q"], ["a", "a"], [1, 2]).to_dict() == {"q": {"a": 2}}
    assert Run.from_columns(["q", "q"], ["a", "a"], [0.5, 0.25]).to_dict() == {"q": {"a": 0.25}}
