"""The two layers that keep outputs off inputs: every command's path parameters say what they are
(checked up front), and the library's input guard refuses a write over a file read in the same
command, also when the CLI's check could not know the file (a part of golden split, a sidecar)."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from helpers import assert_one_error
from semrel.cli import main
from semrel.cli.base import SemrelCommand
from semrel.cli.paths import RolePath, database_path, input_path, output_path
from semrel.errors import SemrelError
from semrel.formats.files import StampMemo, allow_rewrite, atomic_writer, check_outputs, files_as_one, input_guard, note_database, read_text

# Paths that are neither inputs nor outputs to compare: pick rewrites --golden in place (on purpose,
# with a journal), split writes a folder of parts (checked by name before it works), caches are folders.
PLAIN_PATHS = {("golden", "pick", "golden"), ("golden", "split", "output_dir"),
               ("golden", "pick", "cache_dir"), ("judge", "cache_dir"), ("retrieve", "cache_dir"), ("fill", "cache_dir"),
               ("eval", "cache_dir")}


def leaves(group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from leaves(command, ctx, (*prefix, name))
        else:
            yield (*prefix, name), command


def test_every_command_checks_its_paths_and_declares_them():
    ctx = click.Context(main)
    for path, command in leaves(main, ctx):
        assert isinstance(command, SemrelCommand), path
        for param in command.params:
            if isinstance(param.type, click.Path) and not isinstance(param.type, RolePath):
                assert (*path, param.name) in PLAIN_PATHS, f"{' '.join(path)} {param.name}: declare it input_path or output_path"


def test_the_guard_holds_an_inputs_manifest_and_a_review_databases_sqlite_files(tmp_path):
    """From Python (no command line to check first), an output over the manifest of a file read (label reads the judge's
    settings there) or over a review database's -wal, which SQLite may not have made yet, was written."""
    source, manifest = tmp_path / "j.jsonl", tmp_path / "j.jsonl.manifest.json"
    source.write_text("data\n")
    manifest.write_text("{}\n")
    with input_guard():
        read_text(source)
        with pytest.raises(SemrelError, match="j.jsonl.manifest.json: is an input of this command"):
            with atomic_writer(manifest) as out:
                out.write("oops\n")
        note_database(source, os.stat(source))
        with pytest.raises(SemrelError, match="is a file SQLite keeps the review database .*j.jsonl's pages in"):
            with atomic_writer(f"{source}-wal") as out:
                out.write("oops\n")
    assert manifest.read_text() == "{}\n" and not (tmp_path / "j.jsonl-wal").exists()


@pytest.mark.parametrize("writer", ["atomic_writer", "files_as_one"])
def test_an_output_read_while_it_is_written_is_not_put_in_place(tmp_path, writer):
    """A streamed input (a folder's files, read as the output is written) is an input too: `corpus chunk d -o
    d/corpus.jsonl`, run again, read d/corpus.jsonl as a BEIR corpus and replaced it with chunks of itself."""
    target = tmp_path / "corpus.jsonl"
    target.write_text("the input\n")
    with input_guard(), pytest.raises(SemrelError, match="is an input of this command"):
        if writer == "atomic_writer":
            with atomic_writer(target) as out:
                out.write(read_text(target))
        else:
            with files_as_one([str(target)]) as staged:
                Path(staged[target]).write_text(read_text(target))
    assert target.read_text() == "the input\n" and os.listdir(tmp_path) == ["corpus.jsonl"]


def test_the_guard_refuses_a_write_over_a_file_read_in_it(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("data\n")
    link = tmp_path / "link.txt"
    link.symlink_to(source)
    with input_guard():
        read_text(link)  # read through a link: the file itself is what is protected
        with pytest.raises(SemrelError, match="is an input of this command"):
            with atomic_writer(source) as out:
                out.write("oops\n")
        with atomic_writer(tmp_path / "out.txt") as out:  # another file is fine
            out.write("fine\n")
    assert source.read_text() == "data\n" and not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    with atomic_writer(source) as out:  # outside any guard (a notebook), nothing is held back
        out.write("rewritten\n")
    assert source.read_text() == "rewritten\n"


def test_an_output_through_a_folder_not_made_yet_is_refused_where_it_lands_on_an_input(tmp_path):
    """new/../in.txt cannot be stat'ed before `new` exists, yet it is in.txt once the writer has made the folder: it is
    refused before anything is made (the check after writing caught it only once the folder and temp file were made)."""
    source = tmp_path / "in.txt"
    source.write_text("data\n")
    with input_guard():
        read_text(source)
        with pytest.raises(SemrelError, match=r"new/\.\./in\.txt: is an input of this command"):
            with atomic_writer(tmp_path / "new" / ".." / "in.txt") as out:
                out.write("oops\n")
    assert source.read_text() == "data\n" and os.listdir(tmp_path) == ["in.txt"]


def test_an_output_whose_manifest_is_an_input_is_refused_before_any_work(tmp_path):
    """check_outputs is the up-front check: an output whose manifest the command read was refused only when the
    manifest was staged, after all the work."""
    manifest = tmp_path / "out.jsonl.manifest.json"
    manifest.write_text("{}\n")
    with input_guard():
        read_text(manifest)
        with pytest.raises(SemrelError, match="out.jsonl: its manifest .*out.jsonl.manifest.json is an input of this command; "
                                              "semrel never writes its output over an input"):
            check_outputs(tmp_path / "out.jsonl")


def test_a_file_taken_by_its_stamp_is_an_input_though_it_was_not_read(tmp_path):
    """The BM25 index and the model fingerprint take a file they have seen by its stamp, without opening it: that stands
    for a read, or an output of the same command could replace the file the results came from."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("data\n")
    with input_guard():
        StampMemo(tmp_path / "memo.json").recall(corpus)
        with pytest.raises(SemrelError, match="corpus.jsonl: is an input of this command"):
            with atomic_writer(corpus) as out:
                out.write("oops\n")
    assert corpus.read_text() == "data\n"


def test_a_nested_guard_inherits_and_forgets_its_own_reads(tmp_path):
    config, step_input = tmp_path / "config", tmp_path / "step.txt"
    config.write_text("c\n")
    step_input.write_text("s\n")
    with input_guard():
        read_text(config)
        with input_guard():  # one step of `semrel run`
            read_text(step_input)
            with pytest.raises(SemrelError):
                with atomic_writer(config) as out:
                    out.write("x")
        with atomic_writer(step_input) as out:  # a later step may write what an earlier one read
            out.write("next\n")


def test_allow_rewrite_is_the_explicit_exception(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("{}\n")
    with input_guard():
        read_text(golden)
        allow_rewrite(golden)
        with atomic_writer(golden) as out:
            out.write("edited\n")
    assert golden.read_text() == "edited\n"


def test_two_outputs_of_one_command_may_not_be_one_file_through_a_link(tmp_path, cli):
    (tmp_path / "g.csv").write_text("query,answer\nx,y\n")
    (tmp_path / "a.jsonl").write_text("")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    result = cli("golden", "import", f"{tmp_path}/g.csv", "--qrels-out", f"{tmp_path}/b.jsonl", "-o", f"{tmp_path}/a.jsonl")
    assert_one_error(result, "name the same file")


def _checked_command(calls: list, **types) -> SemrelCommand:
    """A command taking one option per `types` (name -> path type), whose body records that it ran."""
    return SemrelCommand("probe", callback=lambda **given: calls.append(given),
                         params=[click.Option([f"--{name}"], type=kind) for name, kind in types.items()])


@pytest.mark.parametrize("role, kind, expected", [
    ("input", "FIFO", "{path}: is a FIFO"),
    ("input", "device", "{path}: is a character device"),
    ("database", "FIFO", "{path}: is a FIFO (named pipe), not a review database file"),
    ("output", "folder", "--path {path}: is a folder; give the output a file name"),
    ("output", "device", "--path {path}: is a character device; semrel writes outputs to files (use '-' for stdout)"),
])
def test_special_files_are_refused_before_the_command_runs(tmp_path, role, kind, expected):
    """The up-front check, not the library's later read or write, refuses them: a long judge run was not spent first."""
    path = tmp_path / "x"
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/null")
    types = {"input": input_path(), "output": output_path(), "database": database_path()}
    calls: list = []
    result = CliRunner().invoke(_checked_command(calls, path=types[role]), ["--path", str(path)])
    assert isinstance(result.exception, SemrelError) and calls == []
    assert expected.format(path=path) in str(result.exception)


def test_every_input_is_guarded_before_the_command_reads_it(tmp_path):
    """check_command_paths notes each input (and its manifest) in the command's input guard: a write over one the command
    has not read yet is refused too."""
    source = tmp_path / "in.jsonl"
    source.write_text("data\n")
    manifest = tmp_path / "in.jsonl.manifest.json"
    manifest.write_text("{}\n")
    refused = []

    def body(data):
        for target in (source, manifest):
            try:
                with atomic_writer(target) as out:
                    out.write("oops\n")
            except SemrelError as exc:
                refused.append(str(exc))

    command = SemrelCommand("probe", callback=body, params=[click.Option(["--data"], type=input_path())])
    assert CliRunner().invoke(command, ["--data", str(source)]).exit_code == 0
    assert len(refused) == 2 and all("is an input of this command" in line for line in refused), refused
    assert source.read_text() == "data\n" and manifest.read_text() == "{}\n"


def test_an_output_whose_manifest_is_an_input_is_refused_by_the_command_line_check(tmp_path):
    source = tmp_path / "o.qrels.manifest.json"
    source.write_text("{}\n")
    calls: list = []
    result = CliRunner().invoke(_checked_command(calls, data=input_path(), output=output_path()),
                                ["--data", str(source), "--output", str(tmp_path / "o.qrels")])
    assert isinstance(result.exception, SemrelError) and calls == []
    assert str(result.exception).startswith(f"--output {tmp_path}/o.qrels (which writes {source} beside it) would overwrite an input, "
                                            f"--data {source}: semrel never writes over its inputs"), result.exception
    assert source.read_text() == "{}\n"


def test_an_output_named_as_another_files_manifest_is_refused(cli, write):
    """`label j.jsonl -o q.qrels.manifest.json` replaced q.qrels's record of how it was made with qrels (and wrote
    q.qrels.manifest.json.manifest.json), although q.qrels is no input of the command."""
    judgments = write("j.jsonl", '{"query_id": "q1", "chunk_id": "a", "P": 0.9, "R": 0.9, "F": 0.9}\n')
    kept = write("q.qrels.manifest.json", '{"params": {"rule": "p >= 0.38"}}\n')
    result = cli("label", judgments, "-o", kept)
    assert result.exit_code == 1 and Path(kept).read_text() == '{"params": {"rule": "p >= 0.38"}}\n'
    assert result.stderr.strip() == (f"semrel: error: --output {kept}: a name ending in .manifest.json is where semrel keeps the "
                                     f"manifest of {str(kept).removesuffix('.manifest.json')}; give the output another file name "
                                     "(nothing was written)")


@pytest.mark.parametrize("how", ["a link", "a sidecar"])
def test_an_output_reaching_an_input_through_a_link_or_a_sidecar_is_refused_before_the_command_runs(tmp_path, how):
    """The input is compared by the file a link leads to (stat, not lstat), and with the files the output writes beside it."""
    source = tmp_path / "in.jsonl"
    source.write_text("data\n")
    output = tmp_path / "out.jsonl"
    if how == "a link":
        output.symlink_to(source)
    else:
        source = source.rename(tmp_path / "out.jsonl.sources.jsonl")
    calls: list = []
    result = CliRunner().invoke(_checked_command(calls, data=input_path(), output=output_path(sidecars=(".sources.jsonl",))),
                                ["--data", str(source), "--output", str(output)])
    assert isinstance(result.exception, SemrelError) and calls == []
    assert f"would overwrite an input, --data {source}: semrel never writes over its inputs" in str(result.exception)
    assert source.read_text() == "data\n"


def test_dash_is_stdin_or_stdout_never_a_file_named_dash(tmp_path, monkeypatch):
    """'-' is not looked up as a path: a folder named '-' in the current folder does not make `-o -` 'a folder'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").mkdir()
    calls: list = []
    result = CliRunner().invoke(_checked_command(calls, output=output_path(allow_dash=True)), ["--output", "-"])
    assert result.exception is None and calls == [{"output": "-"}]


@pytest.mark.parametrize("args", [
    ["eval", "{missing}", "{missing}"],  # read by the library
    ["calibrate", "{missing}", "{missing}"],  # checked by the command line's path type
    ["agree", "{missing}", "{missing}"],
    ["sensitivity", "{missing}", "{missing}"],
    ["review", "export", "--db", "{missing}", "--labels", "{missing}", "-o", "{out}"],
    ["init", "--golden", "{missing}", "-o", "{out}"],  # a file or a folder (BEIR); it exited 2 too
    ["corpus", "chunk", "{missing}", "-o", "{out}"],
])
def test_a_missing_input_is_one_line_and_exit_1_from_every_command(tmp_path, args):
    """calibrate, agree and the others whose path type checks existence said click's 'Invalid value for 'JUDGMENTS': File
    'x' does not exist.' and exited 2, where eval and label said 'x: no such file (check the path)' and exited 1."""
    missing, out = tmp_path / "nowhere.jsonl", tmp_path / "out.qrels"
    result = CliRunner().invoke(main, [a.format(missing=missing, out=out) for a in args])
    what = "file or folder" if args[0] == "init" else "file"  # corpus chunk reads a .jsonl path as a file of documents
    assert_one_error(result, f"{missing}: no such {what} (check the path)", code=1)


@pytest.mark.parametrize("args", [
    ["agree", "{f}", "{f}"], ["calibrate", "{f}", "{f}"], ["review", "stats", "--db", "{f}"], ["judge", "--corpus", "{f}",
    "--golden", "{f}", "-o", "{out}"], ["golden", "split", "{f}", "-o", "{out}"], ["compare", "{f}", "{f}", "{f}"],
    ["review", "start", "--db", "{out}", "--reviewer", "a", "--judgments", "{f}", "--labels", "{f}"],
])
def test_a_negative_seed_is_one_usage_line_from_every_command(tmp_path, args):
    """agree, calibrate, review stats and judge took --seed -1 and ended in numpy's 'expected non-negative integer'
    traceback; every --seed now takes 0 or more, refused before any file is read."""
    given = tmp_path / "given.txt"
    given.write_text("")
    result = CliRunner().invoke(main, [a.format(f=given, out=tmp_path / "out") for a in args] + ["--seed", "-1"])
    assert_one_error(result, "Invalid value for '--seed': -1 is not in the range x>=0.", code=2)
