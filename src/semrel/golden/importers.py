"""Golden sets from the formats people already have: SQuAD-style JSON, the testsets LlamaIndex, ragas,
DeepEval and Giskard write, CSV/JSONL with named columns and BEIR folders (PubMedQA, MS MARCO and Cranfield
live in converters.py, TREC topics in trec.py).

Every importer takes the source and ImportOptions and returns an Imported (see sources.py);
nothing is written here.
"""

from __future__ import annotations

import ast
import csv
import difflib
import hashlib
import io
import itertools
import json
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..cjk import count_words
from ..errors import FormatError, UsageError, ValidationError
from ..formats.beir import BEIR_SPLIT, beir_folder, beir_records, is_beir_folder, read_beir_qrels
from ..formats.corpus import check_grades, require_known_chunks, shown_json, unique_chunks
from ..formats.files import STDIO, UTF16_BOMS, display_name, id_form, line_id, read_head, read_lines, read_text
from ..formats.jsonl import check_nesting, load_json, read_jsonl, too_deep
from ..formats.parquet import is_parquet, parquet_columns
from ..formats.shards import placed, shard_at, split_columns, split_files, split_name, split_names, split_of, split_records
from ..formats.trec import graded_pairs
from ..progress import Steps, counted, no_progress
from ..records import Chunk, GoldenItem, is_id
from ..terminal import quantity
from .chunking import Document, chunk_documents, sanitise_id
from .converters import import_cranfield, import_llamaindex_pairs, import_msmarco, import_pubmedqa
from .documents import file_document_id, sanitised_ids
from .locate import ContextMatcher, chunks_holding, find_answer
from .sources import FILE_SUFFIX, Imported, ImportOptions, as_spelled, corpus_ids, expect, map_document_ids, query_id_of, record_rows
from .trec import import_trec
from .validate import Tally, lacks_answer

FORMATS = ("auto", "squad", "llamaindex", "llamaindex-pairs", "ragas", "deepeval", "giskard", "csv", "jsonl", "parquet", "beir", "pubmedqa",
           "msmarco", "cranfield", "trec")
FORMAT_NAMES = {"squad": "a SQuAD-style set", "llamaindex": "a LlamaIndex rag_dataset",
                "llamaindex-pairs": "LlamaIndex question-context pairs", "ragas": "a ragas testset",
                "deepeval": "a DeepEval dataset", "giskard": "a Giskard RAGET testset", "csv": "CSV",
                "jsonl": "JSON Lines", "parquet": "Parquet", "beir": "a BEIR folder", "pubmedqa": "PubMedQA", "msmarco": "MS MARCO QnA",
                "cranfield": "a Cranfield folder", "trec": "TREC topics"}
# Formats whose source holds the documents, so the import writes the corpus too (trec: with --docs; the
# CONTEXT_FORMATS, without --corpus, write their reference contexts).
BUILDS_CORPUS = ("squad", "pubmedqa", "msmarco", "cranfield", "llamaindex-pairs")
# Synthetic testsets: each question comes with the contexts it was written from, matched to --corpus as gold.
CONTEXT_FORMATS = ("llamaindex", "ragas", "deepeval", "giskard")
# Formats whose items become one chunk each, so chunking options do not apply: (collection, what an item is).
ONE_CHUNK_EACH = {"pubmedqa": ("PubMedQA", "context"), "msmarco": ("MS MARCO", "passage"), "llamaindex-pairs": ("LlamaIndex", "node"),
                  "llamaindex": ("LlamaIndex", "reference context"), "ragas": ("ragas", "reference context"),
                  "deepeval": ("DeepEval", "context"), "giskard": ("Giskard", "reference document")}

DEFAULT_COLUMNS = {
    "id": ("query_id", "id", "qid", "_id"),
    "query": ("query", "question", "text"),
    "answer": ("reference_answer", "answer", "answers"),
    "chunk_ids": ("gold_chunk_ids", "chunk_ids", "gold"),
}
ROLE_NAMES = {"id": "query id", "query": "query", "answer": "answer", "chunk_ids": "gold chunk ids"}
ROLE_OPTIONS = {"id": "id_col=", "query": "query_col=", "answer": "answer_col=", "chunk_ids": "chunk_ids_col="}  # shown as --id-col ...
_ID_SEPARATORS = re.compile(r"[,;|]")


def _file_name(words: Sequence[str]) -> bool:
    """Whether words are one file name holding spaces ('User Guide.pdf', 'sub dir/a b.md', as a column naming each
    answer's file has it): only the last has a file suffix, and none a '#' (a chunk id's)."""
    return len(words) > 1 and bool(FILE_SUFFIX.search(words[-1])) and not any(FILE_SUFFIX.search(w) or "#" in w for w in words[:-1])


def _cell_ids(cell: str) -> list[str]:
    """The ids of a cell, separated by spaces , ; or |, but a file name holding spaces is one (its blanks made '_',
    as `semrel corpus chunk` makes them in the document's id): it was cut into 'User' and 'Guide.pdf'."""
    ids: list[str] = []
    for piece in _ID_SEPARATORS.split(cell):
        words = piece.split()
        ids += [sanitise_id(piece)] if _file_name(words) else words
    return ids


def detect_format(source: str, split: str | None = None, shards: Sequence[str] | None = None) -> str:
    """The format of `source`, from folder contents, suffix or (for .json) its top-level keys; of a folder of shards, that
    of the split's (`split`: the one read of several). `shards`: split_files(source, split), where the caller has them
    (an import listed the folder once for each step that needed its shards)."""
    path = Path(source)
    if path.is_dir() and shards is None:
        shards = split_files(source, split)
    if path.is_dir() and shards is not None and tuple(shards) != (source,):  # the shards of a split: as its first file
        source = shards[0]
        path = Path(source)
    if path.is_dir():
        if (path / "cran.qry").exists():
            return "cranfield"
        if is_beir_folder(path):
            return "beir"
        raise FormatError(source, "folder is neither a BEIR folder (queries.jsonl, or the hub's queries/ of Parquet) nor Cranfield "
                                  "(cran.qry)", hint=_files_to_give(path))
    if is_parquet(source):  # binary: its columns tell a testset from a table of questions
        return _row_shaped(set(parquet_columns(source))) or "parquet"
    name = source.lower().removesuffix(".gz")
    head = _head_text(read_head(source, 4096)) if path.is_file() else ""
    if re.match(r"\s*<(top|topics|topic)\b", head, re.IGNORECASE):
        return "trec"
    if name.endswith((".csv", ".tsv")):
        try:
            header = _header_line(head.lstrip("\ufeff"))
            first = next(csv.reader([header], delimiter=_delimiter(source, header)), [])
        except csv.Error:  # a header csv cannot read (a lone carriage return): the CSV import says what is wrong
            first = []
        return _testset_shaped({cell.strip() for cell in first}) or "csv"
    if name.endswith(".jsonl"):
        return _row_shaped(set(re.findall(r'"(\w+)"\s*:', head)) | _first_record_fields(source, head)) or "jsonl"
    if name.endswith(".json"):
        if re.search(r'"examples"\s*:', head):
            return "llamaindex"
        if re.match(r'\s*\{\s*"queries"\s*:\s*\{', head):  # EmbeddingQAFinetuneDataset: queries, corpus, relevant_docs
            return "llamaindex-pairs"
        shaped = _testset_shaped(set(re.findall(r'"(\w+)"\s*:', head)))
        if shaped:
            return shaped
        if re.search(r'"data"\s*:', head):
            return "squad"
        if re.search(r'"QUESTION"\s*:', head):
            return "pubmedqa"
        if re.search(r'"passages"\s*:', head) and re.search(r'"is_selected"\s*:', head):
            return "msmarco"
        shaped = _testset_shaped(_table_fields(source))
        if shaped:
            return shaped
    raise FormatError(source, "cannot tell the format", hint="give format=")


def _head_text(head: bytes) -> str:
    """A file's first bytes as text, UTF-16 where its byte-order mark says so (Excel's "Unicode" CSV), as read_text reads the
    whole: read as UTF-8, a UTF-16 ragas testset's header named no testset field and it was imported as a plain CSV."""
    return head.decode("utf-16", "replace") if head[:2] in UTF16_BOMS else head.decode("utf-8", "replace")


def _files_to_give(folder: Path) -> str | None:
    """A folder downloaded from the hub holds a set's splits as files (plain_text/validation-00000-of-00001.parquet):
    the first few of them a golden set could be, to name in the error."""
    suffixes = (".parquet", ".jsonl", ".jsonl.gz", ".json", ".csv", ".tsv")
    relative = (p.relative_to(folder) for p in itertools.islice(folder.rglob("*"), 10_000))  # a large tree is not walked whole
    found = sorted(r.as_posix() for r in relative if r.name.lower().endswith(suffixes) and (folder / r).is_file()
                   and not any(part.startswith(".") for part in r.parts))
    if not found:
        return None
    sharded = next(((parent, names) for parent in sorted({str(Path(r).parent) for r in found})
                    if parent != "." and (names := split_names(folder / parent))), None)
    if sharded:  # the hub's plain_text/ or data/ of shards: read as one set from that folder
        parent, names = sharded
        which = f" with split=NAME ({', '.join(names)})" if len(names) > 1 else ""
        return f"give its folder of shards {(folder / parent).as_posix()}{which}"
    return f"give one of its files: {', '.join(found[:3])}" + (f" ({len(found) - 3} more)" if len(found) > 3 else "")


def _first_record_fields(source: str, head: str) -> set[str]:
    """The keys of a JSON Lines file's first record when it runs past the head the format is told from."""
    if "\n" in head.strip() or len(head.encode("utf-8")) < 4096:
        return set()
    record = _first_line(source)[1]
    return set(record) if isinstance(record, dict) else set()


def _first_line(source: str) -> tuple[str, Any, bool]:
    """A JSON or JSON Lines file's first non-blank line, its JSON value (None where it is none) and whether a
    non-blank line follows: what tells a testset's records apart without reading them all."""
    lines = (line for _, line in read_lines(source) if line.strip())
    first = next(lines, "").strip().lstrip("\ufeff")
    more = next(lines, None) is not None
    try:
        value = json.loads(first) if first and not too_deep(first) else None
    except ValueError:
        value = None
    return first, value, more


def _table_fields(source: str) -> set[str]:
    """The fields of a .json testset whose head does not show them (a long first record, or pandas' column-wise
    to_json, which names a column only after every value of the one before): the records, read whole."""
    try:
        return set(_table_records(source)[0])
    except FormatError:
        return set()


ROW_FIELDS = {  # the fields that name a public set's rows as Hugging Face's hub holds them (a row per question)
    "pubmedqa": {"pubid", "question", "context", "long_answer"},  # qiaojin/PubMedQA
    "msmarco": {"query", "passages", "answers"},  # microsoft/ms_marco
    "squad": {"question", "context", "answers"},  # squad, deepset/covid_qa_deepset
}


def _row_shaped(fields: set[str]) -> str | None:
    """The format of a file of records (JSON Lines, Parquet) whose fields are `fields`: a testset's, a public set's as
    Hugging Face's hub holds it (a row per question: ROW_FIELDS), or None for a plain table of questions."""
    # the public sets first: a JSON Lines head shows nested keys too (PubMedQA's context.contexts is no ragas testset)
    return next((fmt for fmt, needed in ROW_FIELDS.items() if needed <= fields), None) or _testset_shaped(fields)


def _testset_shaped(fields: set[str]) -> str | None:
    """ragas, deepeval or giskard where fields (of a header, or keys seen at a file's head) name them; not where they
    name gold chunk ids too: a testset's importer reads its contexts as the gold, so the ids would be lost."""
    if fields & set(DEFAULT_COLUMNS["chunk_ids"]):
        return None
    if {"input", "expected_output"} <= fields:
        return "deepeval"
    if {*GISKARD_COLUMNS["query"], *GISKARD_COLUMNS["answer"], GISKARD_CONTEXT} <= fields:
        return "giskard"
    return "ragas" if fields & set(RAGAS_COLUMNS["query"]) and fields & set(RAGAS_CONTEXTS) else None


# ---------------------------------------------------------------- SQuAD-style JSON


def _squad_paragraphs(data: Any, path: str) -> Iterable[tuple[Document, list[dict]]]:
    articles = expect(expect(data, dict, path, "the top level").get("data"), list, path, "'data'")
    for a, article in enumerate(articles):
        article = expect(article, dict, path, f"data[{a}]")
        paragraphs = expect(article.get("paragraphs"), list, path, f"data[{a}].paragraphs")
        title = article.get("title") or ""
        if not isinstance(title, str):
            raise FormatError(display_name(path), f"data[{a}].title should be a string, found {shown_json(title)}")
        for p, paragraph in enumerate(paragraphs):
            where = f"data[{a}].paragraphs[{p}]"
            paragraph = expect(paragraph, dict, path, where)
            context = expect(paragraph.get("context"), str, path, f"{where}.context")
            if "document_id" in paragraph:
                doc_id = paragraph["document_id"]
                if not is_id(doc_id):
                    raise FormatError(display_name(path), f"{where}.document_id should be a string or a whole number, "
                                      f"found {shown_json(doc_id)}; leave it out to name the document after the title")
                doc_id = str(doc_id)
            else:
                doc_id = (title or f"doc{a}") + (f"_{p}" if len(paragraphs) > 1 else "")
            yield Document(sanitise_id(doc_id), context, title), expect(paragraph.get("qas"), list, path, f"{where}.qas")


def _squad_rows_as_data(rows: Iterable[tuple[int, dict[str, Any]]], path: str) -> dict[str, Any]:
    """Rows of SQuAD as Hugging Face's datasets hold it (id, title, context, question, answers as {"text": [...],
    "answer_start": [...]}; COVID-QA adds document_id) as SQuAD's own JSON: a paragraph per distinct context (and
    title and document_id), an article per title, in the order they first appear."""
    articles: dict[str, dict[str, Any]] = {}
    paragraphs: dict[tuple[str, Any, str], dict[str, Any]] = {}
    for line, row in rows:
        title, context, document = row.get("title") or "", row.get("context"), row.get("document_id")
        if not isinstance(context, str) or not isinstance(title, str):
            raise FormatError(display_name(path), f"'context' and 'title' should be strings, found {shown_json(context)} and "
                              f"{shown_json(title)}", line=line)
        if document is not None and not is_id(document):  # it keys the paragraph: a list there was a TypeError
            raise FormatError(display_name(path), f"'document_id' should be a string or a whole number, found {shown_json(document)}",
                              line=line)
        answers = row.get("answers")
        if isinstance(answers, dict):  # columnar, as datasets stores a sequence of records
            texts, starts = answers.get("text") or [], answers.get("answer_start") or []
            if not isinstance(texts, list) or not isinstance(starts, list):
                raise FormatError(display_name(path), "'answers' should hold lists 'text' and 'answer_start'", line=line)
            answers = [{"text": text, **({"answer_start": starts[n]} if n < len(starts) else {})} for n, text in enumerate(texts)]
        paragraph = paragraphs.get((title, document, context))
        if paragraph is None:
            paragraph = paragraphs[(title, document, context)] = {"context": context, "qas": []}
            if document is not None:
                paragraph["document_id"] = document
            articles.setdefault(title, {"title": title, "paragraphs": []})["paragraphs"].append(paragraph)
        paragraph["qas"].append({"id": row.get("id"), "question": row.get("question"), "answers": answers})
    return {"data": list(articles.values())}


def import_squad(source: str, options: ImportOptions) -> Imported:
    """Each context becomes a document; each answer's gold chunk is located from its offset. SQuAD's JSON, or its rows
    as JSON Lines or Parquet (Hugging Face's datasets)."""
    rows = record_rows(source)
    data = load_json(source) if rows is None else _squad_rows_as_data(rows, source)
    paragraphs = list(_squad_paragraphs(data, source))
    documents = [doc for doc, _ in paragraphs]
    duplicated = [d for d, n in Counter(d.id for d in documents).items() if n > 1]
    if duplicated:
        raise FormatError(source, f"document id {duplicated[0]!r} is used by two contexts")
    chunks = chunk_documents(documents, options.settings)
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    items: list[GoldenItem] = []
    counts: Counter[str] = Counter()
    for doc, questions in paragraphs:
        for q, qa in enumerate(questions):
            qa = expect(qa, dict, source, f"question {q} of document {doc.id!r}")
            if "question" not in qa or "id" not in qa:
                raise FormatError(source, f"question {q} of document {doc.id!r} lacks 'question' or 'id'")
            where = f"question {q} of document {doc.id!r}"
            question = expect(qa["question"], str, source, f"{where}: 'question'")
            query_id = query_id_of(qa["id"], source, f"{where}: 'id'")
            answers = []
            listed = qa.get("answers")
            for n, answer in enumerate(expect([] if listed is None else listed, list, source, f"{where}: 'answers'")):
                answer = expect(answer, dict, source, f"{where}: answers[{n}]")
                text = answer.get("text", "")
                if not isinstance(text, str):
                    raise FormatError(display_name(source), f"{where}: answers[{n}].text should be a string, found "
                                      f"{shown_json(text)}")
                if text.strip():
                    answers.append(answer)
            texts = tuple(dict.fromkeys(str(a["text"]).strip() for a in answers))
            gold: list[str] = []
            spans = []
            for answer in answers:
                start = answer.get("answer_start")
                if start is not None:
                    expect(start, int, source, f"answer_start of {where}")
                span = find_answer(doc.text, str(answer["text"]), start)
                if span:
                    spans.append(list(span))
                    gold.extend(c for c in chunks_holding(by_doc.get(doc.id, []), *span) if c not in gold)
            meta: dict[str, Any] = {"doc_id": doc.id, "answer_spans": spans}
            if not texts:
                meta["no_answer"] = True
                counts["queries without an answer"] += 1
            elif not spans:
                meta["answer_not_found"] = True
                counts["queries whose answer text is not in its context (kept, meta answer_not_found)"] += 1
            items.append(GoldenItem(query_id, question.strip(), texts, tuple(gold), meta))
    return Imported(items, chunks, counts)


# ---------------------------------------------------------------- questions written from contexts: LlamaIndex, ragas


@dataclass(frozen=True)
class Example:
    """A question of a synthetic testset with the reference contexts it was written from (gold, once matched to chunks)."""
    query_id: str
    query: str
    contexts: list[str]
    answers: tuple[str, ...]
    line: int | None = None  # where the source has lines (CSV, JSONL)
    meta: dict[str, Any] = field(default_factory=dict)  # what the source says of the question, kept in the golden item's meta


def llamaindex_examples(source: str) -> list[Example]:
    """The examples of a LlamaIndex rag_dataset.json."""
    data = expect(load_json(source), dict, source, "the top level")
    examples = []
    for n, example in enumerate(expect(data.get("examples"), list, source, "'examples'")):
        example = expect(example, dict, source, f"examples[{n}]")
        query = expect(example.get("query"), str, source, f"examples[{n}].query")
        contexts = example.get("reference_contexts")
        contexts = expect([] if contexts is None else contexts, list, source, f"examples[{n}].reference_contexts")
        answer = example.get("reference_answer")
        answer = expect("" if answer is None else answer, str, source, f"examples[{n}].reference_answer").strip()
        contexts = [expect(context, str, source, f"examples[{n}].reference_contexts[{c}]") for c, context in enumerate(contexts)]
        query_id = query_id_of(example.get("query_id"), source, f"examples[{n}].query_id") or f"q{n + 1}"
        examples.append(Example(query_id, query, contexts, (answer,) if answer else ()))
    return examples


def import_llamaindex(source: str, options: ImportOptions) -> Imported:
    return _import_examples(llamaindex_examples(source), source, options)


def _import_examples(examples: list[Example], source: str, options: ImportOptions) -> Imported:
    """Gold chunks are the `--corpus` chunks the reference contexts cover (see ContextMatcher): a
    context longer than the chunks marks every chunk it covers. Contexts spanning several chunks are
    counted, and so are contexts longer than the corpus's median chunk. The examples are checked
    before the corpus is read, a chunk at a time: of the chunks, only their ids and lengths are kept.
    Without a corpus the contexts themselves become it (a testset often comes without its documents;
    see _contexts_as_chunks), matched the same way: contexts cut with overlap cover each other."""
    chunks = None if options.corpus else _contexts_as_chunks(context for example in examples for context in example.contexts)
    if chunks == []:  # as an empty --corpus is refused
        raise ValidationError(f"{display_name(source)}: no reference context holds any text, so there is no corpus to write; "
                              "give corpus= (the chunks of the documents the questions were asked of)")
    matcher = ContextMatcher((context for example in examples for context in example.contexts), options.threshold)
    lengths = Tally()
    for chunk in unique_chunks(options.corpus) if options.corpus else chunks or ():
        matcher.add(chunk)
        lengths[count_words(chunk.text)] += 1
    median = lengths.at(lengths.total() // 2)
    items: list[GoldenItem] = []
    counts: Counter[str] = Counter()
    matched = Counter({"exact": 0, "covered": 0, "overlap": 0, "none": 0})
    spanning: Counter[int] = Counter()
    longer = 0
    for example in examples:
        gold: list[str] = []
        matches = []
        for context in example.contexts:
            found = matcher.match(context)
            matched[found.how] += 1
            matches.append(found.meta())
            spanning[len(found.ids)] += len(found.ids) > 1
            longer += found.words > median
            gold.extend(i for i in found.ids if i not in gold)
        meta: dict[str, Any] = {"context_matches": matches, **example.meta, **({"line": example.line} if example.line is not None else {})}
        if not example.answers:
            meta["no_answer"] = True
            counts["queries without an answer"] += 1
        items.append(GoldenItem(example.query_id, example.query.strip(), example.answers, tuple(gold), meta))
    contexts_total = sum(matched.values())
    return Imported(items, chunks, counts, {
        "overlap_threshold": options.threshold, "cover": matcher.cover, "contexts_matched": dict(matched),
        "contexts": contexts_total, "contexts_longer_than_median_chunk": longer, "median_chunk_words": median,
        "contexts_spanning_chunks": {str(k): v for k, v in sorted(spanning.items()) if v},
        **({"corpus": f"the {len(chunks)} distinct reference contexts, a chunk each"} if chunks is not None else {}),
    })


def _contexts_as_chunks(contexts: Iterable[str]) -> list[Chunk]:
    """The distinct non-blank contexts as chunks, each named by a hash of its text: the same id whatever the
    examples' order and when examples are added. Retrieval then searches the contexts alone, not the
    documents they were cut from."""
    chunks: dict[str, Chunk] = {}
    for context in filter(str.strip, contexts):
        if context not in chunks:
            name = "ctx-" + hashlib.blake2b(context.encode("utf-8"), digest_size=6).hexdigest()
            chunks[context] = Chunk(name, context, name, 0, len(context))
    return list(chunks.values())


# A ragas testset (TestsetGenerator's to_pandas, saved as CSV, JSON or JSONL): v0.2 on names its fields user_input,
# reference_contexts and reference; v0.1 question, contexts and ground_truth (ground_truths, a list, before it).
RAGAS_COLUMNS = {"id": ("query_id", "id"), "query": ("user_input", "question"), "answer": ("reference", "ground_truth", "ground_truths")}
RAGAS_CONTEXTS = ("reference_contexts", "contexts")
SYSTEM_ANSWERS = ("answer", "response")  # a ragas evaluation file's RAG output: beside them v0.1's `contexts` were retrieved
LIST_LITERAL = re.compile(r"""\A\[\s*(['"]|\]\Z)""")  # a list of strings as pandas or json wrote it: [ then a quote, or []
HOP_MARKER = re.compile(r"\A<\d+-hop>\s*")  # ragas's multi-hop synthesizers put "<1-hop>\n\n" before each context's text
# A DeepEval dataset of goldens: input, expected_output, context (a list; in CSV joined by "|"), as save_as writes it.
DEEPEVAL_COLUMNS = {"id": ("query_id", "id", "name"), "query": ("input",), "answer": ("expected_output",)}
DEEPEVAL_JOIN = "|"
# A Giskard RAGET testset (generate_testset's QATestset.save: JSON Lines of id, question, reference_answer,
# reference_context, conversation_history, metadata): reference_context joins the knowledge-base documents the
# question was written from, each as "Document <id>: <text>", with a blank line between two.
GISKARD_COLUMNS: dict[str, tuple[str, ...]] = {"id": ("id",), "query": ("question",), "answer": ("reference_answer",)}
GISKARD_CONTEXT = "reference_context"
GISKARD_DOCUMENT = re.compile(r"(?:\A|\n\n)Document ([^\n]*?): ")
GISKARD_OUT_OF_SCOPE = "out of scope"  # metadata.question_type of a question on a fact the documents lack: nothing is relevant


def ragas_examples(source: str, columns: dict[str, str | None] | None = None) -> list[Example]:
    """The questions of a ragas testset; `columns` names other fields for the query, answer and id. CSV cells hold
    the lists as pandas wrote them (Python literals: "['first context', 'second']")."""
    return _ragas(source, columns)[0]


def _counting_importer(read: Callable[[str, dict[str, str | None] | None], tuple[list[Example], int]],
                       left_out: str) -> Callable[[str, ImportOptions], Imported]:
    """The importer of the examples `read` returns, with how many it left out, counted in a warning as `left_out`."""
    def run(source: str, options: ImportOptions) -> Imported:
        examples, skipped = read(source, options.columns)
        result = _import_examples(examples, source, options)
        if skipped:
            result.counts[left_out] = skipped
        return result
    return run


def _ragas(source: str, columns: dict[str, str | None] | None) -> tuple[list[Example], int]:
    """ragas_examples, and how many samples a reviewer rejected in the Ragas app (approval_status): left out."""
    header, rows = _table_records(source)
    resolved = _resolve_columns(header, columns or {}, source, RAGAS_COLUMNS)
    contexts_column = next((c for c in RAGAS_CONTEXTS if c in header), None)
    if contexts_column is None:
        raise FormatError(display_name(source), f"no reference contexts (looked for {', '.join(RAGAS_CONTEXTS)}; columns: "
                          f"{', '.join(header)})", hint="a file of questions and answers alone imports as format='csv' or format='jsonl'")
    system = next((c for c in SYSTEM_ANSWERS if c in header), None)
    if contexts_column == "contexts" and system:
        table = next((f for f in ("csv", "jsonl", "parquet") if source.lower().removesuffix(".gz").endswith(f".{f}")), None)
        raise FormatError(display_name(source), f"a ragas evaluation file: its 'contexts' are what the RAG system retrieved for its "
                          f"{system!r}, not the contexts the questions were written from; import the testset itself" +
                          (f" (or this file without gold: format={table!r} with answer_col={resolved['answer']!r})" if table else ""))

    def contexts(row: dict[str, Any], where: dict[str, Any]) -> list[str]:
        return [HOP_MARKER.sub("", context, count=1) for context in _text_list(row.get(contexts_column), contexts_column, where)]

    examples, rejected = [], 0
    for n, (line, row) in enumerate(rows):
        if row.get("approval_status") == "rejected":
            rejected += 1
            continue
        examples.append(_example(source, n, line, row, resolved, contexts))
    return examples, rejected


def deepeval_examples(source: str, columns: dict[str, str | None] | None = None) -> list[Example]:
    """The goldens of a DeepEval dataset (`save_as` of an EvaluationDataset or a Synthesizer: JSON, CSV, or JSONL):
    input, expected_output and `context`, the contexts a golden was written from (`retrieval_context`, what a RAG
    system retrieved, is not gold). A CSV cell joins a golden's contexts with "|", as DeepEval writes them."""
    header, rows = _table_records(source)
    resolved = _resolve_columns(header, columns or {}, source, DEEPEVAL_COLUMNS)
    if "context" not in header:
        raise FormatError(display_name(source), f"no 'context' field (columns: {', '.join(header)}): DeepEval keeps there the "
                          "contexts a golden was written from", hint="a file of questions and answers alone imports as "
                          "format='csv' or format='jsonl'")

    def contexts(row: dict[str, Any], where: dict[str, Any]) -> list[str]:
        cell = row.get("context")
        return [c for c in cell.split(DEEPEVAL_JOIN) if c.strip()] if isinstance(cell, str) else _text_list(cell, "context", where)

    return [_example(source, n, line, row, resolved, contexts) for n, (line, row) in enumerate(rows)]


def import_deepeval(source: str, options: ImportOptions) -> Imported:
    return _import_examples(deepeval_examples(source, options.columns), source, options)


def giskard_examples(source: str, columns: dict[str, str | None] | None = None) -> list[Example]:
    """The questions of a Giskard RAGET testset, each with the documents of its reference_context (its gold once
    matched), its metadata's question_type in meta, and a conversational question's opening user turns put before
    it (alone it is not meant to be understood: "Is it possible?")."""
    return _giskard(source, columns)[0]


def _giskard(source: str, columns: dict[str, str | None] | None) -> tuple[list[Example], int]:
    """giskard_examples, and how many out-of-scope questions were left out."""
    header, rows = _table_records(source)
    resolved = _resolve_columns(header, columns or {}, source, GISKARD_COLUMNS)
    if GISKARD_CONTEXT not in header:
        raise FormatError(display_name(source), f"no {GISKARD_CONTEXT!r} field (columns: {', '.join(header)}): Giskard keeps there the "
                          "documents a question was written from", hint="a file of questions and answers alone imports as "
                          "format='csv' or format='jsonl'")

    def contexts(row: dict[str, Any], where: dict[str, Any]) -> list[str]:
        text = row.get(GISKARD_CONTEXT)
        if text is None:
            return []
        if not isinstance(text, str):
            raise FormatError(**where, message=f"field {GISKARD_CONTEXT!r} should be a text, found {shown_json(text)[:80]}")
        marks = list(GISKARD_DOCUMENT.finditer(text))
        if not marks or marks[0].start():  # not written by Giskard: the whole text is the context
            return [text] if text.strip() else []
        return [text[mark.end():ends.start() if ends else len(text)] for mark, ends in zip(marks, [*marks[1:], None])]

    examples, out_of_scope = [], 0
    for n, (line, row) in enumerate(rows):
        where = _row_where(source, n, line)
        metadata = _literal(row.get("metadata"), dict, "metadata", where)
        if metadata.get("question_type") == GISKARD_OUT_OF_SCOPE:
            out_of_scope += 1
            continue
        history = _literal(row.get("conversation_history"), list, "conversation_history", where)
        opening = [turn["content"] for turn in history if isinstance(turn, dict) and turn.get("role") == "user"
                   and isinstance(turn.get("content"), str) and turn["content"].strip()]
        query = str(resolved["query"])
        if opening and isinstance(row.get(query), str):
            row = {**row, query: " ".join([*(turn.strip() for turn in opening), row[query].strip()])}
        kind = metadata.get("question_type")
        example = _example(source, n, line, row, resolved, contexts)
        examples.append(replace(example, meta={"question_type": kind}) if isinstance(kind, str) else example)
    return examples, out_of_scope


def _row_where(source: str, n: int, line: int | None) -> dict[str, Any]:
    """Where the n-th row of a testset table is, for FormatError: its line, or its record number."""
    return {"path": display_name(source), "line": line} if line is not None else {"path": f"{display_name(source)} record {n + 1}"}


def _example(source: str, n: int, line: int | None, row: dict[str, Any], resolved: dict[str, str | None],
             contexts: Callable[[dict[str, Any], dict[str, Any]], list[str]]) -> Example:
    """The n-th row of a testset table as an Example; `contexts(row, where)` reads its contexts (where: for errors)."""
    where = _row_where(source, n, line)
    query_column, answer_column = str(resolved["query"]), str(resolved["answer"])
    query, answer = row.get(query_column), row.get(answer_column)
    if not isinstance(query, str):
        raise FormatError(**where, message=f"field {query_column!r} (the question) should be a string, found {shown_json(query)}")
    if answer is not None and not isinstance(answer, str) and answer_column != "ground_truths":
        raise FormatError(**where, message=f"field {answer_column!r} (the reference answer) should be a text, found "
                          f"{shown_json(answer)[:80]}")
    texts = _text_list(answer, answer_column, where) if answer_column == "ground_truths" else [answer or ""]
    query_id = query_id_of(row.get(resolved["id"]), source, f"field {resolved['id']!r} (the query id)", line) if resolved["id"] else ""
    return Example(query_id or f"q{n + 1}", query, contexts(row, where), tuple(t.strip() for t in texts if t.strip()), line)


def _text_list(value: Any, column: str, where: dict[str, Any]) -> list[str]:
    """Texts from a list, from a list written as a Python or JSON literal in a string, or one text (which may start
    with "[", as "[1] Smith et al." does, but not with "['")."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not LIST_LITERAL.match(text):
            return [value] if text else []
        value = _parsed_literal(text, column, where)
    if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
        raise FormatError(**where, message=f"field {column!r} should be a list of texts, found {shown_json(value)[:80]}")
    return value


def _literal(value: Any, kind: type, column: str, where: dict[str, Any]) -> Any:
    """A dict or list field (`kind`), which a CSV cell holds as the Python literal pandas wrote; empty where missing."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        value = _parsed_literal(value.strip(), column, where)
    if value is None or value == "":
        return kind()
    if not isinstance(value, kind):
        raise FormatError(**where, message=f"field {column!r} should be a {'mapping' if kind is dict else 'list'}, found "
                          f"{shown_json(value)[:80]}")
    return value


def _parsed_literal(text: str, column: str, where: dict[str, Any]) -> Any:
    check_nesting(text, where["path"], where.get("line"))
    try:
        return _array_strings(text) or ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise FormatError(**where, message=f"field {column!r} starts as a {'list' if text[0] == '[' else 'mapping'} but is not "
                          f"one: {text[:60]!r}...") from None


def _array_strings(text: str) -> list[str] | None:
    """The texts of a numpy array's repr, "['first' 'second']" (a line break between them where long), as pandas writes a
    list column read from Parquet or a Hugging Face dataset: read as a Python literal, the adjacent strings were joined
    into one context. None where `text` is not that (a list's repr has commas; a one-text array reads as a list)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _LAYOUT]
    except (tokenize.TokenError, SyntaxError):
        return None
    inner = tokens[1:-1]
    if len(inner) < 2 or tokens[0].string != "[" or tokens[-1].string != "]" or any(t.type != tokenize.STRING for t in inner):
        return None
    return [ast.literal_eval(t.string) for t in inner]


_LAYOUT = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def _table_records(source: str) -> tuple[list[str], list[tuple[int | None, dict[str, Any]]]]:
    """The field names and (line or None, row) of a testset saved as CSV/TSV, JSON Lines or JSON: a list of records,
    pandas' default to_json ({column: {row: value}}), or the Ragas app's samples ({"eval_sample": {...},
    "synthesizer_name", "approval_status"}, the sample's fields taken up beside the others). Whether a .json or
    .jsonl file holds JSON or JSON Lines is read from its first line (see _json_lines)."""
    if source == STDIO:  # which of the three it is comes from the suffix
        raise UsageError("a ragas, DeepEval or Giskard testset is read from a file (.csv, .json or .jsonl), not from stdin")
    name = source.lower().removesuffix(".gz")
    if name.endswith((".csv", ".tsv")):
        header, table = _csv_table(source)
        return header, list(table)
    rows: list[tuple[int | None, dict[str, Any]]]
    if is_parquet(source) or name.endswith(".jsonl") and _json_lines(source):
        rows = list(split_records(split_files(source)))
    elif _json_lines(source):
        rows = list(read_jsonl(source))
    else:
        data = load_json(source)
        if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            index = list(dict.fromkeys(key for column in data.values() for key in column))
            data = [{column: values.get(key) for column, values in data.items()} for key in index]
        records = expect(data, list, source, "the top level (a list of records)")
        rows = [(None, expect(record, dict, source, f"record {n + 1}")) for n, record in enumerate(records)]
    rows = [(line, {**row["eval_sample"], **{k: v for k, v in row.items() if k != "eval_sample"}})
            if isinstance(row.get("eval_sample"), dict) else (line, row) for line, row in rows]
    return list(dict.fromkeys(key for _, row in rows for key in row)), rows


def _json_lines(source: str) -> bool:
    """Whether a testset file holds JSON Lines: a .jsonl does, unless it holds one JSON list (as some save a testset);
    so does a .json whose first line is a whole object with more lines after it (pandas' to_json(lines=True) to a
    .json name, as Giskard's QATestset.save("testset.json") writes)."""
    first, value, more = _first_line(source)
    if source.lower().removesuffix(".gz").endswith(".jsonl"):
        return not first.startswith("[")
    return more and isinstance(value, dict)


import_ragas = _counting_importer(_ragas, "samples rejected in review (approval_status), left out")
import_giskard = _counting_importer(_giskard, "out-of-scope questions (on a fact the documents lack, so no chunk is relevant), left out")
READ_EXAMPLES: dict[str, Callable[[str], list[Example]]] = {  # the questions of each of CONTEXT_FORMATS, with their contexts
    "llamaindex": llamaindex_examples, "ragas": ragas_examples, "deepeval": deepeval_examples, "giskard": giskard_examples}


# ---------------------------------------------------------------- CSV and JSONL with named columns


def _resolve_columns(available: Sequence[str], chosen: dict[str, str | None], path: str,
                     known: dict[str, tuple[str, ...]] = DEFAULT_COLUMNS) -> dict[str, str | None]:
    """Column name per role of `known`: the one the user named (which must exist) or the first default present, in any
    case where none is as written (a spreadsheet's 'Question' and 'Answer' had been refused as no query column)."""
    resolved: dict[str, str | None] = {}
    for role, defaults in known.items():
        name = chosen.get(role)
        if name:
            if name not in available:
                raise FormatError(display_name(path), f"no column {name!r} (columns: {', '.join(available)})")
            resolved[role] = name
        else:
            resolved[role] = next((d for d in defaults if d in available), None) or \
                next((a for d in defaults for a in available if a.lower() == d), None)
    for role in ("query", "answer"):
        if resolved[role] is None:
            raise FormatError(
                display_name(path), f"no {role} column (looked for {', '.join(known[role])}; "
                f"columns: {', '.join(available) or 'none'})", hint=f"name it with --{role}-col",
            )
    return resolved


def _id_list(value: Any, column: str, path: str, line: int) -> tuple[str, ...]:
    """Chunk ids from a list, a JSON list in a string, or a string separated by spaces , ; or |."""
    if value is None:
        return ()
    if isinstance(value, str) and value.strip().startswith("["):
        check_nesting(value, path, line)
        try:
            value = json.loads(value)
        except ValueError:  # invalid JSON, or a number of more digits than Python reads
            raise FormatError(display_name(path), f"chunk id list {value[:80]!r} is not valid JSON", line=line) from None
    if isinstance(value, list):
        wrong = next((v for v in value if not is_id(v)), None)
        if wrong is not None or None in value:
            raise FormatError(display_name(path), f"field {column!r} (the gold chunk ids) should list chunk ids (strings), "
                              f"found {shown_json(wrong)} in the list", line=line)
        ids: Sequence[str] = [sanitise_id(str(v)) if _file_name(str(v).split()) else str(v) for v in value]
    elif is_id(value):
        ids = _cell_ids(str(value))
    else:
        raise FormatError(display_name(path), f"field {column!r} (the gold chunk ids) should be a list of chunk ids or a string of "
                          f"ids separated by spaces, ',', ';' or '|', found {shown_json(value)}", line=line)
    return tuple(line_id(i, "gold chunk id", path, line) for i in ids)


def _answers(value: Any, column: str, path: str, line: int) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    wrong = next((v for v in values if not isinstance(v, (str, type(None)))), None)
    if wrong is not None:
        raise FormatError(display_name(path), f"field {column!r} (the answer) should be a string or a list of strings, "
                          f"found {shown_json(wrong if isinstance(value, list) else value)}", line=line)
    return tuple(v.strip() for v in values if v and v.strip())


def _other_name(row: dict[str, Any], role: str, column: str | None) -> str | None:
    """A default name of `role` that `row` has although the chosen column is not in it (JSONL lines
    that name a field differently)."""
    if column in row:
        return None
    return next((d for d in DEFAULT_COLUMNS[role] if d != column and d in row), None)


def _golden_meta(row: dict[str, Any], columns: dict[str, str | None], path: str, line: int) -> dict[str, Any]:
    """The `meta` object of a line, as a golden.jsonl holds it (`semrel run` imports its `[golden] file`, a golden set pick
    wrote too), but for the marks the import makes itself: dropped, Cranfield's graded qrels (1,836 judgments, 225 of
    grade 0) came out of it as 1,611 of rel 1, and answer spans and merged duplicates were lost. Nulls are left out: a
    Parquet struct gives each row every key of every row (and every chunk id graded in any row), null where it has none."""
    meta = row.get("meta")
    if "meta" in columns.values() or not isinstance(meta, dict):
        return {}
    meta = {key: value for key, value in meta.items() if value is not None and key not in ("line", "no_answer")}
    if isinstance(meta.get("grades"), dict):
        meta["grades"] = {chunk: grade for chunk, grade in meta["grades"].items() if grade is not None}
    check_grades(meta, path, line)
    return meta


def _rows_to_items(rows: Iterable[tuple[int, dict[str, Any]]], columns: dict[str, str | None], path: str,
                   named: Iterable[str] = ()) -> Imported:
    """GoldenItems of the rows; a row lacking a column it holds under another default name (of a
    role the user did not name a column for) is refused."""
    items: list[GoldenItem] = []
    counts: Counter[str] = Counter()
    numbered: dict[str, int | None] = {}  # ids semrel gave lines without one -> their line
    query_column, answer_column = columns["query"], columns["answer"]
    guessed = {role: column for role, column in columns.items() if role not in set(named)}
    for line, row in rows:
        for role, column in guessed.items():
            other = _other_name(row, role, column)
            if other is not None:
                raise FormatError(display_name(path), f"no {column!r} field but {other!r}: other lines give the "
                                  f"{ROLE_NAMES[role]} as {column!r}; name it the same on every line "
                                  f"(or choose the field with {ROLE_OPTIONS[role]})", line=line)
        if query_column not in row:
            raise FormatError(display_name(path), f"missing field {query_column!r}", line=line)
        if answer_column not in row:
            raise FormatError(display_name(path), f"missing field {answer_column!r}", line=line)
        query = row[query_column]
        if not isinstance(query, str):
            raise FormatError(display_name(path), f"the query should be a string, found {type(query).__name__}", line=line)
        answers = _answers(row[answer_column], str(answer_column), path, line)
        meta: dict[str, Any] = {**_golden_meta(row, columns, path, line), "line": line}
        if not answers:
            meta["no_answer"] = True
            counts["queries without an answer"] += 1
        id_column, chunks_column = columns["id"], columns["chunk_ids"]
        if id_column and id_column not in row:
            counts[f"lines without a {id_column!r} field (given the id q<n>, n the line's query number)"] += 1
        if chunks_column and chunks_column not in row:
            counts[f"lines without a {chunks_column!r} field (no gold chunks)"] += 1
        query_id = query_id_of(row.get(id_column), path, f"field {id_column!r} (the query id)", line) if id_column else ""
        gold = _id_list(row.get(chunks_column), chunks_column, path, line) if chunks_column else ()
        if not query_id:
            numbered[f"q{len(items) + 1}"] = line
        items.append(GoldenItem(query_id or f"q{len(items) + 1}", query.strip(), answers, gold, meta))
    given = next((i for i in items if i.query_id in numbered and i.meta.get("line") != numbered[i.query_id]), None)
    if given is not None:  # the duplicate check would blame a line that gives no id at all
        raise FormatError(display_name(path), f"query id {given.query_id!r} is the one semrel gives line "
                          f"{numbered[given.query_id]}, which has none (its query's number): give every line an id, or none",
                          line=given.meta.get("line"))
    return Imported(items, None, counts, {"columns": columns})


def import_csv(source: str, options: ImportOptions) -> Imported:
    """A CSV (or .tsv) file with a header row; see DEFAULT_COLUMNS for the names it looks for."""
    header, rows = table_rows(source, "csv")
    columns = _resolve_columns(header, options.columns, source)
    return _unread_columns(_rows_to_items(rows, columns, source), header, columns)


def table_rows(source: str, fmt: str) -> tuple[list[str], Iterable[tuple[int, dict[str, Any]]]]:
    """The columns and the (line, row) pairs of a CSV, JSONL or Parquet golden set (a JSONL file's columns are the keys
    of all its lines; a Parquet table's rows are numbered as lines)."""
    if fmt == "csv":
        return _csv_table(source)
    shards = split_files(source)
    if fmt == "parquet":
        return split_columns(shards), split_records(shards)
    rows = list(split_records(shards))
    return list(dict.fromkeys(key for _, row in rows for key in row)), rows


def _unread_columns(imported: Imported, available: Sequence[str], columns: dict[str, str | None]) -> Imported:
    """Without a gold chunk ids column, the columns left unread are counted in a warning beside the queries left
    without gold: a column naming each answer's source file was dropped in silence, and the run then had no gold."""
    unread = [name for name in available if name and name not in columns.values()]
    if columns["chunk_ids"] is None and unread and imported.items:
        names = ", ".join(repr(name) for name in unread)
        gold, last = DEFAULT_COLUMNS["chunk_ids"][:-1], DEFAULT_COLUMNS["chunk_ids"][-1]
        imported.counts[f"queries without gold chunks, as {'column' if len(unread) == 1 else 'columns'} {names} "
                        f"{'is' if len(unread) == 1 else 'are'} not read (gold is read from a column {', '.join(gold)} or "
                        f"{last}, or the one chunk_ids_col= names: chunk ids, or document ids or file names with "
                        "doc_qrels=)"] = len(imported.items)
    return imported


def _csv_table(source: str) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """The header and the (line, row) of a CSV (or .tsv) file. Strict: a row with more or fewer cells than the
    header, or a quote that is never closed (which would swallow the rows after it into one cell), is an error
    naming the line the row starts on."""
    text = read_text(source)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(source, _header_line(text)), strict=True)
    start = 1  # the line the row being read starts on

    def refused(exc: csv.Error) -> FormatError:
        unclosed = "; a quote opened there is never closed" if "end of data" in str(exc) else ""
        return FormatError(display_name(source), f"not valid CSV ({exc}{unclosed})", line=start)

    try:  # blank lines before the header are skipped, as after it (an export's leading empty line read as no columns)
        header = [h.strip() for h in next((cells for cells in reader if any(c.strip() for c in cells)), [])]
    except csv.Error as exc:
        raise refused(exc) from None
    twice = next((h for n, h in enumerate(header) if h and h in header[:n]), None)
    if twice is not None:  # a row's cells are taken by column name: the second would silently win
        raise FormatError(display_name(source), f"the header names column {twice!r} twice; rename one of them", line=reader.line_num)

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        nonlocal start
        start = reader.line_num + 1
        try:
            for cells in reader:
                if cells:
                    _check_cells(cells, len(header), source, start)
                    yield start, dict(zip(header, cells))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise refused(exc) from None

    return header, rows()


def _header_line(text: str) -> str:
    """The first line of `text` that is not blank: a CSV's header, which tells its delimiter."""
    first = next((n for n, char in enumerate(text) if not char.isspace()), len(text))
    start = text.rfind("\n", 0, first) + 1  # back to the start of the header's line (its indent is the header's)
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _delimiter(source: str, header: str) -> str:
    """A tab in .tsv; in .csv a comma, or a semicolon where the header has one and no comma: Excel writes CSV with
    semicolons where a comma is the decimal mark (most of Europe); or a tab where the header has one and neither:
    Excel's "Unicode Text" (UTF-16) separates cells with tabs, and was read as one column."""
    if source.lower().removesuffix(".gz").endswith(".tsv"):
        return "\t"
    if "," in header:
        return ","
    return ";" if ";" in header else "\t" if "\t" in header else ","


def _check_cells(cells: list[str], columns: int, source: str, line: int) -> None:
    if len(cells) > columns:
        raise FormatError(display_name(source), f"more cells than the {columns} columns of the header", line=line)
    if len(cells) < columns:
        joined = any("\n" in cell for cell in cells)
        raise FormatError(display_name(source), f"{quantity(len(cells), 'cell')}, but the header has {columns} columns"
                          + ("; a quoted cell runs over several lines (an unclosed quote?)" if joined else ""), line=line)


def import_jsonl(source: str, options: ImportOptions) -> Imported:
    """One JSON object per line; the columns are chosen from the keys of all lines (a line may leave
    out the id or gold chunk ids, but a line naming a field otherwise than the rest is refused)."""
    return _import_records(source, options, "jsonl")


def import_parquet(source: str, options: ImportOptions) -> Imported:
    """A Parquet table (as Hugging Face's hub serves datasets), a row per query; its columns are read as JSONL's keys
    (lists and numbers as they are typed)."""
    return _import_records(source, options, "parquet")


def _import_records(source: str, options: ImportOptions, fmt: str) -> Imported:
    keys, rows = table_rows(source, fmt)
    columns = _resolve_columns(keys, options.columns, source)
    named = [role for role, name in options.columns.items() if name]
    return _unread_columns(_rows_to_items(rows, columns, source, named=named), keys, columns)


# ---------------------------------------------------------------- BEIR folders


def import_beir(source: str, options: ImportOptions) -> Imported:
    """The queries and qrels/<split>.tsv; gold = grade > 0, grades kept in meta when not all 1.

    As BEIR's own loader, only the queries the split's qrels judge are kept (the queries file holds the
    queries of every split); how many were left out is counted. BEIR queries rarely carry answers;
    one in `answer` or `metadata.answer` is used when present.
    """
    split = BEIR_SPLIT if options.split is None else options.split
    folder = beir_folder(source, split)
    judged = graded_pairs(read_beir_qrels(folder.qrels))  # a pair judged twice is refused, as eval refuses it
    graded = any(r != 1 for docs in judged.values() for r in docs.values())
    items: list[GoldenItem] = []
    counts: Counter[str] = Counter()
    in_split, left_out = set(judged), 0
    for queries_path, line, obj in beir_records(folder.queries):
        raw_id = obj.get("_id")
        if not is_id(raw_id) or raw_id == "" or not isinstance(obj.get("text"), str):
            raise FormatError(display_name(queries_path), "a query needs '_id' (a string) and 'text' (a string)", line=line)
        query_id = str(raw_id)
        if query_id not in in_split:
            left_out += 1
            continue
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict):
            metadata = {}
        field = "answer" if "answer" in obj else "metadata.answer"
        answers = _answers(obj.get("answer", metadata.get("answer")), field, str(queries_path), line)
        grades = judged.pop(query_id, {})  # {}: a repeated query, which import_golden refuses
        meta: dict[str, Any] = {"grades": grades} if graded and grades else {}
        if not answers:
            meta["no_answer"] = True
            counts["queries without an answer (BEIR sets rarely have one; judging needs one)"] += 1
        gold = tuple(d for d, r in grades.items() if r > 0)
        query_id = query_id_of(query_id, queries_path, "'_id'", line)
        items.append(GoldenItem(query_id, obj["text"].strip(), answers, gold, meta))
    split_file, queries = f"qrels/{split}.tsv", folder.name("queries")
    if left_out and not items:
        raise FormatError(display_name(folder.qrels), f"judges none of the {left_out} queries of {queries}",
                          hint="is split= right? it names the qrels file read")
    if left_out:
        counts[f"queries of {queries} that {split_file} does not judge (other splits'; left out)"] += left_out
    if judged:
        counts[f"qrels queries not in {queries} (ignored)"] += len(judged)
    return Imported(items, None, counts, {"split": split, "queries_left_out": left_out})


def _where(shards: Sequence[str], item: GoldenItem) -> str:
    """The source file (the shard of a split), and the line an item came from where the importer recorded it (CSV, JSONL)."""
    line = item.meta.get("line")
    if not isinstance(line, int):
        return display_name(shards[0]) if len(shards) == 1 else split_name(shards)
    path, line = shard_at(shards, line)
    return f"{display_name(path)}:{line}"


def import_golden(source: str, fmt: str, options: ImportOptions, steps: Steps = no_progress,
                  shards: Sequence[str] | None = None) -> Imported:
    """Run the importer for `fmt` ('auto' detects it), keep the queries of `options.sample`, and check
    the gold chunk ids against --corpus (gold document ids made chunk ids as --doc-qrels says). `shards`: as detect_format."""
    # a split the hub stores as several files is read as one set from its first
    shards = split_files(source, options.split) if shards is None else shards
    importers = {
        "squad": import_squad, "llamaindex": import_llamaindex, "llamaindex-pairs": import_llamaindex_pairs, "ragas": import_ragas,
        "deepeval": import_deepeval, "giskard": import_giskard,
        "csv": import_csv, "jsonl": import_jsonl, "parquet": import_parquet,
        "beir": import_beir, "pubmedqa": import_pubmedqa, "msmarco": import_msmarco, "cranfield": import_cranfield,
        "trec": import_trec,
    }
    fmt = detect_format(source, options.split, shards) if fmt == "auto" else fmt
    if fmt not in importers:
        raise UsageError(f"format={fmt!r}: choose one of {', '.join(FORMATS)}")
    if options.docs and options.corpus:
        raise UsageError("give docs= (documents chunked by this import, with corpus_out=) or corpus= (chunked already), not both")
    if options.docs and fmt != "trec":
        raise UsageError(f"docs= goes with format='trec' (the collection's documents); this source is {fmt}")
    if options.qrels and fmt != "trec":
        raise UsageError(f"qrels= goes with format='trec'; this source is {fmt}")
    if options.doc_qrels and fmt not in ("trec", "beir", "csv", "jsonl", "parquet"):
        raise UsageError(f"doc_qrels= applies to gold document ids (trec, beir, csv, jsonl, parquet); this source is {fmt}")
    if options.doc_qrels and fmt in ("csv", "jsonl", "parquet") and not options.corpus:  # it mapped nothing, without a word
        raise UsageError(f"doc_qrels={options.doc_qrels!r} maps gold document ids to chunks of corpus=, which is not given: give "
                         "corpus= (the corpus.jsonl `semrel corpus chunk` wrote of the documents)")
    with sanitised_ids() as changed:
        try:
            result = importers[fmt](shards[0], options)
        except FormatError as exc:  # a row's number in the split: the shard and its own row
            raise placed(exc, shards) from None
    result.params["format"] = fmt
    if len(shards) > 1:
        result.counts[f"files of the split {split_name(shards)}, read as one set"] = len(shards)
    if split_of(shards):  # the manifest says which of the hub's splits was read, as BEIR's says its qrels split
        result.params.setdefault("split", split_of(shards))
    if changed:  # one line for all of them: the golden set (and corpus) name them otherwise than the source
        given, made = next(iter(changed.items()))
        blanks = f"ids with blanks, which become '_' so that they differ from the source's (e.g. {given!r} is {made!r})"
        result.counts[blanks] = len(changed)
    if not result.items:  # an empty golden set, written with exit 0, only failed later (validate, retrieve, judge)
        raise ValidationError(f"{display_name(source)}: no queries in this {fmt} source; nothing was written")
    if result.chunks is not None and not result.chunks:  # likewise an empty corpus.jsonl
        raise ValidationError(f"{display_name(source)}: no context of this {fmt} source holds text, so the corpus would be "
                              "empty; nothing was written")
    if any(not i.query_id for i in result.items):
        raise ValidationError(f"{source}: a query id is empty (or only spaces); give every query an id")
    blank = [i for i in result.items if i.blank]
    if blank:  # `golden validate` calls it an error, and there is nothing to retrieve for
        raise ValidationError(f"{_where(shards, blank[0])}: the query of {blank[0].query_id!r} is empty ({len(blank)} such); "
                              "give every query its text")
    first: dict[str, GoldenItem] = {}
    for item in result.items:
        if item.query_id in first:
            earlier = first[item.query_id].meta.get("line")
            blanks = " (blanks in an id become '_': 'a b' and 'a_b' are one id)" if "_" in item.query_id else ""
            first_line = "" if not isinstance(earlier, int) else f" (first on line {earlier})" if len(shards) == 1 else \
                f" (first at {_where(shards, first[item.query_id])})"
            raise ValidationError(f"{_where(shards, item)}: query id {item.query_id!r} occurs more than once{first_line}; "
                                  f"query ids must be unique{blanks}")
        first[item.query_id] = item
    if options.sample.active:
        total = len(result.items)
        result.items = options.sample.apply(result.items)
        result.params["queries"] = {"source": total, **(options.sample.describe() or {})}
        # the importer counted the whole source: said as they stand, 2 queries without an answer read as 2 of the sample's
        result.counts = Counter({f"{what} (in the whole source of {total} queries, before sampling)": n
                                 for what, n in result.counts.items()})
    lacking = [item.query_id for item in result.items if lacks_answer(item)]  # of the queries kept, as validate sees them
    if lacking:
        result.counts[f"reference answers that say their context does not hold (all of) the answer (e.g. {lacking[0]!r}; "
                      "`semrel golden validate` lists them)"] = len(lacking)
    corpus = options.corpus
    if corpus and result.chunks is None and fmt not in CONTEXT_FORMATS:
        mode = options.doc_qrels or ("all-chunks" if fmt == "trec" else None)
        ids = corpus_ids(counted(unique_chunks(corpus), steps, f"reading {display_name(corpus)}"), result.items,
                         texts=mode == "answer-chunk")
        result.items, changed = as_spelled(result.items, ids)
        if changed:  # told: the golden set's ids then differ from the source's, as for ids with blanks
            given, made = next(iter(changed.items()))
            result.counts[f"gold ids written as the corpus spells them, which differed from its ids only in Unicode form (e.g. "
                          f"{ascii(given)} is {ascii(made)}: an accent typed apart, as macOS names files)"] = len(changed)
        result.items, mapped = map_document_ids(result.items, ids, mode, source, corpus, drop_unknown=fmt == "trec")
        result.counts.update(mapped)
        if mapped:
            result.params["doc_qrels"] = mode
        require_known_chunks(result.items, ids.chunks, source, near=lambda given: _meant_document(given, corpus) or _cut_id(given, corpus))
    return result


def _cut_id(given: str, corpus: str) -> str:
    """'; ...' where an unknown gold id is a piece of a chunk id holding a , ; or | (of a file 'report, final.txt'): a cell's
    ids are split there, and the error named only the piece. A JSON list in the cell keeps each id whole."""
    for chunk in unique_chunks(corpus):
        if (at := _ID_SEPARATORS.search(chunk.id)) and given in _cell_ids(chunk.id):
            return (f"; the chunk id {chunk.id!r} holds {at.group()!r}, at which a cell's ids are split: give the cell as a "
                    f"JSON list, {json.dumps([chunk.id], ensure_ascii=False)}")
    return ""


def _meant_document(given: str, corpus: str) -> str:
    """'; did you mean ...?' where an unknown gold id is a file name close to a document's ('maintenence.docx' for the
    document 'maintenance'): a typo in a column of source files read as a chunking that does not match. One more pass
    over the corpus, on the way to the error only. The stem is in NFC, so `given` is compared and cut in NFC too: in NFD
    ('café#0' typed on macOS) a chunk id passed for a file name, and its cut dropped the '#' ('did you mean café0')."""
    given = id_form(given)
    stem = file_document_id(given)
    if stem == given:
        return ""
    documents = {chunk.doc_id for chunk in unique_chunks(corpus)}
    close = difflib.get_close_matches(stem, documents, n=1, cutoff=0.8)
    return f"; did you mean {close[0] + given[len(stem):]!r}, of the document {close[0]!r}?" if close else ""
