"""Converters for two public collections: PubMedQA (PQA-L) and Cranfield (SMART files).

Both build the corpus and the golden set in one step, as the SQuAD importer does.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import FormatError, SemrelError
from ..formats.files import read_text
from ..records import Chunk, GoldenItem
from .chunking import Document, chunk_documents, sanitise_id
from .sources import Imported, ImportOptions, expect, load_json

PUBMEDQA_SEPARATOR = "\n\n"
# Cleverdon's codes (cranqrel.readme): 1 complete answer .. 4 minimum interest; -1 is no interest.
CRANFIELD_GAIN = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}


def import_pubmedqa(source: str, options: ImportOptions) -> Imported:
    """ori_pqal.json: each PMID's CONTEXTS are its chunks `<pmid>#<i>` (the document is the contexts
    joined by a blank line, so offsets hold); query = QUESTION, reference = LONG_ANSWER, gold = all
    of that PMID's contexts (which one matters most is not labelled). Chunking options do not apply."""
    data = expect(load_json(source), dict, source, "the top level")
    chunks: list[Chunk] = []
    items: list[GoldenItem] = []
    counts: Counter = Counter()
    for pmid, record in data.items():
        record = expect(record, dict, source, f"record {pmid!r}")
        contexts = expect(record.get("CONTEXTS"), list, source, f"{pmid}.CONTEXTS")
        question = expect(record.get("QUESTION"), str, source, f"{pmid}.QUESTION")
        answer = str(record.get("LONG_ANSWER") or "").strip()
        doc_id, start, ids = sanitise_id(str(pmid)), 0, []
        for i, context in enumerate(contexts):
            text = expect(context, str, source, f"{pmid}.CONTEXTS[{i}]")
            chunks.append(Chunk(id=f"{doc_id}#{i}", text=text, doc_id=doc_id, start=start, end=start + len(text)))
            ids.append(f"{doc_id}#{i}")
            start += len(text) + len(PUBMEDQA_SEPARATOR)
        meta: dict[str, Any] = {"final_decision": record.get("final_decision"), "labels": record.get("LABELS")}
        if not answer:
            meta["no_answer"] = True
            counts["queries without an answer"] += 1
        items.append(GoldenItem(doc_id, question.strip(), (answer,) if answer else (), tuple(ids), meta))
    return Imported(items, chunks, counts, {"gold": "all contexts of the question's PMID"})


def smart_records(path: Path) -> list[dict[str, str]]:
    """Records of a SMART file: `.I id` starts one; `.T`, `.A`, `.B`, `.W` start its fields."""
    text = read_text(path).replace("\r\n", "\n")
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    key = ""
    for number, line in enumerate(text.split("\n"), start=1):
        marker = re.match(r"^\.([A-Z])\b ?(.*)$", line)
        if marker and marker.group(1) == "I":
            current = {"I": marker.group(2).strip()}
            records.append(current)
            key = ""
        elif marker:
            if current is None:
                raise FormatError(str(path), f"field .{marker.group(1)} before the first .I", line=number)
            key = marker.group(1)
            current[key] = marker.group(2)
        elif current is not None and key:
            current[key] += "\n" + line
        elif line.strip():
            raise FormatError(str(path), "text outside a .I record", line=number)
    return records


def _squash(text: str) -> str:
    return " ".join(text.split())


def read_cranfield_qrels(path: Path) -> dict[int, dict[str, int]]:
    """cranqrel lines `query-position docid code` as {position: {docid: gain}} (CRANFIELD_GAIN)."""
    judged: dict[int, dict[str, int]] = {}
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3 or not all(re.fullmatch(r"-?\d+", p) for p in parts) or int(parts[2]) not in CRANFIELD_GAIN:
            raise FormatError(str(path), f"expected 'query doc code' with code in {sorted(CRANFIELD_GAIN)}", line=number)
        judged.setdefault(int(parts[0]), {})[parts[1]] = CRANFIELD_GAIN[int(parts[2])]
    return judged


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
    documents = [
        Document(sanitise_id(r["I"]), r.get("W", "").strip() or _squash(r.get("T", "")), _squash(r.get("T", "")))
        for r in smart_records(paths["cran.all.1400"])
    ]
    chunks = chunk_documents(documents, options.settings)
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
