"""semrel: golden datasets, BERTScore-derived qrels, human review and trec_eval-exact metrics."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("semrel")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"
