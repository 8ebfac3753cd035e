"""Mutation audit of formats/files.py: what the other tests left unpinned. The guard's refusals (a hard link, a link, a
nested guard, a database named by a relative path), the messages of a refused input (a folder, a link to a FIFO, a
denied open), the size and ratio limits as set, BOMs inside a file, stdin's line numbers, gzip written reproducibly."""

from __future__ import annotations

import codecs
import errno
import fcntl
import gzip
import hashlib
import io
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import assert_one_error, write
from semrel.errors import FormatError, SemrelError, UsageError
from semrel.formats.files import (
    MB,
    StampMemo,
    allow_rewrite,
    atomic_writer,
    check_input_file,
    check_outputs,
    files_as_one,
    folder_digest,
    folder_files,
    input_guard,
    locked,
    note_database,
    open_input,
    prefix_matches,
    read_bytes,
    read_head,
    read_lines,
    read_text,
    stdin_digest,
    temp_prefix,
)

REFUSED = "semrel never writes its output over an input: give another file name (nothing was written)"


# ---------------------------------------------------------------- limits as set in the environment


def test_a_limit_in_a_fraction_of_a_megabyte_is_that_many_bytes(tmp_path, monkeypatch):
    """SEMREL_MAX_LINE_MB=0.5 is 512 KiB, not 0 (int(0.5) MB refused every line)."""
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "0.5")
    path = write(tmp_path / "j.jsonl", b"x" * (MB // 2) + b"\n" + b"y" * (MB // 2 + 1) + b"\n")
    lines = read_lines(path)
    assert [len(line) for _, line in [next(lines)]] == [MB // 2]
    with pytest.raises(FormatError) as caught:
        next(lines)
    assert str(caught.value) == (f"{path}:2: the line is longer than the limit of 0.5 MB "
                                 "(raise it with the environment variable SEMREL_MAX_LINE_MB, in MB, e.g. SEMREL_MAX_LINE_MB=2)")


def test_a_limit_under_a_quarter_megabyte_suggests_a_larger_one_the_variable_takes(tmp_path, monkeypatch):
    """SEMREL_MAX_LINE_MB=0.1 suggested SEMREL_MAX_LINE_MB=0 (int() of 4 x 0.1), which the variable refuses."""
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "0.1")
    path = write(tmp_path / "j.jsonl", b"x" * (MB // 5) + b"\n")
    with pytest.raises(FormatError) as caught:
        next(read_lines(path))
    assert str(caught.value) == (f"{path}:1: the line is longer than the limit of 0.1 MB "
                                 "(raise it with the environment variable SEMREL_MAX_LINE_MB, in MB, e.g. SEMREL_MAX_LINE_MB=0.4)")


@pytest.mark.parametrize("value", ["inf", "0", "-3", "nan", "lots"])
def test_a_limit_that_is_no_positive_number_is_one_usage_line_from_the_command(tmp_path, cli, monkeypatch, value):
    """'inf' passed float() and made int(inf * MB) an OverflowError: a traceback, not the line every other bad value gets."""
    judgments = write(tmp_path / "j.jsonl", '{"query_id": "q1", "chunk_id": "c1", "grade": 2}\n')
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", value)
    result = cli("label", judgments, "-o", tmp_path / "o.qrels")
    assert_one_error(result, f"SEMREL_MAX_LINE_MB={value!r}: expected a positive number", code=2)
    assert os.listdir(tmp_path) == ["j.jsonl"]


def test_the_gzip_ratio_limit_is_the_one_set(tmp_path, monkeypatch):
    """A gzip expanding r times is refused under a limit of r / 1.5 and read under 1.5 r: the ratio compared is the
    one set, not a multiple of it."""
    packed = tmp_path / "lines.jsonl.gz"
    packed.write_bytes(gzip.compress(b"{}\n" * (3 << 20), compresslevel=9))
    ratio = (9 << 20) / packed.stat().st_size
    monkeypatch.setenv("SEMREL_MAX_GZIP_RATIO", f"{ratio / 1.5:.0f}")
    with pytest.raises(FormatError, match=rf"^{packed}: gzip data expands more than {ratio / 1.5:.0f} times"):
        read_bytes(packed)
    with pytest.raises(FormatError, match="gzip data expands more than"):
        list(read_lines(packed))
    monkeypatch.setenv("SEMREL_MAX_GZIP_RATIO", f"{ratio * 1.5:.0f}")
    assert len(read_bytes(packed)) == 9 << 20 and sum(1 for _ in read_lines(packed)) == 3 << 20


# ---------------------------------------------------------------- refused inputs: one line, nothing left open


def test_a_folder_opened_as_an_input_is_one_line_not_a_traceback(tmp_path):
    """os.open takes a folder for reading (IsADirectoryError comes only at the read): the fstat after it refuses it."""
    for read in (open_input, read_text, read_bytes, lambda path: list(read_lines(path))):
        with pytest.raises(SemrelError) as caught:
            read(tmp_path)
        assert str(caught.value) == f"{tmp_path}: is a folder, expected a file"


def test_a_link_to_a_fifo_is_refused_by_the_check_before_opening(tmp_path):
    """check_input_file follows links (stat): a link to a FIFO is the FIFO, named with where it leads."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "corpus.jsonl"
    link.symlink_to(fifo)
    with pytest.raises(SemrelError) as caught:
        check_input_file(link)
    assert str(caught.value) == (f"{link}: is a FIFO (named pipe) (it links to {fifo}), not a file; semrel reads regular files "
                                 "(use '-' to read a stream from stdin)")
    plain = write(tmp_path / "plain.jsonl", "{}\n")
    (tmp_path / "plain-link.jsonl").symlink_to(plain)
    assert check_input_file(tmp_path / "plain-link.jsonl").st_ino == plain.stat().st_ino


def test_an_input_that_cannot_be_opened_is_named_with_why(tmp_path, monkeypatch):
    long = tmp_path / ("x" * 300)
    with pytest.raises(SemrelError) as caught:
        open_input(long)
    assert str(caught.value) == f"{long}: File name too long"
    secret = write(tmp_path / "secret.jsonl", "{}\n")

    def denied(name, *args, **kwargs):  # the tests run as root, whom chmod does not stop
        raise PermissionError(errno.EACCES, "Permission denied", name)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(SemrelError) as caught:
        open_input(secret)
    assert str(caught.value) == f"{secret}: permission denied"


def test_an_input_refused_after_it_was_opened_leaves_no_descriptor_open(tmp_path):
    """A long `semrel run` or a notebook refusing inputs one after another would run out of descriptors."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        for path in (fifo, tmp_path, "/dev/null"):
            with pytest.raises(SemrelError):
                open_input(path)
    assert len(os.listdir("/proc/self/fd")) == before


# ---------------------------------------------------------------- the guard: by identity, nested, relative names


def test_an_output_that_is_a_hard_link_or_a_link_to_an_input_is_refused_naming_the_input(tmp_path):
    """The message names the input as it was first read; the same file under another name says so."""
    source = write(tmp_path / "in.jsonl", "data\n")
    hard = tmp_path / "hard.jsonl"
    os.link(source, hard)
    soft = tmp_path / "soft.jsonl"
    soft.symlink_to(source)
    with input_guard():
        read_text(source)
        read_text(soft)  # the same file again, under another name: the first name is the one shown
        for output in (hard, soft):
            with pytest.raises(SemrelError) as caught:
                with atomic_writer(output) as out:
                    out.write("oops\n")
            assert str(caught.value) == f"{output}: is an input of this command (the same file as {source}); {REFUSED}"
        with pytest.raises(SemrelError) as caught:
            with atomic_writer(source) as out:
                out.write("oops\n")
        assert str(caught.value) == f"{source}: is an input of this command; {REFUSED}"
    assert source.read_text() == "data\n" and sorted(os.listdir(tmp_path)) == ["hard.jsonl", "in.jsonl", "soft.jsonl"]


def test_an_output_whose_manifest_was_read_is_refused_naming_the_output(tmp_path):
    """semrel.retrieve(corpus, golden, output=corpus) read the corpus's manifest first, and the refusal named
    'corpus.jsonl.manifest.json', a file the user never gave, rather than corpus.jsonl."""
    corpus = write(tmp_path / "corpus.jsonl", "data\n")
    manifest = write(tmp_path / "corpus.jsonl.manifest.json", "{}\n")
    with input_guard():
        read_text(manifest)
        for check in (lambda: check_outputs(corpus), lambda: files_as_one([str(corpus), str(manifest)]).__enter__()):
            with pytest.raises(SemrelError) as caught:
                check()
            assert str(caught.value) == f"{corpus}: its manifest {manifest} is an input of this command; {REFUSED}"
    assert corpus.read_text() == "data\n" and manifest.read_text() == "{}\n"


def test_a_link_to_an_input_is_refused_before_the_output_is_written(tmp_path):
    """The check before writing follows the link (stat, not lstat): the block that makes the output never runs, and a set
    written as one is never renamed over the input through the link."""
    source = write(tmp_path / "in.jsonl", "data\n")
    link = tmp_path / "out.jsonl"
    link.symlink_to(source)
    ran = []
    with input_guard():
        read_text(source)
        with pytest.raises(SemrelError, match=f"^{link}: is an input of this command \\(the same file as {source}\\)"):
            with atomic_writer(link) as out:
                ran.append("atomic_writer")
                out.write("oops\n")
        with pytest.raises(SemrelError, match=f"^{link}: is an input of this command \\(the same file as {source}\\)"):
            with files_as_one([str(link)]) as staged:
                ran.append("files_as_one")
                Path(staged[link]).write_text("oops\n")
    assert ran == [] and source.read_text() == "data\n" and link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]


def test_a_nested_guard_keeps_what_the_outer_one_allows_and_reserves(tmp_path):
    """A command run inside another (eval --fill-judgments fills in a guard of its own) may still rewrite what the
    outer one allowed, and may still not write a review database's -wal."""
    judgments = write(tmp_path / "j.jsonl", "{}\n")
    manifest = write(tmp_path / "j.jsonl.manifest.json", "{}\n")
    database = write(tmp_path / "rev.sqlite", b"")
    with input_guard():
        read_text(judgments)
        allow_rewrite(judgments)
        note_database(database, database.stat())
        with input_guard():
            for target in (judgments, manifest):
                with atomic_writer(target) as out:
                    out.write("extended\n")
            with pytest.raises(SemrelError, match="is a file SQLite keeps the review database .*rev.sqlite's pages in"):
                with atomic_writer(f"{database}-wal") as out:
                    out.write("oops\n")
    assert judgments.read_text() == manifest.read_text() == "extended\n" and not (tmp_path / "rev.sqlite-wal").exists()


def test_allow_rewrite_covers_the_manifest_beside_the_file(tmp_path):
    """fill appends to judgments.jsonl and updates its manifest, which was read (noted) with it."""
    judgments = write(tmp_path / "j.jsonl", "{}\n")
    manifest = write(tmp_path / "j.jsonl.manifest.json", "{}\n")
    with input_guard():
        read_text(judgments)
        allow_rewrite(judgments)
        with files_as_one([str(judgments), str(manifest)]) as staged:
            for target in (judgments, manifest):
                Path(staged[target]).write_text("new\n")
    assert judgments.read_text() == manifest.read_text() == "new\n"


def test_a_review_database_named_by_a_relative_path_reserves_its_sqlite_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "rev.sqlite", b"")
    with input_guard():
        note_database("rev.sqlite", os.stat("rev.sqlite"))
        for name in (tmp_path / "rev.sqlite-wal", "./rev.sqlite-shm", "rev.sqlite-journal"):
            with pytest.raises(SemrelError) as caught:
                with atomic_writer(name) as out:
                    out.write("oops\n")
            assert str(caught.value) == (f"{name}: is a file SQLite keeps the review database rev.sqlite's pages in; semrel never "
                                         "writes its output over an input: give another file name (nothing was written)")
    assert os.listdir(tmp_path) == ["rev.sqlite"]


def test_a_file_rewritten_in_place_with_its_size_and_mtime_kept_is_not_taken_by_its_stamp(tmp_path, monkeypatch):
    """`cp -p` or `rsync -t` over a file keeps its size and mtime (and inode): only the ctime tells."""
    monkeypatch.setattr("semrel.formats.files.RACY_NS", -10**9)  # as if it had changed long ago
    memo, weights = StampMemo(tmp_path / "memo.json"), write(tmp_path / "weights.bin", b"first")
    known, taken = memo.recall(weights)
    memo.remember(weights, taken, {"sha256": "of first"})
    assert memo.recall(weights)[0] is not None
    before = weights.stat()
    with open(weights, "r+b") as handle:  # the same inode, the same size
        handle.write(b"FIRST")
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = weights.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    if after.st_ctime_ns == before.st_ctime_ns:
        pytest.skip("the file system's clock did not tick between the two writes")
    assert memo.recall(weights)[0] is None


# ---------------------------------------------------------------- reading: BOMs, stdin's lines, a first byte like gzip's


def test_only_the_bom_that_opens_a_file_is_dropped(tmp_path):
    """U+FEFF inside a document (a zero-width no-break space, a second BOM from two files concatenated) is content."""
    path = write(tmp_path / "doc.txt", b"\xef\xbb\xbf\xef\xbb\xbfone\xef\xbb\xbftwo\n")
    assert read_bytes(path) == b"\xef\xbb\xbfone\xef\xbb\xbftwo\n"
    assert read_text(path) == "\ufeffone\ufefftwo\n"


def test_lines_read_from_stdin_are_numbered_from_one_as_from_a_file(monkeypatch, tmp_path):
    """stdin's lines are a file's: numbered from 1, and no empty line after the last newline (there had been one)."""
    data = b"\xef\xbb\xbfa\r\nb\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert list(read_lines("-")) == [(1, "a\r"), (2, "b")] == list(read_lines(write(tmp_path / "f", data)))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a\n\nb")))
    assert list(read_lines("-")) == [(1, "a"), (2, ""), (3, "b")] == list(read_lines(write(tmp_path / "g", b"a\n\nb")))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"ok\nnot \xff\n")))
    with pytest.raises(FormatError) as caught:
        list(read_lines("-"))
    assert str(caught.value) == "<stdin>:2: not valid UTF-8 (re-save the file as UTF-8)"


def test_a_plain_file_opening_with_gzips_first_byte_only_is_read_as_text(tmp_path):
    """gzip is told by both bytes of its magic (1f 8b); a file opening with 1f alone (a control character) is text."""
    path = write(tmp_path / "pool.tsv", b"\x1fq1\tc1\n")
    assert list(read_lines(path)) == [(1, "\x1fq1\tc1")] and read_text(path) == "\x1fq1\tc1\n"


# ---------------------------------------------------------------- writing: errors, stdout, gzip


def test_an_os_error_of_reading_inside_a_write_is_not_called_a_write_error(tmp_path):
    """Only failures of the write itself (a full disk, the temp file or the output) become 'cannot write': a missing file
    opened inside the block is that error, and the old output is kept."""
    target = write(tmp_path / "out.txt", "old\n")
    with pytest.raises(FileNotFoundError):
        with atomic_writer(target) as out:
            out.write("new\n")
            open(tmp_path / "missing.txt")
    assert target.read_text() == "old\n" and os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("mode", ["w", "wb"])
def test_what_is_written_to_stdout_is_flushed_when_the_block_ends(monkeypatch, mode):
    """A caller that prints a message next, or exits through os._exit, must not find the data still in a buffer."""
    sink = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink, encoding="utf-8", write_through=False))
    with atomic_writer("-", mode) as out:
        out.write(b"data\n" if mode == "wb" else "data\n")
    assert sink.getvalue() == b"data\n"


def test_a_gz_output_is_the_same_bytes_whenever_it_is_written(tmp_path, monkeypatch):
    """gzip's header holds a time unless told 0: the same run written twice would differ, and so would its sha256."""
    target = tmp_path / "run.gz"
    written = []
    for now in (1_000_000_000.0, 1_700_000_000.0):
        monkeypatch.setattr("time.time", lambda now=now: now)
        with atomic_writer(target) as out:
            out.write("q1 Q0 d1 1 2.0 a\n")
        written.append(target.read_bytes())
    assert written[0] == written[1] and gzip.decompress(written[0]) == b"q1 Q0 d1 1 2.0 a\n"


def test_an_output_that_is_a_folder_or_a_fifo_is_refused_and_left_as_it_is(tmp_path):
    """The library refuses them too (the command line's check is not there from Python): a rename would have put a file
    where the FIFO was, or failed on the folder as 'cannot write (Is a directory)'."""
    folder = tmp_path / "out.run"
    folder.mkdir()
    fifo = tmp_path / "pipe.run"
    os.mkfifo(fifo)
    for target, what in ((folder, "is a folder; give the output a file name"),
                         (fifo, "is a FIFO (named pipe); semrel writes outputs to files (use '-' for stdout)")):
        for writer in ("atomic_writer", "files_as_one"):
            with pytest.raises(SemrelError) as caught:
                if writer == "atomic_writer":
                    with atomic_writer(target) as out:
                        out.write("x\n")
                else:
                    with files_as_one([str(target)]) as staged:
                        Path(staged[target]).write_text("x\n")
            assert str(caught.value) == f"{target}: {what}"
    assert folder.is_dir() and stat.S_ISFIFO(fifo.lstat().st_mode) and sorted(os.listdir(tmp_path)) == ["out.run", "pipe.run"]


def test_an_output_whose_folder_is_a_dangling_link_or_a_file_is_one_line_naming_it(tmp_path):
    (tmp_path / "runs").symlink_to(tmp_path / "gone")
    with pytest.raises(SemrelError) as caught:
        with atomic_writer(tmp_path / "runs" / "bm25.run") as out:
            out.write("x\n")
    assert str(caught.value) == (f"{tmp_path / 'runs' / 'bm25.run'}: cannot write ({tmp_path / 'runs'} is a link to "
                                 f"{tmp_path / 'gone'}, which does not exist)")
    assert os.listdir(tmp_path) == ["runs"]
    (tmp_path / "notes").write_text("mine\n")
    with pytest.raises(SemrelError) as caught:
        with atomic_writer(tmp_path / "notes" / "deep" / "bm25.run") as out:
            out.write("x\n")
    assert str(caught.value) == f"{tmp_path / 'notes' / 'deep' / 'bm25.run'}: cannot write ({tmp_path / 'notes'} is a file, not a folder)"


# ---------------------------------------------------------------- files written as one


def test_a_set_with_an_input_in_it_is_refused_before_any_folder_is_made(tmp_path):
    source = write(tmp_path / "in.jsonl", "data\n")
    with input_guard():
        read_text(source)
        with pytest.raises(SemrelError, match=f"^{source}: is an input of this command;"):
            with files_as_one([str(tmp_path / "new" / "out.jsonl"), str(source)]):
                pass
    assert os.listdir(tmp_path) == ["in.jsonl"] and source.read_text() == "data\n"


def test_an_error_naming_a_staged_file_names_its_target_and_says_which_old_files_stay(tmp_path):
    """The staged manifest's name begins with the staged output's: the longer name is matched first, so the error names
    the manifest (new) and keeps the output's old file, with the exit code of the error raised."""
    output = write(tmp_path / "out.run", "old\n")
    manifest = tmp_path / "out.run.manifest.json"
    with pytest.raises(SemrelError) as caught:
        with files_as_one([str(output), str(manifest)]) as staged:
            raise UsageError(f"{staged[manifest]}: cannot write (no space left on device); nothing was written, no file was made")
    assert str(caught.value) == (f"{manifest}: cannot write (no space left on device); nothing was written, no file was made, "
                                 "the old files beside it are kept")
    assert caught.value.exit_code == 2
    assert os.listdir(tmp_path) == ["out.run"] and output.read_text() == "old\n"


# ---------------------------------------------------------------- temp files a killed writer left


def test_the_next_write_removes_only_the_temp_files_of_ended_writers(tmp_path, monkeypatch):
    """A user's file that only begins like a temp file, a live writer's temp, and the folder a stale-looking link leads to
    stay; an ended writer's temp file, its -wal and its staging folder go."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = int(ended.stdout)
    user = tmp_path / "user"
    write(user / "notes.txt", "mine\n")
    gone = [f".out.txt.{dead}_abcd1234.tmp", f".out.txt.{dead}_abcd1234.tmp-wal", f".out.txt.{dead}_dir5678.tmp",
            f".out.txt.{dead}_link9999.tmp"]
    kept = [f".out.txt.{dead}_abcd1234.tmp.keep", f".out.txt.{os.getpid()}_live1234.tmp", ".out.txt.notes"]
    for name in gone[:2] + kept:
        write(tmp_path / name, "x")
    write(tmp_path / gone[2] / "out.txt", "half\n")
    (tmp_path / gone[3]).symlink_to(user)
    with atomic_writer(tmp_path / "out.txt") as out:
        out.write("new\n")
    assert sorted(os.listdir(tmp_path)) == sorted([*kept, "out.txt", "user"])
    assert (user / "notes.txt").read_text() == "mine\n"
    write(tmp_path / gone[0], "x")

    def not_ours(pid, sig):  # another user's process: os.kill is refused, and it is alive
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "kill", not_ours)
    with atomic_writer(tmp_path / "out.txt") as out:
        out.write("newer\n")
    assert (tmp_path / gone[0]).exists()


# ---------------------------------------------------------------- read_head of stdin


def test_the_head_of_stdin_is_decompressed_without_its_bom_and_counted(monkeypatch):
    data = gzip.compress(b"\xef\xbb\xbf" + b'{"a": 1}\n')
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    with input_guard():
        assert read_head("-", 4) == b'{"a"'
        assert stdin_digest() == {"sha256": hashlib.sha256(data).hexdigest(), "lines": 1}


def test_an_output_named_through_a_chain_of_links_replaces_the_file_at_its_end(tmp_path):
    """Each link stays a link (open(link, "w") writes the file the last one leads to)."""
    final = write(tmp_path / "store" / "fused.run", "old\n")
    middle = tmp_path / "shared" / "fused.run"
    middle.parent.mkdir()
    middle.symlink_to(os.path.relpath(final, middle.parent))
    first = tmp_path / "fused.run"
    first.symlink_to(middle)
    with atomic_writer(first) as out:
        out.write("new\n")
    assert first.is_symlink() and middle.is_symlink() and final.read_text() == "new\n"
    assert os.listdir(tmp_path / "store") == ["fused.run"] and os.listdir(tmp_path / "shared") == ["fused.run"]


# ---------------------------------------------------------------- a folder input's digest


def test_a_folders_digest_covers_its_visible_files_by_path_and_never_opens_a_fifo(tmp_path):
    """What `semrel run` and the manifests know a documents folder by: each visible file's path inside it and its
    sha256, a FIFO as 'None' (opening it would block), hidden files and folders (an editor's, a staged output) left out."""
    docs = tmp_path / "docs"
    write(docs / "b.txt", "bees\n")
    write(docs / "a" / "x.txt", "ants\n")
    write(docs / ".draft.txt", "hidden\n")
    write(docs / ".git" / "config", "hidden\n")
    os.mkfifo(docs / "pipe")
    assert list(folder_files(docs)) == [str(docs / "b.txt"), str(docs / "pipe"), str(docs / "a" / "x.txt")]
    digests = []
    reader = threading.Thread(target=lambda: digests.append(folder_digest(docs)), daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # blocked opening the FIFO: a writer's open and close lets it go, and the test fails below
        os.close(os.open(docs / "pipe", os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    sha = {name: hashlib.sha256(text).hexdigest() for name, text in (("b", b"bees\n"), ("x", b"ants\n"))}
    expected = hashlib.sha256(f"b.txt\0{sha['b']}\0pipe\0None\0a/x.txt\0{sha['x']}\0".encode()).hexdigest()
    assert digests == [{"sha256": expected, "files": 3}]


# ---------------------------------------------------------------- bugs the audit found, fixed


def test_a_limit_too_large_to_count_in_bytes_is_one_usage_line(tmp_path, cli, monkeypatch):
    judgments = write(tmp_path / "j.jsonl", '{"query_id": "q1", "chunk_id": "c1", "grade": 2}\n')
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "1e308")
    result = cli("label", judgments, "-o", tmp_path / "o.qrels")
    assert_one_error(result, "SEMREL_MAX_LINE_MB='1e308': expected a positive number, at most 1e+12", code=2)  # was a traceback


@pytest.mark.parametrize("writer", ["atomic_writer", "files_as_one"])
def test_an_output_whose_name_the_file_system_takes_can_be_written(tmp_path, writer):
    """A temp file named after a long target whole was 'File name too long' where the target's own name is taken; its
    name now holds the start of the target's and a hash of it, and a killed writer's such temp is still swept."""
    target = tmp_path / ("r" * 240 + ".run")
    stale = tmp_path / (temp_prefix(target).replace(f".{os.getpid()}_", ".999999999_") + "x.tmp")
    stale.write_text("left by a killed writer\n")
    with open(tmp_path / ("p" * 240 + ".run"), "w") as plain:  # the name is a legal one
        plain.write("x\n")
    if writer == "atomic_writer":
        with atomic_writer(target) as out:
            out.write("q1 Q0 d1 1 2.0 a\n")
    else:
        with files_as_one([str(target)]) as staged:
            Path(staged[target]).write_text("q1 Q0 d1 1 2.0 a\n")
    assert target.read_text() == "q1 Q0 d1 1 2.0 a\n" and not stale.exists()


def test_text_with_a_utf16_byte_order_mark_is_read_as_utf16(tmp_path):
    """Notepad's and Excel's "Unicode" and a PowerShell redirect write UTF-16 with its byte-order mark: a .txt document or
    a golden CSV so saved was refused as not UTF-8, though the mark says what it is. Read a line at a time (JSON Lines),
    it is still refused, now as UTF-16."""
    from semrel.formats.files import read_text

    for codec in ("utf-16-le", "utf-16-be"):
        data = (codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE) + "café\r\nline 2\n".encode(codec)
        assert read_text(write(tmp_path / f"{codec}.txt", data)) == "café\r\nline 2\n"
    with pytest.raises(FormatError) as caught:
        read_text(write(tmp_path / "odd.txt", codecs.BOM_UTF16_LE + b"a\x00b"))  # an odd byte out
    assert str(caught.value).endswith("odd.txt: not valid UTF-16, though it starts with UTF-16's byte-order mark "
                                      "(re-save the file as UTF-8)")
    with pytest.raises(FormatError) as caught:
        list(read_lines(write(tmp_path / "q.jsonl", "{}\n".encode("utf-16"))))
    assert str(caught.value).endswith("q.jsonl:1: UTF-16 text (Windows' \"Unicode\"), read here as UTF-8 only (re-save the file as UTF-8)")


@pytest.mark.parametrize(("kind", "said"), [("fifo", "a FIFO (named pipe)"), ("folder", "a folder")])
def test_a_lock_that_is_a_fifo_or_a_folder_is_refused_without_opening_it(tmp_path, kind, said):
    """A cache's lock file (the vector store's, the BM25 index's) opened with open(path, "a"): a FIFO there waited for a
    reader for ever (retrieve hung), a folder was IsADirectoryError. A reader stands by here, so the old code's open went
    through instead of hanging the test, and the block was entered."""
    lock = tmp_path / "lock"
    os.mkfifo(lock) if kind == "fifo" else lock.mkdir()
    done = threading.Event()

    def read() -> None:
        while kind == "fifo" and not done.is_set():
            fd = os.open(lock, os.O_RDONLY | os.O_NONBLOCK)  # never blocks; while open, a writer's open goes through
            done.wait(0.01)
            os.close(fd)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    entered = []
    try:
        with pytest.raises(SemrelError, match=re.escape(f"{lock}: semrel keeps a lock there, and this is {said}, not a file")):
            with locked(lock):
                entered.append(True)
    finally:
        done.set()
        reader.join()
    assert not entered


@pytest.mark.parametrize("data", [b"a\nbb\nccc", b"a\nbb\nccc\n", b"\x00" * (3 * MB) + b"\nx\n", b"\n" * 3])
def test_prefix_matches_hashes_the_first_lines_as_line_count_counts_them(tmp_path, data):
    """A file only appended to since it was read is told by the sha256 of its first lines (a last line without its
    newline counting, as line_count counts it), read a MB at a time: a line of a binary file can be as long as the file."""
    path = write(tmp_path / "f", data)
    lines = data.split(b"\n")
    for k in range(len(lines) + 1):
        prefix = data if k >= len(lines) or k == len(lines) - 1 and not lines[-1] else b"\n".join(lines[:k]) + b"\n" * (k > 0)
        counted = data.count(b"\n") + (not data.endswith(b"\n"))
        assert prefix_matches(path, k, hashlib.sha256(prefix).hexdigest()) == (k <= counted), k
        assert not prefix_matches(path, k, hashlib.sha256(prefix + b"!").hexdigest())


def test_a_file_system_that_takes_no_locks_is_one_line_and_no_obstacle_to_a_rewrite(tmp_path, monkeypatch):
    """flock on some network and FUSE mounts fails with ENOLCK: a raw OSError from a cache's or a run's lock, and, once
    judge, fill and pick took rewrite_lock, a judge's last write failing after its work. A required lock is one line
    that says why; rewrite_lock's block runs unlocked, its caller's check still the guard."""
    import semrel.formats.files as files

    def refused(handle, operation):
        if operation != fcntl.LOCK_UN:
            raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(files.fcntl, "flock", refused)
    entered = []
    with pytest.raises(SemrelError) as caught:
        with locked(tmp_path / "lock"):
            entered.append("required")
    assert str(caught.value) == (f"{tmp_path / 'lock'}: cannot lock it (No locks available): its file system takes no locks; use a "
                                 "folder on a local disk")
    with files.rewrite_lock(tmp_path / "judgments.jsonl"):
        entered.append("rewrite")
    assert entered == ["rewrite"]
