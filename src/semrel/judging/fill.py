"""Filling the holes of derived qrels: the unjudged chunks a run ranks in its top `depth`, judged on demand.

Derived qrels are judged only where the pool reached. A system that did not contribute to the pool
retrieves chunks nobody judged, and every measure counts them as non-relevant. `fill` judges those
holes with exactly the settings the qrels were derived with, read from the manifests: the model
(its fingerprint), layer, idf, windows, rescaling and precision of judgments.jsonl, and the label rule of the
qrels (judging.labels.relabel, so whatever rule the qrels record is the one applied). A hole is judged
with the rest of its query's pool (cached, so cheap), since the probability p is relative to the pool
and to whether the query has gold chunks; the labels of pairs judged before stay as they were. Settings that
differ, or a corpus or golden set other than the judgments were made from, are refused. The new
judgments are appended to judgments.jsonl (its manifest keeps the judge's command and inputs, and lists
each fill under `fills`), the embedding cache the judge used is reused where it is found (unless
`cache` names another folder, or False for none), and an interrupted fill resumes from `<judgments>.fill.partial`.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..encoding.engines import LocalEngine, resolve_device
from ..encoding.models import describe_model
from ..errors import Interrupted, SemrelError, UsageError, ValidationError, check_kind, check_list, check_warn, tell
from ..evaluation.doclevel import require_shared_queries
from ..evaluation.files import judged_share, run_names
from ..evaluation.measures import ranks_within
from ..evaluation.metrics import evaluate, query_codes, rank_order
from ..formats.corpus import iter_corpus, read_golden
from ..formats.files import (
    allow_rewrite,
    display_name,
    file_digest,
    files_as_one,
    guarded,
    manifest_path,
    prefix_matches,
    rewrite_lock,
    same_file,
)
from ..formats.judgments import read_judgment_columns, write_judgments
from ..formats.manifest import manifest_record, outputs_with_manifests, read_manifest, save_manifest, write_manifest
from ..formats.trec import read_run, read_trec_qrels, write_qrels
from ..interrupts import InterruptedAfterWriting
from ..progress import Steps, no_progress
from ..records import Judgment, Qrels, Run, one_array
from .bertscore import rescale
from .judge import JudgeOptions, judge_pairs
from .labels import NULL_SAMPLE, relabel

# judge settings that must agree between the qrels' manifest and judgments.jsonl's
SAME_SETTINGS = ("model_fingerprint", "layer", "idf", "rescale", "baseline", "windows.tokens", "windows.overlap")


@dataclass
class FillResult:
    qrels: Qrels  # the completed qrels: the given ones plus the holes, labelled
    holes: list[tuple[str, str]]  # (query, chunk) pairs judged by this fill
    added: Qrels  # the labels of the holes
    resumed: int = 0
    params: dict[str, Any] = field(default_factory=dict)  # what the manifests record of the fill
    judged_before: dict[str, float] = field(default_factory=dict)  # Judged@depth of each run over its queries (named as eval names it)
    judged_after: dict[str, float] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)  # the runs as read, for scoring them without reading them again

    @property
    def relevant(self) -> int:
        return int((self.added.relevance > 0).sum())


def _setting(params: Mapping[str, Any], dotted: str) -> Any:
    value: Any = params
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def judge_settings(qrels_path: str | os.PathLike, judgments_path: str | os.PathLike) -> tuple[dict, dict]:
    """(the qrels' label rule, the judge's settings), from their manifests; refused where either is
    missing or where the qrels were labelled from judgments made with other settings."""
    qrels_manifest = read_manifest(qrels_path)
    judged = read_manifest(judgments_path)
    if qrels_manifest is None or not isinstance(qrels_manifest.get("params"), dict):
        raise ValidationError(f"{display_name(str(qrels_path))} has no current manifest: the label rule to judge holes "
                              "with is unknown; fill the qrels `semrel label` wrote")
    if judged is None and (stale := read_manifest(judgments_path, current=False)) is not None:
        raise ValidationError(_changed(judgments_path, stale))
    if judged is None or not isinstance(judged.get("params"), dict) or "model" not in judged["params"]:
        raise ValidationError(f"{display_name(str(judgments_path))} has no current manifest: the judge's settings are "
                              "unknown; fill judgments `semrel judge` wrote")
    rule, settings = qrels_manifest["params"], judged["params"]
    recorded = rule.get("judge")
    if isinstance(recorded, Mapping):
        for key in SAME_SETTINGS:
            if _setting(recorded, key) != _setting(settings, key):
                raise ValidationError(
                    f"{display_name(str(qrels_path))} was labelled from judgments made with {key}={_setting(recorded, key)!r}, "
                    f"{display_name(str(judgments_path))} has {key}={_setting(settings, key)!r}: holes judged now would not be "
                    "comparable; give the judgments the qrels were labelled from")
    return rule, {**settings, "inputs": judged.get("inputs", []), "written_as": judged.get("output")}


def _changed(path: str | os.PathLike, stale: Mapping[str, Any]) -> str:
    """Why judgments whose manifest describes other bytes are not filled: the settings it records may not be those of
    every row. Rows only appended since (a fill killed between its two renames) are told apart from an edit, with the fix."""
    name, recorded = display_name(str(path)), stale.get("output_digest")
    lines, sha = (recorded.get("lines"), recorded.get("sha256")) if isinstance(recorded, Mapping) else (None, None)
    if isinstance(lines, int) and lines > 0 and isinstance(sha, str) and prefix_matches(path, lines, sha):
        return (f"{name} was appended to since its manifest was written (its first {lines} lines, those the manifest describes, are as "
                "they were: a fill killed before it updated the manifest, or rows added by hand): keep only those lines "
                f"(`head -n {lines}`) and run the fill again (it judges the rest again)")
    return (f"{name} changed since its manifest was written (edited, or written by another tool): the judge's settings it records "
            "may not be those of its rows; restore it, or judge the pool again")


def _unchecked(recorded: Sequence[Mapping[str, Any]], given: Sequence[tuple[str | os.PathLike, str]], judgments: str) -> list[str]:
    """The corpus and golden set must be those the judgments were made from (chunk texts, idf, answers):
    one whose sha256 is none the judge's manifest records is refused. Returns the files that could not
    be checked because the manifest records no sha256 at all (judged from records, or rewritten by a fill
    before semrel kept the judge's inputs): those judgments are still sound, so the caller says so
    instead of refusing them."""
    known = [r.get("sha256") for r in recorded if r.get("sha256")]
    files = [(path, what) for path, what in given if os.path.isfile(path)]
    if not known:
        return [str(path) for path, _ in files]
    for path, what in files:
        if file_digest(path).get("sha256") not in known:
            raise ValidationError(f"{display_name(str(path))} is not the {what} {display_name(judgments)} was judged from "
                                  f"(its sha256 is none of the inputs its manifest records); judge holes against the same {what}")
    return []


def holes(qrels: Qrels, runs: Iterable[Run], depth: int) -> list[tuple[str, str]]:
    """(query, chunk) pairs in a run's top `depth` (trec_eval's ranking) for a query of the qrels that
    the qrels do not judge; each once, in the order found."""
    judged = set(zip(qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist()))
    queries = {q for q, _ in judged}
    found: dict[tuple[str, str], None] = {}
    for run in runs:
        order = rank_order(run)
        ranked_queries = run.query_ids.take(pa.array(order))
        _, codes, _ = query_codes(ranked_queries)
        top = pa.array(order[ranks_within(codes) < depth])  # only the top `depth` rows become Python strings
        for q, d in zip(run.query_ids.take(top).to_pylist(), run.doc_ids.take(top).to_pylist()):
            if q in queries and (q, d) not in judged:
                found[q, d] = None
    return list(found)


def _cache_folder(recorded: str | None, written_as: Any, judgments: str | os.PathLike) -> str | None:
    """The judge's cache folder, found from wherever the fill runs, else None (the user cache dir): a
    cache started anew where the fill runs would re-encode every text. A relative path was relative to
    the folder the judge ran in: the judgments file's folder now, less the folders the judge named it
    with (judgments copied with their cache keep finding it), else the current folder."""
    if not recorded:
        return None
    found = [recorded]
    if not os.path.isabs(recorded) and isinstance(written_as, str) and not os.path.isabs(written_as):
        judge_folder = os.path.relpath(recorded, os.path.dirname(written_as) or ".")
        found.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.fspath(judgments)), judge_folder)))
    return next((folder for folder in found if os.path.isdir(folder)), None)


def _options(settings: Mapping[str, Any], judgments: str | os.PathLike, cache: str | os.PathLike | bool | None = None) -> JudgeOptions:
    """The judge's options the judgments record; `cache` as fill's (a folder, or False) replaces the judge's cache."""
    windows = settings.get("windows") or {}
    recorded = settings.get("options") or {}
    judged_with = settings.get("cache")
    options = JudgeOptions(
        model=settings.get("model_folder") or settings.get("model"), layer=settings.get("layer"), idf=bool(settings.get("idf")),
        rescale="none",  # the judgments' own baseline is applied below, so holes are rescaled exactly as they were
        window=windows.get("tokens"), overlap=windows.get("overlap"),
        cache_dir=_cache_folder(str(Path(judged_with).parent) if judged_with else recorded.get("cache_dir"),  # its database file
                                settings.get("written_as"), judgments),
        use_cache=bool(judged_with) or bool(recorded.get("use_cache", True)),
        max_tokens=int(recorded.get("max_tokens", JudgeOptions.max_tokens)),
        null_sample=int((settings.get("null_sample") or {}).get("size", recorded.get("null_sample", NULL_SAMPLE))),
        seed=int(recorded.get("seed", JudgeOptions.seed)),
    )
    if cache in (None, True):
        return options
    return dataclasses.replace(options, cache_dir=None if cache is False else str(cache), use_cache=cache is not False)


def _engine(settings: Mapping[str, Any], judgments: str | os.PathLike) -> LocalEngine:
    """The model at the precision the judgments were made at: holes encoded at another (exact beside int8 moved
    scores by up to 0.08) would not be comparable, and the cache keeps each precision's vectors apart."""
    precision = settings.get("precision") or "exact"  # judgments before --precision were exact
    if precision == "fp16" and resolve_device("auto") != "cuda":
        raise ValidationError(f"{display_name(str(judgments))} was judged at precision fp16, which runs on a GPU only: "
                              "fill it where torch sees a CUDA device")
    return LocalEngine("cpu" if precision == "int8" else "auto", precision)  # int8 runs on the CPU only


@guarded
def fill(
    qrels: str | os.PathLike,
    runs: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    judgments: str | os.PathLike,
    corpus: str | os.PathLike,
    golden: str | os.PathLike,
    depth: int = 10,
    output: str | os.PathLike | None = None,
    cache: str | os.PathLike | bool | None = None,
    steps: Steps = no_progress,
    warn: Callable[[str], None] | None = None,
    judge: Callable[..., Any] = judge_pairs,
) -> FillResult:
    """Judge the holes of the runs' top `depth` in the qrels (the Python side of `semrel fill`; see the module docstring),
    append them to `judgments` (the judgments.jsonl the qrels were labelled from), label them with the qrels' rule and
    return the completed qrels (written to `output` with a manifest, where given). Nothing to fill: nothing is judged or
    written but `output`. All inputs are file paths (their manifests say how the qrels were made); `runs` one or a list.
    `cache`: the embedding cache folder, False for none, None (or True) for the judge's, found as `_cache_folder` says.
    A corpus and golden set the judgments' manifest cannot check (it records no sha256) go to `warn`; a Ctrl-C is an
    Interrupted saying what was kept."""
    check_warn(warn)
    for name, value in (("qrels", qrels), ("judgments", judgments), ("corpus", corpus), ("golden", golden)):
        check_kind(name, value, (str, os.PathLike), "a file path", required=True)
    check_kind("output", output, (str, os.PathLike), "a file path")
    check_kind("cache", cache, (str, os.PathLike, bool), "a folder, or False for no cache")
    check_kind("depth", depth, (numbers.Integral,), "a whole number of chunks, at least 1", required=True)
    given = [runs] if isinstance(runs, (str, os.PathLike)) else check_list("runs", runs, (str, os.PathLike),
                                                                            "a run file path or a list of them", "a run file path")
    if not given:
        raise UsageError("runs: none given; give the run files whose holes to fill")
    try:
        result = _fill(qrels, given, judgments, corpus, golden, depth, output, cache, steps, judge)
    except InterruptedAfterWriting as exc:
        if str(judgments) not in exc.written:
            raise  # the filled qrels are written in full, the last of the work: the message of the signal says so
        raise Interrupted(f"interrupted after {judgments} took the judged holes (new and complete), before the filled qrels: "
                          "run the same fill again (it judges nothing twice)") from None
    except KeyboardInterrupt:
        partial = f"{judgments}.fill.partial"
        kept = (f"judged holes are kept in {partial}; run the same fill again to resume" if os.path.exists(partial)
                else f"nothing to resume: holes judged before it, if any, are in {judgments}")
        raise Interrupted(f"interrupted; {kept}") from None
    if result.params["unchecked"]:
        tell([f"{judgments}: its manifest records no sha256 of the files it was judged from, so "
              f"{' and '.join(result.params['unchecked'])} could not be checked against them"], warn, stacklevel=3)  # past @guarded
    return result


def _fill(qrels_path: str | os.PathLike, runs: Sequence[str | os.PathLike], judgments_path: str | os.PathLike, corpus: str | os.PathLike,
          golden: str | os.PathLike, depth: int, output: str | os.PathLike | None, cache: str | os.PathLike | bool | None, steps: Steps,
          judge: Callable[..., Any]) -> FillResult:
    """fill's work, its arguments checked."""
    if depth < 1:
        raise UsageError(f"depth={depth}: must be at least 1")
    partial = f"{judgments_path}.fill.partial"
    if output is not None and same_file(output, partial):  # a later fill resumed from it, then removed it
        raise UsageError(f"{display_name(str(output))} is where a fill of {display_name(str(judgments_path))} keeps its checkpoint "
                         "(the next fill would take it for one and remove it): give the completed qrels another name")
    rule, settings = judge_settings(qrels_path, judgments_path)
    unchecked = _unchecked(settings["inputs"], [(corpus, "corpus"), (golden, "golden set")], str(judgments_path))
    qrels = read_trec_qrels(qrels_path)
    loaded = [read_run(p) for p in runs]
    measure = f"Judged@{depth}"
    evaluated = evaluate(qrels, loaded, [measure])  # before any hole is judged: it refuses a document twice in a run
    for run, result in zip(loaded, evaluated):
        require_shared_queries(result, run, display_name(str(qrels_path)), display_name(str(run.source)))
    wanted = holes(qrels, loaded, depth)
    read_as = file_digest(judgments_path)  # what the rewrite must still find there (another fill may append meanwhile)
    existing = read_judgment_columns(judgments_path)  # columns: as Judgment records a million rows took 2 GB
    asked = set(wanted)
    known = {pair: row for row, pair in enumerate(zip(existing.query_ids, existing.chunk_ids)) if pair in asked}
    already = existing.take([known[p] for p in wanted if p in known])  # judged before but not in these qrels: label, do not re-judge
    todo = [p for p in wanted if p not in known]
    fresh: list[Judgment] = []
    resumed = 0
    if todo:
        options = _options(settings, judgments_path, cache)
        recorded = settings.get("model_fingerprint")
        found = describe_model(options.model)  # before any work: reading the weights and judging would be wasted
        if recorded not in (None, found.fingerprint, found.stamped_fingerprint):  # judgments before 2026-12-02 hold the latter
            raise ValidationError(f"the model found now ({found.folder}) is not the one {display_name(str(judgments_path))} was judged "
                                  "with: its fingerprint differs (its files hold other bytes): judge with the model the judgments "
                                  "were made with, or judge the pool again")
        items = read_golden(golden)
        source = "fill:" + ",".join(r.name for r in loaded)
        affected = {q for q, _ in todo}
        context = [(q, c, tuple(sources.split(","))) for q, c, sources in zip(existing.query_ids, existing.chunk_ids, existing.sources)
                   if q in affected]
        result = judge(lambda: iter_corpus(corpus), items, [*context, *((q, c, (source,)) for q, c in todo)], options,
                       partial, steps, {"corpus": str(corpus), "golden": str(golden), "pool": f"the holes of {', '.join(map(str, runs))}"},
                       _engine(settings, judgments_path))
        new = set(todo)
        judged = [j for j in result.judgments if (j.query_id, j.chunk_id) in new]
        scores = np.array([[j.P, j.R, j.F] for j in judged], dtype=np.float64).reshape(-1, 3)
        baseline = settings.get("baseline")
        if settings.get("rescale", "none") != "none" and isinstance(baseline, Mapping):
            scores = rescale(scores, np.array([baseline[k] for k in "PRF"], dtype=np.float64))
        fresh = [dataclasses.replace(j, P=float(p), R=float(r), F=float(f), source=source) for j, (p, r, f) in zip(judged, scores)]
        resumed = result.resumed
        _append(judgments_path, len(existing), fresh, [qrels_path, *runs, corpus, golden],
                {"runs": [str(p) for p in runs], "depth": depth, "pairs": len(fresh), "cache_dir": options.cache_dir,
                 "use_cache": options.use_cache, "unchecked": unchecked}, partial, read_as, steps)
    added = _concat(relabel(already, rule), relabel(fresh, rule))
    completed = _concat(qrels, added)
    record = {"runs": [str(p) for p in runs], "depth": depth, "holes": len(wanted), "judged": len(fresh),
              "from_judgments": len(already), "relevant": int((added.relevance > 0).sum()), "judgments": str(judgments_path),
              "unchecked": unchecked}
    if output is not None:
        filled = [*(rule.get("filled") or []), record]
        with outputs_with_manifests([output]) as staged:
            write_qrels(completed, staged[output])
            write_manifest(output, inputs=[qrels_path, judgments_path, *runs], rows=len(completed),
                           params={**rule, "filled": filled}, staged=staged, holds="qrels")
    names = run_names(runs)
    before = [judged_share(qrels, run, depth) for run in loaded]  # over each run's own queries, as eval's hole warning
    after = [judged_share(completed, run, depth) for run in loaded]
    return FillResult(completed, wanted, added, resumed, record, dict(zip(names, before)), dict(zip(names, after)), loaded)


def _concat(qrels: Qrels, added: Qrels) -> Qrels:
    if not len(added):
        return qrels
    query_ids = pa.concat_arrays([one_array(qrels.query_ids), one_array(added.query_ids)])
    doc_ids = pa.concat_arrays([one_array(qrels.doc_ids), one_array(added.doc_ids)])
    return Qrels(query_ids, doc_ids, np.concatenate([qrels.relevance, added.relevance]).astype(np.int64), qrels.source)


def _append(path: str | os.PathLike, rows: int, fresh: list[Judgment], inputs: Sequence[str | os.PathLike],
            params: dict, partial: str, read_as: Mapping[str, Any], steps: Steps = no_progress) -> None:
    """judgments.jsonl (of `rows` rows) rewritten with the fresh rows after its lines, copied as they are. Its
    manifest stays the judge's (command, inputs with their sha256, params: what made the rows and what later fills
    are checked against), with `rows`, the digest and, under `fills`, this fill's own record (command, inputs hashed, versions, time,
    params) brought up to date. Both are written as one unit, so an interrupted fill loses no record;
    the fill's checkpoint `partial` goes with the renames. A file changed since it was read (`read_as`: a second
    fill of the same judgments finished meanwhile) is refused, not overwritten with the rows read before it; rewrite_lock,
    held from that check through the renames, makes a second fill in the same instant wait and then be refused."""
    target, manifest_file = str(path), manifest_path(path)
    manifest = read_manifest(path) or {}
    allow_rewrite(path)  # the one file a fill extends: every old row is kept, the new ones follow
    with rewrite_lock(target, steps), files_as_one([target, manifest_file], superseded=[partial]) as staged:
        write_judgments(fresh, staged[target], first=target)
        if file_digest(path) != read_as:
            raise SemrelError(f"{display_name(target)} changed while this fill ran (another fill or judge of it finished "
                              "meanwhile): nothing was appended, so none of its rows is lost; run the same fill again")
        record = manifest_record(target, inputs=inputs, params=params, rows=rows + len(fresh), staged=staged)
        del record["output"]
        save_manifest({**manifest, "rows": record.pop("rows"), "output_digest": record.pop("output_digest"),
                       "fills": [*(manifest.get("fills") or []), record]}, staged[manifest_file])
