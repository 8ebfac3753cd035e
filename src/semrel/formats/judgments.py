"""judgments.jsonl: one `{"query_id", "chunk_id", "P", "R", "F", "source"}` object per scored pair, with
`p` (the judge's probability of relevance) and `features` (what p was computed from) where the judge
wrote them; judgments without them (older semrel) still read."""

from __future__ import annotations

import math
import os
from array import array
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from ..errors import FormatError, ValidationError
from ..records import Judgment, as_float
from .files import display_name, line_id
from .given import records_given
from .jsonl import read_jsonl, require, write_jsonl
from .kinds import JUDGMENTS, expecting

COMPONENTS = ("P", "R", "F")
PROBABILITY = "p"
SCORES = (PROBABILITY, *COMPONENTS)  # what a label rule can threshold
FEATURES = ("relR_idf", "R_idf_max", "own_idf", "F_max", "P_max", "lenratio", "lexR_rel")  # what p is computed from (judging.labels)
WITH_GOLD_FLAG = "with_gold"  # the feature that picks p's coefficients: 1 when the query's gold chunks were judged


def judgment_row(j: Judgment) -> dict:
    row = {"query_id": j.query_id, "chunk_id": j.chunk_id, "P": j.P, "R": j.R, "F": j.F, "source": j.source}
    if j.p is not None:
        row["p"] = j.p
    if j.features is not None:
        row["features"] = dict(j.features)
    return row


def _probability(obj: dict, path: str | os.PathLike, line: int) -> tuple[float | None, dict[str, float] | None]:
    """The optional p (a number in [0, 1]) and features (an object of finite numbers) of a row."""
    p = features = None
    if obj.get("p") is not None:
        p = as_float(require(obj, "p", path, line, (int, float)))
    if obj.get("features") is not None:
        raw = require(obj, "features", path, line, dict)
        problem = features_problem(raw)  # before float(): "0.5", a feature quoted as text, is no number the judge wrote
        if problem:
            raise FormatError(display_name(path), problem, line=line)
        features = {str(k): float(v) for k, v in raw.items()}
    return p, features


Row = Callable[[str, str, float, float, float, str, float | None, Mapping[str, float] | None], None]


def _read(path: str | os.PathLike, add: Row) -> tuple[list[str], list[str]]:
    """Each line checked, in file order, given to `add` (query_id, chunk_id, P, R, F, source, p, features); returns the
    query and chunk ids. A query's rows share one str, and so do the rows of one source. A repeated pair names its line:
    found from the pairs' hashes once all are read, not from a dict of every pair (about 130 bytes a row), and before
    any later line's error, as a check line by line would find it."""
    query_ids: list[str] = []
    chunk_ids: list[str] = []
    lines, hashes = array("q"), array("q")
    shared: dict[str, str] = {}
    with expecting(path, JUDGMENTS):
        try:
            for line, obj in read_jsonl(path):
                query_id = line_id(str(require(obj, "query_id", path, line, (str, int))), "query id", path, line)
                chunk_id = line_id(str(require(obj, "chunk_id", path, line, (str, int))), "chunk id", path, line)
                query_id = shared.setdefault(query_id, query_id)
                query_ids.append(query_id)
                chunk_ids.append(chunk_id)
                lines.append(line)
                hashes.append(hash((query_id, chunk_id)))
                precision, recall, f1 = [as_float(require(obj, key, path, line, (int, float))) for key in COMPONENTS]
                p, features = _probability(obj, path, line)
                problem = scores_problem(precision, recall, f1, p, None)  # its features were checked as read (_probability)
                if problem:
                    raise FormatError(display_name(path), problem, line=line)
                source = str(obj.get("source") or "")
                add(query_id, chunk_id, precision, recall, f1, shared.setdefault(source, source), p, features)
        except FormatError:
            _no_repeat(path, hashes, lines, query_ids, chunk_ids)  # a pair repeated before the error's line is the first error
            raise
        _no_repeat(path, hashes, lines, query_ids, chunk_ids)
    return query_ids, chunk_ids


def _no_repeat(path: str | os.PathLike, hashes: array, lines: array, query_ids: list[str], chunk_ids: list[str]) -> None:
    """The FormatError for the first line that repeats an earlier line's pair, if any: pairs of equal hash (the
    stable sort keeps them in file order) are compared by their ids."""
    keys = np.frombuffer(hashes, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    first: dict[tuple[str, str], int] = {}
    for row in np.union1d(order[same], order[same + 1]).tolist():
        earlier = first.setdefault((query_ids[row], chunk_ids[row]), row)
        if earlier != row:
            raise FormatError(display_name(path), f"pair ({query_ids[row]!r}, {chunk_ids[row]!r}) already judged on line "
                              f"{lines[earlier]}", line=lines[row])


def read_judgments(path: str | os.PathLike) -> list[Judgment]:
    """Judgments in file order; a repeated pair or a score that is not a finite number names its line."""
    judgments: list[Judgment] = []
    _read(path, lambda q, c, P, R, F, source, p, features: judgments.append(Judgment(q, c, P, R, F, source, p, features)))
    return judgments


@dataclass(frozen=True, eq=False)
class JudgmentColumns:
    """Judgments as columns, in order: what labelling reads. Read as a Judgment a row, its features a dict, they cost
    `semrel label` about 1.8 KB a judgment at its peak; as columns about 300 bytes (docs/judge.md, "Labelling memory")."""

    query_ids: list[str]  # read from a file, a query's rows share one str
    chunk_ids: list[str]
    sources: list[str]  # read from a file, the rows of one source share one str
    P: np.ndarray
    R: np.ndarray
    F: np.ndarray
    p: np.ndarray  # NaN where the row holds no p
    features: np.ndarray  # (rows, len(FEATURES)) in FEATURES order, NaN where the row lacks one
    with_gold: np.ndarray  # bool: the row's features say with_gold (nonzero)
    has_features: np.ndarray  # bool: the row holds features, an object not empty

    def __len__(self) -> int:
        return len(self.query_ids)

    @classmethod
    def of(cls, judgments: Sequence[Judgment] | JudgmentColumns) -> JudgmentColumns:
        """Judgment records as columns (columns as they are)."""
        if isinstance(judgments, JudgmentColumns):
            return judgments
        built = _Columns()
        for j in judgments:
            built.add(j.query_id, j.chunk_id, j.P, j.R, j.F, j.source, j.p, j.features)
        return built.columns([j.query_id for j in judgments], [j.chunk_id for j in judgments])

    @property
    def featured(self) -> np.ndarray:
        """Which rows hold every one of FEATURES (what p is recomputed from)."""
        return ~np.isnan(self.features).any(axis=1)

    def score(self, on: str) -> np.ndarray:
        """The column of one of SCORES (p: NaN where absent)."""
        return {"p": self.p, "P": self.P, "R": self.R, "F": self.F}[on]

    def sourced(self, name: str) -> np.ndarray:
        """Which rows' source (names joined by commas) holds `name`; worked out once a distinct source."""
        holds = {source: name in source.split(",") for source in set(self.sources)}
        return np.fromiter((holds[source] for source in self.sources), dtype=bool, count=len(self))

    def among(self, pairs: Collection[tuple[str, str]]) -> np.ndarray:
        """Which rows' (query, chunk) is one of `pairs` (the golden set's gold chunks, say)."""
        return np.fromiter((pair in pairs for pair in zip(self.query_ids, self.chunk_ids)), dtype=bool, count=len(self))

    def where(self, rows: np.ndarray) -> JudgmentColumns:
        """The rows where `rows` (booleans) is true."""
        return self.take(np.flatnonzero(rows))

    def take(self, rows: Sequence[int] | np.ndarray) -> JudgmentColumns:
        """The rows at the indices `rows`, in their order."""
        rows = np.asarray(rows, dtype=np.intp)
        picked = rows.tolist()
        return JudgmentColumns([self.query_ids[i] for i in picked], [self.chunk_ids[i] for i in picked],
                               [self.sources[i] for i in picked], self.P[rows], self.R[rows], self.F[rows], self.p[rows],
                               self.features[rows], self.with_gold[rows], self.has_features[rows])


class _Columns:
    """JudgmentColumns built a row at a time (the one home of a row's mapping to them), from a file's parsed lines
    (_read's `add`) or from Judgment records."""

    def __init__(self) -> None:
        self.P, self.R, self.F, self.p, self.features = array("d"), array("d"), array("d"), array("d"), array("d")
        self.with_gold, self.has_features = array("b"), array("b")
        self.sources: list[str] = []

    def add(self, query_id: str, chunk_id: str, precision: float, recall: float, f1: float, source: str,
            probability: float | None, named: Mapping[str, float] | None) -> None:
        self.P.append(precision)
        self.R.append(recall)
        self.F.append(f1)
        self.p.append(math.nan if probability is None else probability)
        self.features.extend([named.get(f, math.nan) for f in FEATURES] if named else _ABSENT)
        self.with_gold.append(bool(named and named.get(WITH_GOLD_FLAG)))
        self.has_features.append(bool(named))
        self.sources.append(source)

    def columns(self, query_ids: list[str], chunk_ids: list[str]) -> JudgmentColumns:
        P, R, F, p = (np.frombuffer(column, dtype=np.float64) for column in (self.P, self.R, self.F, self.p))
        return JudgmentColumns(query_ids, chunk_ids, self.sources, P, R, F, p,
                               np.frombuffer(self.features, dtype=np.float64).reshape(-1, len(FEATURES)),
                               np.frombuffer(self.with_gold, dtype=bool), np.frombuffer(self.has_features, dtype=bool))


_ABSENT = [math.nan] * len(FEATURES)  # the features of a row that holds none


def read_judgment_columns(path: str | os.PathLike) -> JudgmentColumns:
    """read_judgments as columns: the same checks and errors, a fraction of the memory."""
    built = _Columns()
    return built.columns(*_read(path, built.add))


def judgment_problem(j: Judgment) -> str | None:
    """What is wrong with a judgment's numbers, if anything (scores_problem)."""
    return scores_problem(j.P, j.R, j.F, j.p, j.features)


def scores_problem(P: float, R: float, F: float, p: float | None, features: Mapping[str, Any] | None) -> str | None:
    """What is wrong with a pair's numbers, if anything: P, R and F finite, p a probability, its features finite
    numbers (a NaN feature would give a refit's p, and the pair, the top grade)."""
    if not all(math.isfinite(as_float(s)) for s in (P, R, F)):
        return "P, R and F must be finite numbers"
    if max(P, R, F) > 1 + 1e-6:  # means of cosines (rescaled or not) never pass 1: a file edited or made elsewhere
        return f"P, R and F are BERTScores, at most 1; found {max(P, R, F)!r}"
    if p is not None and not 0.0 <= p <= 1.0:  # NaN too
        return f"p must be a probability between 0 and 1, found {p!r}"
    return features_problem(features or {})


def features_problem(features: Mapping[str, Any]) -> str | None:
    """The first feature that is not a finite number (a bool, text or null is none), named with its value (a whole number
    past a float's range, 10**400, as the inf it rounds to, not its 400 digits); else None."""
    bad = next((k for k, v in features.items() if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(as_float(v))),
               None)
    if bad is None:
        return None
    value = features[bad]  # an int is found only past a float's range
    return f"features must map names to finite numbers, found {bad!r}: {as_float(value) if type(value) is int else value!r}"


def write_judgments(judgments: Iterable[Judgment], path: str | os.PathLike, first: str | os.PathLike | None = None) -> int:
    """`judgments` written to `path`, after the lines of the judgments file `first` as they are."""
    return write_jsonl((judgment_row(j) for j in judgments), path, first)


def given_judgments(judgments: str | os.PathLike | Iterable[Judgment] | Any, empty_ok: bool = True) -> tuple[list[Judgment], str | None]:
    """(the judgments, the file they came from) for the Python API: a judgments.jsonl read, or Judgment
    records given the checks read_judgments makes of a file's lines (finite scores, no pair twice)."""
    if isinstance(judgments, (str, os.PathLike)):
        return read_judgments(judgments), str(judgments)
    return records_given(judgments, "judgments", Judgment, lambda j: (j.query_id, j.chunk_id), "pair", problem=judgment_problem,
                         empty_ok=empty_ok), None


def no_judgments(source: str | os.PathLike) -> ValidationError:
    """The one refusal of an empty judgments file: labels of no pair would score every run 0."""
    return ValidationError(f"{display_name(source)}: no judgments (the file is empty); judge a pool first (`semrel judge`)")


def given_judgment_columns(judgments: str | os.PathLike | Iterable[Judgment] | Any, empty_ok: bool = True
                           ) -> tuple[JudgmentColumns, str | None]:
    """given_judgments as columns: a file read straight into them (read_judgment_columns), refused empty unless
    `empty_ok` (no_judgments)."""
    if isinstance(judgments, (str, os.PathLike)):
        columns = read_judgment_columns(judgments)
        if not len(columns) and not empty_ok:
            raise no_judgments(judgments)
        return columns, str(judgments)
    return JudgmentColumns.of(given_judgments(judgments, empty_ok)[0]), None
