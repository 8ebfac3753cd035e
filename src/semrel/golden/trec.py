"""TREC test collections: topics (`<top><num>..<title>..<desc>..<narr>..</top>`) and document qrels.

Documents (TREC SGML `<DOC>`s) are read by golden.documents; here the topics become queries and
the qrels (`qid 0 docno rel`, which judge documents) become gold chunks through map_document_ids.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError, UsageError
from ..formats import read_qrels
from ..formats.files import display_name, read_text
from ..formats.trec import graded_pairs
from ..records import GoldenItem
from .chunking import chunk_documents
from .documents import read_documents_report, sanitise_id
from .sources import Imported, ImportOptions, corpus_ids, map_document_ids

TOPIC_FIELDS = ("title", "desc", "narr")
# TREC-COVID style <topic number="1"><query>..</query><question>..</question><narrative>..</narrative></topic>
_XML_FIELDS = {"query": "title", "question": "desc", "narrative": "narr"}
_PREFIXES = {"num": r"Number:", "title": r"Topic:", "desc": r"Description:", "narr": r"Narrative:"}
_TOP = re.compile(r"<top>(.*?)</top>", re.IGNORECASE | re.DOTALL)
_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.IGNORECASE | re.DOTALL)
_FIELD_TAG = re.compile(r"<(/?)(num|title|desc|narr|query|question|narrative)\b[^>]*>", re.IGNORECASE)
NO_ANSWER_NOTE = ("TREC topics have no reference answers and the BERTScore judge needs them: evaluate on the qrels only "
                  "(no judge); answer_col='desc' (or narr) takes a topic field as the answer, but a description is no "
                  "answer: labels judged against Cranfield's questions carried no signal (docs/judge.md, "
                  "'Without reference answers')")


@dataclass(frozen=True)
class Topic:
    number: str
    fields: dict[str, str]
    line: int


def _clean(field: str, value: str) -> str:
    value = html.unescape(re.sub(r"<[^>]*>", " ", value))
    value = " ".join(value.split())
    prefix = _PREFIXES.get(field)
    return re.sub(rf"^{prefix}\s*", "", value, flags=re.IGNORECASE) if prefix else value


def _fields(body: str) -> dict[str, str]:
    """Field -> text: a field runs from its tag to the next field tag (closing tags optional, as in
    the classic topics, which close none of them)."""
    tags = list(_FIELD_TAG.finditer(body))
    found: dict[str, str] = {}
    for n, tag in enumerate(tags):
        if tag.group(1):  # a closing tag
            continue
        name = tag.group(2).lower()
        name = _XML_FIELDS.get(name, name)
        end = tags[n + 1].start() if n + 1 < len(tags) else len(body)
        found.setdefault(name, _clean(name, body[tag.end():end]))
    return found


def read_topics(path: str) -> list[Topic]:
    """The topics of a TREC topics file, classic (`<top>`) or TREC-COVID style (`<topic number=..>`)."""
    text = read_text(path)
    topics = []
    for match in _TOP.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        fields = _fields(match.group(1))
        number = fields.pop("num", "")
        if not number:
            raise FormatError(display_name(path), "a <top> without a <num>", line=line)
        topics.append(Topic(sanitise_id(number), fields, line))
    if not topics:
        for match in _TOPIC.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            attribute = re.search(r"""number\s*=\s*["']?([^"'\s>]+)""", match.group(1))
            if not attribute:
                raise FormatError(display_name(path), "a <topic> without a number attribute", line=line)
            topics.append(Topic(sanitise_id(attribute.group(1)), _fields(match.group(2)), line))
    if not topics:
        raise FormatError(display_name(path), "no <top> or <topic> in this file", hint="is it a TREC topics file?")
    return topics


def import_trec(source: str, options: ImportOptions) -> Imported:
    """Topics as queries (`--query-col`: title, desc or narr; default title), an optional topic field
    as the reference answer (`--answer-col`; default none), the document qrels of `--qrels` as gold.

    Judged documents keep their grades, 0 included, in meta["grades"]; gold = grade > 0. With
    `--docs`, those documents are chunked here (the corpus is built too) and every chunk of a judged
    document gets its grade (`--doc-qrels first-chunk`: its first chunk only); with `--corpus`, the
    same mapping is made onto that corpus's chunks (import_golden).
    """
    if not options.qrels:
        raise UsageError("format='trec' needs qrels=QRELS (TREC qrels, `qid 0 docno rel`, judging the documents)")
    query_field = options.columns.get("query") or "title"
    answer_field = options.columns.get("answer")
    for option, name in (("query_col", query_field), ("answer_col", answer_field)):
        if name is not None and name not in TOPIC_FIELDS:
            raise UsageError(f"{option}={name!r}: a TREC topic field is one of {', '.join(TOPIC_FIELDS)}")
    judged = graded_pairs(read_qrels(options.qrels))  # a pair judged twice is refused, as eval refuses it
    items: list[GoldenItem] = []
    counts: Counter = Counter()
    for topic in read_topics(source):
        query = topic.fields.get(query_field, "")
        if not query:
            raise FormatError(display_name(source), f"topic {topic.number} has no <{query_field}>", line=topic.line,
                              hint="choose another field with query_col=")
        answer = topic.fields.get(answer_field, "") if answer_field else ""
        grades = judged.pop(topic.number, {})
        meta: dict[str, Any] = {"grades": grades, "topic": {k: v for k, v in topic.fields.items() if k != query_field}}
        if not answer:
            meta["no_answer"] = True
            counts[f"queries without a reference answer ({NO_ANSWER_NOTE})"] += 1
        if not grades:
            counts["topics without judgments in the qrels"] += 1
        items.append(GoldenItem(topic.number, query, (answer,) if answer else (), tuple(d for d, g in grades.items() if g > 0),
                                meta))
    if judged:
        counts["qrels topics not in the topics file (ignored)"] = len(judged)
    params: dict[str, Any] = {"qrels": options.qrels, "query_field": query_field, "answer_field": answer_field}
    if not options.docs:
        return Imported(items, None, counts, params)
    documents, report = read_documents_report(options.docs)
    chunks = chunk_documents(documents, options.settings)
    mode = options.doc_qrels or "all-chunks"
    items, mapped = map_document_ids(items, corpus_ids(chunks, items, mode == "answer-chunk"), mode, source, "docs=", drop_unknown=True)
    counts.update(mapped)
    counts.update({f"documents of docs= skipped ({reason})": n for reason, n in report.skipped_counts.items()})
    return Imported(items, chunks, counts, {**params, "docs": list(options.docs), "documents": report.params(),
                                            "doc_qrels": mode})
