"""`semrel.evaluate`: the Python API's evaluation, in the style of ranx.

Qrels and runs come in any form a notebook holds them in: Qrels / Run objects, dicts
(`{query: {doc: grade}}`, `{query: {doc: score}}`), pandas DataFrames (columns q_id, doc_id,
score) or file paths. Measures are names (`"nDCG@10"`, `"ndcg_cut.10"`, `"nDCG@10,RR"`) or
Measure objects, parsed once here.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeGuard, Union, cast

from .. import records
from ..errors import UsageError, check_flags, check_kind, tell
from ..formats import read_qrels, read_run
from ..formats.files import display_name
from .doclevel import corpus_documents, require_overlap
from .files import (
    JUDGED_ENOUGH,
    RELATIONS,
    RankingDepths,
    coverage_warnings,
    derived_judgments,
    hole_depth,
    hole_warning,
    judged_share,
    relation_measures,
    relation_scorer,
    run_names,
    scored_run,
)
from .measures import Measure
from .metrics import Evaluation, Options, evaluate_gradings
from .zscores import read_zscores, standardise


class Qrels(records.Qrels):
    """semrel.Qrels: the columnar qrels every library function takes, plus `from_file` (the readers
    sit above the records they build, so reading a file is added here)."""

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> Qrels:
        """A TREC qrels file, a BEIR qrels .tsv or a golden.jsonl (its gold chunks); `.gz` is read too."""
        check_kind("path", path, (str, os.PathLike), "a file path", required=True)
        read = read_qrels(path)
        return cls(read.query_ids, read.doc_ids, read.relevance, read.source)


class Run(records.Run):
    """semrel.Run: the columnar run every library function takes, plus `from_file`."""

    @classmethod
    def from_file(cls, path: str | os.PathLike, name: str | None = None) -> Run:
        """A TREC run file (`.gz` too), named `name` or by its file's stem."""
        check_kind("path", path, (str, os.PathLike), "a file path", required=True)
        records.check_run_name(name, required=False)
        read = read_run(path, name)
        return cls(read.query_ids, read.doc_ids, read.scores, read.name, read.source, read.tag)


QrelsLike = Union[Qrels, Mapping, str, os.PathLike, Any]  # Any: a pandas DataFrame
RunLike = Union[Run, Mapping, str, os.PathLike, Any]
Measures = Union[str, Measure, Iterable[Union[str, Measure]], None]


def _is_frame(value: Any) -> bool:
    """A pandas DataFrame, recognised without importing pandas."""
    return type(value).__module__.partition(".")[0] == "pandas" and hasattr(value, "columns")


def _is_path(value: Any) -> TypeGuard[str | os.PathLike]:
    return isinstance(value, (str, os.PathLike))


def as_qrels(qrels: QrelsLike, name: str = "qrels") -> records.Qrels:
    """Qrels from a Qrels, a `{query: {doc: grade}}` dict, a DataFrame (q_id, doc_id, score) or a file path;
    a wrong kind is a TypeError naming the parameter `name`."""
    if isinstance(qrels, records.Qrels):
        return qrels
    if _is_path(qrels):
        return Qrels.from_file(qrels)
    if _is_frame(qrels):
        return Qrels.from_df(qrels)
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise TypeError(f"{name}: give a Qrels, a dict {{query: {{doc: grade}}}}, a pandas DataFrame or a file path, "
                    f"not {type(qrels).__name__}")


def as_run(run: RunLike, name: str | None = None, param: str = "runs") -> records.Run:
    """A Run from a Run, a `{query: {doc: score}}` dict, a DataFrame (q_id, doc_id, score) or a file path;
    named `name` where given (else the Run's own name, the file's stem, or 'run'); a wrong kind is a TypeError naming the
    parameter `param`."""
    if isinstance(run, records.Run):
        return run if name is None or name == run.name else dataclasses.replace(run, name=name)
    if _is_path(run):
        return Run.from_file(run, name)
    if _is_frame(run):
        return Run.from_df(run, name=name or "run")
    if isinstance(run, Mapping):
        return Run.from_dict(run, name or "run")
    raise TypeError(f"{param}: give a Run, a dict {{query: {{doc: score}}}}, a pandas DataFrame or a file path, "
                    f"not {type(run).__name__}")


def _is_one_run_dict(runs: Mapping) -> bool:
    """{query: {doc: score}} (one run) rather than {name: run} (several)."""
    first = next(iter(runs.values()), None)
    if isinstance(first, Mapping):
        inner = next(iter(first.values()), None)
        return not isinstance(inner, Mapping)
    return not (isinstance(first, records.Run) or _is_path(first) or _is_frame(first))


def as_runs(runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike]) -> tuple[list[str], Iterator[records.Run], bool]:
    """(run names, the runs, whether several were given). One run: a Run, a run dict, a DataFrame or a
    path. Several: a list, tuple or iterator of those, or a dict {name: run}. Files are read one at a time, as
    the iterator reaches them; names must differ (files are named by stem, with their folder where
    two stems are the same)."""
    if isinstance(runs, Mapping) and not _is_one_run_dict(runs):
        names = [str(k) for k in runs]
        given: list[Any] = list(runs.values())
        several = True
    elif isinstance(runs, (list, tuple, Iterator)) and not isinstance(runs, io.IOBase):  # a generator of runs too, as the type says
        given = list(runs)
        paths = [r for r in given if _is_path(r)]
        stems = iter(run_names(paths))
        names = [next(stems) if _is_path(r) else r.name if isinstance(r, records.Run) else "run" for r in given]
        several = True
    else:
        given, several = [runs], False
    if not several:
        return [], (as_run(r) for r in given), False
    if not given:  # nothing would be scored, and an empty result looks like one
        raise UsageError("runs: none given; give a run, a list of runs or {name: run}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"runs: two runs are named {repeated[0]!r}; give a dict {{name: run}} or name each Run")
    return names, (as_run(r, n) for r, n in zip(given, names)), several


def evaluate_runs(qrels: QrelsLike, runs, measures: Measures = None, rel_level: int = 1, stacklevel: int = 1, *,
                  relation: str = "qrels", doc_level: bool = False, offer_doc_level: bool = False, corpus: str | os.PathLike | None = None,
                  zscores: str | os.PathLike | None = None, **options: Any) -> tuple[list[Evaluation], bool]:
    """(one Evaluation per run, whether several runs were given). Queries on one side only, cutoffs past every
    run's deepest ranking, runs whose top a file of derived qrels leaves unjudged and a run's chunks `corpus` does not
    list are reported as Python warnings attributed to the code `stacklevel` frames up (1: the caller of this function).
    `relation`, `doc_level`, `corpus`, `zscores` as in `evaluate`; `offer_doc_level`: the caller has `doc_level`
    (evaluate; compare has not), told of to chunk runs scored against document qrels;
    `options`: complete, judged_only, depth, num_docs (trec_eval's -c, -J, -M, -N)."""
    plain = " or ".join(name for name, given in (("doc_level=True", doc_level), ("corpus=", corpus is not None)) if given)
    chosen = relation_measures(relation, measures, None, plain, "zscores=" if zscores is not None else "", "relation={!r}")
    settings = Options(rel_level, **options)
    messages: list[str] = []
    if relation != "qrels":  # judgment groups or preferences, read from their file: its own format
        check_kind("qrels", qrels, (str, os.PathLike), f"a file path (relation={relation!r} reads its own format)", required=True)
        score = relation_scorer(cast("str | os.PathLike", qrels), relation)
        _, loaded, several = as_runs(runs)
        results = [score(run, chosen, settings) for run in loaded]
        messages = coverage_warnings([(r, f"run {r.run_name!r}") for r in results], "the qrels")
        tell(messages, None, stacklevel + 1)
        return results, several
    table = read_zscores(zscores) if zscores is not None else None  # a bad file is said before any run is read
    judged = as_qrels(qrels)
    mapping = corpus_documents(corpus) if corpus is not None else None
    _, given, several = as_runs(runs)
    loaded = (scored_run(run, mapping, judged, doc_level, messages.append) for run in given)
    results = []
    depths = RankingDepths()
    derived_from = derived_judgments(qrels) if _is_path(qrels) and not doc_level else None
    top = hole_depth(chosen)
    holes: list[tuple[str, float]] = []

    def check(run: records.Run, result: Evaluation) -> None:
        require_overlap(result, judged, run, "the qrels", f"run {result.run_name!r}", offer_doc_level and not doc_level)
        depths.add(run, f"run {result.run_name!r}")
        if derived_from is not None and (share := judged_share(judged, run, top)) < JUDGED_ENOUGH:
            holes.append((f"run {result.run_name!r}", share))
        results.append(result)

    evaluate_gradings(judged, [judged.relevance], loaded, chosen, options=settings, checked=check)
    # R@100 over runs of 20 is recall at 20, which a reader takes for recall at 100: warned of as `semrel eval` does
    messages += [*coverage_warnings([(r, f"run {r.run_name!r}") for r in results], "the qrels"), *depths.warnings(chosen)]
    if holes and derived_from is not None:
        messages.append(hole_warning(holes, display_name(str(qrels)), derived_from, top))
    if table is not None:
        results = [standardise(r, table, messages.append) for r in results]
    tell(messages, None, stacklevel + 1)
    return results, several


def evaluate(qrels: QrelsLike, runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike], measures: Measures = None,
             rel_level: int = 1, per_query: bool = False, *, complete: bool = True, judged_only: bool = False,
             depth: int | None = None, num_docs: int = 0, relation: str = "qrels", doc_level: bool = False,
             corpus: str | os.PathLike | None = None, zscores: str | os.PathLike | None = None) -> dict[str, Any]:
    """Evaluate one run or several on the qrels with trec_eval's semantics (as `semrel eval`).

    qrels: a Qrels, `{query: {doc: grade}}`, a DataFrame (q_id, doc_id, score) or a file path.
    runs: one run (a Run, `{query: {doc: score}}`, a DataFrame, a path) or several (a list of those,
        or `{name: run}`).
    measures: names in any accepted spelling (`["nDCG@10", "RR"]`, `"nDCG@10,RR"`) or Measure
        objects; default `DEFAULT_MEASURES` (with `relation`, that relation's own set).
    rel_level: the lowest grade that counts as relevant (nDCG uses the graded rel regardless).
    per_query: values per query instead of the 'all' row (`semrel eval -n`).
    complete, judged_only, depth, num_docs: trec_eval's -c (default on), -J, -M and -N.
    relation: the qrels' format, trec_eval's -R: "qrels", or (qrels a file path) "qrels_jg" (judgment groups), "prefs"
        or "qrels_prefs" (preferences, scored by the prefs_* measures).
    doc_level: score a chunk run against document qrels (each document at its best chunk), as `--doc-level`.
    corpus: a corpus.jsonl: the chunks' doc_id for `doc_level`; its chunk ids the runs should name (others are warned of).
    zscores: a file of 'qid measure mean stddev' lines: each query's value standardised, as `-Z`.

    Returns, for one run, `{measure name: value}`: the mean over the qrels' queries (queries the run
    lacks score 0 and count; counts such as NumRet are summed), the figure `semrel eval` prints.
    With `per_query=True`, `{measure name: {query id: value}}` over every qrels query (so
    `pandas.DataFrame(result)` is one row per query, one column per measure). For several runs,
    the same keyed by run name first. Queries on one side only, and a cutoff deeper than every run ranks
    (R@100 over runs of 20 is recall at 20), are reported as Python warnings.
    For the Evaluation objects themselves (numpy arrays per measure) call
    `semrel.evaluation.metrics.evaluate`.
    """
    check_flags(per_query=per_query, complete=complete, judged_only=judged_only, doc_level=doc_level)
    check_kind("relation", relation, (str,), f"one of {', '.join(RELATIONS)}", required=True)
    check_kind("corpus", corpus, (str, os.PathLike), "a corpus.jsonl path")
    check_kind("zscores", zscores, (str, os.PathLike), "a file path")
    results, several = evaluate_runs(qrels, runs, measures, rel_level, stacklevel=2, relation=relation, doc_level=doc_level,
                                     offer_doc_level=True, corpus=corpus, zscores=zscores, complete=complete,
                                     judged_only=judged_only, depth=depth, num_docs=num_docs)

    def shaped(e: Evaluation) -> dict:
        return {m.name: e.per_query(m) for m in e.values} if per_query else e.aggregates()

    return {e.run_name: shaped(e) for e in results} if several else shaped(results[0])
