"""Converters for three public collections, PubMedQA (PQA-L), MS MARCO QnA and Cranfield (SMART files), and for
LlamaIndex's question-context pairs (the retrieval evaluation file its `generate_question_context_pairs` writes).

Each builds the corpus and the golden set in one step, as the SQuAD importer does.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from ..errors import FormatError, SemrelError
from ..formats.corpus import shown_json
from ..formats.files import display_name, read_lines
from ..formats.jsonl import load_json
from ..records import Chunk, GoldenItem
from .chunking import chunk_documents, sanitise_id
from .documents import cranfield_documents, smart_records
from .sources import Imported, ImportOptions, expect, query_id_of, record_rows

PUBMEDQA_SEPARATOR = "\n\n"
# Cleverdon's codes (cranqrel.readme): 1 complete answer .. 4 minimum interest; -1 is no interest.
CRANFIELD_GAIN = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}


def import_pubmedqa(source: str, options: ImportOptions) -> Imported:
    """ori_pqal.json: each PMID's CONTEXTS are its chunks `<pmid>#<i>` (the document is the contexts
    joined by a blank line, so offsets hold); query = QUESTION, reference = LONG_ANSWER, gold = all
    of that PMID's contexts (which one matters most is not labelled). Chunking options do not apply. A blank
    context (empty or only spaces) is no chunk and no gold, and is counted; the others keep their index in
    CONTEXTS (and in LABELS) and their offsets. A PMID whose contexts are all blank has no gold."""
    rows = record_rows(source)
    data = expect(load_json(source), dict, source, "the top level") if rows is None else _pubmedqa_rows_as_data(rows, source)
    chunks: list[Chunk] = []
    items: list[GoldenItem] = []
    counts: Counter = Counter()
    for pmid, record in data.items():
        record = expect(record, dict, source, f"record {pmid!r}")
        contexts = expect(record.get("CONTEXTS"), list, source, f"{pmid}.CONTEXTS")
        question = expect(record.get("QUESTION"), str, source, f"{pmid}.QUESTION")
        answer = str(record.get("LONG_ANSWER") or "").strip()
        doc_id, start, ids = query_id_of(pmid, source, f"record {pmid!r}"), 0, []  # made one token and checked as an id
        for i, context in enumerate(contexts):
            text = expect(context, str, source, f"{pmid}.CONTEXTS[{i}]")
            if text.strip():
                chunks.append(Chunk(id=f"{doc_id}#{i}", text=text, doc_id=doc_id, start=start, end=start + len(text)))
                ids.append(f"{doc_id}#{i}")
            else:  # an empty chunk, and gold, that nothing can match
                counts["blank contexts (empty or only spaces; not made chunks or gold)"] += 1
            start += len(text) + len(PUBMEDQA_SEPARATOR)
        meta: dict[str, Any] = {"final_decision": record.get("final_decision"), "labels": record.get("LABELS")}
        if not answer:
            meta["no_answer"] = True
            counts["queries without an answer"] += 1
        if not ids:
            counts["queries whose contexts are all blank (no gold)"] += 1
        items.append(GoldenItem(doc_id, question.strip(), (answer,) if answer else (), tuple(ids), meta))
    return Imported(items, chunks, counts, {"gold": "all contexts of the question's PMID"})


def _pubmedqa_rows_as_data(rows: Iterable[tuple[int, dict[str, Any]]], source: str) -> dict[str, Any]:
    """PubMedQA's rows as Hugging Face's hub holds them (qiaojin/PubMedQA: pubid, question, context {contexts, labels,
    ...}, long_answer, final_decision) as ori_pqal.json's records, keyed by PMID."""
    data: dict[str, Any] = {}
    for line, row in rows:
        context = row.get("context")
        if not isinstance(context, dict):
            raise FormatError(display_name(source), f"'context' should hold 'contexts' and 'labels', found {shown_json(context)}",
                              line=line)
        pmid = query_id_of(row.get("pubid"), source, "field 'pubid'", line)
        if not pmid:
            raise FormatError(display_name(source), "no pubid (the PMID, which names the question and its chunks)", line=line)
        if pmid in data:
            raise FormatError(display_name(source), f"pubid {pmid!r} is on two rows", line=line)
        data[pmid] = {"QUESTION": row.get("question"), "CONTEXTS": context.get("contexts"), "LABELS": context.get("labels"),
                      "LONG_ANSWER": row.get("long_answer"), "final_decision": row.get("final_decision")}
    return data


# MS MARCO's own text for a query its annotator could not answer (v2.1; v1.1 leaves `answers` empty)
MSMARCO_NO_ANSWER = "No Answer Present."


def _msmarco_records(data: Any, source: str) -> list[tuple[str, dict]]:
    """(where, record) of an MS MARCO QnA file: a list of records (v1.1, or Hugging Face's rows as JSON), or the
    official v2.1 file's columns ({"query": {"0": ...}, "passages": {"0": [...]}, ...})."""
    if isinstance(data, dict) and isinstance(data.get("passages"), dict):
        columns = {name: expect(column, dict, source, f"column {name!r}") for name, column in data.items()}
        return [(f"row {row}", {name: column.get(row) for name, column in columns.items()}) for row in columns["passages"]]
    return [(f"record {i}", record) for i, record in enumerate(expect(data, list, source, "the top level"))]


def _msmarco_passages(passages: Any, source: str, where: str) -> list[tuple[str, bool, str]]:
    """(text, is_selected, url) of a record's passages: a list of objects, or Hugging Face's parallel lists."""
    if isinstance(passages, dict):  # {"is_selected": [...], "passage_text": [...], "url": [...]}
        texts = expect(passages.get("passage_text"), list, source, f"{where}.passages.passage_text")
        selected = expect(passages.get("is_selected"), list, source, f"{where}.passages.is_selected")
        found = passages.get("url")
        urls: list = found if isinstance(found, list) else []
        if len(selected) != len(texts):
            raise FormatError(source, f"{where}.passages: {len(texts)} passage_text but {len(selected)} is_selected")
        passages = [{"passage_text": t, "is_selected": f, "url": urls[i] if i < len(urls) else None}
                    for i, (t, f) in enumerate(zip(texts, selected))]
    out = []
    for i, passage in enumerate(expect(passages, list, source, f"{where}.passages")):
        passage = expect(passage, dict, source, f"{where}.passages[{i}]")
        text = expect(passage.get("passage_text"), str, source, f"{where}.passages[{i}].passage_text")
        flag = passage.get("is_selected")
        if flag not in (0, 1) or isinstance(flag, float):  # True and False are 1 and 0
            raise FormatError(source, f"{where}.passages[{i}].is_selected should be 0 or 1, found {flag!r}")
        out.append((text, bool(flag), str(passage.get("url") or "")))
    return out


def import_msmarco(source: str, options: ImportOptions) -> Imported:
    """MS MARCO QnA (v1.1 or v2.1, the official layout or Hugging Face's): each query's passages are its chunks
    `<query_id>p<i>` (each passage its own document, its url in meta); query = `query`, references = `answers` and
    `wellFormedAnswers`; gold = the passages marked `is_selected`, which are the ones the annotator used to write the
    answer, not every one that answers it (docs/golden.md). A blank passage is no chunk and no gold, and is counted;
    the others keep their index. Chunking options do not apply."""
    chunks: list[Chunk] = []
    items: list[GoldenItem] = []
    counts: Counter = Counter()
    rows = record_rows(source)
    records = _msmarco_records(load_json(source), source) if rows is None else [(f"row {line}", row) for line, row in rows]
    for where, record in records:
        record = expect(record, dict, source, where)
        query_id = query_id_of(record.get("query_id"), source, f"{where}.query_id")
        query = expect(record.get("query"), str, source, f"{where}.query")
        answers: list[str] = []
        for key in ("answers", "wellFormedAnswers"):
            value = record.get(key) or []
            if value == "[]":  # v2.1's own file writes an empty wellFormedAnswers so
                value = []
            for answer in expect(value, list, source, f"{where}.{key}"):
                answer = expect(answer, str, source, f"{where}.{key}").strip()
                if answer and answer != MSMARCO_NO_ANSWER and answer not in answers:
                    answers.append(answer)
        gold = []
        for i, (text, selected, url) in enumerate(_msmarco_passages(record.get("passages"), source, where)):
            if not text.strip():  # an empty chunk, and gold if selected, that nothing can match
                counts["blank passages (empty or only spaces; not made chunks or gold)"] += 1
                continue
            chunk_id = f"{query_id}p{i}"
            chunks.append(Chunk(id=chunk_id, text=text, doc_id=chunk_id, start=0, end=len(text), meta={"url": url} if url else {}))
            if selected:
                gold.append(chunk_id)
        meta: dict[str, Any] = {"query_type": record.get("query_type")}
        if not answers:
            meta["no_answer"] = True
            counts["queries without an answer"] += 1
        if not gold:
            counts["queries with no passage marked is_selected (no gold)"] += 1
        items.append(GoldenItem(query_id, query.strip(), tuple(answers), tuple(gold), meta))
    return Imported(items, chunks, counts, {"gold": "passages marked is_selected (used to write the answer; unselected "
                                                    "passages may answer too)"})


def _squash(text: str) -> str:
    return " ".join(text.split())


def read_cranfield_qrels(path: Path) -> dict[int, dict[str, int]]:
    """cranqrel lines `query-position docid code` as {position: {docid: gain}} (CRANFIELD_GAIN)."""
    judged: dict[int, dict[str, int]] = {}
    first: dict[tuple[int, str], int] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or not all(re.fullmatch(r"-?\d+", p) for p in parts) or int(parts[2]) not in CRANFIELD_GAIN:
            raise FormatError(str(path), f"expected 'query doc code' with code in {sorted(CRANFIELD_GAIN)}", line=number)
        query, doc = int(parts[0]), parts[1]
        if (query, doc) in first:  # the last code was kept without a word
            raise FormatError(str(path), f"query {query} judges document {doc} twice (first on line {first[query, doc]}); "
                              "each document may appear once per query", line=number)
        first[query, doc] = number
        judged.setdefault(query, {})[doc] = CRANFIELD_GAIN[int(parts[2])]
    return judged


def import_llamaindex_pairs(source: str, options: ImportOptions) -> Imported:
    """LlamaIndex's EmbeddingQAFinetuneDataset JSON ({"queries": {id: text}, "corpus": {node id: text},
    "relevant_docs": {query id: [node ids]}}): each corpus node is a chunk of its own id, a query's relevant nodes its
    gold. The questions were generated from the nodes and have no reference answers, so the judge has nothing to
    score them against (`semrel init` turns it off); retrieval is measured against the gold."""
    data = expect(load_json(source), dict, source, "the top level")
    queries = expect(data.get("queries"), dict, source, "'queries'")
    corpus = expect(data.get("corpus"), dict, source, "'corpus'")
    relevant = expect(data.get("relevant_docs"), dict, source, "'relevant_docs'")
    chunks, ids, taken, blank = [], {}, set(), set()
    counts: Counter = Counter()
    for node, text in corpus.items():
        ids[node] = sanitise_id(node)
        if not ids[node] or ids[node] in taken:
            raise FormatError(display_name(source), f"'corpus' holds a node id {node!r} that is empty or, spaces made '_', another's")
        taken.add(ids[node])
        text = expect(text, str, source, f"corpus[{node!r}]")
        if not text.strip():  # as the other importers' blank passages: no chunk to retrieve, no gold to find
            blank.add(node)
            counts["blank nodes (empty or only spaces; not made chunks or gold)"] += 1
            continue
        chunks.append(Chunk(id=ids[node], text=text, doc_id=ids[node], start=0, end=len(text)))
    items: list[GoldenItem] = []
    for query_id, query in queries.items():
        nodes = expect(relevant.get(query_id, []), list, source, f"relevant_docs[{query_id!r}]")
        unknown = next((n for n in nodes if not isinstance(n, str) or n not in ids), None)
        if unknown is not None:
            raise FormatError(display_name(source), f"relevant_docs[{query_id!r}] names {unknown!r}, which 'corpus' does not hold")
        gold = tuple(dict.fromkeys(ids[n] for n in nodes if n not in blank))  # a node listed twice is gold once
        if nodes and not gold:
            counts["queries whose relevant nodes are all blank (no gold)"] += 1
        items.append(GoldenItem(query_id_of(query_id, source, f"the query id {query_id!r}"),
                                expect(query, str, source, f"queries[{query_id!r}]").strip(), (), gold, {"no_answer": True}))
    counts["queries without an answer (LlamaIndex's question-context pairs hold none)"] = len(items)
    orphans = len(set(relevant) - set(queries))
    if orphans:  # their gold had nowhere to go
        counts["relevant_docs entries of queries that 'queries' lacks (left out)"] = orphans
    return Imported(items, chunks, counts, {"gold": "the query's relevant_docs"})


def import_cranfield(source: str, options: ImportOptions) -> Imported:
    """A folder with cran.all.1400, cran.qry and cranqrel.

    Queries are numbered by position in cran.qry (1..225), as cranqrel numbers them; the `.I`
    number is kept in meta. Gain = 5 - code for codes 1..4, 0 for -1; every chunk of a judged
    document gets its grade (meta "grades"), gold chunks are those with gain > 0. A document with
    an empty `.W` uses its title as text. Cranfield has no reference answers (meta no_answer).
    """
    folder = Path(source)
    paths = {name: folder / name for name in ("cran.all.1400", "cran.qry", "cranqrel")}
    for name, path in paths.items():
        if not path.is_file():
            raise SemrelError(f"{folder}: not a Cranfield folder, {name} is missing")
    chunks = chunk_documents(cranfield_documents(paths["cran.all.1400"]), options.settings)
    chunks_of: dict[str, list[str]] = {}
    for chunk in chunks:
        chunks_of.setdefault(chunk.doc_id, []).append(chunk.id)
    judged = read_cranfield_qrels(paths["cranqrel"])
    items: list[GoldenItem] = []
    counts: Counter[str] = Counter()
    for position, record in enumerate(smart_records(paths["cran.qry"]), start=1):
        docs = judged.pop(position, {})
        counts["judgments dropped (document missing or empty in cran.all.1400)"] += sum(doc not in chunks_of for doc in docs)
        grades = {c: gain for doc, gain in docs.items() for c in chunks_of.get(doc, [])}
        gold = tuple(c for c, gain in grades.items() if gain > 0)
        meta = {"cran_id": record["I"], "grades": grades, "no_answer": True}
        items.append(GoldenItem(str(position), _squash(record.get("W", "")), (), gold, meta))
    counts["queries without an answer (Cranfield has none)"] = len(items)
    if judged:
        counts["cranqrel query numbers beyond cran.qry (ignored)"] = len(judged)
    return Imported(items, chunks, counts, {"gain": {str(k): v for k, v in CRANFIELD_GAIN.items()},
                                             "query_ids": "position in cran.qry"})
