"""`<file>.manifest.json` beside every derived file: what it takes to make that file again."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import functools
import json
import os
import platform
import shlex
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import SemrelError, UsageError
from ..terminal import quantity
from .files import (
    MANIFEST_SUFFIX,
    STDIO,
    Staged,
    atomic_writer,
    bytes_sha256,
    content_sha256,
    file_digest,
    files_as_one,
    folder_digest,
    folder_files,
    line_count,
    manifest_path,
    os_path,
    prefix_matches,
    sqlite_rows_sha256,
    stdin_digest,
    with_log,
)
from .jsonl import too_deep

LIBRARIES = ("numpy", "pyarrow", "torch", "transformers", "tokenizers", "bert-score", "click", "jsonlines", "pypdf", "selectolax",
             "python-docx")
"""Recorded in every manifest: pypdf, selectolax and python-docx make the text `corpus chunk` cuts (an upgrade of pypdf
moves the words of a PDF, and so what each chunk id holds), tokenizers counts --unit tokens."""


def versions() -> dict[str, str]:
    """Versions of Python, semrel and the libraries that shape results (read without importing them)."""
    found = {"python": platform.python_version()}
    for name in ("semrel", *LIBRARIES):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def describe_input(path: str | os.PathLike, read_from: str | os.PathLike | None = None) -> dict[str, Any]:
    """Path, sha256 and line count (after gunzip; a Parquet file's rows, its newline bytes meaning nothing) of one input
    file, or sha256 and file count of an input folder (documents, a BEIR or Cranfield folder); `read_from`: where it lies
    now, when it is staged under another name (see files_as_one)."""
    name = str(path)
    if name == STDIO:
        return {"path": name, **stdin_digest()}
    source = str(read_from or name)
    if os.path.isdir(source):
        return {"path": name, **folder_digest(source)}
    if not os.path.isfile(source):
        return {"path": name}
    from .parquet import is_parquet, parquet_rows  # here: numpy and pyarrow load only where a manifest is written

    if is_parquet(source):  # its bytes hashed alone: their newline count means nothing
        with contextlib.suppress(SemrelError):  # not Parquet after all: its reader says so, and its lines are counted
            return {"path": name, "rows": parquet_rows(source), "sha256": bytes_sha256(source)}
    digest = file_digest(source)
    sha = with_log(source, digest["sha256"])
    # a database read with its log: its rows too, which SQLite's later copying of the log into the file leaves as they are
    rows = {"rows_sha256": found} if sha != digest["sha256"] and (found := sqlite_rows_sha256(source)) else {}
    return {"path": name, **digest, "sha256": sha, **rows}


def with_manifests(paths: Iterable[str | os.PathLike]) -> list[str]:
    """`paths` each followed by the manifest beside it, where one lies: the inputs of a command that reads its inputs'
    manifests (the report shows the labels' rule, the judge's settings, the curves' threshold), so `semrel verify` tells
    an edited one, as `semrel run` counts an input's manifest with it."""
    named = [str(p) for p in paths]
    return list(dict.fromkeys(name for path in named for name in (
        (path, manifest_path(path)) if path != STDIO and os.path.isfile(manifest_path(path)) else (path,))))


_STEP: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("semrel_run_step", default=None)


@contextlib.contextmanager
def recorded_step(command: Sequence[str]) -> Iterator[None]:
    """Manifests written inside the block record `command` as their "step": the command a `semrel run` step ran. The
    run's own command line ("command") leaves out what SEMREL_* variables set (a threshold from the environment), so it
    alone did not say how the file was made."""
    token = _STEP.set(list(command))
    try:
        yield
    finally:
        _STEP.reset(token)


def run_step() -> list[str] | None:
    """The command of the `semrel run` step running now (recorded_step); None outside one."""
    return _STEP.get()


def write_manifest(
    output: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
    staged: Mapping[str, str] | None = None,
    holds: str | None = None,
    parts: Mapping[str, Mapping[str, str]] | None = None,
) -> str | None:
    """Write the manifest of `output` (nothing for stdout) and return its path. `staged`: the names
    files_as_one gave `output`, its manifest and any input written with them; the record names the targets. `holds`:
    what the file is, where its format cannot tell ("qrels" or "run": both are {qid: {docid: number}} in JSON). `parts`:
    input path -> the digest of the part of it the command reads ({"queries_sha256": ...} of a run's golden set), which
    verify compares where the input's bytes differ."""
    if str(output) == STDIO:
        return None
    target = manifest_path(output)
    save_manifest(manifest_record(output, inputs, params, rows, staged, holds, parts), (staged or {}).get(target, target))
    return target


def manifest_record(
    output: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
    staged: Mapping[str, str] | None = None,
    holds: str | None = None,
    parts: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """What write_manifest records of `output` (a file that exists): for a caller that keeps it inside another record."""
    where, read = staged or {}, parts or {}
    return {
        "output": str(output),
        **({"holds": holds} if holds else {}),
        "rows": rows,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": [_program(), *sys.argv[1:]],
        **({"step": step} if (step := run_step()) else {}),
        "cwd": os.getcwd(),  # where the command's relative paths (and those below) are read from
        "versions": versions(),
        "inputs": [{**describe_input(p, where.get(str(p))), **read.get(str(p), {})} for p in inputs],
        "params": dict(params or {}),
        "output_digest": _output_digest(where.get(str(output), output)),
    }


def _program() -> str:
    """The command's name as a user types it: `python -m semrel` runs semrel/__main__.py, which is `semrel`."""
    name = os.path.basename(sys.argv[0])
    return "semrel" if name == "__main__.py" else name


@contextlib.contextmanager
def outputs_with_manifests(outputs: Sequence[str | os.PathLike], superseded: Sequence[str] = ()) -> Iterator[Staged]:
    """Outputs and their manifests written as one unit (files_as_one), each output after its
    manifest (so the hidden staging folder is named after an output): yields {name: staged name} for
    outputs and manifests alike ('-', stdout, is itself and has no manifest). Write each output to
    its staged name, then write_manifest(..., staged=). `superseded`: as files_as_one's."""
    files = [str(o) for o in outputs if str(o) != STDIO]
    if len(outputs) - len(files) > 1:  # they would follow one another on stdout, as if they were one file
        raise UsageError("two outputs are '-' (stdout): only one output can go to stdout; give the others file names")
    with files_as_one([name for output in files for name in (manifest_path(output), output)], superseded) if files \
            else contextlib.nullcontext(Staged()) as staged:
        yield Staged({STDIO: STDIO, **staged})


def save_manifest(record: Mapping[str, Any], target: str | os.PathLike) -> str:
    """Write a manifest record to `target`, atomically, as every manifest is written."""
    with atomic_writer(target) as out:
        json.dump(record, out, indent=2, sort_keys=True, default=str)
        out.write("\n")
    return str(target)


def _output_digest(path: str | os.PathLike) -> dict[str, Any]:
    return {"bytes": os.path.getsize(path), **file_digest(path)}


def read_manifest(path: str | os.PathLike, current: bool = True) -> dict[str, Any] | None:
    """The manifest beside `path`, or None when there is none, it is unreadable, or (`current`) it describes
    another file (a hard kill between the two renames of outputs_with_manifests, an output edited or
    written by another tool since: the digest tells). Manifests without a digest (older semrel) are taken as they are.
    current=False: the record whichever file it describes, to say what wrote the file before it changed.
    stdin ('-') has none: a file named '-.manifest.json' describes no stream."""
    if str(path) == STDIO:
        return None
    try:
        if not os.path.isfile(manifest_path(path)):  # a FIFO or device is no manifest (and opening one could block)
            return None
        with open(manifest_path(path), encoding="utf-8") as handle:
            text = handle.read(1 << 24)
        record = None if too_deep(text) else json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    recorded = record.get("output_digest")
    if recorded is None or not current:
        return record
    try:
        same = os.path.getsize(path) == recorded.get("bytes") and _output_digest(path) == recorded
    except (OSError, AttributeError):
        same = False
    return record if same else None


def recorded_holds(path: str | os.PathLike) -> str | None:
    """What `path` holds ("qrels", "run") as its current manifest records it, else None (see write_manifest)."""
    holds = (read_manifest(path) or {}).get("holds")
    return holds if isinstance(holds, str) else None


def recorded_path(record: Mapping[str, Any], path: str) -> str:
    """A path a manifest records, named from the current folder: a relative one was relative to the folder its
    command ran in (`cwd`), which need not be this one."""
    cwd = record.get("cwd")
    full = os_path(os.path.join(cwd, path) if isinstance(cwd, str) and path != STDIO else path)
    if not os.path.isabs(full):
        return full
    here = os.path.relpath(full)
    return here if not here.startswith(os.pardir) else os.path.normpath(full)


def manifest_is_stale(path: str | os.PathLike) -> bool:
    """True when a manifest lies beside `path` but does not describe it (see read_manifest)."""
    return str(path) != STDIO and os.path.exists(manifest_path(path)) and read_manifest(path) is None


def read_params(path: str | os.PathLike) -> dict[str, Any] | None:
    """The `params` of the manifest beside `path`, or None when there is no readable, current one."""
    params = (read_manifest(path) or {}).get("params")
    return params if isinstance(params, dict) else None


# what check_manifests shares: (real path, files recorded) -> (content_sha256, files now: None for a file)
Contents = dict[tuple[str, int], "tuple[str | None, int | None]"]
Fingerprints = Callable[[str], "tuple[str, ...] | None"]  # a model's name or folder -> its fingerprints now, None if not found
RESULT_VERSIONS = ("semrel", "torch", "transformers", "bert-score")  # those that make the scores, labels and runs


@dataclass(frozen=True)
class Finding:
    """One thing `check_manifest` found: `kind` ("changed", "missing", "moved", "input changed", "input missing",
    "input moved", "input part", "version", "model", "no manifest", "unreadable manifest", "not checked"), the path it is
    about and a line saying what it is.
    `counts`: False for what cannot be checked (an input read from stdin) or differs in nothing (an input that moved
    with the file, its bytes the same; a run's golden set whose queries, all the run read of it, are the same), which is
    told but changes nothing."""
    kind: str
    path: str
    message: str
    counts: bool = True


@dataclass(frozen=True)
class Checked:
    """A derived file checked against its manifest: what differs since it was written, and the commands that made it
    (the command line, or the `semrel run` step, then any `semrel fill` that added rows), to make it again."""
    file: str
    manifest: str
    findings: list[Finding] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(f.counts for f in self.findings)


def check_manifests(paths: Iterable[str | os.PathLike], fingerprint: Fingerprints | None = None) -> Iterator[Checked]:
    """check_manifest of each path, the installed versions read once and each input and model once: read for each file,
    the versions' metadata made up most of a large folder's check, and the outputs of a run each read the corpus again."""
    installed: dict[str, str] = versions()
    contents: Contents = {}
    fingerprints = functools.cache(fingerprint) if fingerprint is not None else None
    for path in paths:
        yield check_manifest(path, installed, contents, fingerprints)


def check_manifest(path: str | os.PathLike, installed: Mapping[str, str] | None = None,
                   contents: Contents | None = None, fingerprint: Fingerprints | None = None) -> Checked:
    """`path` (or `path` given as its manifest's name) against the manifest beside it: whether the file holds the bytes
    it was written with; each input (of the command, and of each fill since) that holds other bytes (a folder: other
    files, as `semrel run` compares them), is missing, or is missing where it was read but lies where it did beside
    the file (the two moved together); the versions of RESULT_VERSIONS that differ from those installed now. Relative
    paths are read from the folder the manifest records the command ran in. `installed`, `contents`: as check_manifests
    shares them (versions(), and the content_sha256 of each input by its real path and the files it held). `fingerprint`: a model's (name or
    folder) fingerprints now (as semrel records it, and as older versions did), None where it is not found, compared
    with the one the manifest's params record (judge, golden split, dedup and pick record one; a model is no input,
    so its files are checked only this way)."""
    name = described_file(path)
    contents = {} if contents is None else contents
    checked = Checked(name, manifest_path(name))
    if not os.path.exists(checked.manifest):
        checked.findings.append(Finding("no manifest", name, f"no manifest ({checked.manifest}): nothing records how it was made"))
        return checked
    record = read_manifest(name, current=False)
    runs = [record, *record.get("fills", [])] if isinstance(record, dict) and isinstance(record.get("fills", []), list) else []
    if not runs or not all(isinstance(r, dict) and isinstance(r.get("inputs", []), list) for r in runs):
        checked.findings.append(Finding("unreadable manifest", name, f"{checked.manifest} is no semrel manifest (not JSON, "
                                        "or no record of inputs): nothing tells how the file was made"))
        return checked
    assert isinstance(record, dict)
    if wrong := _malformed(record, runs):
        checked.findings.append(Finding("unreadable manifest", name, f"{checked.manifest}: {wrong}"))
        return checked
    checked.findings.extend(_output_findings(name, record.get("output_digest")))
    if written := _written_as(name, record):
        checked.findings.append(Finding("moved", name, f"written as {written}: its inputs are checked where that command read "
                                                       "them", counts=False))
    for made in runs:
        cwd = _ran_in(made)
        for given in made.get("inputs", []):
            checked.findings.extend(_input_findings(name, given, cwd, written, contents))
        command = made.get("step") or made.get("command")
        if isinstance(command, list):
            checked.rerun.append(f"cd {_shell_word(cwd)} && {' '.join(_shell_word(str(word)) for word in command)}")
    checked.findings.extend(_version_findings(record.get("versions"), versions() if installed is None else installed))
    if fingerprint is not None:
        checked.findings.extend(_model_findings(record.get("params"), _ran_in(record), fingerprint))
    return checked


def _malformed(record: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str | None:
    """What makes a manifest (its command's record `record`, and each fill's among `runs`) other than semrel writes it, said
    with what it leaves unknown; None where nothing does. A hand-edited one passed as recorded: inputs deleted, or made
    numbers (each read as an input that was no file), or an output digest made a list (read as an older semrel's)."""
    def shown(value: Any) -> str:
        text = json.dumps(value, default=str)
        return text if len(text) <= 40 else text[:40] + "..."

    if bad := [r["cwd"] for r in runs if not isinstance(r.get("cwd"), (str, type(None)))]:  # a 5 was read as a folder named '5'
        return f"its cwd is {shown(bad[0])}, not a folder's name: nothing tells where its relative paths were read"
    if "inputs" not in record and not record.get("fills"):  # a fill of judgments without a manifest records its inputs alone
        return "it records no inputs: nothing tells what the file was made from; make the file again"
    if bad := [i for r in runs for i in r.get("inputs", []) if not (isinstance(i, dict) and isinstance(i.get("path"), str))]:
        return f"an input is {shown(bad[0])}, not a path and its sha256: nothing tells what the file was made from; make the file again"
    if not isinstance(record.get("output_digest"), (dict, type(None))):
        return (f"its output_digest is {shown(record['output_digest'])}, not a sha256 and size: nothing tells whether the file "
                "changed since; make the file again")
    return None


def _ran_in(record: Mapping[str, Any]) -> str:
    """The folder a manifest's command (or fill) ran in, which its relative paths are read from; here, where it says none."""
    return str(record.get("cwd") or os.getcwd())


def _model_findings(params: Any, cwd: str, fingerprint: Fingerprints) -> list[Finding]:
    model, then = (params.get("model"), params.get("model_fingerprint")) if isinstance(params, dict) else (None, None)
    if not isinstance(model, str) or not isinstance(then, str):
        return []
    folder = os_path(os.path.join(cwd, model))  # a model given as a relative folder was found from the command's folder
    now = fingerprint(folder if os.path.isdir(folder) else model)
    if now is not None and then in now:
        return []
    return [Finding("model", model, f"model {model}: not found now (fingerprint {then} then)" if now is None else
                    f"model {model}: its files changed (fingerprint {then} then, {now[0]} now)")]


def _shell_word(word: str) -> str:
    """`word` quoted for a shell on one line: shlex.quote, or $'...' with escapes where it holds a newline or another
    control character (a manifest's cwd or command can: quoted as they are, the line to paste ran over several)."""
    if not any(ord(c) < 0x20 or c == "\x7f" for c in word):
        return shlex.quote(word)
    escaped = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or c == "\x7f" else "\\" + c if c in "\\'" else c for c in word)
    return f"$'{escaped}'"


def described_file(path: str | os.PathLike) -> str:
    """The file `path` is about: the one a manifest describes (`out/*` names both), else `path` itself."""
    name = str(path)
    return name[:-len(MANIFEST_SUFFIX)] if name.endswith(MANIFEST_SUFFIX) and not os.path.exists(manifest_path(name)) else name


def derived_files(path: str | os.PathLike) -> list[str]:
    """The files to check for `path`: under a folder, each with a manifest beside it (its documents, which have none,
    left out); else the file `path` is about (described_file)."""
    if not os.path.isdir(path):
        return [described_file(path)]
    return [name for name in folder_files(path) if not name.endswith(MANIFEST_SUFFIX) and os.path.isfile(manifest_path(name))]


def _output_findings(name: str, recorded: Any) -> list[Finding]:
    if not os.path.isfile(name):
        return [Finding("missing", name, "missing: its manifest lies there without it")]
    if not isinstance(recorded, dict):
        return [Finding("not checked", name, "its manifest records no sha256 of it (written by an older semrel): "
                                             "whether it changed since is not known", counts=False)]
    now = _output_digest(name)
    if now["sha256"] == recorded.get("sha256"):
        return []
    return [Finding("changed", name, f"changed since its manifest was written: {_short(recorded.get('sha256'))}, "
                                     f"{recorded.get('bytes')} bytes then; {_short(now['sha256'])}, {now['bytes']} bytes now")]


def _input_findings(name: str, given: Mapping[str, Any], cwd: str, written: str | None, contents: Contents) -> list[Finding]:
    """What differs of one input the manifest records ({"path", "sha256", ...}, as describe_input wrote it), read in
    `cwd`; `written`: where the file was written, when it lies elsewhere now."""
    where, sha = str(given["path"]), given.get("sha256")
    if where == STDIO:
        return [Finding("not checked", where, f"input read from stdin ({_short(sha)}): not checked", counts=False)]
    if not isinstance(sha, str):
        return [Finding("not checked", where, f"input {where}: recorded without a sha256 (not a file when it was read)",
                        counts=False)]
    files = given.get("files")
    files = files if isinstance(files, int) and not isinstance(files, bool) and files >= 0 else None  # None: no folder then
    full = os.path.join(cwd, where)  # as the manifest names it; `found`, as os functions take it here
    if _holds(found := os_path(full), name):
        return [_holding(where, full)]
    if os.path.exists(found):
        now, held = _content(found, contents, files or 0)
        if now == sha or isinstance(given.get("rows_sha256"), str) and os.path.isfile(found) \
                and sqlite_rows_sha256(found) == given["rows_sha256"]:  # other bytes, the same rows: SQLite folded its log in
            return []
        if isinstance(given.get("queries_sha256"), str) and now is not None and os.path.isfile(found) \
                and _queries_sha256(found, now) == given["queries_sha256"]:
            return [Finding("input part", where, f"input {full}: other bytes ({_short(sha)} then, {_short(now)} now), the same "
                                                 "queries, which are all the command read of it", counts=False)]
        if now is None and held is not None:  # a folder of another count than it held then: none of its files read
            return [Finding("input changed", where, f"input changed: {full}: " + (
                f"more than the {quantity(files, 'file')} it held then (read no further)" if files and held > files else
                f"{quantity(held, 'file')} now, {quantity(files, 'file')} then (not read)" if files else
                "a folder now, " + ("an empty folder then" if files == 0 else f"a file then ({_short(sha)})")))]
        read = given.get("lines")
        grown = read if isinstance(read, int) and read > 0 and now is not None and os.path.isfile(found) \
            and prefix_matches(found, read, sha) else None
        return [Finding("input changed", where, f"input changed: {full}: " + (
            f"appended to since: its first {quantity(grown, 'line')}, those read, are as they were, "
            f"{quantity(line_count(found), 'line')} now ({_short(sha)} then, {_short(now)} now)" if grown is not None else
            f"{_short(sha)} then, {_short(now)} now"))]
    if written:  # the file moved: its input may have moved with it, to the same place beside it
        inside = os.path.relpath(found, os.path.dirname(os_path(written)))
        beside = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(name)), inside))
        if _holds(beside, name):
            return [_holding(where, beside)]
        if os.path.exists(beside):  # the same bytes moved with the file (a results folder moved or copied whole) differ in nothing
            same = _content(beside, contents, files or 0)[0] == sha
            return [Finding("input moved" if same else "input changed", where,
                            f"input moved: {full} is missing; it lies beside the file as it did, at {beside}"
                            + (", with the same bytes" if same else ", with other bytes"), counts=not same)]
    return [Finding("input missing", where, f"input missing: {full}")]


@functools.lru_cache(maxsize=8)
def _queries_sha256(path: str, sha: str) -> str | None:
    """golden_queries_sha256 of the golden set at `path`, read once for its bytes `sha` (the runs of a folder share it)."""
    from .corpus import golden_queries_sha256

    return golden_queries_sha256(path)


def _holds(folder: str, name: str) -> bool:
    """Whether `folder` holds the file `name` (at any depth): then it is not what the command read, the file being
    written into it after, and it is not read (a crafted or corrupted manifest naming / had the whole disk hashed, as
    many files as it claimed)."""
    if not os.path.isdir(folder):  # nor a path with a NUL byte, which realpath refuses
        return False
    inside = os.path.realpath(folder).rstrip(os.sep) + os.sep
    return os.path.realpath(name).startswith(inside)


def _holding(where: str, full: str) -> Finding:
    return Finding("input changed", where, f"input changed: {full}: a folder that holds the file itself, written after it "
                                           "was read (not read)")


def _content(path: str, contents: Contents, files: int) -> tuple[str | None, int | None]:
    """content_sha256 of a file or folder, kept in `contents` under its real path, and a folder's count of files (None
    for a file); no sha256 for what is neither (a FIFO would hang the reading) and for a folder of other than `files`
    files (as many as the manifest records it held), whose files are not read: a crafted or corrupted manifest naming
    / or ~ would have had the whole disk hashed."""
    key = (os.path.realpath(path), files)
    if key not in contents:
        if os.path.isdir(path):
            digest = folder_digest(path, most=files)
            contents[key] = digest["sha256"], digest["files"]
        else:
            contents[key] = content_sha256(path) if os.path.isfile(path) else None, None
    return contents[key]


def _written_as(name: str, record: Mapping[str, Any]) -> str | None:
    """Where the command wrote the file, when that is not where it lies now (it moved since, or is a copy)."""
    written = record.get("output")
    if not isinstance(written, str):
        return None
    written = os.path.join(_ran_in(record), written)
    try:
        return None if os.path.realpath(os_path(written)) == os.path.realpath(name) else written
    except ValueError:  # a NUL byte in a hand-edited "output" or "cwd": no path, so not where the file lies
        return written


def _version_findings(recorded: Any, now: Mapping[str, str]) -> list[Finding]:
    if not isinstance(recorded, dict):
        return []
    return [Finding("version", library, f"{library} {recorded[library]} then, {now.get(library, 'not installed')} now")
            for library in RESULT_VERSIONS if library in recorded and recorded[library] != now.get(library)]


def _short(sha: Any) -> str:
    return f"sha256 {sha[:12]}" if isinstance(sha, str) else "no sha256"
