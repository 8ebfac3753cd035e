"""What a golden-set source holds, so a config can be written for it (`semrel init`): its format,
its queries and answers, whether it holds the documents, and how long its contexts are."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..cjk import count_words
from ..formats.beir import beir_folder
from ..formats.parquet import is_parquet
from .documents import file_document_id, file_stem, kind_of
from .importers import BUILDS_CORPUS, CONTEXT_FORMATS, READ_EXAMPLES, detect_format, import_golden, table_rows
from .sources import ImportOptions, named_document
from .trec import read_topics

DOCUMENT_SUFFIXES = (".pdf", ".html", ".htm", ".docx", ".txt", ".md", ".trec")


@dataclass
class SourceSummary:
    format: str
    queries: int
    with_answers: int
    holds_documents: bool  # squad, pubmedqa, msmarco, cranfield: the import writes the corpus
    context_words: list[int] = field(default_factory=list)  # SQuAD contexts, LlamaIndex and ragas reference contexts
    with_gold: int = 0
    corpus_file: str | None = None  # BEIR: its corpus.jsonl (None where it is Parquet: chunked from the folder)
    docs_folder: str | None = None  # LlamaIndex, ragas: a folder of documents beside the file

    @property
    def median_context(self) -> int | None:
        return int(statistics.median(self.context_words)) if self.context_words else None

    @property
    def long_context(self) -> int | None:
        """The length 9 in 10 contexts stay within (a chunk this long holds most contexts whole)."""
        if not self.context_words:
            return None
        ordered = sorted(self.context_words)
        return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _documents_folder(source: Path) -> str | None:
    """A folder beside a testset that holds documents (llamahub ships a rag_dataset.json with `source_files/`)."""
    base = source.parent
    candidates = [base / "source_files", base / "source_docs", base / "docs", base / "data"]
    candidates += sorted(p for p in base.iterdir() if p.is_dir() and p not in candidates)
    for folder in candidates:
        if folder.is_dir() and any(f.suffix.lower() in DOCUMENT_SUFFIXES for f in folder.rglob("*") if f.is_file()):
            return str(folder)
    return None


def summarise_source(source: str, fmt: str = "auto") -> SourceSummary:
    """Read `source` as `semrel golden import` would (without a corpus) and say what it holds."""
    fmt = detect_format(source) if fmt == "auto" else fmt
    if fmt in CONTEXT_FORMATS:
        examples = READ_EXAMPLES[fmt](source)
        words = [count_words(context) for example in examples for context in example.contexts]
        answers = sum(bool(example.answers) for example in examples)
        return SourceSummary(fmt, len(examples), answers, False, words, docs_folder=_documents_folder(Path(source)))
    if fmt == "trec":
        topics = read_topics(source)
        return SourceSummary(fmt, len(topics), 0, False)
    if fmt == "beir":
        corpus = beir_folder(source).corpus
        result = import_golden(source, fmt, ImportOptions())
        with_answers = sum(bool(i.reference_answers) for i in result.items)
        return SourceSummary(fmt, len(result.items), with_answers, False, with_gold=sum(bool(i.gold_chunk_ids) for i in result.items),
                             corpus_file=str(corpus[0]) if not is_parquet(corpus[0]) else None)
    result = import_golden(source, fmt, ImportOptions())
    words = []
    if fmt == "squad":
        contexts = {c.doc_id: count_words(c.text) for c in result.chunks or []}
        words = list(contexts.values())
    return SourceSummary(fmt, len(result.items), sum(bool(i.reference_answers) for i in result.items), fmt in BUILDS_CORPUS,
                         words, with_gold=sum(bool(i.gold_chunk_ids) for i in result.items))


def document_column(source: str, fmt: str, docs: str) -> tuple[str, list[tuple[int, str]]] | None:
    """The column of a CSV, JSONL or Parquet golden set that names, on most of its lines, a document of the folder (or file)
    `docs` by its id or its file's name, as `--doc-qrels` reads gold ids: a column of each answer's source file,
    which `semrel init` makes the gold column; with the (line, value) of its values that name no document, which the
    import would stop on. None where no column does (or the set is of another format)."""
    if fmt not in ("csv", "jsonl", "parquet"):
        return None
    root = Path(docs)
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    documents = {file_document_id(p.relative_to(root).as_posix()) if p != root else file_stem(p) for p in files
                 if kind_of(p) not in (None, "trec") and not any(part.startswith(".") for part in p.parts[len(root.parts):])}
    header, rows = table_rows(source, fmt)
    named: Counter[str] = Counter()
    values: list[tuple[int, dict]] = []
    for line, row in rows:
        values.append((line, row))
        named.update(column for column, value in row.items() if isinstance(value, str) and named_document(value.strip(), documents))
    column, count = max(named.items(), key=lambda kv: (kv[1], -header.index(kv[0])), default=(None, 0))
    if column is None or count < 0.8 * len(values):
        return None
    unnamed = [(line, str(row.get(column))) for line, row in values
               if not (isinstance(row.get(column), str) and named_document(row[column].strip(), documents))]
    return column, unnamed
