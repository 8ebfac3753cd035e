"""Checking and describing golden sets: validate (every problem, with its line) and stats."""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

import numpy as np

from ..cjk import count_words
from ..errors import FormatError
from ..formats.corpus import empty_query, golden_item, misplaced_gold, spelled_otherwise
from ..formats.files import display_name, id_form, read_lines
from ..formats.jsonl import json_object
from ..formats.kinds import GOLDEN, MisplacedFile, expecting
from ..formats.tables import Table
from ..records import Chunk, GoldenItem
from .locate import least_shares


@dataclass(frozen=True)
class Issue:
    """One problem of a golden set: 'error' fails validation, 'warning' does not."""

    line: int
    severity: Literal["error", "warning"]
    message: str


@dataclass(frozen=True)
class Validation:
    """What `golden validate` prints: every issue in line order, and the queries read (a line that is no golden item is
    no query); any error fails validation."""

    issues: list[Issue]
    queries: int

    @property
    def errors(self) -> int:
        return sum(i.severity == "error" for i in self.issues)

    @property
    def warnings(self) -> int:
        return len(self.issues) - self.errors


# A reference answer that says its context lacks (part of) the answer: generated testsets hold them (ragas's "The
# answer to given question is not present in context"; 7 of LlamaIndex's 58 BlockchainSolana answers). The judge
# scores chunks against its words, which name the question's topic, not an answer.
_SOURCE = r"(?:context|text|passage|document|excerpt|information)"
LACKS_ANSWER = re.compile(rf"""\b(?:
    not\ (?:explicitly\ )?(?:present|found|given|included|provided|available|mentioned|stated|specified|detailed|discussed
        |addressed)\ (?:explicitly\ )?in\ (?:the\ )?(?:given\ |provided\ )?{_SOURCE}
  | {_SOURCE}\ (?:provided\ |given\ )?(?:does|do)\ (?:not|n't)\ (?:provide|contain|mention|specify|include|give|say|state
        |offer|address|detail|discuss)
  | {_SOURCE}\ (?:provided\ |given\ )?(?:doesn't|don't)\ (?:provide|contain|mention|specify|include|give|say)
  | cannot\ be\ (?:determined|answered|found|inferred)\ from\ the\ (?:given\ |provided\ )?{_SOURCE}
)""", re.IGNORECASE | re.VERBOSE)


def lacks_answer(item: GoldenItem) -> bool:
    """Whether a reference answer of `item` says that its context does not hold (all of) the answer."""
    return any(LACKS_ANSWER.search(answer) for answer in item.reference_answers)


def normalised_query(text: str) -> str:
    """The form in which two queries count as the same text: case and spacing ignored."""
    return " ".join(text.casefold().split())


# fields a golden line may hold its answer under by mistake: read as the user's own keys, they left the answer empty
ANSWER_FIELD = "reference_answer"
_ANSWER_LOOKALIKES = ("reference_answers", "answer", "answers", "reference", "ground_truth", "ground_truths", "expected_answer")


def _answer_hint(record: dict) -> str:
    """Where a line without a reference answer may hold it: a field named like one, which is kept as the user's own."""
    found = next((key for key in record if key.strip().lower() in _ANSWER_LOOKALIKES and key != ANSWER_FIELD), None)
    return f" (the line has {found!r}: a golden line's answer is its {ANSWER_FIELD!r} field, a string or a list)" if found else ""


def validate_golden(path: str | os.PathLike, corpus: Iterable[Chunk] | None = None) -> Validation:
    """Every issue in line order, and the number of items read (a line that is no golden item is no query).

    Errors: a malformed line (not JSON, or JSON but not an object: reported like any other error,
    and the lines after it are still checked), a repeated query id, an empty query, an empty reference answer
    (unless meta marks `no_answer`: some collections have none), a gold chunk id not in the corpus.
    Warnings: a query text seen before (the same wording may ask about different documents), a
    reference answer that says its context lacks the answer (lacks_answer), a query without gold chunks, a chunk graded
    above 0 in meta.grades that the gold chunks lack, and a gold chunk outside its query's recorded answer spans (the
    judge refuses a golden set where half or more are: one made for another chunking of the documents).
    `corpus` is read once, after the golden set, keeping only where its gold chunks sit.
    """
    issues: list[Issue] = []
    read: list[tuple[int, GoldenItem]] = []
    ids: dict[str, int] = {}
    texts: dict[str, int] = {}
    count = lines = 0
    for line, text in read_lines(path):
        if not text.strip():
            continue
        lines += 1
        try:  # a file of another kind (a CSV given before its import) is one line saying so, not an error per line
            with expecting(path, GOLDEN) if lines == 1 else contextlib.nullcontext():
                record = json_object(text, path, line)
                item = golden_item(record, path, line)
        except MisplacedFile:
            raise
        except FormatError as exc:
            issues.append(Issue(line, "error", exc.message + (f" ({exc.hint})" if exc.hint else "")))
            continue
        count += 1
        if item.query_id in ids:
            issues.append(Issue(line, "error", f"query id {item.query_id!r} already used on line {ids[item.query_id]}"))
        ids.setdefault(item.query_id, line)
        if empty := empty_query(item):
            issues.append(Issue(line, "error", empty))
        else:
            key = normalised_query(item.query)
            if key in texts:
                issues.append(Issue(line, "warning", f"query {item.query_id!r} has the same text as line {texts[key]}"))
            texts.setdefault(key, line)
        if not any(a.strip() for a in item.reference_answers) and not item.meta.get("no_answer"):
            issues.append(Issue(line, "error", f"query {item.query_id!r} has an empty reference answer{_answer_hint(record)}"))
        elif lacks_answer(item):
            issues.append(Issue(line, "warning", f"the reference answer of {item.query_id!r} says its context does not hold (all of) "
                                "the answer; the judge scores chunks against those words: write the answer, or drop the query"))
        if not item.gold_chunk_ids:
            issues.append(Issue(line, "warning", f"query {item.query_id!r} has no gold chunks"))
        twice = next((c for n, c in enumerate(item.gold_chunk_ids) if c in item.gold_chunk_ids[:n]), None)
        if twice is not None:  # counted once everywhere; a list made by hand or by a script that went wrong
            issues.append(Issue(line, "warning", f"query {item.query_id!r} lists gold chunk {twice!r} twice"))
        grades = item.meta.get("grades") or {}
        ungold = next(((c, g) for c, g in grades.items() if g > 0 and c not in item.gold_chunk_ids), None)
        if ungold is not None:  # the qrels take the grades: a chunk dropped from the gold by hand stayed relevant
            issues.append(Issue(line, "warning", f"query {item.query_id!r} has grade {ungold[1]} for chunk {ungold[0]!r} in meta.grades, "
                                "which its gold_chunk_ids lack: the qrels and eval count it relevant; add it to gold_chunk_ids, or give "
                                "it grade 0"))
        read.append((line, item))
    if not lines:
        raise FormatError(display_name(path), "no queries (the file is empty)")
    if corpus is not None:
        issues = sorted(issues + _corpus_issues(read, corpus), key=lambda issue: issue.line)  # stable: a line's own first
    return Validation(issues, count)


def _corpus_issues(read: Sequence[tuple[int, GoldenItem]], corpus: Iterable[Chunk]) -> list[Issue]:
    """Gold chunk ids the corpus lacks (errors, naming the corpus's id where it has one in another Unicode form), and gold
    chunks that lie outside their query's recorded answer spans (warnings, as misplaced_gold finds them)."""
    gold = {chunk_id for _, item in read for chunk_id in item.gold_chunk_ids}
    forms = {id_form(chunk_id) for chunk_id in gold}
    places: dict[str, tuple[str, int, int]] = {}
    spelled: list[str] = []  # the corpus's ids that are gold ids in another form
    for c in corpus:
        if c.id in gold:
            places[c.id] = (c.doc_id, c.start, c.end)
        elif id_form(c.id) in forms:
            spelled.append(c.id)
    found = []
    for line, item in read:
        found += [Issue(line, "error", f"gold chunk {chunk_id!r} of query {item.query_id!r} is not in the corpus"
                        f"{spelled_otherwise(chunk_id, spelled)}") for chunk_id in item.gold_chunk_ids if chunk_id not in places]
        for _, chunk_id in misplaced_gold([item], places)[0]:
            doc, start, end = places[chunk_id]
            found.append(Issue(line, "warning", f"gold chunk {chunk_id!r} of query {item.query_id!r} (characters {start}-{end} of "
                               f"document {doc!r}) holds none of its answer's spans (meta.answer_spans): a chunk of another "
                               "chunking? `semrel judge` refuses a golden set where half or more are"))
    return found


class Tally(Counter[int]):
    """{value: how many times it was seen}: the order statistics of a corpus's chunk lengths in memory that
    grows with the distinct lengths, not with the chunks."""

    def at(self, rank: int) -> int:
        """The value at 0-based `rank` of the sorted values (sorted(values)[rank])."""
        values = sorted(self)
        return values[int(np.searchsorted(np.cumsum([self[v] for v in values]), rank, side="right"))]

    def percentile(self, q: float) -> float:
        """numpy.percentile's default (linear) rule: between the two ranks around (n - 1) q / 100."""
        index = (self.total() - 1) * q / 100
        low = int(index)
        a, b, t = self.at(low), self.at(min(low + 1, self.total() - 1)), index - low
        return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)  # numpy's own two forms, for its last bit


def distribution(values: Iterable[int] | Tally) -> dict[str, float | None]:
    """count, min, quartiles, mean and max of `values`; when empty, a count of 0 and None for the rest (no values,
    not values of 0: a golden set without reference answers has no answer lengths), blank in tables, null in JSON."""
    tally = values if isinstance(values, Tally) else Tally(values)
    if not tally:
        return {"count": 0, "min": None, "p25": None, "median": None, "mean": None, "p75": None, "max": None}
    p25, median, p75 = (tally.percentile(q) for q in (25, 50, 75))
    return {
        "count": tally.total(), "min": float(min(tally)), "p25": float(p25), "median": float(median),
        "mean": sum(v * n for v, n in tally.items()) / tally.total(), "p75": float(p75), "max": float(max(tally)),
    }


def golden_stats(items: Sequence[GoldenItem], chunks: Iterable[Chunk] | None = None) -> dict[str, Any]:
    """Counts and length distributions (in words) of a golden set and, if given, its corpus; `notes`, where there are,
    the queries whose gold answer-chunk found least surely."""
    answers = [a for item in items for a in item.reference_answers if a.strip()]
    counts: dict[str, int] = {
        "queries": len(items),
        "queries with a reference answer": sum(any(a.strip() for a in i.reference_answers) for i in items),
        "queries with gold chunks": sum(bool(i.gold_chunk_ids) for i in items),
        "gold chunk ids": sum(len(set(i.gold_chunk_ids)) for i in items),  # one listed twice counts once, as in the qrels
        "distinct gold chunks": len({c for i in items for c in i.gold_chunk_ids}),
    }
    # where `golden import --doc-qrels answer-chunk` found the gold: how much of it rests on word pairs alone (its
    # warnings went to stderr only, and the report showed none of it)
    found = Counter(how.get("how") for i in items for how in (i.meta.get("answer_chunks") or {}).values() if isinstance(how, dict))
    if found:
        for how, what in (("text", "whose chunk holds the answer's text"), ("pairs", "whose chunk shares only word pairs of the answer"),
                          ("none", "of which no chunk shares a word pair of the answer")):
            counts[f"gold documents {what} (answer-chunk)"] = found[how]
    least = least_shares(items)
    notes = [f"gold found by the answer's word pairs alone, on the least shares (worth a look: `semrel golden pick` picks "
             f"again a query whose gold_chunk_ids you clear): {least}"] if least else []
    lengths = {
        "query words": distribution([count_words(i.query) for i in items]),
        "answer words": distribution([count_words(a) for a in answers]),
        "gold chunks per query": distribution([len(set(i.gold_chunk_ids)) for i in items]),
    }
    if chunks is not None:  # read once, a chunk at a time: only lengths are kept, not the texts
        words = Tally()
        per_document: Counter[str] = Counter()
        for chunk in chunks:
            words[count_words(chunk.text)] += 1
            per_document[chunk.doc_id] += 1
        counts["corpus chunks"] = words.total()
        counts["corpus documents"] = len(per_document)
        lengths["chunk words"] = distribution(words)
        lengths["chunks per document"] = distribution(per_document.values())
    return {"counts": counts, "lengths": lengths, **({"notes": notes} if notes else {})}


def stats_tables(stats: dict[str, Any]) -> tuple[Table, Table]:
    """The counts and the length distributions of `golden_stats` as two tables."""
    counts = Table(("count", "value"), [(name, value) for name, value in stats["counts"].items()])
    columns = ("count", "min", "p25", "median", "mean", "p75", "max")
    lengths = Table(("length", *columns), [(name, *(d[c] for c in columns)) for name, d in stats["lengths"].items()])
    return counts, lengths
