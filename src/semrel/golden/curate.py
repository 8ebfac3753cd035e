"""Golden sets imported, split and deduplicated, and written as files (each with its manifest) where an output is given."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..encoding.models import model_params
from ..errors import UsageError, tell
from ..formats.corpus import golden_qrels, read_golden, require_known_chunks, unique_chunks, write_corpus, write_golden
from ..formats.files import STDIO, check_not_input, display_name
from ..formats.jsonl import write_jsonl
from ..formats.manifest import outputs_with_manifests, read_params, write_manifest
from ..formats.shards import split_files
from ..formats.trec import write_qrels
from ..progress import Steps, no_progress
from ..records import GoldenItem
from ..terminal import quantity
from .importers import BUILDS_CORPUS, CONTEXT_FORMATS, FORMAT_NAMES, ONE_CHUNK_EACH, detect_format, import_golden
from .neardup import NEAR_DUPLICATE, dedup_report, deduplicated, joined_by, near_duplicate_groups, split_groups, split_targets
from .sources import Imported, ImportOptions

Path_ = str | os.PathLike


def import_golden_files(source: str, output: Path_ | None, fmt: str = "auto", options: ImportOptions | None = None,
                        corpus_out: Path_ | None = None, qrels_out: Path_ | None = None, steps: Steps = no_progress,
                        shards: Sequence[str] | None = None) -> Imported:
    """Import `source` as golden.jsonl (and, for formats that hold the documents, corpus.jsonl; with
    `qrels_out`, the gold chunks as qrels): all of them and their manifests written as one unit, so
    an interrupt never leaves a golden set beside a corpus or qrels from another import. Without
    `output` the golden set is only returned. `shards`: split_files(source, options.split) where the caller has them:
    a folder of shards is listed once per import."""
    options = options or ImportOptions()
    shards = split_files(source, options.split) if shards is None else shards
    result = import_golden(source, fmt, options, steps, shards)
    if result.chunks is not None and corpus_out is None:
        if result.params["format"] in CONTEXT_FORMATS:
            raise UsageError(f"{FORMAT_NAMES[result.params['format']]} needs corpus= (the chunks of its documents, which its reference "
                             "contexts are matched to) or corpus_out='corpus.jsonl' (its reference contexts written as the corpus, a "
                             "chunk each)")
        raise UsageError(f"format={result.params['format']!r} builds the corpus too: give corpus_out='corpus.jsonl'")
    if result.chunks is None and corpus_out is not None:
        if result.params["format"] in CONTEXT_FORMATS:
            raise UsageError("give corpus= (the reference contexts matched to its chunks) or corpus_out= (the contexts written as "
                             "the corpus), not both")
        testsets = f"{', '.join(CONTEXT_FORMATS[:-1])} and {CONTEXT_FORMATS[-1]}"
        raise UsageError(f"corpus_out= only applies to {', '.join(BUILDS_CORPUS)}, to {testsets} without corpus=, and to trec "
                         f"with docs=; this source is {result.params['format']}")
    # every shard of a split; trec's qrels and documents too
    inputs = [*shards, *(path for path in (options.corpus, options.qrels) if path), *options.docs]
    params = {**result.params, **({"chunking": options.settings.describe()} if result.chunks is not None else {})}
    # an empty name is refused (files_as_one), not taken for no output
    outputs = [o for o in (corpus_out if result.chunks is not None else None, qrels_out, output) if o is not None]
    with outputs_with_manifests(outputs) as staged:
        if result.chunks is not None and corpus_out is not None:
            write_manifest(corpus_out, inputs=inputs, params=params, rows=write_corpus(result.chunks, staged[corpus_out]),
                           staged=staged)
        if output is not None:
            write_manifest(output, inputs=inputs, params=params, rows=write_golden(result.items, staged[output]), staged=staged)
        if qrels_out is not None:
            qrels = golden_qrels(result.items)
            write_qrels(qrels, staged[qrels_out])
            made_from = [output] if output is not None and str(output) != STDIO else inputs  # a golden set on stdout is no file to name
            write_manifest(qrels_out, inputs=made_from, params={"from": "golden set"}, rows=len(qrels), staged=staged, holds="qrels")
    return result


def check_format_options(source: str, fmt: str, split: str | None, shards: Sequence[str], given: tuple[bool, bool],
                         names: tuple[str, str, str] = ("split=", "threshold=", "corpus=")) -> None:
    """A split and a threshold given (`given`: whether each was) for a source they do not apply to: both were ignored in
    silence. `shards`: split_files(source, split); `names`: the split, threshold and corpus options as the caller's user
    gives them."""
    if not any(given):
        return
    resolved = detect_format(source, split, shards) if fmt == "auto" else fmt
    if given[0] and resolved != "beir" and not (Path(source).is_dir() and tuple(shards) != (source,)):
        raise UsageError(f"{names[0]} names a BEIR folder's qrels split, or the split to read of a folder of a Hugging Face set's "
                         f"shards; it does not apply to this {resolved} source")
    if given[1] and resolved not in CONTEXT_FORMATS:
        raise UsageError(f"{names[1]} matches the reference contexts of {', '.join(CONTEXT_FORMATS)} testsets to {names[2]} chunks; "
                         f"it does not apply to this {resolved} source")


def import_warnings(result: Imported, options: ImportOptions) -> list[str]:
    """What an import warns of: a chunk size where it does not apply, then each count worth a warning. An import that
    writes no corpus (CSV, JSONL, BEIR, a testset matched to corpus=) cuts nothing, and took size= without a word."""
    fmt, settings = result.params["format"], options.settings
    given = "size=" if settings.size else "whole=" if settings.whole else None
    notes = []
    if given and result.chunks is None:
        notes.append(f"{given} does not apply to {fmt}: this import writes no corpus, so it cuts no documents (`semrel corpus chunk` does)")
    elif given and fmt in ONE_CHUNK_EACH:
        notes.append(f"{given} does not apply to {fmt}: each {ONE_CHUNK_EACH[fmt][1]} is one chunk")
    return notes + [f"{what}: {n}" for what, n in sorted(result.counts.items())]


def golden_qrels_file(golden: Path_, output: Path_) -> int:
    """The gold chunks of `golden` as TREC qrels in `output`; returns the number of judgments."""
    qrels = golden_qrels(read_golden(golden))
    with outputs_with_manifests([output]) as staged:
        write_qrels(qrels, staged[output])
        write_manifest(output, inputs=[golden], params={"from": "golden set"}, rows=len(qrels), staged=staged, holds="qrels")
    return len(qrels)


def part_path(output_dir: Path_, name: str) -> Path:
    return Path(output_dir) / f"{name}.jsonl"


WINDOWS_DEVICES = {"con", "prn", "aux", "nul", *(f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10))}


def _check_part_names(names: Sequence[str]) -> None:
    """Each part is written to output_dir/NAME.jsonl: a repeated name would write one part over another (so would two
    names apart only in case, on macOS's and Windows' file systems), an empty name or one starting with '.' a hidden
    file, a path separator a file outside output_dir, and a name ending in .jsonl NAME.jsonl.jsonl. A name Windows
    gives no file is refused on every system, so a split is made, and read, alike everywhere: there 'a:b.jsonl' is
    the stream 'b.jsonl' of a file 'a', and 'con.jsonl' the console."""
    for k, name in enumerate(names):
        if not name or name.startswith(".") or "/" in name or os.sep in name:
            raise UsageError(f"part name {name!r} in names= is not a plain file name: give names that are not empty, "
                             "do not start with '.' and hold no '/'")
        if any(ch in '<>:"\\|?*' or ord(ch) < 32 for ch in name) or name.endswith((".", " ")) \
                or name.split(".")[0].rstrip(" ").lower() in WINDOWS_DEVICES:
            raise UsageError(f"part name {name!r} in names= is no file name on Windows (it holds one of <>:\"\\|?* or a "
                             "control character, ends in '.' or ' ', or is a device's name such as CON or NUL): give another")
        if name.lower().endswith(".jsonl"):
            raise UsageError(f"part name {name!r} in names= ends in .jsonl, which the part's file name gets anyway "
                             f"({name}.jsonl): give {name[:-len('.jsonl')]!r}")
        same = next((other for other in names[:k] if other.casefold() == name.casefold()), None)
        if same is not None:
            case = "" if same == name else f" (as {same!r}: one file where case is not told apart, as on macOS and Windows)"
            raise UsageError(f"names= gives two parts the name {name!r}{case}: give each part its own name")


def split_plan(total: int, ratio: Sequence[float] | None = None, sizes: Sequence[int] | None = None,
               names: Sequence[str] | None = None) -> tuple[list[int], list[str]]:
    """The query count and name of each part of `total` queries: `sizes`, or `ratio` (default 0.8; a last
    ratio left out is the rest), the queries `sizes` leave over one more part, named last in `names` or
    'rest'; default names train,test or train,dev,test, else part1,... (and rest)."""
    if ratio and sizes:
        raise UsageError("give ratio= or sizes=, not both")
    targets = split_targets(total, ratio, sizes)
    rest = total - sum(targets)
    given = list(names) if names else None
    if rest and given is not None and len(given) == len(targets):  # the queries sizes= leave over are a part too
        if "rest" in given:
            raise UsageError("names= has no name for the queries sizes= leave over, and 'rest', their default, "
                             "is taken: add a last name for them")
        given.append("rest")
    if rest:
        targets.append(rest)
    labels = given or (["train", "test"] if len(targets) == 2 and not rest else
                       ["train", "dev", "test"] if len(targets) == 3 and not rest else
                       [f"part{k + 1}" for k in range(len(targets) - bool(rest))] + (["rest"] if rest else []))
    if len(labels) != len(targets):
        what = f" ({len(targets) - 1} sizes= and the rest)" if rest else ""
        raise UsageError(f"names= gives {len(labels)} names for {len(targets)} parts{what}")
    _check_part_names(labels)
    return targets, labels


def split_golden(items: Sequence[GoldenItem], source: Path_ | None, output_dir: Path_ | None, ratio: Sequence[float] | None = None,
                 sizes: Sequence[int] | None = None, names: Sequence[str] | None = None, seed: int = 0, threshold: float = NEAR_DUPLICATE,
                 model: str | None = None, steps: Steps = no_progress,
                 warn: Callable[[str], None] | None = None, together: str | None = None,
                 corpus: Path_ | None = None) -> dict[str, list[GoldenItem]]:
    """The parts of a golden set (see split_plan), near-duplicates kept together, by name (`together`: also the queries
    sharing a gold chunk, "gold", or a document of their gold chunks, "documents", read from `corpus`); with `output_dir`,
    each written to output_dir/NAME.jsonl with its manifest, the parts as one unit (none may be `source`:
    checked before the work). Queries left in no part are told to `warn` (a Python warning without it)."""
    targets, labels = split_plan(len(items), ratio, sizes, names)
    keys = _shared(items, together, corpus, source)
    if output_dir is not None:
        if not str(output_dir):  # said as such: the parts went to the current folder
            raise UsageError("the parts' folder path is empty: give a folder name (the current one is '.')")
        for label in labels:
            check_not_input(part_path(output_dir, label))
    none = [label for label, target in zip(labels, targets) if not target]
    if none:  # an empty golden set, written with exit 0, that nothing downstream can use
        raise UsageError(f"{', '.join(none)} would get none of the {len(items)} queries (targets {', '.join(map(str, targets))}): "
                         "give larger ratios or sizes (nothing was written)")
    found = near_duplicate_groups([i.query for i in items], threshold, model, steps)
    groups = found.groups if keys is None else joined_by(found.groups, keys)
    split = split_groups(groups, targets, seed, [i.query_id for i in items])
    parts = {label: [items[i] for i in part] for label, part in zip(labels, split)}
    if output_dir is not None:
        params: dict[str, Any] = {"seed": seed, "targets": list(targets), "threshold": threshold, "together": together,
                                  **model_params(model)}
        inputs = [path for path in (source, corpus) if path is not None]
        with outputs_with_manifests([part_path(output_dir, label) for label in parts]) as staged:
            for label, part in parts.items():
                path = part_path(output_dir, label)
                write_golden(part, staged[path])
                write_manifest(path, inputs=inputs, params={**params, "part": label},
                               rows=len(part), staged=staged)
    left = len(items) - sum(len(p) for p in parts.values())
    empty = [label for label, part in parts.items() if not part]  # written as an empty golden set, which nothing can use
    tell([*([f"{quantity(left, 'query', 'are')} in no part"] if left else []),
          *([f"{', '.join(empty)} got no query of the {len(items)} (targets {', '.join(map(str, targets))}): give "
             "larger ratios or sizes"] if empty else []),
          *([] if empty else _missed_targets(parts, targets, max(map(len, groups)), threshold, together)),
          *(_earlier_parts(output_dir, labels) if output_dir is not None else [])], warn)
    return parts


def _missed_targets(parts: dict[str, list[GoldenItem]], targets: Sequence[int], largest: int, threshold: float,
                    together: str | None = None) -> list[str]:
    """The parts whose size is not the one asked for: a group of near-duplicates that fit in no part's room went whole to
    the part with most room (at threshold=0.7 COVID-QA's largest group held 363 queries, and test got 363 for 276). A part
    left empty is said on its own."""
    missed = [f"{label} {len(part):,} for {target:,}" for (label, part), target in zip(parts.items(), targets) if len(part) != target]
    if not missed:
        return []
    kept = "" if together is None else f" and queries sharing {TOGETHER[together]}"
    return [f"parts of other sizes than asked ({', '.join(missed)}): a group of near-duplicates{kept}, joined transitively (the "
            f"largest {quantity(largest, 'query')} at threshold={threshold}), fit in no part's room and went whole to the part "
            "with most; `semrel golden dedup` lists the near-duplicates"]


TOGETHER = {"gold": "a gold chunk", "documents": "a document of their gold chunks"}  # what `split --together` keeps in one part


def _shared(items: Sequence[GoldenItem], together: str | None, corpus: Path_ | None, source: Path_ | None) -> list[tuple[str, ...]] | None:
    """Per query, what it shares with the queries `together` keeps in its part (None: near-duplicates alone): a test query
    whose answer is in a chunk (or document) a train query points to measures what the train part already saw."""
    if together is not None and together not in TOGETHER:
        raise UsageError(f"together={together!r}: choose one of {', '.join(TOGETHER)}")
    if (together == "documents") != (corpus is not None):
        raise UsageError("together='documents' reads the documents of the gold chunks from corpus=: give both, or neither")
    if together == "gold":
        return [tuple(i.gold_chunk_ids) for i in items]
    if corpus is None:
        return None
    document = {c.id: c.doc_id for c in unique_chunks(corpus)}
    require_known_chunks(items, set(document), display_name(str(source or "golden set")))
    return [tuple({document[c] for c in i.gold_chunk_ids}) for i in items]


def _earlier_parts(output_dir: Path_, labels: Sequence[str]) -> list[str]:
    """Parts an earlier split wrote into `output_dir` under names this one does not use (dev.jsonl of a 0.8,0.1 split
    beside the train and test of a 0.8 one): they hold queries of these parts, and lay beside them in silence."""
    earlier = [str(path) for path in sorted(Path(output_dir).glob("*.jsonl")) if path.stem not in labels
               and {"part", "targets", "seed"} <= set(read_params(path) or {})]
    if not earlier:
        return []
    one = len(earlier) == 1
    return [f"{', '.join(earlier)} {'is a part' if one else 'are parts'} of an earlier split, not of this one, and "
            f"{'holds' if one else 'hold'} queries of these parts: delete {'it' if one else 'them'}, or split into an empty folder"]


@dataclass(frozen=True)
class Deduplicated:
    """A golden set without its near-duplicates: the first query of each group standing for the group (see
    deduplicated), the groups (the report's rows) and what each merge brought (`merges`)."""

    kept: list[GoldenItem]
    report: list[dict[str, Any]]
    merges: list[str]


def dedup_golden(items: Sequence[GoldenItem], source: Path_ | None, report: Path_ | None = None, output: Path_ | None = None,
                 threshold: float = NEAR_DUPLICATE, model: str | None = None, steps: Steps = no_progress) -> Deduplicated:
    """The near-duplicate groups of a golden set and the set without them: the first of each group kept,
    with the gold chunk ids and reference answers of the others merged into it (see deduplicated), each
    merge that adds something in `merges`. With `report`, the groups written there (JSONL), with `output`
    the deduplicated golden set, both with manifests, as one unit."""
    found = near_duplicate_groups([i.query for i in items], threshold, model, steps)
    merges: list[str] = []
    result = Deduplicated(deduplicated(items, found, merges), dedup_report(items, found), merges)
    params = {"threshold": threshold, **model_params(model)}
    inputs = [source] if source is not None else []
    with outputs_with_manifests([o for o in (report, output) if o is not None]) as staged:
        if report is not None:
            write_jsonl(result.report, staged[report])
            write_manifest(report, inputs=inputs, params=params, rows=len(result.report), staged=staged)
        if output is not None:
            write_manifest(output, inputs=inputs, params=params, rows=write_golden(result.kept, staged[output]), staged=staged)
    return result
