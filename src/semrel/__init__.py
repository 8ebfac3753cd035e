"""semrel: golden datasets, BERTScore-derived qrels, human review and trec_eval-exact metrics.

The Python API (see docs/python.md):

    from semrel import Qrels, Run, evaluate, compare, judge, label, retrieve, fuse, sensitivity, calibrate, agree
    from semrel import lift, pool, import_golden, split_golden, dedup_golden, validate_golden, golden_stats
    from semrel import export_reviews, review_stats, estimate, fill

import_golden, split_golden and dedup_golden make and curate golden sets; retrieve makes a run over a
chunk corpus and fuse one run from several; evaluate and compare score runs; pool gathers the pairs to
judge, judge and label make qrels, and fill judges the holes other runs find in them; export_reviews
merges the human review into them; sensitivity shows how results move with the label threshold,
calibrate fits the labels to human ones and agree measures how far two sets of labels (or several
assessors) agree, so a whole experiment runs from a notebook as it does
from the commands.

Each name is imported on first use, so `import semrel` stays fast: no numpy, pyarrow, torch,
pandas or scipy until a name that needs them is touched.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING (mypy reads the name), without loading typing (13 ms) ahead of the handlers below
if os.path.basename(sys.argv[0]) in ("semrel", "semrel.exe") or sys.argv[0] == "-m" and "-m" in sys.orig_argv \
        and sys.orig_argv[sys.orig_argv.index("-m") + 1] in ("semrel", "semrel.cli"):
    # the `semrel` command (console script, python -m), not a program importing the library: a Ctrl-C from here on
    # ends in one line, where one while the command's modules load was a traceback (start() sets the same handlers)
    from .interrupts import stop_on_interrupts

    stop_on_interrupts()

if TYPE_CHECKING:  # what the lazy names below are, for type checkers; at run time each loads on first use
    from .analysis.api import agree, calibrate, lift, sensitivity
    from .analysis.compare import compare
    from .evaluation.api import Qrels, Run, evaluate
    from .golden.api import dedup_golden, golden_stats, import_golden, split_golden, validate_golden
    from .judging.fill import fill
    from .judging.judge import judge
    from .judging.labels import label
    from .retrieval.api import fuse, pool, retrieve
    from .review.api import estimate, export_reviews, review_stats, simulate_review

    __version__: str  # read from the installed metadata on first use
    __all__ = ["Qrels", "Run", "agree", "calibrate", "compare", "dedup_golden", "estimate", "evaluate", "export_reviews", "fill", "fuse",
               "golden_stats", "import_golden", "judge", "label", "lift", "pool", "retrieve", "review_stats", "sensitivity",
               "simulate_review", "split_golden", "validate_golden"]

# Arrow's allocator (mimalloc), as it comes, commits memory a whole arena at a time in transparent huge
# pages and gives freed memory back to the system 10 ms after a free, for the next allocation to fault in
# again. Reading a ten-million-row run allocates and frees hundreds of MB in bursts: on a machine whose
# memory another big process had just freed, zeroing those huge pages cost `semrel eval` more than its
# own work (1.8 s of kernel time against 0.5 s), and giving memory back and faulting it in again cost
# another 7%. Committed as used and kept once freed, Arrow's memory is faulted in once and reused; what
# it frees stays with the process (about 60-300 MB more peak for a 10M-row run). Only Arrow's users are
# affected (runs, qrels, fusion; not the judge or BM25). Arrow reads these when it loads, so only where
# semrel is imported first; values already set win.
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")
os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")

# name -> (module, attribute). The judge lives in semrel.judging.judge, not semrel.judge: importing a
# submodule named `judge` would replace this function.
_LAZY = {
    "Qrels": ("semrel.evaluation.api", "Qrels"),
    "Run": ("semrel.evaluation.api", "Run"),
    "evaluate": ("semrel.evaluation.api", "evaluate"),
    "compare": ("semrel.analysis.compare", "compare"),
    "judge": ("semrel.judging.judge", "judge"),
    "fill": ("semrel.judging.fill", "fill"),  # judges the holes of runs' top k, as `semrel fill`
    "label": ("semrel.judging.labels", "label"),
    "retrieve": ("semrel.retrieval.api", "retrieve"),  # a run, as `semrel retrieve` writes it
    "fuse": ("semrel.retrieval.api", "fuse"),  # one run from several, as `semrel fuse`
    "sensitivity": ("semrel.analysis.api", "sensitivity"),  # as `semrel sensitivity`
    "calibrate": ("semrel.analysis.api", "calibrate"),  # as `semrel calibrate`
    "agree": ("semrel.analysis.api", "agree"),  # as `semrel agree`
    "lift": ("semrel.analysis.api", "lift"),  # as `semrel lift`
    "pool": ("semrel.retrieval.api", "pool"),  # the pairs to judge, as `semrel pool`
    "import_golden": ("semrel.golden.api", "import_golden"),  # as `semrel golden import`
    "split_golden": ("semrel.golden.api", "split_golden"),  # as `semrel golden split`
    "dedup_golden": ("semrel.golden.api", "dedup_golden"),  # as `semrel golden dedup`
    "validate_golden": ("semrel.golden.api", "validate_golden"),  # as `semrel golden validate`
    "golden_stats": ("semrel.golden.api", "golden_stats"),  # as `semrel golden stats`
    "export_reviews": ("semrel.review.api", "export_reviews"),  # as `semrel review export`
    "simulate_review": ("semrel.review.api", "simulate_review"),  # as `semrel review simulate`
    "review_stats": ("semrel.review.api", "review_stats"),  # as `semrel review stats`
    "estimate": ("semrel.review.api", "estimate"),  # as `semrel estimate`
}


def __getattr__(name: str):
    if name == "__version__":
        from .resources import semrel_version

        value = semrel_version()
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


__all__ = ["__version__", "Qrels", "Run", "evaluate", "compare", "judge", "label", "retrieve", "fuse", "sensitivity", "calibrate", "agree",
           "lift", "pool", "import_golden", "split_golden", "dedup_golden", "validate_golden", "golden_stats", "export_reviews",
           "simulate_review", "review_stats", "estimate", "fill"]
