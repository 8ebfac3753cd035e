"""Picking gold chunks by hand: the session behind `semrel golden pick`, free of any terminal code.

Every action is appended to a journal (`<output>.pick.jsonl`, one JSON object per line, flushed
and fsynced) and the golden set is rewritten atomically, so quitting or crashing loses nothing.
Nothing is written before the first action (opening a session and quitting leaves every file as it
was), and the rewrite changes only `gold_chunk_ids`: every other byte of each line, including
fields semrel does not know, is written back as it was read (with -o, from that file where it was
edited by hand since pick wrote it, else from --golden); a line whose gold chunks are unchanged is left whole, and
so are blank lines, a byte-order mark and the file's last newline, or its lack (formats.jsonl.JsonlText).
Each journal line records the query's state before and after the action; replaying the journal
gives the state and the undo history back. A toggle records the key of its chunk's text (the vector store's:
what the picker showed), so a resume over a corpus where a chunk still gold holds other text says so (chunk
ids are positions: an edited document moves text between them). Where the golden set to write was edited by hand since
(its manifest no longer describes it, or it has none) and holds other gold chunks for a query than
the session, the file's are kept: the later decision (an undoable `edit`, reported; `undo` brings
the pick back). One a command wrote (its manifest describes it: `golden import` again) gets the
journal replayed onto it, as does one a crash left a key behind.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from ..encoding.models import DEFAULT_MODEL, model_params
from ..encoding.vectors import text_key
from ..errors import FormatError, SemrelError, UsageError
from ..formats.corpus import golden_row, iter_corpus, read_corpus, read_golden, require_known_chunks
from ..formats.files import STDIO, allow_rewrite, atomic_writer, display_name, open_input, rewrite_lock, same_file
from ..formats.jsonl import JsonlText, read_jsonl, require, with_field
from ..formats.manifest import outputs_with_manifests, read_manifest, write_manifest
from ..progress import Steps, no_progress
from ..records import Chunk, GoldenItem
from ..retrieval.corpus import Corpus
from ..retrieval.lexical import indexed_text
from ..retrieval.retrieve import Bm25Index, DenseIndex, RetrievalSpec, StoredBm25, retrieval_stores
from .locate import answer_ranking

OPEN, DONE, SKIPPED, GIVEN = "open", "done", "skipped", "given"
ACTIONS = ("toggle", "next", "skip", "undo", "edit")
MAX_CANDIDATES = 10
"""Candidates are chosen with one key each: 1-9 and 0 for the tenth."""


@dataclass(frozen=True)
class State:
    """Where one query stands: its gold chunks and whether the person is done with it."""

    gold: tuple[str, ...]
    status: str

    def to_json(self) -> dict:
        return {"gold_chunk_ids": list(self.gold), "status": self.status}


@dataclass(frozen=True)
class Candidate:
    """A chunk offered for a query, with the (method, rank) pairs that found it."""

    chunk: Chunk
    found_by: tuple[tuple[str, int], ...]


class CandidateFinder:
    """Top chunks of BM25 and dense retrieval per query. The indexes are built on first use, so a session
    with nothing to pick needs neither the model nor the cache. With the cache (a corpus file), BM25
    searches the on-disk index `semrel retrieve` keeps and dense the chunk vectors of its vector store
    (retrieval_stores), and the corpus is held as ids and text keys (retrieval.corpus.Corpus): the
    queries `expect` names are searched together at the first call and their candidates' chunks
    fetched in one pass over the file, so memory follows the candidates, not the corpus, and a resume
    encodes nothing. Without the cache (or from stdin) the chunks are read whole and indexed in memory."""

    def __init__(self, corpus_path: str, per_method: int, model: str | None = None, steps: Steps = no_progress,
                 cache: str | os.PathLike | None = None, use_cache: bool = True):
        if not 1 <= per_method <= MAX_CANDIDATES // 2:
            raise UsageError(f"per_method= must be between 1 and {MAX_CANDIDATES // 2} (one key per candidate)")
        self.path, self.per_method, self.model, self.steps = corpus_path, per_method, model, steps
        self.cache, self.use_cache = cache, use_cache
        self._chunks = None if use_cache and corpus_path != STDIO else read_corpus(corpus_path)
        self.corpus = Corpus.read(corpus_path) if self._chunks is None else Corpus.of_chunks(self._chunks)
        self._indexes: tuple[Bm25Index | StoredBm25, DenseIndex] | None = None
        self._expected: list[str] = []
        self._found: dict[str, list[Candidate]] = {}

    @property
    def ids(self) -> list[str]:
        return self.corpus.ids

    def text_keys(self, chunk_ids: set[str]) -> dict[str, str]:
        """text_mark of each of `chunk_ids` in the corpus, from the keys read with its ids (no pass over the file)."""
        keys = self.corpus.keys
        return {c: keys[p].hex() for p, c in enumerate(self.corpus.ids) if c in chunk_ids}

    def chunks_of(self, documents: set[str]) -> dict[str, list[Chunk]]:
        """The chunks of `documents`, in corpus order: from memory where the corpus is held, else one pass of its file."""
        chunks = self._chunks if self._chunks is not None else (chunk for _, chunk in iter_corpus(self.path))
        found: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            if chunk.doc_id in documents:
                found.setdefault(chunk.doc_id, []).append(chunk)
        return found

    def expect(self, queries: Sequence[str]) -> None:
        """Queries to search together with the first one asked for (the session's open queries)."""
        self._expected = list(queries)

    def __call__(self, query: str) -> list[Candidate]:
        """Candidates interleaved by rank (bm25 #1, dense #1, bm25 #2 ...), each chunk once."""
        if query not in self._found:
            queries = list(dict.fromkeys([query, *self._expected]))
            self._expected = []
            self._found.update(zip(queries, self._search(queries)))
        return self._found[query]

    def _search(self, queries: list[str]) -> list[list[Candidate]]:
        if not self._indexes:
            spec = RetrievalSpec("hybrid", model=self.model)
            store, lexical = retrieval_stores(spec, self.path if self._chunks is None else self._chunks, self.cache, self.use_cache)
            bm25 = StoredBm25(lexical.index(self.path, self.steps), self.steps) if lexical else Bm25Index(self.corpus)
            self._indexes = (bm25, DenseIndex(self.corpus, self.model, self.steps, store=store))
        bm25_index, dense_index = self._indexes
        steps = self.steps if len(queries) > 1 else no_progress  # one query (after an undo): no bar over the screen
        methods = [("bm25", bm25_index.search(queries, self.per_method)),
                   ("dense", dense_index.search(queries, self.per_method, steps=steps))]
        found: list[dict[int, list[tuple[str, int]]]] = []
        for q in range(len(queries)):
            lists = [(name, hits[q][0].tolist()) for name, hits in methods]
            by: dict[int, list[tuple[str, int]]] = {}
            for rank in range(self.per_method):
                for name, positions in lists:
                    if rank < len(positions):
                        by.setdefault(positions[rank], []).append((name, rank + 1))
            found.append(by)
        wanted = np.unique(np.array([p for by in found for p in by], dtype=np.int64))
        chunks = self._chunks if self._chunks is not None else dict(zip(wanted.tolist(), self.corpus.iter_chunks(wanted)))
        return [[Candidate(chunks[p], tuple(names)) for p, names in by.items()] for by in found]


def excerpt(text: str, answer: str, chars: int) -> str:
    """The stretch of about `chars` characters of `text` that shares the most words with `answer`.

    A person deciding whether a chunk holds the answer needs to see that part of it, not its start.
    """
    text = " ".join(text.split())
    if len(text) <= chars:
        return text
    wanted = {w.lower() for w in re.findall(r"\w{3,}", answer)}
    found = [(m.start(), m.end(), m.group().lower() in wanted) for m in re.finditer(r"\w+", text)]
    if not found:
        return text[:chars] + " …"
    starts, ends = np.array([f[0] for f in found]), np.array([f[1] for f in found])
    hits = np.concatenate([[0], np.cumsum([f[2] for f in found], dtype=np.int64)])
    covered = hits[np.searchsorted(ends, starts + chars, side="right")] - hits[:-1]
    start = int(starts[int(np.argmax(covered))])
    end = text.rfind(" ", start, start + chars) if start + chars < len(text) else len(text)
    piece = text[start : end if end > start else start + chars]
    return ("… " if start else "") + piece + (" …" if start + len(piece) < len(text) else "")


def text_mark(chunk: Chunk) -> str:
    """The key of a chunk's text as the picker shows it and retrieval reads it (title and text; the vector store's)."""
    return text_key(indexed_text(chunk)).hex()


@dataclass(frozen=True)
class Event:
    """One journal line: an action on a query, with the query's state before and after it; a toggle, the text_mark of
    its chunk (None in journals written before pick recorded it)."""

    action: str
    query_id: str
    before: State
    after: State
    text_key: str | None = None

    def to_json(self) -> dict:
        line = {"action": self.action, "query_id": self.query_id, "before": self.before.to_json(), "after": self.after.to_json()}
        return {**line, "text_key": self.text_key} if self.text_key is not None else line


def _size(path: str) -> int:
    """The file's size in bytes, 0 when there is none."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def journal_path(output: str | os.PathLike) -> str:
    return f"{output}.pick.jsonl"


def _state(obj: object, path: str, line: int) -> State:
    if not isinstance(obj, dict):
        raise FormatError(display_name(path), "'before' and 'after' should be objects", line=line)
    gold = require(obj, "gold_chunk_ids", path, line, list)
    status = require(obj, "status", path, line)
    if status not in (OPEN, DONE, SKIPPED, GIVEN) or not all(isinstance(g, str) for g in gold):
        raise FormatError(display_name(path), f"bad state {obj!r}", line=line)
    return State(tuple(gold), status)


def _torn_tail(path: str) -> tuple[int, int, bytes] | None:
    """(where the last complete line ends, how many lines end there, what follows) when the journal does not end with
    a newline: a crash cut its last write short (each action is one line, flushed whole). Checked before every append,
    so only the last byte is read unless it is torn (reading the whole journal made a session's appends quadratic). A
    FIFO or device there is refused unopened (open() waited on a FIFO for ever)."""
    with open_input(path) as handle:
        size = handle.seek(0, os.SEEK_END)
        if not size:
            return None
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return None
        end, start = 0, size
        while start:  # back a block at a time to the last newline
            step = min(start, 1 << 16)
            start -= step
            handle.seek(start)
            found = handle.read(step).rfind(b"\n")
            if found >= 0:
                end = start + found + 1
                break
        handle.seek(end)
        tail = handle.read()
        handle.seek(0)
        lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    return end, lines, tail


def _complete_lines(path: str) -> Iterator[tuple[int, dict]]:
    """read_jsonl's lines, less a last one a crash cut short (it holds no whole action; _mend_tail drops it)."""
    torn = _torn_tail(path)
    try:
        yield from read_jsonl(path)
    except FormatError as exc:
        if torn is None or exc.line != torn[1] + 1:
            raise


def _mend_tail(path: str) -> None:
    """Before an append: a last line cut short is dropped; one whole but for its newline gets it."""
    torn = _torn_tail(path) if os.path.exists(path) else None
    if torn is None:
        return
    end, _, tail = torn
    try:
        json.loads(tail)
        whole = True
    except ValueError:
        whole = False
    with open(path, "r+b") as handle:
        if whole:
            handle.seek(0, os.SEEK_END)
            handle.write(b"\n")
        else:
            handle.truncate(end)


def read_journal(path: str, query_ids: set[str], chunk_ids: set[str] | None = None) -> list[Event]:
    """The journal's events, or none when there is no journal yet; with `chunk_ids`, every chunk it
    marks must be one of them (a journal resumed over another chunking would write unknown gold ids)."""
    if not os.path.exists(path):
        return []
    events = []
    for line, obj in _complete_lines(path):
        action = require(obj, "action", path, line)
        query_id = require(obj, "query_id", path, line)
        if action not in ACTIONS:
            raise FormatError(display_name(path), f"unknown action {action!r}", line=line)
        if query_id not in query_ids:
            raise FormatError(display_name(path), f"query {query_id!r} is not in the golden set",
                              line=line, hint="this journal belongs to another golden set; move it away")
        key = obj.get("text_key")
        if key is not None and not isinstance(key, str):
            raise FormatError(display_name(path), f"text_key should be a string, found {key!r:.40}", line=line)
        event = Event(action, query_id, _state(obj.get("before"), path, line), _state(obj.get("after"), path, line), key)
        unknown = [c for c in event.before.gold + event.after.gold if chunk_ids is not None and c not in chunk_ids]
        if unknown:
            raise FormatError(display_name(path), f"chunk {unknown[0]!r} is not in the corpus", line=line,
                              hint="this journal was made over another corpus, e.g. another chunking: give that corpus, "
                                   "or move the journal away")
        events.append(event)
    return events


@dataclass(frozen=True)
class Current:
    """The query on screen: its golden item, its candidates and the chunks marked so far."""

    item: GoldenItem
    candidates: list[Candidate]
    gold: tuple[str, ...]


class PickSession:
    """The queue of queries without gold chunks and the actions on it; each action is saved at once."""

    def __init__(self, items: Sequence[GoldenItem], output: str, finder: Callable[[GoldenItem], list[Candidate]],
                 inputs: Sequence[str] = (), params: dict | None = None, chunk_ids: set[str] | None = None,
                 text: JsonlText | None = None, describe: Callable[[], Mapping[str, str]] | None = None):
        """`text`: the golden set as read (one object line per item, in order); saving writes it back with only
        `gold_chunk_ids` replaced (with_field), so fields semrel does not know, how each value was written, blank lines
        and the file's last newline (or none) are kept. `describe`: the
        model's params (name, fingerprint), added once a query is open: nothing to pick needs no model."""
        self.items, self.output, self.finder = list(items), output, finder
        self.text = text or JsonlText(tuple(json.dumps(golden_row(i), ensure_ascii=False) for i in self.items))
        self.lines = self.text.objects()  # one per item, each as it will be written back
        if len(self.lines) != len(self.items):
            raise ValueError(f"text= has {len(self.lines)} object lines for {len(self.items)} items")
        self.inputs, self.params, self.describe = list(inputs), dict(params or {}), describe
        self.journal = journal_path(output)
        self.states = {i.query_id: State(i.gold_chunk_ids, GIVEN if i.gold_chunk_ids else OPEN) for i in self.items}
        self.history: list[Event] = []
        self.saved = False
        events = read_journal(self.journal, set(self.states), chunk_ids)
        self._journal_size = _size(self.journal)  # another session's appends since would be written over (check_alone)
        self.journaled = {e.query_id for e in events}  # as the journal was at opening
        self._last = events[-1] if events else None
        self.edits: list[Event] = []  # hand edits taken from the golden set (adopt); journaled with the next action
        self._unjournaled: list[Event] = []
        # Each query's gold before any pick session touched it: what a skip leaves it with.
        self.origin = {q: s.gold for q, s in self.states.items()}
        for event in reversed(events):
            self.origin[event.query_id] = event.before.gold
        for event in events:
            self._apply(event)
        self.resumed = bool(events)
        self._shown: tuple[str, list[Candidate]] | None = None
        self.moved: list[tuple[str, str]] = []  # (query, chunk) picked whose text the corpus now holds otherwise (check_texts)

    def _apply(self, event: Event) -> None:
        if event.action == "undo":
            if self.history:
                self.history.pop()
        else:
            self.history.append(event)
        self.states[event.query_id] = event.after

    @property
    def remaining(self) -> list[GoldenItem]:
        return [i for i in self.items if self.states[i.query_id].status == OPEN]

    def counts(self) -> dict[str, int]:
        """How many queries are open, done and skipped (queries that came with gold are not counted)."""
        statuses = [s.status for s in self.states.values()]
        return {s: statuses.count(s) for s in (OPEN, DONE, SKIPPED)}

    def current(self) -> Current | None:
        """The first open query in golden-set order, or None when all are decided."""
        remaining = self.remaining
        if not remaining:
            return None
        item = remaining[0]
        if self._shown is None or self._shown[0] != item.query_id:
            self._shown = (item.query_id, self.finder(item))
        return Current(item, self._shown[1], self.states[item.query_id].gold)

    def marked_texts(self) -> dict[tuple[str, str], str]:
        """(query, chunk) -> the text_mark its journal recorded when the chunk was marked, for each chunk still gold."""
        marks: dict[tuple[str, str], str] = {}
        for event in self.history:
            for chunk_id in set(event.after.gold) - set(event.before.gold) if event.text_key else ():
                marks[event.query_id, chunk_id] = event.text_key or ""
        return {(q, c): key for (q, c), key in marks.items() if c in self.states[q].gold}

    def check_texts(self, keys: Callable[[set[str]], Mapping[str, str]]) -> None:
        """Set `moved`: the chunks marked and still gold whose text is not the one marked, by `keys` (chunk id -> text_mark
        in the corpus): chunk ids are positions, so an edited document moves text between them."""
        marks = self.marked_texts()
        now = keys({c for _, c in marks}) if marks else {}
        self.moved = [(q, c) for (q, c), key in marks.items() if c in now and now[c] != key]

    def _record(self, action: str, query_id: str, after: State, text: str | None = None) -> None:
        event = Event(action, query_id, self.states[query_id], after, text)
        with rewrite_lock(self.output):  # from the check through the rename: another session's key waits, then is refused
            self.check_alone()
            _mend_tail(self.journal)
            with open(self.journal, "a", encoding="utf-8", newline="\n") as out:  # "\n", not Windows' CR LF: one journal everywhere
                out.write("".join(json.dumps(e.to_json()) + "\n" for e in [*self._unjournaled, event]))
                out.flush()
                os.fsync(out.fileno())
                self._journal_size = os.fstat(out.fileno()).st_size
            self._unjournaled = []
            self._apply(event)
            self.save()

    def check_alone(self) -> None:
        """Refuse an action once the journal changed since this session last read or wrote it: a second session on the
        same golden set, unaware of the first's picks, wrote its own state of the file over them (a query picked in
        both kept the last one's marks, the other's lost without a word). The key is not saved; a resume has both.
        Called under rewrite_lock, so two keys in the same instant cannot both pass it."""
        if _size(self.journal) != self._journal_size:
            raise SemrelError(f"{self.journal}: changed since this pick session opened it (another pick session on "
                              f"{self.output}?); this key was not saved: end the other session and run the command again")

    def described(self) -> None:
        """The model's params added to the manifest's once a query is open (at the start, or after an undo)."""
        if self.describe is not None and self.remaining:
            self.params.update(self.describe())
            self.describe = None

    def save(self) -> None:
        """Rewrite the golden set (atomically) with every query's current gold chunks, and its manifest.

        Only `gold_chunk_ids` changes: the rest of each line is written back as read."""
        self.described()
        with outputs_with_manifests([self.output]) as staged:
            lines = []
            for item, line in zip(self.items, self.lines):
                gold = list(self.states[item.query_id].gold)
                was = [str(g) for g in json.loads(line).get("gold_chunk_ids") or ()]  # as golden_item reads them
                lines.append(line if was == gold else with_field(line, "gold_chunk_ids", gold))
            with atomic_writer(staged[self.output]) as out:
                out.write(self.text.text(lines))
            write_manifest(self.output, inputs=[*self.inputs, self.journal] if os.path.exists(self.journal) else self.inputs,
                           params=self.params, rows=len(self.items), staged=staged)
        self.saved = True

    def adopt(self, written: Mapping[str, tuple[str, ...]]) -> None:
        """Keep the gold chunks of `written` (the golden set to write, edited by hand since pick wrote it)
        for each query the session holds others for (from the journal, or with -o from --golden): the later
        decision. Each becomes an `edit` in the history (`undo` brings the session's chunks back) and in
        `edits`, to report; it is journaled with the next action, and nothing is saved before, so opening
        writes nothing and a rewrite never names a journal that lacks the edits it holds."""
        edits = [Event("edit", q, self.states[q], State(written[q], self.states[q].status))
                 for q in (i.query_id for i in self.items) if q in written and written[q] != self.states[q].gold]
        for event in edits:
            self._apply(event)
        self.edits += edits
        self._unjournaled += edits

    def keep_lines(self, written: Sequence[GoldenItem], text: JsonlText) -> None:
        """Write back the lines of `text` (-o's file, edited by hand since pick wrote it; its items `written`) instead
        of --golden's, so an edit of a reference or of a field semrel does not know is kept as its gold chunks are; its
        blank lines and last newline too where it holds --golden's queries in their order (else --golden's are kept)."""
        lines = dict(zip((i.query_id for i in written), text.objects()))
        self.lines = [lines.get(i.query_id, line) for i, line in zip(self.items, self.lines)]
        if [i.query_id for i in written] == [i.query_id for i in self.items]:
            self.text = text

    def reconcile(self, written: Mapping[str, tuple[str, ...]] | None, edited: bool) -> None:
        """Bring the golden set to write in step with a resumed journal. `written`: each query's gold chunks
        as it holds them now, None if it does not exist; `edited`: its manifest does not describe it.

        A file in step is left alone (opening writes nothing). One that lacks only the journal's last event
        (the one a crash can cut short: each is saved before the next key, and the kept edits it journaled
        are in the file already) is brought up to it whatever its manifest says (a crash leaves the old,
        the new or none); so is one removed, or written by a command since (`golden import` again: its
        manifest describes it). Otherwise an `edited` file was edited by hand: its gold chunks are kept (adopt).
        A hand edit that exactly undoes the last action looks like that lag: the action stays, `undo` gives the edit back."""
        if self._last is None:  # not resumed
            return
        now = {i.query_id: self.states[i.query_id].gold for i in self.items}
        if written == now:
            return
        if written is not None and edited and written != {**now, self._last.query_id: self._last.before.gold}:
            self.adopt(written)
        else:
            with rewrite_lock(self.output):
                self.save()

    def toggle(self, number: int) -> str | None:
        """Mark or unmark candidate `number` (1-based) of the current query; its chunk id, or None if there is none."""
        current = self.current()
        if current is None or not 1 <= number <= len(current.candidates):
            return None
        chunk = current.candidates[number - 1].chunk
        chunk_id = chunk.id
        gold = tuple(g for g in current.gold if g != chunk_id) if chunk_id in current.gold else (*current.gold, chunk_id)
        self._record("toggle", current.item.query_id, State(gold, OPEN), text_mark(chunk))
        return chunk_id

    def _close(self, action: str, status: str, gold: tuple[str, ...] | None = None) -> bool:
        current = self.current()
        if current is None:
            return False
        query_id = current.item.query_id
        self._record(action, query_id, State(current.gold if gold is None else gold, status))
        return True

    def next(self) -> bool:
        """Accept the current query's marks (none means no chunk holds the answer) and move on."""
        return self._close("next", DONE)

    def skip(self) -> bool:
        """Leave the current query undecided: without gold (its marks are dropped; it keeps only what the
        golden set held before picking began, which for a query offered here is nothing), and not offered
        again by later sessions. `undo` brings the marks back."""
        current = self.current()
        return current is not None and self._close("skip", SKIPPED, self.origin[current.item.query_id])

    def undo(self) -> Event | None:
        """Revert the last action not yet undone, from this session or an earlier one."""
        if not self.history:
            return None
        last = self.history[-1]
        self._record("undo", last.query_id, last.before)
        return last


class DocumentsFirst:
    """The candidates of a query, led, where the golden set names the document its answer is in (meta.gold_documents,
    as `golden import --doc-qrels` records them) but no gold chunk, by that document's chunks likeliest to hold the
    answer (locate.answer_ranking; 'document #1'): `--doc-qrels answer-chunk` found none, and retrieval over the whole
    corpus may not reach the document at all. The chunks of those documents alone are read, in one pass."""

    def __init__(self, retrieval: CandidateFinder, items: Sequence[GoldenItem], per_method: int):
        self.retrieval, self.per_method = retrieval, per_method
        wanted = {d for i in items if not i.gold_chunk_ids for d in _documents(i)}
        self.of_document = retrieval.chunks_of(wanted) if wanted else {}

    def __call__(self, item: GoldenItem) -> list[Candidate]:
        found = self.retrieval(item.query)
        chunks = {c.id: c for d in _documents(item) for c in self.of_document.get(d, ())}
        if not chunks:
            return found
        ranked = answer_ranking(item.query, item.reference_answers, [(c.id, c.text) for c in chunks.values()])[: self.per_method]
        retrieved = {c.chunk.id: c.found_by for c in found}
        first = [Candidate(chunks[c], (("document", rank), *retrieved.get(c, ()))) for rank, (c, _) in enumerate(ranked, 1)]
        led = {f.chunk.id for f in first}
        return (first + [c for c in found if c.chunk.id not in led])[:MAX_CANDIDATES]


def _documents(item: GoldenItem) -> list[str]:
    return [d for d in item.meta.get("gold_documents", ()) if isinstance(d, str)]


def _written_items(path: str) -> list[GoldenItem] | None:
    """The golden set at `path` (which must exist); None if it cannot be read."""
    try:
        return read_golden(path)
    except (SemrelError, OSError, ValueError):
        return None


def open_pick_session(
    golden_path: str, corpus_path: str, output: str | None = None, per_method: int = 5, model: str | None = None,
    steps: Steps = no_progress, cache: str | os.PathLike | None = None, use_cache: bool = True,
) -> PickSession:
    """A session over the golden set's queries without gold chunks, resumed from its journal if one exists.
    Chunk vectors come from the retriever's vector store under `cache` (see CandidateFinder)."""
    if (output or golden_path) == "-":
        raise UsageError("pick rewrites the golden set after every choice, so it needs a file, not '-'")
    finder = CandidateFinder(corpus_path, per_method, model, steps, cache, use_cache)
    chunk_ids = set(finder.ids)
    items = read_golden(golden_path)
    text = JsonlText.read(golden_path)  # the file as it is: unknown fields, blank lines, its last newline or none
    require_known_chunks(items, chunk_ids, golden_path)
    # The one command that edits a file it reads, on purpose: the golden set (when -o does not name
    # another file) and the journal of every change, which is what makes each edit recoverable.
    target = output or golden_path
    allow_rewrite(journal_path(target))
    in_place = output is None or same_file(output, golden_path)
    if in_place:
        allow_rewrite(golden_path)
    session = PickSession(items, target, DocumentsFirst(finder, items, per_method),
                          [golden_path, corpus_path], {"candidates_per_method": per_method, "model": model or DEFAULT_MODEL},
                          chunk_ids, text, lambda: model_params(model))  # the model's files, as judge, split and dedup record them
    session.described()  # before any work: a model that cannot be found is said at once
    finder.expect([i.query for i in session.remaining])
    if not session.resumed:
        return session
    session.check_texts(finder.text_keys)
    written: list[GoldenItem] | None = None  # the golden set to write as it is now; None if it does not exist
    if in_place:
        written = items
    elif os.path.exists(target):
        allow_rewrite(target)  # read only to compare: it is the file this session writes
        written = _written_items(target)
        if written is None:  # one that cannot be read is left alone until the first action
            return session
        require_known_chunks(written, chunk_ids, target)
        if read_manifest(target) is None:  # edited by hand: its other fields are the later word too
            session.keep_lines(written, JsonlText.read(target))
    session.reconcile(None if written is None else {i.query_id: i.gold_chunk_ids for i in written},
                      read_manifest(target) is None)
    return session
