"""`semrel.import_golden`, `semrel.split_golden` and `semrel.dedup_golden`: the Python side of `semrel golden
import`, `golden split` and `golden dedup`.

Thin over curate.py, which the commands call too: the same defaults, checks and messages, the same records
and files (with their manifests, written as one unit). A golden set comes as a golden.jsonl or a list of
GoldenItem; each returns records, and writes files only where an output is given.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Sequence
from typing import Any, Callable, Union

from ..errors import UsageError, check_flags, check_kind, check_list, check_seed, check_warn, tell
from ..formats.corpus import given_golden, read_golden, unique_chunks
from ..formats.files import guarded
from ..formats.shards import split_files
from ..progress import Steps, no_progress
from ..records import ALL_QUERIES, GoldenItem, QuerySample
from . import curate
from .chunking import ChunkSettings
from .curate import Deduplicated
from .neardup import NEAR_DUPLICATE
from .sources import IMPORT_THRESHOLD, ImportOptions
from .validate import Validation
from .validate import golden_stats as describe_golden
from .validate import validate_golden as validate_file

PathLike = Union[str, os.PathLike]
Warn = Callable[[str], None]
PATH = (str, os.PathLike)


@guarded
def import_golden(
    source: PathLike,
    output: PathLike | None = None,
    *,
    format: str = "auto",
    corpus: PathLike | None = None,
    corpus_out: PathLike | None = None,
    qrels_out: PathLike | None = None,
    qrels: PathLike | None = None,
    docs: PathLike | Sequence[PathLike] = (),
    doc_qrels: str | None = None,
    query_col: str | None = None,
    answer_col: str | None = None,
    chunk_ids_col: str | None = None,
    id_col: str | None = None,
    threshold: float = IMPORT_THRESHOLD,
    split: str | None = None,
    size: int | None = None,
    overlap: int = 0,
    unit: str = "words",
    sentences: bool = False,
    model: PathLike | None = None,
    whole: bool = False,
    sample: QuerySample | int = ALL_QUERIES,
    warn: Warn | None = None,
) -> list[GoldenItem]:
    """A golden set from SQuAD-style JSON, a LlamaIndex rag_dataset.json or question-context pairs, a ragas testset,
    a DeepEval dataset, a Giskard RAGET testset, CSV, JSONL, Parquet, a BEIR folder, PubMedQA's ori_pqal.json, MS MARCO QnA
    JSON, a Cranfield folder or TREC topics (the Python side of `semrel golden import`, with its defaults).

    format: auto (detected) or squad, llamaindex, llamaindex-pairs, ragas, deepeval, giskard, csv, jsonl, parquet, beir,
    pubmedqa, msmarco, cranfield, trec. corpus: the corpus.jsonl the gold chunk ids refer to (checked; llamaindex's,
    ragas's, deepeval's and giskard's contexts are matched to its chunks). corpus_out: where squad, pubmedqa, msmarco,
    cranfield (and trec with docs=; llamaindex, ragas, deepeval and giskard without corpus=: their reference contexts,
    a chunk each) write the corpus they build (required: their gold ids are its chunks), chunked by size, overlap,
    unit, sentences, model, whole (as `semrel corpus chunk`). qrels, docs: trec's document qrels and documents;
    doc_qrels: all-chunks, first-chunk or answer-chunk, for gold ids that are document ids (or file names).
    query_col, answer_col, chunk_ids_col, id_col: the columns (csv, jsonl, parquet; ragas, deepeval, giskard: query, answer,
    id; trec: topic fields). threshold: llamaindex's, ragas's, deepeval's and giskard's least word overlap; split:
    beir's qrels split (default test), or the split read of a folder of the hub's shards of several (train: its
    train-*-of-*.parquet). sample: only those queries. With `output` (and qrels_out=, the gold chunks as qrels) the
    files are written as the command writes them, with their manifests, as one unit. Counts worth a warning go to
    `warn`, else to Python warnings.
    """
    check_warn(warn)
    check_kind("source", source, PATH, "a file or folder path", required=True)
    for name, path in (("output", output), ("corpus", corpus), ("corpus_out", corpus_out), ("qrels_out", qrels_out), ("qrels", qrels)):
        check_kind(name, path, PATH, "a file path")
    for name, text in (("format", format), ("unit", unit)):
        check_kind(name, text, (str,), "a name", required=True)
    for name, column in (("split", split), ("doc_qrels", doc_qrels), ("query_col", query_col), ("answer_col", answer_col),
                         ("chunk_ids_col", chunk_ids_col), ("id_col", id_col)):
        check_kind(name, column, (str,), "a name")
    check_kind("model", model, (str, os.PathLike), "a model name or folder")
    check_kind("threshold", threshold, (numbers.Real,), "a number", required=True)
    if not 0 <= threshold <= 1:  # NaN too, which passes no comparison
        raise UsageError(f"threshold={threshold!r}: give the least share of an answer's words a context must hold, 0 to 1")
    for name, count, required in (("size", size, False), ("overlap", overlap, True)):
        check_kind(name, count, (numbers.Integral,), "a whole number", required)
    check_flags(sentences=sentences, whole=whole)
    sample = QuerySample.of(sample)
    folders = check_list("docs", [docs] if isinstance(docs, PATH) else docs, PATH, "a path or a list of paths", "paths") or []
    settings = ChunkSettings(size=None if size is None else int(size), overlap=int(overlap), unit=unit, sentences=sentences,
                             model=None if model is None else str(model), whole=whole)
    options = ImportOptions(settings=settings, corpus=None if corpus is None else str(corpus),
                            columns={"query": query_col, "answer": answer_col, "chunk_ids": chunk_ids_col, "id": id_col},
                            threshold=float(threshold), split=split, qrels=None if qrels is None else str(qrels),
                            docs=tuple(str(d) for d in folders), doc_qrels=doc_qrels, sample=sample)
    shards = split_files(str(source), split)
    curate.check_format_options(str(source), format, split, shards, (split is not None, threshold != IMPORT_THRESHOLD))
    result = curate.import_golden_files(str(source), output, format, options, corpus_out, qrels_out, shards=shards)
    tell(curate.import_warnings(result, options), warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return result.items


def _check_curation(threshold: float, model: PathLike | None, warn: Warn | None) -> None:
    """The arguments split and dedup share: the near-duplicate threshold, the embedding model, warn."""
    check_warn(warn)
    check_kind("threshold", threshold, (numbers.Real,), "a cosine similarity, e.g. 0.95", required=True)
    check_kind("model", model, (str, os.PathLike), "a model name or folder")


@guarded
def split_golden(
    golden: PathLike | Iterable[GoldenItem],
    output_dir: PathLike | None = None,
    *,
    ratio: float | Sequence[float] | None = None,
    sizes: int | Sequence[int] | None = None,
    names: Sequence[str] | None = None,
    seed: int = 0,
    threshold: float = NEAR_DUPLICATE,
    model: PathLike | None = None,
    steps: Steps = no_progress,
    warn: Warn | None = None,
    together: str | None = None,
    corpus: PathLike | None = None,
) -> dict[str, list[GoldenItem]]:
    """The golden set in parts, near-duplicate queries (cosine of their embeddings >= threshold) always in one
    part (the Python side of `semrel golden split`, with its defaults): {name: items}, deterministic by `seed`.
    together: "gold" also keeps in one part the queries sharing a gold chunk, "documents" those sharing a document of
    their gold chunks (read from `corpus`, a corpus.jsonl).

    ratio: the parts' fractions (default 0.8; a last one left out is the rest, so 0.8 is 80/20); or sizes:
    their query counts, the queries left over one more part. names: default train,test or train,dev,test, else
    part1,... and rest. model: the embedding model (default MiniLM). With `output_dir`, each part is written to
    output_dir/NAME.jsonl with its manifest, the parts as one unit. Queries left in no part (a group too big for
    the parts left) are told to `warn`, else as a Python warning. An empty query (`golden validate`'s error) is refused.
    """
    _check_curation(threshold, model, warn)
    check_kind("output_dir", output_dir, PATH, "a folder path")
    check_seed(seed)
    fractions = check_list("ratio", [ratio] if isinstance(ratio, numbers.Real) else ratio, (numbers.Real,),
                           "a number or a list of numbers, e.g. [0.8, 0.1]", "numbers")
    counts = check_list("sizes", [sizes] if isinstance(sizes, numbers.Integral) else sizes, (numbers.Integral,),
                        "a whole number or a list of them, e.g. [100, 50]", "whole numbers")
    labels = check_list("names", names, (str,), "a list of names, e.g. ['train', 'test']", "names")
    for name, given in (("ratio", fractions), ("sizes", counts), ("names", labels)):
        if given is not None and not given:  # an empty list is no default: it was meant to say something
            raise UsageError(f"{name}=[]: give at least one value, or leave {name} out")
    items, source = given_golden(golden, require_text=True)
    notes: list[str] = []
    check_kind("together", together, (str,), f"one of {', '.join(curate.TOGETHER)}")
    check_kind("corpus", corpus, PATH, "a corpus.jsonl path")
    parts = curate.split_golden(items, source, output_dir, fractions, counts, labels, int(seed), float(threshold),
                                None if model is None else str(model), steps, notes.append, together, corpus)
    tell(notes, warn, stacklevel=3)
    return parts


@guarded
def dedup_golden(
    golden: PathLike | Iterable[GoldenItem],
    output: PathLike | None = None,
    *,
    report: PathLike | None = None,
    threshold: float = NEAR_DUPLICATE,
    model: PathLike | None = None,
    steps: Steps = no_progress,
    warn: Warn | None = None,
) -> Deduplicated:
    """The golden set without its near-duplicate queries (the Python side of `semrel golden dedup`, with its
    defaults): queries whose embeddings' cosine is >= threshold, or equal but for case and spacing, form a
    group; the first of each is kept, the gold chunk ids and reference answers of the others merged into it.

    Returns a Deduplicated: `.kept` (the items kept, in order), `.report` (one row per group: the query kept
    and its duplicates with their similarity) and `.merges` (what each merge brought). With `output`, the
    deduplicated golden set is written there (as `--apply -o`), with `report` the groups (JSONL), each with
    its manifest, as one unit. Each merge that brought gold chunks or answers goes to `warn`, else to Python
    warnings. An empty query (`golden validate`'s error) is refused: every empty query is a near-duplicate of every other.
    """
    _check_curation(threshold, model, warn)
    check_kind("output", output, PATH, "a file path")
    check_kind("report", report, PATH, "a file path")
    items, source = given_golden(golden, require_text=True)
    result = curate.dedup_golden(items, source, report, output, float(threshold), None if model is None else str(model), steps)
    tell(result.merges, warn, stacklevel=3)
    return result


@guarded
def validate_golden(golden: PathLike, corpus: PathLike | None = None) -> Validation:
    """Every problem of a golden.jsonl with its line (the Python side of `semrel golden validate`): `.issues` (line,
    severity, message), `.queries`, `.errors` (any fails validation) and `.warnings`. With `corpus` (a corpus.jsonl), gold
    chunk ids and recorded answer spans are checked against it. Problems are returned, not raised: the file is what is judged."""
    check_kind("golden", golden, (str, os.PathLike), "a golden.jsonl path", required=True)
    check_kind("corpus", corpus, (str, os.PathLike), "a corpus.jsonl path")
    return validate_file(golden, unique_chunks(corpus) if corpus is not None else None)


@guarded
def golden_stats(golden: PathLike | Iterable[GoldenItem], corpus: PathLike | None = None) -> dict[str, Any]:
    """Counts and length distributions (in words) of a golden set and, with `corpus`, its corpus.jsonl (the Python side of
    `semrel golden stats`): the dict its `-f json` prints, {"counts": {...}, "lengths": {...}, "notes": [...] where any}."""
    check_kind("corpus", corpus, (str, os.PathLike), "a corpus.jsonl path")
    items = read_golden(golden) if isinstance(golden, (str, os.PathLike)) else given_golden(golden)[0]
    return describe_golden(items, unique_chunks(corpus) if corpus is not None else None)
