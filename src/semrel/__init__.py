"""semrel: golden datasets, BERTScore-derived qrels, human review and trec_eval-exact metrics."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("semrel")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"

# The Python API, imported on first use so `import semrel` stays fast (no torch). The judge lives in
# semrel.judging.judge, not semrel.judge: importing a submodule named `judge` would replace this function.
_LAZY = {"judge": "semrel.judging.judge", "label": "semrel.judging.labels"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'semrel' has no attribute {name!r}")


__all__ = ["__version__", "judge", "label"]
