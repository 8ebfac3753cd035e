"""semrel: golden datasets, BERTScore-derived qrels, human review and trec_eval-exact metrics.

The Python API (see docs/python.md):

    from semrel import Qrels, Run, evaluate, compare, judge, label

Each name is imported on first use, so `import semrel` stays fast: no numpy, pyarrow, torch,
pandas or scipy until a name that needs them is touched.
"""

from __future__ import annotations

# name -> (module, attribute). The judge lives in semrel.judging.judge, not semrel.judge: importing a
# submodule named `judge` would replace this function.
_LAZY = {
    "Qrels": ("semrel.evaluation.api", "Qrels"),
    "Run": ("semrel.evaluation.api", "Run"),
    "evaluate": ("semrel.evaluation.api", "evaluate"),
    "compare": ("semrel.analysis.compare", "compare_runs"),
    "judge": ("semrel.judging.judge", "judge"),
    "label": ("semrel.judging.labels", "label"),
}


def _version() -> str:
    from importlib import metadata  # importlib.metadata alone costs more than the rest of `import semrel`

    try:
        return metadata.version("semrel")
    except metadata.PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0"


def __getattr__(name: str):
    if name == "__version__":
        value = _version()
    elif name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
    else:
        raise AttributeError(f"module 'semrel' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = ["__version__", "Qrels", "Run", "evaluate", "compare", "judge", "label"]
