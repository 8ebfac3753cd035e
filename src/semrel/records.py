"""The records semrel passes between steps.

Qrels and runs are columnar (Arrow arrays plus numpy), because real ones hold millions of
rows; the rest are small frozen dataclasses.
"""

from __future__ import annotations

import math
import numbers
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import UsageError, ValidationError, check_kind
from .terminal import quantity

if TYPE_CHECKING:  # an optional dependency (semrel[pandas]): annotations only
    import pandas as pd


def check_run_name(name: Any, required: bool = True) -> None:
    """A run name given to the Python API (None allowed unless `required`): text that names something, as it
    becomes the run's key in results and its tag in a file ("" was taken for no name, or failed on writing)."""
    check_kind("name", name, (str,), "a run name", required)
    if name is not None and not name.strip():
        raise UsageError("name: a run name may not be empty")


def _strings(values) -> pa.Array:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        array = values
    else:
        values = values if hasattr(values, "__len__") else list(values)
        try:
            array = pa.array(values, type=pa.string())
        except (pa.ArrowTypeError, pa.ArrowInvalid):  # ids given as whole numbers (or some of them): their decimal text
            if not all(isinstance(v, str) or is_whole(v) for v in values):
                raise ValidationError("ids must be strings or whole numbers") from None
            array = pa.array([v if isinstance(v, str) else str(int(v)) for v in values], type=pa.string())
    array = one_array(array)
    if array.null_count:
        raise ValidationError("an id is None (or null): every row needs a query id and a doc id")
    return array.cast(pa.string()) if array.type != pa.string() else array


def is_whole(value: Any) -> bool:
    """An int (numpy's too) and not a bool: what a count, a cutoff or a seed must be."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_id(value: Any) -> bool:
    """A string or a whole number (not a bool): what an id in a JSON input may be."""
    return isinstance(value, str) or is_whole(value)


def is_number(value: Any) -> bool:
    """An int or a float (numpy's too) and not a bool."""
    return isinstance(value, (int, float, np.number)) and not isinstance(value, bool)


def as_float(number: float) -> float:
    """A number as a float; a whole number past float64's range (10**400, which float() refuses with an OverflowError)
    as the infinity it rounds to, which a check of finite numbers then refuses in one line."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _unfit(numbers: np.ndarray, whole: bool) -> np.ndarray:
    """Rows of a float64 column that are no finite number, or, for grades, no whole number within 64 bits."""
    bad = ~np.isfinite(numbers)
    if whole:
        bad |= (numbers != np.round(numbers)) | (np.abs(numbers) >= 2.0**63)
    return np.flatnonzero(bad)


def _column(values, queries: pa.Array, docs: pa.Array, caller: str, what: str, whole: bool) -> np.ndarray:
    """One number per row, finite; for grades, whole numbers within 64 bits (a fraction is not cut
    down to a grade without a word, as the file readers and from_df refuse it too). Text ("1"), True and
    None are refused by row: numpy would read them as 1.0, 1.0 and nan."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        raise ValidationError(f"{caller}: {what} must be numbers") from None
    if array.dtype.kind == "c":  # astype would drop the imaginary part with only a warning
        raise ValidationError(f"{caller}: {what} must be real numbers, not complex")
    if len(queries) != len(docs) or array.ndim != 1 or len(array) != len(queries):
        found = f"{len(array)} {what}" if array.ndim == 1 else f"not a list of {what}"
        raise ValidationError(f"{caller}: {len(queries)} query ids, {len(docs)} doc ids and {found}; give one of each per row")
    if array.dtype.kind not in "iuf" or isinstance(values, (list, tuple)):  # a list: numpy reads [1, True] as [1, 1]
        listed = values if isinstance(values, (list, tuple)) else array.tolist()
        k = next((k for k, v in enumerate(listed) if not isinstance(v, (numbers.Real, Decimal)) or isinstance(v, bool)), None)
        if k is not None:
            raise ValidationError(f"{caller}: {what} must be numbers; ({queries[k].as_py()!r}, {docs[k].as_py()!r}) has {listed[k]!r}")
    try:
        if array.dtype.kind not in "iu" or not whole:
            array = array.astype(np.float64)
    except OverflowError:
        raise ValidationError(f"{caller}: {what} must be numbers") from None
    bad = _unfit(array, whole) if array.dtype.kind == "f" else np.zeros(0, dtype=np.int64)  # ints are whole and finite
    if len(bad):
        k = int(bad[0])
        raise ValidationError(f"{caller}: {what} must be {'whole numbers' if whole else 'finite numbers'}; "
                              f"({queries[k].as_py()!r}, {docs[k].as_py()!r}) has {float(array[k]):g}")
    return array.astype(np.int64 if whole else np.float64)


def one_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one array: runs and qrels read from a file hold theirs chunked (no copy into one buffer)."""
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def dictionary_codes(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """(distinct values in order of first appearance, each row's index into them)."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):  # the chunks share one dictionary
        if not encoded.num_chunks:
            return pa.array([], type=pa.string()), np.zeros(0, dtype=np.int64)
        return encoded.chunks[0].dictionary, np.concatenate([c.indices.to_numpy() for c in encoded.chunks]).astype(np.int64)
    return encoded.dictionary, encoded.indices.to_numpy().astype(np.int64)


def _pandas(caller: str):
    """pandas, which only from_df / to_df need (the `pandas` extra)."""
    try:
        import pandas
    except ImportError:
        raise ModuleNotFoundError(f"{caller} needs pandas: pip install 'semrel[pandas]'", name="pandas") from None
    return pandas


def _frame_columns(df, caller: str, **columns: str) -> list:
    """The DataFrame's columns named by `columns` (parameter -> column name), each checked for empty values."""
    if not hasattr(df, "columns") or not hasattr(df, "iloc"):
        raise TypeError(f"{caller} takes a pandas DataFrame, not {type(df).__name__}")
    found = []
    for param, column in columns.items():
        if column not in df.columns:
            raise ValidationError(f"{caller}: the DataFrame has no column {column!r} ({param}={column!r}); "
                                  f"its columns: {', '.join(map(str, df.columns))}")
        values = df[column]
        empty = np.flatnonzero(values.isna().to_numpy())
        if len(empty):
            raise ValidationError(f"{caller}: column {column!r} ({param}=) is empty at index {df.index[empty[0]]!r}")
        found.append(values)
    return found


def _frame_ids(values) -> pa.Array:
    """A DataFrame's id column as Arrow, in one step where it holds one kind; mixed ("q1" beside 2) id by id."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _strings(values.tolist())


def _numbers(values, caller: str, param: str, whole: bool) -> np.ndarray:
    """A DataFrame column as float64 (whole=False) or int64 grades (whole=True); finite values only."""
    try:
        numbers = np.asarray(values.to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(f"{caller}: column {values.name!r} ({param}=) must hold numbers") from None
    bad = _unfit(numbers, whole)
    if len(bad):
        what = "whole-number grades" if whole else "finite numbers"
        raise ValidationError(f"{caller}: column {values.name!r} ({param}=) must hold {what}; "
                              f"index {values.index[bad[0]]!r} holds {float(numbers[bad[0]]):g}")
    return numbers.astype(np.int64) if whole else numbers


def _same_rows(ours: tuple, theirs: tuple) -> bool:
    """The same (query, doc, number) rows in any order: the rows of qrels and runs are a set (a run's ranking
    comes from its scores), so a file and the dict or DataFrame it was read into are equal."""
    if len(ours[2]) != len(theirs[2]):
        return False

    def rows(queries, docs, numbers) -> pa.Table:
        table = pa.table({"q": pc.cast(queries, pa.large_string()), "d": pc.cast(docs, pa.large_string()), "n": numbers})
        return table.sort_by([("q", "ascending"), ("d", "ascending"), ("n", "ascending")])

    return rows(*ours).equals(rows(*theirs))


QrelsT = TypeVar("QrelsT", bound="Qrels")  # the constructors return the class they are called on: semrel.Qrels, semrel.Run
RunT = TypeVar("RunT", bound="Run")


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one (query, doc, grade) row per judged pair."""

    query_ids: pa.Array | pa.ChunkedArray
    doc_ids: pa.Array | pa.ChunkedArray
    relevance: np.ndarray
    source: str | None = None  # the file read, so errors found later can name its line

    @classmethod
    def from_columns(cls: type[QrelsT], query_ids, doc_ids, relevance) -> QrelsT:
        queries, docs = _strings(query_ids), _strings(doc_ids)
        return cls(queries, docs, _column(relevance, queries, docs, "Qrels", "grades", whole=True))

    @classmethod
    def from_dict(cls: type[QrelsT], judged: Mapping[str, Mapping[str, int]]) -> QrelsT:
        rows = _nested_rows(judged, "Qrels.from_dict", "grade")
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])

    @classmethod
    def from_df(cls: type[QrelsT], df: pd.DataFrame, q_id_col: str = "q_id", doc_id_col: str = "doc_id",
                score_col: str = "score") -> QrelsT:
        """A pandas DataFrame with one row per judged pair and a whole-number grade (ranx's column names)."""
        q, d, grade = _frame_columns(df, "Qrels.from_df", q_id_col=q_id_col, doc_id_col=doc_id_col, score_col=score_col)
        return cls.from_columns(_frame_ids(q), _frame_ids(d), _numbers(grade, "Qrels.from_df", "score_col", whole=True))

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, r in zip(self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.relevance.tolist()):
            out.setdefault(q, {})[d] = r
        return out

    def to_df(self) -> pd.DataFrame:
        """A pandas DataFrame with columns q_id, doc_id, score (the grade), one row per judged pair."""
        _pandas("Qrels.to_df")
        return pa.table({"q_id": self.query_ids, "doc_id": self.doc_ids, "score": self.relevance}).to_pandas()

    def __len__(self) -> int:
        return len(self.relevance)

    def __repr__(self) -> str:
        where = f", source={self.source!r}" if self.source else ""
        return f"Qrels({quantity(len(self), 'judgment')}, {quantity(pc.count_distinct(self.query_ids).as_py(), 'query')}{where})"

    def __eq__(self, other: object) -> bool:
        """Equal when they hold the same judgments, in any order and from any source (the file read is not compared)."""
        if not isinstance(other, Qrels):
            return NotImplemented
        return _same_rows((self.query_ids, self.doc_ids, self.relevance), (other.query_ids, other.doc_ids, other.relevance))

    def __hash__(self) -> int:  # what equal qrels share, without reading every row
        return hash(("Qrels", len(self)))


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked result list: one (query, doc, score) row per retrieved document.

    Order is given by score (descending, ties by doc id descending, as trec_eval does);
    the rank column of a TREC file is not kept.
    """

    query_ids: pa.Array | pa.ChunkedArray  # chunked as read from a file: no copy into one buffer
    doc_ids: pa.Array | pa.ChunkedArray
    scores: np.ndarray
    name: str = "run"
    source: str | None = None  # the file read, so errors found later can name its line
    tag: str | None = None  # the run file's tag (its last line's sixth field, trec_eval's runid); None: not read from a file

    @classmethod
    def from_columns(cls: type[RunT], query_ids, doc_ids, scores, name: str = "run") -> RunT:
        check_run_name(name)
        queries, docs = _strings(query_ids), _strings(doc_ids)
        return cls(queries, docs, _column(scores, queries, docs, f"Run {name!r}", "scores", whole=False), name)

    @classmethod
    def from_dict(cls: type[RunT], ranked: Mapping[str, Mapping[str, float]], name: str = "run") -> RunT:
        rows = _nested_rows(ranked, "Run.from_dict", "score")
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name)

    @classmethod
    def from_df(cls: type[RunT], df: pd.DataFrame, q_id_col: str = "q_id", doc_id_col: str = "doc_id", score_col: str = "score",
                name: str = "run") -> RunT:
        """A pandas DataFrame with one row per retrieved document and its score (ranx's column names).
        Rows may come in any order: the ranking comes from the scores, as in trec_eval."""
        q, d, score = _frame_columns(df, "Run.from_df", q_id_col=q_id_col, doc_id_col=doc_id_col, score_col=score_col)
        return cls.from_columns(_frame_ids(q), _frame_ids(d), _numbers(score, "Run.from_df", "score_col", whole=False), name)

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.scores.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def to_df(self) -> pd.DataFrame:
        """A pandas DataFrame with columns q_id, doc_id, score, one row per retrieved document."""
        _pandas("Run.to_df")
        return pa.table({"q_id": self.query_ids, "doc_id": self.doc_ids, "score": self.scores}).to_pandas()

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        return f"Run({self.name!r}: {quantity(len(self), 'result')}, {quantity(pc.count_distinct(self.query_ids).as_py(), 'query')})"

    def __eq__(self, other: object) -> bool:
        """Equal when they have one name and the same scored rows, in any order (the file read and its tag are not compared)."""
        if not isinstance(other, Run):
            return NotImplemented
        return self.name == other.name and _same_rows((self.query_ids, self.doc_ids, self.scores),
                                                      (other.query_ids, other.doc_ids, other.scores))

    def __hash__(self) -> int:  # what equal runs share, without reading every row
        return hash(("Run", self.name, len(self)))


@dataclass(frozen=True, eq=False)
class Preferences:
    """Preference judgments (trec_eval's prefs): one row per (query, judgment group, subgroup, doc) and
    its value. Within a subgroup a document is preferred to each with a lower value; a group is one
    user's consistent view of a query. Plain lists: they are read per query, never in bulk."""

    query_ids: list[str]
    groups: list[str]
    subgroups: list[str]
    doc_ids: list[str]
    values: np.ndarray
    source: str | None = None  # the file read, so errors found later can name its line

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class Chunk:
    """A passage of a document, with character offsets into that document's (extracted) text.

    `meta` holds where the passage sits in its source, when the source says: `pages` (PDF pages,
    from 1) and `headings` (the path of section headings it starts under: HTML, .docx, Markdown).
    """

    id: str
    text: str
    doc_id: str
    start: int
    end: int
    title: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldenItem:
    """A query with its reference answer(s) and, where known, the chunks that hold the answer."""

    query_id: str
    query: str
    reference_answers: tuple[str, ...]
    gold_chunk_ids: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    # the other top-level keys of its golden.jsonl line: a user's own fields, written back as they were
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reference_answer(self) -> str:
        return self.reference_answers[0] if self.reference_answers else ""

    @property
    def blank(self) -> bool:
        """No query text (empty or spaces): nothing to retrieve for, an error to `golden validate` and import."""
        return not self.query.strip()


T = TypeVar("T")


@dataclass(frozen=True)
class QuerySample:
    """Which queries of a golden set to work on: the first `limit`, or `size` drawn at random with
    `seed` (kept in file order), or all. The same file, size and seed always give the same queries,
    so `retrieve --sample 100` and `judge --sample 100` work on one sample."""

    limit: int | None = None
    size: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.limit is not None and self.size is not None:
            raise UsageError("give limit= N (the first N queries) or sample= N (N at random), not both")
        for name, value in (("limit", self.limit), ("sample", self.size)):  # the CLI's --limit and --sample stop 0 themselves
            if value is not None and value < 1:
                raise UsageError(f"{name}={value}: give a number of queries, at least 1")

    @classmethod
    def of(cls, value: Any) -> QuerySample:
        """The Python API's sample=: a QuerySample, or a number of queries drawn at random with seed 0, as `--sample N`."""
        check_kind("sample", value, (QuerySample, numbers.Integral), "a number of queries or a semrel.records.QuerySample",
                   required=True)
        return value if isinstance(value, QuerySample) else cls(size=int(value))

    @property
    def active(self) -> bool:
        return self.limit is not None or self.size is not None

    def apply(self, items: Sequence[T]) -> list[T]:
        if self.limit is not None:
            return list(items[: self.limit])
        if self.size is None or self.size >= len(items):
            return list(items)
        chosen = sorted(random.Random(self.seed).sample(range(len(items)), self.size))
        return [items[i] for i in chosen]

    def describe(self) -> dict[str, Any] | None:
        """The manifest's record (None when every query is used)."""
        if self.limit is not None:
            return {"limit": self.limit}
        if self.size is not None:
            return {"sample": self.size, "seed": self.seed, "rule": "random.Random(seed).sample of positions, file order kept"}
        return None


ALL_QUERIES = QuerySample()


@dataclass(frozen=True)
class Judgment:
    """BERTScore of one candidate chunk against a query's reference answer, and the judge's
    probability that the chunk is relevant (None in judgments written before semrel computed it)."""

    query_id: str
    chunk_id: str
    P: float
    R: float
    F: float
    source: str = ""
    p: float | None = None
    features: Mapping[str, float] | None = None  # what p was computed from (semrel.judging.labels.FEATURES)


def _nested_rows(value: Any, where: str, inner: str) -> list[tuple[Any, Any, Any]]:
    """(query, doc, value) rows of {query_id: {doc_id: value}}; anything else is a TypeError saying what to give."""
    if not isinstance(value, Mapping) or not all(isinstance(docs, Mapping) for docs in value.values()):
        raise TypeError(f"{where}: give {{query_id: {{doc_id: {inner}}}}}, not {type(value).__name__}"
                        + ("" if not isinstance(value, Mapping) else " of non-mappings"))
    return [(q, d, v) for q, docs in value.items() for d, v in docs.items()]
