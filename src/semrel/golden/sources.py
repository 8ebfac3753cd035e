"""What every golden-set importer shares: its options, its result, and reading JSON sources."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Container, Iterable, Iterator

from ..errors import FormatError, SemrelError, UsageError, ValidationError
from ..formats.corpus import judged_grades, shown_json
from ..formats.files import check_id, display_name, id_form, line_id
from ..formats.parquet import is_parquet
from ..formats.shards import split_files, split_records
from ..records import ALL_QUERIES, Chunk, GoldenItem, QuerySample, is_id
from ..terminal import quantity
from .chunking import ChunkSettings, sanitise_id
from .documents import file_document_id
from .locate import answer_chunks, least_shares

DOC_QRELS = ("all-chunks", "first-chunk", "answer-chunk")
FILE_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}(\.gz)?$")
"""A file suffix ('manual.pdf' may name the document 'manual'); one starts with a letter, so a version ('v1.2', 'v1.2#3')
names no file (and 'abc v1.2' in a gold cell is two ids, not one file name with a space)."""


IMPORT_THRESHOLD = 0.5  # the least word overlap of a testset's reference context with the chunk it is matched to


@dataclass(frozen=True)
class ImportOptions:
    """What the importers may need besides the source."""

    settings: ChunkSettings = ChunkSettings()
    corpus: str | None = None
    columns: dict[str, str | None] = field(default_factory=dict)
    threshold: float = IMPORT_THRESHOLD
    split: str | None = None  # beir: the qrels split (None: BEIR_SPLIT); a folder of the shards of several splits: the one read
    qrels: str | None = None  # trec: the document qrels
    docs: tuple[str, ...] = ()  # trec: the documents, chunked by the import
    doc_qrels: str | None = None  # how gold document ids become chunk ids (DOC_QRELS); None: refuse (trec: all-chunks)
    sample: QuerySample = ALL_QUERIES


@dataclass
class Imported:
    """The golden items, the corpus built when the source holds the documents (else None),
    counts worth a warning, and parameters for the manifest."""

    items: list[GoldenItem]
    chunks: list[Chunk] | None = None
    counts: Counter[str] = field(default_factory=Counter)
    params: dict[str, Any] = field(default_factory=dict)


def query_id_of(value: Any, path: str | os.PathLike, where: str, line: int | None = None) -> str:
    """The query id `value` (a string or a whole number; None or "" give ""), made one token and
    checked as write_golden checks it, so a bad id is refused naming the file (and line) it is in."""
    if value is None or value == "":
        return ""
    if not is_id(value):
        raise FormatError(display_name(path), f"{where} should be a string or a whole number, found {shown_json(value)}",
                          line=line)
    query_id = sanitise_id(str(value))
    if not query_id:
        return ""
    if line is not None:
        return line_id(query_id, "query id", path, line)
    try:
        return check_id(query_id, "query id")
    except SemrelError as exc:
        raise FormatError(display_name(path), f"{where}: {exc}") from None


def record_rows(source: str) -> Iterator[tuple[int, dict[str, Any]]] | None:
    """The (line or row number, record) of a JSON Lines or Parquet file, None for any other file: the layouts a set on
    Hugging Face's hub comes in (a row per question), where the set's own release is one JSON document."""
    if not is_parquet(source) and not source.lower().removesuffix(".gz").endswith(".jsonl"):
        return None
    return split_records(split_files(source))


def expect(value: Any, kind: type, path: str, where: str) -> Any:
    """`value` if it is a `kind`, else a FormatError saying which part of the JSON is wrong."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise FormatError(display_name(path), f"{where} should be a {kind.__name__}, found {type(value).__name__}")
    return value


@dataclass
class CorpusIds:
    """What checking and mapping a golden set's ids needs of a corpus: `chunks`, the chunk ids among the set's ids
    and those of the documents it names; `of_document`, each named document's chunks; `texts`, their texts, kept
    only where doc_qrels='answer-chunk' looks for the answer in them."""

    chunks: set[str]
    of_document: dict[str, list[str]]  # in corpus order
    texts: dict[str, str] = field(default_factory=dict)


def corpus_ids(chunks: Iterable[Chunk], items: Iterable[GoldenItem], texts: bool = False) -> CorpusIds:
    """The CorpusIds of `chunks` for the gold and graded ids of `items` (and for the documents of ids that are file
    names, 'manual.pdf' for 'manual'), in id_form (as_spelled writes the gold in the corpus's spelling), read in one pass:
    what is kept follows the golden set, not the corpus (the reader that refuses a repeated chunk id, unique_chunks, holds
    every id while it reads)."""
    wanted = {id_form(i) for item in items for j in (*item.gold_chunk_ids, *judged_grades(item)) for i in _document_names(j)}
    ids = CorpusIds(set(), {})
    for chunk in chunks:
        document = id_form(chunk.doc_id) in wanted
        if document:
            ids.of_document.setdefault(chunk.doc_id, []).append(chunk.id)
            if texts:
                ids.texts[chunk.id] = chunk.text
        if document or id_form(chunk.id) in wanted:
            ids.chunks.add(chunk.id)
    return ids


def as_spelled(items: list[GoldenItem], corpus: CorpusIds) -> tuple[list[GoldenItem], dict[str, str]]:
    """`items` with each gold and graded id that is no id of `corpus` but one in another Unicode form (id_form: 'café#0'
    typed on macOS, an e and a combining accent, where the corpus of its files has one character) written as the corpus
    spells it, and {id given: id written}. An id the corpus holds as it is stays, and so does one the corpus spells two
    ways (which is meant is not known: require_known_chunks names it)."""
    known = {*corpus.chunks, *corpus.of_document}
    spelling: dict[str, str | None] = {}
    for corpus_id in known:
        form = id_form(corpus_id)
        spelling[form] = None if form in spelling else corpus_id
    changed: dict[str, str] = {}

    def spelled(given: str) -> str:
        found = None if given in known else spelling.get(id_form(given))
        if found is None:
            return given
        changed[given] = found
        return found

    written = []
    for item in items:
        grades = item.meta.get("grades")
        meta = {**item.meta, "grades": {spelled(c): g for c, g in grades.items()}} if isinstance(grades, dict) else item.meta
        written.append(replace(item, gold_chunk_ids=tuple(spelled(c) for c in item.gold_chunk_ids), meta=meta))
    return written, changed


def _document_names(name: str) -> Iterator[str]:
    """The document ids a gold id may name, most specific first: itself; for a file name ('manual.pdf') the document
    `semrel corpus chunk` made of that file ('manual'); for a path ('docs/manual.pdf', a loader's absolute `source`) the
    same of each shorter tail, as the corpus names a document by its path inside the folder chunked."""
    parts = name.split("/")
    for tail in ("/".join(parts[k:]) for k in range(len(parts))):
        yield tail
        if FILE_SUFFIX.search(tail):
            yield file_document_id(tail)


def named_document(name: str, documents: Container[str]) -> str | None:
    """The document of `documents` that a gold id names (_document_names), None where it names none."""
    return next((candidate for candidate in _document_names(name) if candidate in documents), None)


def map_document_ids(items: list[GoldenItem], corpus: CorpusIds, mode: str | None, source: str,
                     corpus_name: str, drop_unknown: bool = False) -> tuple[list[GoldenItem], Counter]:
    """Gold (and graded) ids that are document ids of the corpus, not chunk ids, made chunk ids:
    `all-chunks` gives every chunk of the document the document's grade, `first-chunk` its first
    chunk only, `answer-chunk` the chunks holding the query's reference answer (locate.answer_chunks;
    a document judged not relevant gives every chunk its 0); with `mode` None they are refused, with
    advice that works. An id that is a file name ('manual.pdf') whose name without the suffix is a
    document id is that document. Ids that are chunk ids, or neither (require_known_chunks reports
    those), are left as they are. The documents mapped are kept in meta["gold_documents"] (and how
    each answer chunk was found in meta["answer_chunks"]); the counts say how many became how many
    chunks. With `drop_unknown` (TREC qrels, which judge documents a collection may lack or leave
    empty), ids that are neither are dropped and counted, and file names are not looked for."""
    if mode is not None and mode not in DOC_QRELS:
        raise UsageError(f"doc_qrels={mode!r}: choose one of {', '.join(DOC_QRELS)}")
    chunk_ids, of_document = corpus.chunks, corpus.of_document

    def document(judged_id: str) -> str | None:
        if judged_id in chunk_ids:
            return None
        if drop_unknown:  # TREC docnos are no file names
            return judged_id if judged_id in of_document else None
        return named_document(judged_id, of_document)

    mapped_items, documents, targets, dropped, first = [], 0, 0, 0, None
    files: list[tuple[str, str]] = []
    found: Counter[str] = Counter()
    for item in items:
        grades = item.meta.get("grades")
        judged = judged_grades(item)
        unknown = [j for j in judged if j not in chunk_ids and j not in of_document]
        if drop_unknown and unknown:
            dropped += len(unknown)
            judged = {j: g for j, g in judged.items() if j not in unknown}
        elif all(document(j) is None for j in judged):
            mapped_items.append(item)
            continue
        new: dict[str, int] = {}
        gold_documents, located = [], {}
        for judged_id, grade in judged.items():
            doc = document(judged_id)
            if doc is None:
                new.setdefault(judged_id, grade)
                continue
            if doc != judged_id:
                files.append((judged_id, doc))
            first = first or (judged_id, doc, item.query_id)
            chunk_list = of_document[doc] if mode == "all-chunks" or mode == "answer-chunk" and grade <= 0 else of_document[doc][:1]
            if mode == "answer-chunk" and grade > 0:
                chunk_list, how, share = answer_chunks(item.query, item.reference_answers, [(c, corpus.texts[c]) for c in of_document[doc]])
                found[how] += 1
                located[doc] = {"how": how, "score": round(share, 4), "chunks": len(chunk_list)}
            for chunk_id in chunk_list:
                new.setdefault(chunk_id, grade)
            if grade > 0:
                documents += 1
                targets += len(chunk_list)
                gold_documents.append(doc)
        meta = {**item.meta, **({"gold_documents": gold_documents} if gold_documents else {}),
                **({"answer_chunks": located} if located else {})}
        if isinstance(grades, dict) and grades:
            meta["grades"] = new
        gold = tuple(c for c, g in new.items() if g > 0)
        mapped_items.append(GoldenItem(item.query_id, item.query, item.reference_answers, gold, meta))
    counts: Counter = Counter()
    if dropped:
        counts[f"judged documents not in {corpus_name} or without text (judgments dropped)"] = dropped
    if first is not None and mode is None:
        given, doc, query = first
        named = f"{given!r} of query {query!r}" + (f", a file name: the document {doc!r}" if given != doc else "")
        raise ValidationError(
            f"{source}: gold ids are document ids of {corpus_name}, not chunk ids (first: {named}, "
            f"whose chunks are {', '.join(repr(c) for c in of_document[doc][:2])}{', ...' if len(of_document[doc]) > 2 else ''}): "
            "give doc_qrels='all-chunks' (every chunk of a relevant document is gold), doc_qrels='first-chunk' or "
            "doc_qrels='answer-chunk' (the chunk holding the reference answer), "
            "or chunk with `semrel corpus chunk --whole` (one chunk per document, its id the document id)")
    if first is not None:
        counts[f"relevant documents (made into {quantity(targets, 'gold chunk')}, doc_qrels={mode!r})"] = documents  # "...: 5": documents
    if files:
        counts[f"gold ids that are file names, taken as their documents (e.g. {files[0][0]!r} is {files[0][1]!r})"] = len(files)
    if found["pairs"]:
        least = least_shares(mapped_items)
        counts["relevant documents no chunk of which holds the answer's text, whose gold is the chunk sharing most of its "
               f"word pairs (doc_qrels='answer-chunk'; the least shares, worth a look: {least}; meta.answer_chunks gives each)"
               ] = found["pairs"]
    if found["none"]:
        counts["relevant documents sharing no word pair with the answer, which give no gold chunk (doc_qrels='answer-chunk'; "
               "`semrel golden pick` picks it by hand)"] = found["none"]
    return mapped_items, counts
