"""Chunk runs scored against document qrels (--doc-level, MaxP), and runs that share no query or no
document with the qrels refused instead of scoring silent zeros."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error
from semrel import evaluate
from semrel.evaluation.doclevel import to_documents
from semrel.records import Run

DOC_QRELS = "q1 0 A 1\nq1 0 B 0\nq1 0 C 2\nq2 0 D 1\n"
# chunks of A, B, C (ids <doc>#<n>): A's best chunk ranks 2nd, B's 1st, C's 4th (after A's second chunk)
CHUNK_RUN = "q1 Q0 B#0 1 0.9 c\nq1 Q0 A#3 2 0.8 c\nq1 Q0 A#1 3 0.7 c\nq1 Q0 C#0 4 0.6 c\nq2 Q0 X#0 1 0.5 c\nq2 Q0 D#2 2 0.4 c\n"
DOC_RUN = "q1 Q0 B 1 0.9 d\nq1 Q0 A 2 0.8 d\nq1 Q0 C 3 0.6 d\nq2 Q0 X 1 0.5 d\nq2 Q0 D 2 0.4 d\n"


def test_chunk_run_scored_at_document_level_equals_the_document_run(cli, write):
    qrels, chunks, docs = write("docs.qrels", DOC_QRELS), write("chunks.run", CHUNK_RUN), write("docs.run", DOC_RUN)
    measures = ["-m", "nDCG@10,AP,RR,P@2,NumRet", "-f", "json"]
    chunk_level = json.loads(cli("eval", qrels, chunks, "--doc-level", *measures).stdout)["chunks"]
    doc_level = json.loads(cli("eval", qrels, docs, *measures).stdout)["docs"]
    assert chunk_level == doc_level and chunk_level["all"]["NumRet"] == 5  # A counted once, at its best chunk


def test_corpus_maps_chunks_whose_ids_do_not_name_their_document(cli, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": c, "text": "t", "doc_id": d}) + "\n"
                                           for c, d in [("c1", "A"), ("c2", "B"), ("c3", "A"), ("c4", "D")]))
    qrels = write("docs.qrels", DOC_QRELS)
    run = write("chunks.run", "q1 Q0 c2 1 3 x\nq1 Q0 c3 2 2 x\nq1 Q0 c1 3 1 x\nq2 Q0 c4 1 1 x\n")
    out = json.loads(cli("eval", qrels, run, "--doc-level", "--corpus", corpus, "-m", "NumRet,RR,P@2", "-q", "-f", "json").stdout)
    assert out["chunks"]["q1"] == {"NumRet": 2, "RR": 0.5, "P@2": 0.5} and out["chunks"]["q2"]["RR"] == 1.0
    # without --doc-level the corpus checks the run's chunk ids (all listed), and chunks against document qrels are refused
    assert_one_error(cli("eval", qrels, run, "--corpus", corpus), "chunks.run shares no document id with")
    assert "does not list" not in cli("eval", qrels, run, "--doc-level", "--corpus", corpus).stderr  # every chunk listed
    # a chunk the corpus lacks was mapped by its id without a word: a run of another corpus scored silently
    other = write("other.run", "q1 Q0 c2 1 3 x\nq1 Q0 C#7 2 2 x\nq2 Q0 D#1 1 1 x\n")
    result = cli("eval", qrels, other, "--doc-level", "--corpus", corpus, "-m", "NumRet")
    assert result.exit_code == 0 and "semrel: warning: 2 of the 3 rows of run 'other' (67%) name chunks the corpus does not list " \
        "(e.g. 'C#7', 'D#1'): each is taken as the document its id names before its last '#'" in result.stderr, result.stderr
    assert result.stderr.count("semrel: warning:") == 1, result.stderr  # not also that they 'count as not relevant', as chunks would


def test_maxp_keeps_each_document_once_at_its_best_chunk():
    run = Run.from_dict({"q": {"d#0": 0.2, "d#1": 0.9, "e#0": 0.5, "f": 0.9}})
    assert to_documents(run).to_dict() == {"q": {"d": 0.9, "f": 0.9, "e": 0.5}}


def test_maxp_lists_documents_in_rank_order_and_cuts_an_id_at_its_last_hash():
    """The run of documents is a run as trec_eval ranks it (ties by id, descending), not in the order of its document
    ids; a document id may hold '#' itself ('s#1' of chunk 's#1#2'): only the part after the last one is the chunk's."""
    run = Run.from_dict({"q": {"d#0": 0.2, "d#1": 0.9, "e#0": 0.5, "f": 0.9, "s#1#0": 0.3, "s#1#2": 0.7}})
    documents = to_documents(run)
    assert documents.doc_ids.to_pylist() == ["f", "d", "s#1", "e"] and documents.scores.tolist() == pytest.approx([0.9, 0.9, 0.7, 0.5])


def test_documents_tied_in_score_are_ordered_as_trec_eval_orders_ties(cli, write):
    """By document id descending, as on the MaxP run written out, not by their chunks' ids."""
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": c, "text": "t", "doc_id": d}) + "\n" for c, d in [("c1", "Z"), ("c2", "A")]))
    qrels, run = write("docs.qrels", "q1 0 A 1\n"), write("chunks.run", "q1 Q0 c1 1 1.0 x\nq1 Q0 c2 2 1.0 x\n")
    docs = write("docs.run", "q1 Q0 A 1 1.0 x\nq1 Q0 Z 2 1.0 x\n")
    chunk_level = json.loads(cli("eval", qrels, run, "--doc-level", "--corpus", corpus, "-m", "RR", "-f", "json").stdout)
    doc_level = json.loads(cli("eval", qrels, docs, "-m", "RR", "-f", "json").stdout)
    assert chunk_level["chunks"]["all"] == doc_level["docs"]["all"] == {"RR": 0.5}


def test_chunk_ids_against_document_qrels_are_refused_with_a_hint(cli, write):
    qrels, chunks = write("docs.qrels", DOC_QRELS), write("chunks.run", CHUNK_RUN)
    line = assert_one_error(cli("eval", qrels, chunks), "chunks.run shares no document id with", "docs.qrels")
    assert "'A'" in line and "'B#0'" in line and "--doc-level" in line
    with pytest.raises(Exception, match="shares no document id"):
        evaluate({"q1": {"A": 1}}, {"q1": {"A#0": 1.0}})


def test_each_of_several_runs_is_checked_against_its_own_ids(cli, write):
    """The check looked at the last run read: a chunk run before a document run scored 0 with exit code 0,
    and a run of other queries was described by the ids of the run after it."""
    qrels, chunks, docs = write("docs.qrels", DOC_QRELS), write("chunks.run", CHUNK_RUN), write("docs.run", DOC_RUN)
    for command in ("eval", "compare"):
        assert_one_error(cli(command, qrels, chunks, docs, "-m", "P@1"), "chunks.run shares no document id with")
    with pytest.raises(Exception, match="run 'chunks' shares no document id"):
        evaluate(qrels, {"chunks": chunks, "docs": docs}, ["P@1"])
    other = write("other.run", "301 Q0 A 1 1 x\n")
    assert_one_error(cli("eval", qrels, other, docs), "other.run shares no query id with", "the run has '301'")


def test_a_run_of_other_queries_is_refused(cli, write):
    qrels = write("docs.qrels", DOC_QRELS)
    other = write("other.run", "301 Q0 A 1 1 x\n302 Q0 B 1 1 x\n")
    assert_one_error(cli("eval", qrels, other), "other.run shares no query id with", "'q1'", "'301'")


def test_documents_judged_only_for_other_queries_score_zero_without_error(cli, write):
    qrels = write("docs.qrels", DOC_QRELS)
    crossed = write("crossed.run", "q1 Q0 D 1 1 x\nq2 Q0 A 1 1 x\n")  # judged documents, for the other query
    result = cli("eval", qrels, crossed, "-m", "P@1", "-f", "tsv")
    assert result.exit_code == 0 and result.stdout.splitlines()[1] == "P@1\t0.0000"


def test_a_chunk_listed_twice_is_refused_as_at_chunk_level(cli, write):
    """Merged into its document, a chunk listed twice for one query passed unseen; at chunk level it is refused."""
    qrels = write("docs.qrels", DOC_QRELS)
    repeated = write("chunks.run", CHUNK_RUN + "q1 Q0 A#3 5 0.3 c\n")
    for args in ((), ("--doc-level",)):
        line = assert_one_error(cli("eval", write("chunk.qrels", "q1 0 A#3 1\n") if not args else qrels, repeated, *args),
                                "chunks.run:7: duplicate document in run for query 'q1' and doc 'A#3'")
        assert "once per query" in line
    together = write("together.run", CHUNK_RUN.replace("q1 Q0 C#0", "q1 Q0 A#1 5 0.5 c\nq1 Q0 C#0"))  # within q1's rows
    assert_one_error(cli("eval", qrels, together, "--doc-level"), "together.run:4: duplicate document in run for query 'q1' and doc 'A#1'")
    assert json.loads(cli("eval", qrels, write("other.run", CHUNK_RUN + "q2 Q0 A#3 3 0.3 c\n"), "--doc-level",
                          "-m", "NumRet", "-f", "json").stdout)["other"]["all"]["NumRet"] == 6  # the same chunk, another query


def test_the_warning_of_unlisted_chunks_counts_them_as_it_should(cli, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": f"c{i}", "text": "t", "doc_id": "A"}) + "\n" for i in range(201)))
    qrels = write("q.qrels", "q1 0 c1 1\nq1 0 zz 1\n")

    def warned(name: str, rows: list[str]) -> str:
        run = write(f"{name}.run", "".join(f"q1 Q0 {d} {i + 1} {1000 - i} x\n" for i, d in enumerate(rows)))
        result = cli("eval", qrels, run, "--corpus", corpus, "-m", "P@1")
        assert result.exit_code == 0, result.output
        return next(line for line in result.stderr.splitlines() if "does not list" in line)

    assert warned("single", ["zz"]) == ("semrel: warning: 1 of the 1 row of run 'single' (100%) names a chunk the corpus does not "
                                        "list (e.g. 'zz'): the qrels judge 1 of them, so the qrels too name chunks the corpus does "
                                        "not list; check that the run and the corpus match")
    assert warned("two", ["c1", "yy"]) == ("semrel: warning: 1 of the 2 rows of run 'two' (50%) names a chunk the corpus does not list "
                                           "(e.g. 'yy'): it counts as not relevant; check that the run and the corpus match")
    assert "of run 'many' (<1%) names a chunk" in warned("many", [f"c{i}" for i in range(201)] + ["yy"])  # 1 of 202 rows


def test_runs_sharing_no_query_or_no_document_are_refused_with_the_right_hint(cli, write):
    one = write("one.qrels", "q1 0 c1 1\n")
    assert_one_error(cli("eval", one, write("q.run", "q2 Q0 c1 1 1 x\n"), "-m", "P@1"),
                     "q.run shares no query id with", "the qrels have 'q1', the run has 'q2'")
    # chunk ids against qrels of chunk ids: no --doc-level to suggest
    line = assert_one_error(cli("eval", write("h.qrels", "q1 0 a#1 1\n"), write("h.run", "q1 Q0 b#7 1 1 x\n"), "-m", "P@1"),
                            "h.run shares no document id with")
    assert line.endswith("the qrels judge 'a#1', the run returns 'b#7'"), line


def test_an_empty_run_has_no_unlisted_chunks():
    import pyarrow as pa

    from semrel.evaluation.doclevel import listed_only

    said: list[str] = []
    empty = Run.from_dict({})
    assert listed_only(empty, (pa.array(["c1"]), pa.array(["A"])), said.append) is empty and said == []


def test_a_run_with_several_repeated_chunks_names_the_first_repeat():
    from semrel.errors import ValidationError

    run = Run.from_columns(["q"] * 4, ["a#1", "a#1", "b#1", "b#1"], [4.0, 3.0, 2.0, 1.0])
    with pytest.raises(ValidationError, match=r"duplicate document in run for query 'q' and doc 'a#1' \(row 2"):
        to_documents(run)
