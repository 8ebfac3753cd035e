"""What semrel finds on this machine: versions, the default model, the embedding cache, a browser."""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

from .encoding.cache import default_cache_dir
from .encoding.models import DEFAULT_MODEL, describe_model
from .errors import SemrelError
from .formats.manifest import versions


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def diagnose() -> list[tuple[str, str]]:
    """(item, finding) rows; nothing here loads torch or a model's weights."""
    rows = [(name, version) for name, version in versions().items()]
    try:
        model = describe_model(None)
        rows.append(("default model", f"{DEFAULT_MODEL}: {model.folder} ({model.num_layers} layers, "
                                      f"{model.max_length} tokens)"))
    except SemrelError as exc:
        rows.append(("default model", f"MISSING: {exc}"))
    cache = default_cache_dir()
    rows.append(("embedding cache", f"{cache} ({_size(cache) / 2**20:.1f} MiB)" if cache.is_dir() else f"{cache} (empty)"))
    try:
        rows.append(("ray (--engine ray)", metadata.version("ray")))
    except metadata.PackageNotFoundError:
        rows.append(("ray (--engine ray)", "not installed (pip install 'semrel[ray]')"))
    browser = shutil.which("chromium")
    rows.append(("browser for tests", browser or "no chromium (browser tests skip; scripts/install-browser.sh)"))
    return rows
