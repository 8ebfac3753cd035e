"""Evaluating run files on a qrels file: the library call behind `semrel eval`."""

from __future__ import annotations

import dataclasses
import os
import shlex
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import pyarrow.compute as pc

from ..errors import SemrelError, UsageError
from ..formats import read_qrels, read_run
from ..formats.files import STDIO, display_name
from ..formats.manifest import read_manifest, recorded_path
from ..formats.trec import read_judgment_groups, read_preferences, run_name
from ..records import Qrels, Run
from ..terminal import agreeing, quantity
from .doclevel import CorpusMapping, corpus_documents, require_overlap, to_documents, warn_unlisted
from .groups import evaluate_groups
from .measures import Kind, Measure, parse_measures
from .metrics import Evaluation, Options, evaluate, evaluate_gradings, small_pages
from .prefs import evaluate_preferences


def run_names(paths: Sequence[str | os.PathLike]) -> list[str]:
    """File stems, with the parent folder added where two stems would be the same."""
    stems = [run_name(p) for p in paths]
    return [
        f"{Path(str(p)).parent.name}/{stem}" if stems.count(stem) > 1 and Path(str(p)).parent.name else stem
        for p, stem in zip(paths, stems)
    ]


def read_runs(paths: Sequence[str | os.PathLike]) -> list[Run]:
    """Run files read and named as every table names them (run_names): runs/a.run and x/a.run are 'runs/a' and 'x/a'."""
    return [read_run(path, name) for path, name in zip(paths, run_names(paths))]


def require_distinct_names(names: Sequence[str], paths: Sequence[str | os.PathLike] = ()) -> None:
    """Runs are told apart by name in every table: two with one name is a usage error (naming their `paths`, if files)."""
    repeated = sorted({n for n in names if list(names).count(n) > 1})
    if repeated:
        same = [p for p, n in zip(paths, names) if n == repeated[0]]
        files = [display_name(str(p)) for p in same]
        if len(same) > 1 and os.path.realpath(same[0]) == os.path.realpath(same[1]):
            raise UsageError(f"the run file {files[0]} is given twice; give each run once")
        which = f" ({' and '.join(files[:2])})" if files else ""
        raise UsageError(f"two runs are named {repeated[0]!r}{which}; give the run files distinct names")


def baseline_name(baseline: str | None, paths: Sequence[str | os.PathLike], names: Sequence[str] | None = None) -> str | None:
    """--baseline as a run's name (`bm25`, as the tables name it) or as one of the run files given (`runs/bm25.run`,
    as a shell completes it): the run's name; a usage error where it is neither."""
    names = list(run_names(paths) if names is None else names)
    if baseline is None or baseline in names:
        return baseline
    for path, name in zip(paths, names):
        if str(path) == baseline or (str(path) != "-" and os.path.exists(baseline)
                                     and os.path.realpath(path) == os.path.realpath(baseline)):
            return name
    raise UsageError(f"--baseline {baseline!r} is none of the runs ({', '.join(names)}); name a run as the tables do, or give "
                     "one of the run files")


def evaluate_files(
    qrels_path: str | os.PathLike,
    run_paths: Sequence[str | os.PathLike],
    measures: Sequence[str | Measure] | str | None = None,
    rel_level: int = 1,
    warn: Callable[[str], None] | None = None,
    options: Options | None = None,
    doc_level: bool = False,
    offer_doc_level: bool = False,
    corpus: str | os.PathLike | CorpusMapping | None = None,
    qrels: Qrels | None = None,
    relation: str = "qrels",
    runs: Sequence[Run | None] | None = None,
    cutoffs: bool = False,
) -> list[Evaluation]:
    """Read the qrels once and each run in turn (one run in memory at a time); warn about
    queries missing on either side; refuse a run that shares no query or no document with the
    qrels. `options`: trec_eval's -c, -J, -M, -N (its rel_level wins). `doc_level`: score chunk
    runs against document qrels (doclevel.py), documents found in `corpus` or by the chunk ids; `offer_doc_level`: the caller has
    doc_level (`semrel eval`), told of to a chunk run scored against document qrels without it.
    `corpus` (corpus.jsonl, its ids read, or those ids already read: doclevel.Listed): `warn` also hears of each run's
    chunks it does not list, which count as not relevant (or, with `doc_level`, as the document their id names).
    `qrels`: already read (or completed) qrels, used instead of reading `qrels_path` (still the name shown);
    `runs`: the runs of `run_paths` already read, in that order (a fill read them; a report scoring a run from stdin on
    two qrels), used instead of reading them again; a None among them is read from its path.
    `relation`: the qrels file's format, as trec_eval's -R: qrels, qrels_jg (judgment groups), prefs or
    qrels_prefs (preference judgments); the last three are scored by their own measures, runs one at a time.
    `cutoffs`: also warn of cutoffs past a run's deepest ranking (cutoff_warnings), for a table of the values."""
    chosen = parse_measures(measures)
    names = run_names(run_paths)
    require_distinct_names(names, run_paths)  # r.run and r.trec were one 'r' in json, two columns 'r' in the table
    if relation != "qrels":
        return _evaluate_other_judgments(qrels_path, run_paths, names, relation, chosen, options or Options(rel_level), warn)
    with small_pages(), ThreadPoolExecutor(1) as pool:  # the first run is read while the qrels are read and indexed
        given = list(runs) if runs is not None else [None] * len(run_paths)
        first = pool.submit(read_run, run_paths[0], names[0]) if run_paths and given[0] is None else None
        qrels = read_qrels(qrels_path) if qrels is None else qrels
        require_judgments(qrels, display_name(qrels_path))
        mapping = corpus_documents(corpus) if isinstance(corpus, (str, os.PathLike)) else corpus

        def each_run() -> Iterator[Run]:
            for i, (path, name, read) in enumerate(zip(run_paths, names, given)):
                if read is not None:
                    run = dataclasses.replace(read, name=name)
                else:
                    run = first.result() if i == 0 and first is not None else read_run(path, name)
                yield scored_run(run, mapping, judged, doc_level, warn)

        judged = qrels  # not None, for check
        results: list[Evaluation] = []
        depths = RankingDepths()
        derived_from = derived_judgments(qrels_path) if warn is not None and not doc_level else None
        top = hole_depth(chosen)
        holes: list[tuple[str, float]] = []

        def check(run: Run, result: Evaluation) -> None:
            """Each run against its own ids (require_overlap), while it is in memory."""
            path = str(run_paths[len(results)])
            require_overlap(result, judged, run, display_name(str(qrels_path)), display_name(path),
                            offer_doc_level and not doc_level)  # no hint to give --doc-level where it is given
            if cutoffs:
                depths.add(run, display_name(path))
            if derived_from is not None:
                share = judged_share(judged, run, top)
                if share < JUDGED_ENOUGH:
                    holes.append((display_name(path), share))
            results.append(result)

        evaluate_gradings(qrels, [qrels.relevance], each_run(), chosen, options=options or Options(rel_level), checked=check)
    _say_coverage(results, run_paths, qrels_path, warn)
    if holes and warn is not None and derived_from is not None:
        warn(hole_warning(holes, display_name(str(qrels_path)), derived_from, top, run_paths))
    if warn is not None and cutoffs:
        for message in depths.warnings(chosen):
            warn(message)
    return results


HOLE_DEPTH, JUDGED_ENOUGH = 10, 0.9  # a run of derived qrels with less of its top 10 judged (Judged@10) is said to have holes


def hole_depth(measures: Sequence[Measure]) -> int:
    """How deep holes matter: HOLE_DEPTH, or the deepest cutoff where every measure has one (P@5 and nDCG@5 of a depth-5
    pool see no hole at rank 8)."""
    scored = [m for m in measures if m.kind is not Kind.TEXT]
    cutoffs = [m.cutoff for m in scored if m.cutoff is not None]
    return min(HOLE_DEPTH, max(cutoffs)) if cutoffs and len(cutoffs) == len(scored) else HOLE_DEPTH


def hole_warning(holes: Sequence[tuple[str, float]], qrels_name: str, derived_from: str, top: int,
                 runs: Sequence[str | os.PathLike] = ()) -> str:
    """Runs (name, Judged@top) whose top the derived qrels judge too little of, and how to fill it: the command
    with the qrels, `runs` (the run files scored, where there are files) and the judge's corpus and golden set, to paste."""
    shares = ", ".join(f"{name} {share:.0%}" for name, share in holes)
    corpus, golden = judged_from(derived_from)
    files = " ".join(shlex.quote(str(p)) for p in runs) if runs and STDIO not in map(str, runs) else "RUNS"
    command = (f"semrel eval {shlex.quote(qrels_name)} {files} --fill-judgments {shlex.quote(derived_from)} "
               f"--corpus {shlex.quote(corpus) if corpus else 'CORPUS'} --golden {shlex.quote(golden) if golden else 'GOLDEN'}")
    return (f"{shares}: the share of {'its' if len(holes) == 1 else 'each run’s'} top {top} chunks that {qrels_name} judges; "
            "derived labels judge only the pool they were made from, and a chunk they do not judge counts as not relevant: "
            f"judge those first with `{command}` (docs/eval.md, 'Filling holes')")


def derived_judgments(qrels_path: str | os.PathLike) -> str | None:
    """The judgments.jsonl that `semrel label` derived these qrels from (its manifest's rule and first input), else None:
    gold qrels leave unjudged documents not relevant by design (as TREC's pools do), derived ones by accident."""
    manifest = read_manifest(qrels_path) or {}
    params, inputs = manifest.get("params"), manifest.get("inputs")
    at = 1 if isinstance(params, dict) and "filled" in params else 0  # `semrel fill`'s qrels: [qrels, judgments, runs...]
    if not isinstance(params, dict) or "rule" not in params or not isinstance(inputs, list) or len(inputs) <= at:
        return None
    path = inputs[at].get("path") if isinstance(inputs[at], dict) else None
    return recorded_path(manifest, path) if isinstance(path, str) else None


def judged_from(judgments: str) -> tuple[str | None, str | None]:
    """(corpus, golden set) that `semrel judge` made `judgments` from, where its manifest tells them apart (corpus,
    golden and pool files, in that order: with fewer, records stood for one of them) and they are found; else None."""
    manifest = read_manifest(judgments) or {}
    inputs = manifest.get("inputs")
    if not isinstance(inputs, list) or len(inputs) != 3 or not all(isinstance(i, dict) for i in inputs):
        return None, None
    found = [recorded_path(manifest, path) if isinstance(path := i.get("path"), str) else None for i in inputs[:2]]
    corpus, golden = (path if path is not None and os.path.isfile(path) else None for path in found)
    return corpus, golden


def judged_share(qrels: Qrels, run: Run, depth: int = HOLE_DEPTH) -> float:
    """Judged@depth of the run over the queries it has: how much of its top the qrels judge."""
    measure = f"Judged@{depth}"
    return float(evaluate(qrels, run, [measure], complete=False)[0].aggregate(measure))  # the 'all' row of its queries


class RankingDepths:
    """What cutoff_warnings needs of the runs seen, from one count of each run's documents per query: the most any run ranks
    for a query (`deepest`), and the depth each run that was cut was cut at (`cut`, by the name a warning gives it: most of
    its queries rank just that many documents, as a reranked top 20 does; a BM25 run's rankings end where its matches do)."""

    def __init__(self) -> None:
        self.deepest = 0
        self.cut: dict[str, int] = {}

    def add(self, run: Run, name: str) -> None:
        """Count `run` (while it is in memory: a generator of runs keeps one at a time)."""
        counts = pc.value_counts(run.query_ids).field("counts").to_numpy()
        if len(counts):
            most = int(counts.max())
            self.deepest = max(self.deepest, most)
            if (counts == most).mean() > 0.5:
                self.cut[name] = most

    def warnings(self, measures: Sequence[Measure]) -> list[str]:
        return cutoff_warnings(measures, self.deepest, self.cut)


def cutoff_warnings(measures: Sequence[Measure], deepest: int, cut: Mapping[str, int] = {}) -> list[str]:
    """Cutoffs past every run's deepest ranking: R@100 over runs of 20 is recall at 20, by trec_eval's semantics too,
    which a reader of the table takes for recall at 100. And past the depth a run was cut at (`cut`: RankingDepths.cut)
    where others rank deeper: a reranked top 20 beside first stages of 100 lost
    R@100 'significantly' (COVID-QA, lift and report), having only dropped the tail."""
    beyond = [m.name for m in measures if m.cutoff is not None and deepest and m.cutoff > deepest]
    notes = []
    if beyond:
        named = ", ".join(beyond[:3]) + (f" and {len(beyond) - 3} more" if len(beyond) > 3 else "")
        notes.append(f"{named}: no run ranks more than {deepest} documents for a query, so "
                     f"{'these count' if len(beyond) > 1 else 'it counts'} the top {deepest} (as trec_eval does); retrieve deeper (-k), "
                     "unless the runs hold all their retriever found (BM25 ranks only the chunks sharing a word with the query), or ask "
                     f"for a cutoff of {deepest} or less")
    cutoffs = [m for m in measures if m.cutoff is not None and any(d < min(m.cutoff, deepest) for d in cut.values())]
    if cutoffs:
        reach = min(max(m.cutoff or 0 for m in cutoffs), deepest)
        short = {name: d for name, d in cut.items() if d < reach}
        named = ", ".join(m.name for m in cutoffs[:3]) + (f" and {len(cutoffs) - 3} more" if len(cutoffs) > 3 else "")
        notes.append(f"{named}: {', '.join(f'{name} ranks at most {d}' for name, d in short.items())} documents for a query, other runs "
                     f"up to {deepest}, so {'these count' if len(short) > 1 else 'it counts'} fewer documents there and "
                     f"{'score' if len(short) > 1 else 'scores'} lower for that alone (a reranked run holds only the top it reranked): "
                     f"compare them at a cutoff of {min(short.values())} or less, or rank as deep")
    return notes


def shallow_cutoffs(measures: Sequence[str | Measure] | str | None, runs: Sequence[Run]) -> list[str]:
    """cutoff_warnings for runs read already (estimate, lift), as evaluate_files(cutoffs=True) gives them for files."""
    depths = RankingDepths()
    for run in runs:
        depths.add(run, display_name(run.source) if run.source else f"run {run.name!r}")
    return depths.warnings(parse_measures(measures))


RELATIONS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")  # trec_eval -R
OWN_MEASURES = {"qrels_jg": "qrels_jg", "prefs": "all_prefs", "qrels_prefs": "all_prefs"}  # what each scores without -m


def relation_measures(relation: str, measures: str | Measure | Iterable[str | Measure] | None,
                      default: Sequence[str | Measure] | str | None = None,
                      plain: str = "", zscores: str = "", option: str = "-R {}") -> list[Measure]:
    """The measures to score judgments of `relation` (trec_eval -R) with: `measures`, else the relation's own set
    (OWN_MEASURES) or `default`. Refused, as usage errors: the prefs_* measures on plain qrels, and with the other relations,
    which score their own judgments, options of plain qrels (`plain`: those given, as the caller names them) and -Z
    (`zscores`: its name, where given). `option` names the relation as the caller spells it ('-R {}', 'relation={!r}')."""
    if relation not in RELATIONS:
        raise UsageError(f"{option.format(relation)}: give qrels, qrels_jg, prefs or qrels_prefs")
    if relation != "qrels" and plain:
        raise UsageError(f"{option.format(relation)} scores its own judgments; it does not go with {plain}")
    if relation != "qrels" and zscores:  # ignored in silence before
        raise UsageError(f"{zscores} standardises the values of {option.format('qrels')}; it does not go with {option.format(relation)}")
    chosen = parse_measures(measures if measures is not None else OWN_MEASURES.get(relation, default))
    if relation == "qrels" and any(m.entry.prefs for m in chosen):
        raise UsageError(f"the prefs_* measures score preference judgments: give {option.format('prefs')} or "
                         f"{option.format('qrels_prefs')}")
    return chosen


def relation_scorer(qrels_path: str | os.PathLike, relation: str) -> Callable[[Run, Sequence[Measure], Options], Evaluation]:
    """How a run is scored on the judgment groups (qrels_jg) or preference judgments (prefs, qrels_prefs) of
    `qrels_path`, read once."""
    if relation == "qrels_jg":
        return partial(evaluate_groups, read_judgment_groups(qrels_path))
    if relation in ("prefs", "qrels_prefs"):
        return partial(evaluate_preferences, read_preferences(qrels_path, from_qrels=relation == "qrels_prefs"))
    raise UsageError(f"relation={relation!r}: give qrels, qrels_jg, prefs or qrels_prefs")


def scored_run(run: Run, mapping: CorpusMapping | None, qrels: Qrels, doc_level: bool, warn: Callable[[str], None] | None) -> Run:
    """The run as it is scored: at document level (MaxP) with `doc_level`; else as it is, `warn` hearing of its chunks the
    corpus (`mapping`) does not list."""
    if not doc_level and mapping is not None and warn is not None:
        warn_unlisted(run, mapping, qrels, warn)
    return to_documents(run, mapping, warn) if doc_level else run


def _evaluate_other_judgments(qrels_path: str | os.PathLike, run_paths: Sequence[str | os.PathLike], names: list[str], relation: str,
                              measures: list[Measure], options: Options, warn: Callable[[str], None] | None) -> list[Evaluation]:
    """Runs scored on judgment groups (qrels_jg) or preference judgments (prefs, qrels_prefs)."""
    score = relation_scorer(qrels_path, relation)
    results = [score(read_run(path, name), measures, options) for path, name in zip(run_paths, names)]
    _say_coverage(results, run_paths, qrels_path, warn)
    return results


def require_judgments(qrels: Qrels, label: str) -> None:
    """Empty qrels score every run 0 everywhere: an error, not a table of zeros."""
    if not len(qrels):
        raise SemrelError(f"{label}: no judgments (the qrels are empty); every measure would be 0")


def _say_coverage(results: Sequence[Evaluation], run_paths: Sequence[str | os.PathLike], qrels_path: str | os.PathLike,
                  warn: Callable[[str], None] | None) -> None:
    if warn is not None:
        for message in coverage_warnings([(r, str(p)) for r, p in zip(results, run_paths)], str(qrels_path)):
            warn(message)


def coverage_warnings(results: Sequence[tuple[Evaluation, str]], qrels_label: str) -> list[str]:
    """Warnings about queries on one side only: in the qrels, not the run (scored 0), and in the run only (ignored),
    for each (result, run label). Runs that lack or add the same queries share one line: a golden set's unanswered
    queries, missing from every run, were said once per run."""
    missing: dict[tuple[tuple[str, ...], int, bool], list[str]] = {}
    ignored: dict[tuple[str, ...], list[str]] = {}
    for result, label in results:
        if result.missing_queries:
            missing.setdefault((tuple(result.missing_queries), len(result.query_ids), result.complete), []).append(label)
        if result.ignored_queries:
            ignored.setdefault(tuple(result.ignored_queries), []).append(label)
    messages = []
    for (queries, total, complete), labels in missing.items():
        fate = "they score 0" if complete else "they are left out of the 'all' row (--no-complete)"
        messages.append(f"{len(queries):,} of {quantity(total, 'query')} in {qrels_label} {agreeing(len(queries), 'have')} no results in "
                        f"{_listed(labels)}; {fate} "
                        f"(e.g. {queries[0]!r})")
    for queries, labels in ignored.items():
        are = agreeing(len(queries), "are")
        messages.append(f"{quantity(len(queries), 'query')} in {_listed(labels)} {are} not in {qrels_label} and {are} ignored "
                        f"(e.g. {queries[0]!r})")
    return messages


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
