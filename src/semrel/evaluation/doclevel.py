"""Document-level scoring of chunk runs, and the check that a run and qrels speak of the same ids.

Document qrels (TREC collections, BEIR) judge documents; a chunk retriever returns chunks. Each
chunk id is mapped to its document (its `doc_id` in corpus.jsonl where a corpus is given, else the
id before its last `#`, semrel's `<doc_id>#<n>`), and each query keeps the first occurrence of each
document in trec_eval's rank order, scored by that chunk (MaxP: a document is as good as its best
chunk). The result is an ordinary run of documents.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Iterable, Iterator, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ValidationError
from ..formats.corpus import iter_corpus
from ..records import Chunk, Qrels, Run, dictionary_codes, one_array
from ..terminal import agreeing, quantity
from .metrics import Evaluation, rank_order, refuse_repeats

CorpusMapping = Tuple[pa.Array, pa.Array]  # (chunk ids, their doc ids) of a corpus, in its order


def corpus_documents(path: str | os.PathLike) -> CorpusMapping:
    """(chunk ids, their doc ids) of a corpus.jsonl, read as a stream."""
    listed = Listed(chunk for _, chunk in iter_corpus(path))
    for _ in listed:
        pass
    return listed.mapping()


class Listed:
    """`chunks` passed on one at a time, their ids and doc ids kept (with `keep`) for mapping(): a reader of every chunk
    (the report's corpus stats) and the check of the runs' chunk ids share one pass over the corpus."""

    def __init__(self, chunks: Iterable[Chunk], keep: bool = True) -> None:
        self._chunks, self._keep = chunks, keep
        self._ids: list[str] = []
        self._docs: list[str] = []

    def __iter__(self) -> Iterator[Chunk]:
        for chunk in self._chunks:
            if self._keep:
                self._ids.append(chunk.id)
                self._docs.append(chunk.doc_id)
            yield chunk

    def mapping(self) -> CorpusMapping:
        """What corpus_documents gives, of the chunks passed on so far (all of them once iterated)."""
        if not self._keep:
            raise ValueError("Listed(keep=False) keeps no ids")
        return pa.array(self._ids, type=pa.string()), pa.array(self._docs, type=pa.string())


def document_ids(chunk_ids: pa.Array | pa.ChunkedArray, mapping: tuple[pa.Array, pa.Array] | None = None
                 ) -> tuple[pa.Array, pa.Array]:
    """(each chunk's document, the chunk ids `mapping` does not list): from `mapping` (chunk ids, doc ids) where it lists
    the chunk, else the id before the chunk id's last `#` (the whole id where it has none)."""
    ids = one_array(chunk_ids)
    stem = pc.replace_substring_regex(ids, pattern="#[^#]*$", replacement="")
    if mapping is None:
        return stem, ids.slice(0, 0)
    at = pc.index_in(ids, value_set=mapping[0])
    return pc.if_else(pc.is_null(at), stem, mapping[1].take(at.fill_null(0))), ids.filter(pc.is_null(at))


def to_documents(run: Run, mapping: tuple[pa.Array, pa.Array] | None = None, warn: Callable[[str], None] | None = None) -> Run:
    """The run at document level (MaxP): each query's documents in the order of their best chunk, scored by it.
    `warn` hears how many of the run's chunks `mapping` (the corpus) does not list: their document is read from their id."""
    docs, unlisted = document_ids(run.doc_ids, mapping)
    if len(unlisted) and warn is not None and mapping is not None:
        warn(unlisted_message(run, unlisted, mapping, "each is taken as the document its id names before its last '#'"))
    order = rank_order(run)
    _, query_code = dictionary_codes(run.query_ids)
    refuse_repeats(run, query_code)  # at chunk level: merged into its document a repeated chunk would pass unseen
    names, doc_code = dictionary_codes(docs)
    key = query_code[order] * max(len(names), 1) + doc_code[order]
    _, first = np.unique(key, return_index=True)
    keep = order[np.sort(first)]  # each (query, document) at its best chunk, in rank order
    taken = pa.array(keep)
    return Run(run.query_ids.take(taken), docs.take(taken), run.scores[keep], run.name, run.source, run.tag)


def _examples(values: Iterable[str], count: int = 3) -> str:
    return ", ".join(repr(v) for v in list(dict.fromkeys(values))[:count])


def unlisted_chunks(run: Run, mapping: tuple[pa.Array, pa.Array]) -> pa.Array:
    """The run's chunk ids (one per row) that `mapping` (the corpus: chunk ids, doc ids) does not list."""
    ids = one_array(run.doc_ids)
    return ids.filter(pc.invert(pc.is_in(ids, value_set=mapping[0])))


def listed_only(run: Run, mapping: tuple[pa.Array, pa.Array], warn: Callable[[str], None] | None) -> Run:
    """The run without its rows of chunks the corpus does not list, said through `warn`: a pool of them stops the judge,
    which has no text to score (one misspelt id in a user's run had stopped `semrel run`)."""
    ids = one_array(run.doc_ids)
    listed = pc.is_in(ids, value_set=mapping[0])
    if pc.all(listed).as_py() is not False:
        return run
    if warn is not None:
        unlisted = ids.filter(pc.invert(listed))
        it = ("it is", "it") if len(unlisted) == 1 else ("they are", "them")
        warn(unlisted_message(run, unlisted, mapping, f"{it[0]} left out of the pool, as the judge has no text for {it[1]}, and "
                              f"{agreeing(len(unlisted), 'count')} as not relevant"))
    mask = listed.to_numpy(zero_copy_only=False)
    return dataclasses.replace(run, query_ids=one_array(run.query_ids).filter(listed), doc_ids=ids.filter(listed), scores=run.scores[mask])


def warn_unlisted(run: Run, mapping: tuple[pa.Array, pa.Array], qrels: Qrels, warn: Callable[[str], None]) -> None:
    """`warn` hears of the run's chunks the corpus does not list (a misspelt id, another chunking's, a document's), which
    score as not relevant: the run looks bad and no measure but Judged@k says why."""
    unlisted = unlisted_chunks(run, mapping)
    if len(unlisted):
        judged = pc.sum(pc.is_in(unlisted, value_set=qrels.doc_ids)).as_py() or 0
        fate = (f"{'it counts' if len(unlisted) == 1 else 'they count'} as not relevant" if not judged else
                f"the qrels judge {judged:,} of them, so the qrels too name chunks the corpus does not list")
        warn(unlisted_message(run, unlisted, mapping, fate))


def unlisted_message(run: Run, unlisted: pa.Array, mapping: tuple[pa.Array, pa.Array], fate: str) -> str:
    """The warning line for the run's rows whose chunk ids (`unlisted`) the corpus (`mapping`) does not list: how many, their
    share of the run's rows, a few of them, what becomes of them (`fate`), and what explains them where something does."""
    share = len(unlisted) / max(len(run), 1)
    seen = pc.unique(unlisted.slice(0, 10_000))  # the examples and the hint: the distinct ids of the first rows
    name = "names a chunk" if len(unlisted) == 1 else "name chunks"
    return (f"{len(unlisted):,} of the {quantity(len(run), 'row')} of run {run.name!r} ({'<1%' if share < 0.005 else f'{share:.0%}'}) "
            f"{name} "
            f"the corpus does not list (e.g. {_examples(seen.to_pylist())}): {fate}; check that the run and the corpus "
            f"match{id_hint(seen, mapping[0], mapping[1], 'the corpus')}")


def id_hint(ids: pa.Array, known: pa.Array, documents: pa.Array, where: str) -> str:
    """'; ' and what explains `ids` that `known` does not hold, for the first id a reason fits: `known` holds it spelt
    otherwise (case, punctuation, leading zeros: 'manual-3' for 'manual#3'); it names a document of `documents` (the
    document of each id of `known`) where chunk ids are expected; or its document (before its last '#') is there but this
    chunk of it is not (another chunking). '' where none fits. `where` names `known` ('the corpus', 'the qrels')."""
    if not len(ids) or not len(known):
        return ""
    at = pc.index_in(id_key(ids), value_set=id_key(known))
    for i, k in zip(ids.to_pylist(), at.to_pylist()):
        if k is not None:
            return f" ({known[k].as_py()!r} of {where} is spelt {i!r} in the run)"
    at = pc.index_in(ids, value_set=documents)
    for i, k in zip(ids.to_pylist(), at.to_pylist()):
        if k is not None:
            return (f" ({i!r} is a document of {where}, whose chunk ids are like {known[k].as_py()!r}: the run names documents "
                    "where chunk ids are expected)")
    stems = pc.replace_substring_regex(ids, pattern="#[^#]*$", replacement="")
    at = pc.index_in(stems, value_set=documents)
    for i, s, k in zip(ids.to_pylist(), stems.to_pylist(), at.to_pylist()):
        if k is not None and s != i and known[k].as_py() == s:  # `known` holds the document whole, not its chunks
            return f" ({i!r} names a chunk of {s!r}, a whole document in {where}: the run may come from another chunking)"
        if k is not None and s != i:
            return (f" ({i!r} is not a chunk of the document {s!r} of {where}, whose chunks are like {known[k].as_py()!r}: the "
                    "run may come from another chunking)")
    return ""


def id_key(ids: pa.Array) -> pa.Array:
    """Each id as a key blind to spelling: lower case, its runs of letters and of digits joined by '#' whatever separated
    them, leading zeros of numbers dropped ('manual-3', 'Manual#03', 'manual3' and 'manual#3' have one key)."""
    key = pc.replace_substring_regex(pc.utf8_lower(ids), pattern=r"[^\pL\pN]+", replacement="#")
    for pattern in (r"(\pL)(\pN)", r"(\pN)(\pL)"):
        key = pc.replace_substring_regex(key, pattern=pattern, replacement=r"\1#\2")
    return pc.utf8_trim(pc.replace_substring_regex(key, pattern=r"(^|#)0+(\d)", replacement=r"\1\2"), characters="#")


def require_shared_queries(result: Evaluation, run: Run, qrels_label: str, run_label: str) -> None:
    """A run that shares no query with the qrels (empty, or of other queries): an error naming the first
    ids of each side. Alone where unjudged documents are expected (fill judges them)."""
    if len(result.missing_queries) == len(result.query_ids):
        run_queries = dictionary_codes(run.query_ids)[0].to_pylist()
        raise ValidationError(
            f"{run_label} shares no query id with {qrels_label}: the qrels have {_examples(result.query_ids) or 'no rows'}, "
            f"the run has {_examples(run_queries) or 'no rows'}; check that both come from the same queries")


def require_overlap(result: Evaluation, qrels: Qrels, run: Run, qrels_label: str, run_label: str,
                    offer_doc_level: bool = False) -> None:
    """A run that shares no query, or no document, with the qrels would score 0 everywhere for a
    reason no measure shows (ids from another collection, chunk ids against document qrels): an
    error naming the first ids of each side (and doc_level=True, with `offer_doc_level`: where the caller has it and did not
    give it; `semrel eval` says --doc-level, cli.base.in_flags)."""
    require_shared_queries(result, run, qrels_label, run_label)
    if result.judged_rows or not len(run):
        return
    judged_docs = pc.unique(qrels.doc_ids)
    if pc.any(pc.is_in(run.doc_ids, value_set=judged_docs)).as_py():
        return  # some of its documents are judged, for other queries: a real score of 0
    run_docs = run.doc_ids.slice(0, 3).to_pylist()
    if offer_doc_level and any("#" in d for d in run_docs) and not any("#" in d for d in judged_docs.slice(0, 100).to_pylist()):
        hint = "; the run's ids look like chunk ids and the qrels' like document ids: score at document level with doc_level=True"
    else:  # a misspelt id ('manual-3' for 'manual#3'), or a document where the qrels judge chunks
        hint = id_hint(pc.unique(run.doc_ids.slice(0, 10_000)), judged_docs, document_ids(judged_docs)[0], "the qrels")
    raise ValidationError(
        f"{run_label} shares no document id with {qrels_label}: the qrels judge {_examples(judged_docs.slice(0, 3).to_pylist())}, "
        f"the run returns {_examples(run_docs)}{hint}")
