"""What semrel finds on this machine: versions, the default model, the embedding cache, the docs, a browser, and
the SEMREL_* variables that change a command's defaults (a model or a cache set there is checked too:
the defaults shown above them are not what such a command uses), and those that nothing reads."""

from __future__ import annotations

import difflib
import os
import shutil
from importlib import metadata
from pathlib import Path
from typing import Collection, Mapping, Sequence

from .encoding.cache import default_cache_dir
from .encoding.models import DEFAULT_MODEL, describe_model
from .errors import SemrelError
from .formats.files import sqlite_header
from .formats.manifest import versions
from .resources import resource_dir

SECRET_ENDINGS = ("_TOKEN", "_PASSWORD", "_SECRET")  # values doctor does not print


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def _model(name: str | None) -> str:
    try:
        model = describe_model(name, fingerprint=False)  # reading the weights wrote their sha256 to the cache
    except SemrelError as exc:
        return f"MISSING: {exc}"
    return f"{name or DEFAULT_MODEL}: {model.folder} ({model.num_layers} layers, {model.max_length} tokens)"


def _cache(folder: Path) -> str:
    """The cache folder's size, or why a command cannot keep embeddings there: it is a file or lies under one (a judge
    failed on it while doctor said `(empty)`), or its embeddings.sqlite is no SQLite file. Nothing is created."""
    try:
        above = next(p for p in (folder, *folder.parents) if os.path.lexists(p))
        if not above.is_dir() or not os.access(above, os.W_OK | os.X_OK):
            why = f"{above} is not a folder" if not above.is_dir() else f"{above} is not writable"
            return f"UNUSABLE: {folder} ({why}): semrel cannot keep embeddings there; give another with --cache"
        database = folder / "embeddings.sqlite"
        if database.is_file() and database.stat().st_size and not sqlite_header(database):
            return (f"DAMAGED: {database} is no SQLite database: commands using this cache stop on it; delete it (it holds only "
                    "embeddings, computed again) or give another folder with --cache")
        return f"{folder} ({_size(folder) / 2**20:.1f} MiB)" if folder.is_dir() else f"{folder} (empty)"
    except OSError as exc:  # a finding like the others, not the end of the report
        return f"UNREADABLE: {folder} ({exc.strerror or exc}): semrel cannot keep embeddings there; give another with --cache"


def _variable(name: str, value: str, known: Collection[str] | None, in_out: Mapping[str, str | None]) -> str:
    """What a SEMREL_<COMMAND>_<OPTION> variable sets, checked where it names a model or a cache folder; UNUSED where it
    is not one of the `known` names that semrel reads (None: not checked). A `semrel run` key whose relative path is kept
    inside run's out folder (`in_out`: the folder, None where only a config's `out` tells) is checked there, not here."""
    if known is not None and name not in known:
        close = difflib.get_close_matches(name[len("SEMREL_"):], [k[len("SEMREL_"):] for k in known], n=1, cutoff=0.85)
        return (f"UNUSED: nothing reads it{f' (did you mean SEMREL_{close[0]}?)' if close else ''}: an option needs "
                "SEMREL_<COMMAND>_<OPTION> (its parameter name, as --help shows), a `semrel run` config key "
                "SEMREL_<SECTION>_<KEY>, a size limit SEMREL_MAX_* (docs/safety.md)")
    if name.endswith(SECRET_ENDINGS):  # doctor's output is pasted into bug reports
        return f"set (hidden, {len(value)} characters)"
    if name.endswith("_MODEL"):
        return _model(value)
    if name in in_out:
        folder = in_out[name]
        if folder is None:
            return (f"{value}: `semrel run` keeps it inside its out folder (the config's `out`; SEMREL_OUT is not set), "
                    "which only the config tells: not checked")
        value = folder
    if name.endswith(("_CACHE", "_CACHE_DIR")):
        return _cache(Path(value).expanduser())  # as the commands take it
    return value


PROBLEMS = ("MISSING", "UNUSABLE", "DAMAGED", "UNREADABLE", "UNUSED")
"""How a finding that a command will stop on, or a setting it will not see, starts: `semrel doctor` exits 1 on one, so a
setup script or CI can check a machine with it."""


def problems(rows: Sequence[tuple[str, str]]) -> list[str]:
    """The items of `rows` (diagnose's) whose finding is a problem (PROBLEMS)."""
    return [item for item, found in rows if found.startswith(PROBLEMS)]


def diagnose(environ: dict[str, str] | None = None, known: Collection[str] | None = None,
             in_out: Mapping[str, str | None] | None = None) -> list[tuple[str, str]]:
    """(item, finding) rows; nothing here loads torch or a model's weights. `known`: every SEMREL_* variable semrel reads
    (the CLI's options, `semrel run`'s config keys, the limits), those not in it marked UNUSED. `in_out`: the variables
    of `semrel run` keys kept inside its out folder, with the folder run resolves (cli.run_config.folders_in_out: the
    resolution is run's, above this module)."""
    rows = [(name, version) for name, version in versions().items()]
    rows.append(("default model", _model(None)))
    rows.append(("embedding cache", _cache(default_cache_dir())))
    rows.append(("docs (cited as docs/*.md)", _docs()))
    environ = dict(os.environ if environ is None else environ)
    rows += [(name, _variable(name, value, known, in_out or {})) for name, value in sorted(environ.items()) if name.startswith("SEMREL_")]
    try:
        rows.append(("ray (--engine ray)", metadata.version("ray")))
    except metadata.PackageNotFoundError:
        rows.append(("ray (--engine ray)", "not installed (pip install 'semrel[ray]')"))
    rows.append(("browser for tests", _browser()))
    return rows


def _docs() -> str:
    """The folder that messages' `docs/judge.md` and the like are in: a wheel's user has no checkout to look in."""
    try:
        return str(resource_dir("docs"))
    except SemrelError as exc:
        return f"MISSING: {exc}"


def _browser() -> str:
    """Chromium and the Playwright client that drives it: the browser tests skip without either."""
    browser = shutil.which("chromium")
    if not browser:
        return "no chromium (browser tests skip; scripts/install-browser.sh)"
    try:
        metadata.version("playwright")
    except metadata.PackageNotFoundError:
        return f"{browser}, but no Playwright client (browser tests skip; scripts/install-browser.sh)"
    return browser
