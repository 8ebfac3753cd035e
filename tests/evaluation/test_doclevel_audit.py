"""Mutation audit of --doc-level (evaluation/doclevel.py): a chunk run scored at document level must give what trec_eval
(pytrec_eval, the same C code) gives on the MaxP run written out, whatever the ids, ties and query order."""

from __future__ import annotations

import json
import math
import random

import pytest

from helpers import assert_one_error
from semrel.evaluation.doclevel import require_overlap
from semrel.evaluation.files import evaluate_files
from semrel.evaluation.measures import parse_measures
from semrel.records import Qrels, Run

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC = ["map", "ndcg", "ndcg_cut_10", "recip_rank", "P_5", "recall_10", "num_ret", "num_rel_ret", "Rprec", "bpref"]


def document_of(chunk: str) -> str:
    return chunk.rsplit("#", 1)[0] if "#" in chunk else chunk


@pytest.mark.parametrize("seed", range(12))
def test_doc_level_equals_trec_eval_on_the_maxp_run_written_out(tmp_path, seed):
    """Random chunk runs (several queries, chunks of one document scattered and tied, ids holding '#', rows shuffled) against
    graded document qrels: each per-query value is pytrec_eval's on {query: {document: best chunk score}}."""
    rng = random.Random(seed)
    docs = [f"D{i}" for i in range(rng.randint(3, 9))] + ["s#1"]
    queries = [f"q{i}" for i in range(rng.randint(2, 5))]
    qrels = {}
    for q in queries:  # every query judges one document relevant (pytrec_eval crashes on some queries judging none)
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels[q] = {d: rng.choice([-1, 0, 1, 2, 3]) for d in judged} | {judged[0]: rng.choice([1, 2, 3])}
    lines, maxp = [], {}
    for q in queries:
        chunks = [f"{d}#{j}" for d in docs for j in range(rng.randint(0, 3))] + ["D0", "D1"]
        for rank, chunk in enumerate(rng.sample(chunks, rng.randint(1, len(chunks)))):
            score = rng.choice([1.0, 2.0, 3.0, 0.5, round(rng.random(), 6)])
            lines.append(f"{q} Q0 {chunk} {rank + 1} {score!r} r\n")
            best = maxp.setdefault(q, {})
            best[document_of(chunk)] = max(best.get(document_of(chunk), -math.inf), score)
    rng.shuffle(lines)
    (tmp_path / "r.run").write_text("".join(lines))
    (tmp_path / "q.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q in qrels for d, g in qrels[q].items()))
    [result] = evaluate_files(tmp_path / "q.qrels", [tmp_path / "r.run"], parse_measures(",".join(TREC)), doc_level=True)
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(TREC)).evaluate(maxp)
    for measure, name in zip(parse_measures(",".join(TREC)), TREC):
        got = result.per_query(measure)
        assert {q: float(got[q]) for q in queries} == pytest.approx({q: reference[q][name] for q in queries}, rel=1e-12, abs=1e-12), name


def test_a_chunk_the_corpus_does_not_list_scores_as_the_document_before_its_last_hash(cli, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": c, "text": "t", "doc_id": d}) + "\n" for c, d in [("c1", "A"), ("c2", "B")]))
    qrels = write("docs.qrels", "q1 0 C 1\nq1 0 A 1\nq2 0 s#1 1\n")
    run = write("other.run", "q1 Q0 c2 1 3 x\nq1 Q0 C#7 2 2 x\nq2 Q0 s#1#4 1 1 x\n")
    out = json.loads(cli("eval", qrels, run, "--doc-level", "--corpus", corpus, "-m", "RR,NumRelRet", "-q", "-f", "json").stdout)
    assert out["other"]["q1"] == {"RR": 0.5, "NumRelRet": 1} and out["other"]["q2"] == {"RR": 1.0, "NumRelRet": 1}


def test_the_unlisted_share_is_below_1_percent_only_under_half_a_percent(cli, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": f"c{i}", "text": "t", "doc_id": "A"}) + "\n" for i in range(150)))
    qrels = write("q.qrels", "q1 0 c1 1\n")
    run = write("r.run", "".join(f"q1 Q0 {d} {i + 1} {1000 - i} x\n" for i, d in enumerate([f"c{i}" for i in range(149)] + ["yy"])))
    result = cli("eval", qrels, run, "--corpus", corpus, "-m", "P@1")
    assert "1 of the 150 rows of run 'r' (1%) names a chunk the corpus does not list" in result.stderr, result.stderr


def test_the_doc_level_hint_is_only_given_where_the_command_has_doc_level():
    from semrel.errors import ValidationError
    from semrel.evaluation.metrics import evaluate

    qrels, run = Qrels.from_dict({"q1": {"A": 1}}), Run.from_dict({"q1": {"A#0": 1.0}})
    [result] = evaluate(qrels, [run], parse_measures("P@1"))
    with pytest.raises(ValidationError) as refused:
        require_overlap(result, qrels, run, "q.qrels", "r.run")
    assert str(refused.value) == ("r.run shares no document id with q.qrels: the qrels judge 'A', the run returns 'A#0' ('A#0' "
                                  "names a chunk of 'A', a whole document in the qrels: the run may come from another chunking)")
    with pytest.raises(ValidationError, match="score at document level with doc_level=True$"):
        require_overlap(result, qrels, run, "q.qrels", "r.run", offer_doc_level=True)


def test_a_doc_level_run_sharing_no_document_is_not_told_to_use_doc_level(cli, write):
    qrels, run = write("docs.qrels", "q1 0 A 1\n"), write("chunks.run", "q1 Q0 s#1#0 1 1 x\n")
    line = assert_one_error(cli("eval", qrels, run, "--doc-level", "-m", "P@1"), "chunks.run shares no document id with ")
    assert line.endswith("docs.qrels: the qrels judge 'A', the run returns 's#1'"), line  # no hint to give --doc-level
