"""Golden sets written as files, each with its manifest: imports, their qrels, splits and deduplication."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..encoding.models import DEFAULT_MODEL
from ..errors import UsageError, tell
from ..formats.corpus import golden_qrels, read_golden, write_corpus, write_golden
from ..formats.jsonl import write_jsonl
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..formats.trec import write_qrels
from ..progress import Steps, no_progress
from .importers import BUILDS_CORPUS, import_golden
from .neardup import dedup_report, deduplicated, near_duplicate_groups, split_groups
from .sources import Imported, ImportOptions

Path_ = str | os.PathLike


def import_golden_files(source: str, output: Path_, fmt: str = "auto", options: ImportOptions | None = None,
                        corpus_out: Path_ | None = None, qrels_out: Path_ | None = None) -> Imported:
    """Import `source` as golden.jsonl (and, for formats that hold the documents, corpus.jsonl; with
    `qrels_out`, the gold chunks as qrels): all of them and their manifests written as one unit, so
    an interrupt never leaves a golden set beside a corpus or qrels from another import."""
    options = options or ImportOptions()
    result = import_golden(source, fmt, options)
    if result.chunks is not None and not corpus_out:
        raise UsageError(f"--format {result.params['format']} builds the corpus too: give --corpus-out corpus.jsonl")
    if result.chunks is None and corpus_out:
        raise UsageError(f"--corpus-out only applies to {', '.join(BUILDS_CORPUS)} and trec with --docs; "
                         f"this source is {result.params['format']}")
    inputs = [source] + ([options.corpus] if options.corpus else [])
    params = {**result.params, **({"chunking": options.settings.describe()} if result.chunks is not None else {})}
    outputs = [o for o in (corpus_out if result.chunks is not None else None, qrels_out, output) if o]
    with outputs_with_manifests(outputs) as staged:
        if result.chunks is not None and corpus_out:
            write_manifest(corpus_out, inputs=inputs, params=params, rows=write_corpus(result.chunks, staged[corpus_out]),
                           staged=staged)
        write_manifest(output, inputs=inputs, params=params, rows=write_golden(result.items, staged[output]), staged=staged)
        if qrels_out:
            qrels = golden_qrels(result.items)
            write_qrels(qrels, staged[qrels_out])
            write_manifest(qrels_out, inputs=[output], params={"from": "golden set"}, rows=len(qrels), staged=staged)
    return result


def golden_qrels_file(golden: Path_, output: Path_) -> int:
    """The gold chunks of `golden` as TREC qrels in `output`; returns the number of judgments."""
    qrels = golden_qrels(read_golden(golden))
    with outputs_with_manifests([output]) as staged:
        write_qrels(qrels, staged[output])
        write_manifest(output, inputs=[golden], params={"from": "golden set"}, rows=len(qrels), staged=staged)
    return len(qrels)


@dataclass(frozen=True)
class Part:
    name: str
    path: Path
    queries: int


def _check_part_names(names: Sequence[str]) -> None:
    """Each part is written to output_dir/NAME.jsonl: a repeated name would write one part over another, an empty name or
    one starting with '.' a hidden file, and a path separator a file outside output_dir."""
    for k, name in enumerate(names):
        if not name or name.startswith(".") or "/" in name or os.sep in name:
            raise UsageError(f"part name {name!r} in names= is not a plain file name: give names that are not empty, "
                             f"do not start with '.' and hold no '/'")
        if name in names[:k]:
            raise UsageError(f"names= gives two parts the name {name!r}: give each part its own name")


def split_golden(golden: Path_, output_dir: Path_, targets: Sequence[int], names: Sequence[str], seed: int = 0,
                 threshold: float = 0.95, model: str | None = None, steps: Steps = no_progress) -> tuple[list[Part], int]:
    """Parts of `golden` written to `output_dir/NAME.jsonl` (near-duplicates kept together, the parts
    written as one unit) and the number of queries left in no part."""
    _check_part_names(names)
    items = read_golden(golden)
    found = near_duplicate_groups([i.query for i in items], threshold, model, steps)
    parts = split_groups(found.groups, targets, seed)
    params: dict[str, Any] = {"seed": seed, "targets": list(targets), "threshold": threshold, "model": model or DEFAULT_MODEL}
    written = [Part(name, Path(output_dir) / f"{name}.jsonl", len(part)) for name, part in zip(names, parts)]
    with outputs_with_manifests([p.path for p in written]) as staged:
        for each, part in zip(written, parts):
            write_golden([items[i] for i in part], staged[each.path])
            write_manifest(each.path, inputs=[golden], params={**params, "part": each.name}, rows=each.queries, staged=staged)
    return written, len(items) - sum(len(p) for p in parts)


def dedup_golden(golden: Path_, report: Path_, output: Path_ | None = None, threshold: float = 0.95, model: str | None = None,
                 steps: Steps = no_progress, warn: Callable[[str], None] | None = None,
                 ) -> tuple[list[dict[str, Any]], int | None]:
    """The near-duplicate groups of `golden` written to `report` (JSONL); with `output`, the golden set
    without the duplicates: the first of each group kept, with the gold chunk ids and reference answers
    of the others merged into it (see deduplicated), each merge that adds something told to `warn`
    (a Python warning without it). Returns (groups, queries kept or None)."""
    items = read_golden(golden)
    found = near_duplicate_groups([i.query for i in items], threshold, model, steps)
    rows = dedup_report(items, found)
    params = {"threshold": threshold, "model": model or DEFAULT_MODEL}
    kept = None
    notes: list[str] = []
    with outputs_with_manifests([report, *([output] if output is not None else [])]) as staged:
        write_jsonl(rows, staged[report])
        write_manifest(report, inputs=[golden], params=params, rows=len(rows), staged=staged)
        if output is not None:
            kept = write_golden(deduplicated(items, found, notes), staged[output])
            write_manifest(output, inputs=[golden], params=params, rows=kept, staged=staged)
    tell(notes, warn)
    return rows, kept
