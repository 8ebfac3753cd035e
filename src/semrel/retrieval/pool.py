"""Pooling: the chunks worth judging per query, from the top of several runs plus the gold chunks."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Sequence

from ..errors import UsageError
from ..evaluation.doclevel import corpus_documents, listed_only
from ..evaluation.metrics import refuse_repeats
from ..formats.corpus import read_golden
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..formats.pool import PoolRow, source_ok, write_pool
from ..formats.trec import read_run
from ..records import GoldenItem, Run
from ..terminal import agreeing, quantity
from .fusion import top_per_query

GOLD = "gold"


def pooled_rows(run: Run, depth: int) -> Run:
    """The rows of `run` a pool of `depth` can take, each query's top `depth` (the run kept its source): pool_files cuts
    each run as it is read, so that memory holds one whole run at a time, not all. A repeated document is refused first
    (it took two of the run's `depth` places), wherever it is."""
    refuse_repeats(run)
    return dataclasses.replace(top_per_query(run, depth), source=run.source)


def pool(items: Sequence[GoldenItem], runs: Sequence[Run], depth: int, warn: Callable[[str], None] | None = None) -> list[PoolRow]:
    """Per golden query, the union of each run's top-`depth` chunks and its gold chunks, with their sources.

    Runs are named by `Run.name`; queries a run holds that the golden set lacks cannot be judged
    (no reference answer), so they are left out and reported through `warn`.
    """
    if depth <= 0:
        raise UsageError(f"depth={depth}: give a positive number of chunks per run and query")
    names = [r.name for r in runs]
    for name in names:
        if name == GOLD or names.count(name) > 1 or not source_ok(name):
            problem = "reserved" if name == GOLD else "used twice" if names.count(name) > 1 else "not one word without commas"
            raise UsageError(f"run name {name!r} is {problem}; runs are named by their file stem (in Python, their key): "
                             "rename it")
    sources: dict[tuple[str, str], set[str]] = {}
    wanted = {i.query_id for i in items}
    for item in items:
        for chunk_id in item.gold_chunk_ids:
            sources.setdefault((item.query_id, chunk_id), set()).add(GOLD)
    pooled: set[str] = set()
    for run in runs:
        top = pooled_rows(run, depth)  # only these rows become Python strings: all of a 10M-row run's took 2 GB more
        taken: set[str] = set()
        unknown: set[str] = set()
        for q, d in zip(top.query_ids.to_pylist(), top.doc_ids.to_pylist()):
            if q not in wanted:
                unknown.add(q)
            else:
                taken.add(q)
                sources.setdefault((q, d), set()).add(run.name)
        if warn and unknown:
            warn(f"{quantity(len(unknown), 'query')} of run {run.name} {agreeing(len(unknown), 'are')} not in the golden set and "
                 f"{agreeing(len(unknown), 'are')} left out (e.g. {min(unknown)!r})")
        if warn and not taken:
            warn(f"run {run.name} adds no pair to the pool: it holds no row{' of a golden query' if unknown else ''}")
        pooled.update(taken)
    unpooled = [i.query_id for i in items if i.query_id not in pooled]
    if warn and not runs:  # an empty run file and a run of one query were warned of; none at all went by in silence
        warn("no run given: the pool is the golden set's gold chunks alone, with no retrieved chunk to judge; give the runs "
             "to pool")
    if warn and runs and pooled and unpooled:  # a run with no golden query is said above; a sample's runs, here
        warn(f"{len(unpooled):,} of the golden set's {quantity(len(items), 'query')} {agreeing(len(unpooled), 'are')} in no run "
             f"(e.g. {unpooled[0]!r}): their pool is their gold chunks alone, with no retrieved chunk "
             "to judge; retrieve for every query of the golden set, or pool a golden set of the runs' queries")
    return sorted((q, c, tuple(sorted(s))) for (q, c), s in sources.items())


def pool_files(golden: str | os.PathLike | Sequence[GoldenItem], runs: Sequence[str | os.PathLike | Run], depth: int,
               output: str | os.PathLike | None = None, warn: Callable[[str], None] | None = None,
               corpus: str | os.PathLike | None = None) -> list[PoolRow]:
    """The pool of `runs` (run files, or Runs) and `golden` (a golden.jsonl, or its items); with `output`, written
    as pool.tsv with its manifest, which names the files read (a Run's own file too) as inputs. With `corpus`, a run's
    rows of chunks it does not list are left out, with a warning (doclevel.listed_only)."""
    items = read_golden(golden) if isinstance(golden, (str, os.PathLike)) else golden
    mapping = corpus_documents(corpus) if corpus is not None else None

    def cut(run: Run) -> Run:  # each run cut as it is read, one whole run in memory at a time (8 of 10M rows took 4.9 GB)
        return pooled_rows(run if mapping is None else listed_only(run, mapping, warn), depth)

    loaded = [cut(read_run(r) if isinstance(r, (str, os.PathLike)) else r) for r in runs]
    rows = pool(items, loaded, depth, warn)
    if output is not None:
        files = [r.source for r in loaded if r.source is not None]
        with outputs_with_manifests([output]) as staged:
            count = write_pool(rows, staged[output])
            write_manifest(output, inputs=[*([golden] if isinstance(golden, (str, os.PathLike)) else []), *files,
                                           *([corpus] if corpus is not None else [])],
                           params={"depth": depth, "runs": [str(r.source) if r.source is not None else r.name for r in loaded]},
                           rows=count, staged=staged)
    return rows
