"""Runs and qrels as ranx saves them in Parquet (`run.save("run.parquet")`: columns q_id, doc_id, score) or JSON score
as the same TREC files do, and a broken table is one line naming its row.

The files are written as ranx's save writes them, `to_dataframe().to_parquet(path, index=False)` with its columns,
not by ranx itself: ranx compiles with numba on first use, and two test workers compiling it at once into a fresh
environment's cache broke tests/retrieval/test_fusion.py in CI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import assert_one_error, run, write
from semrel.formats import read_qrels, read_run


def _parquet(table: dict, path: Path) -> None:
    rows = [(q, d, v) for q, docs in table.items() for d, v in docs.items()]
    pd.DataFrame(rows, columns=["q_id", "doc_id", "score"]).to_parquet(path, index=False)


def _json(table: dict, path: Path) -> None:
    path.write_text(json.dumps(table, indent=2))  # ranx's save_json: the dict, indented by 2


@pytest.mark.parametrize("suffix,save", [(".parquet", _parquet), (".parq", _parquet), (".json", _json)])
def test_ranx_runs_and_qrels_score_as_their_trec_files(tmp_path, suffix, save):
    """As ranx saves them, in Parquet (either of its suffixes) or JSON (tests/formats/test_json_runs.py has JSON's own)."""
    rng = random.Random(7)
    qrels = {f"q{q}": {f"d{d}": rng.choice([-1, 0, 0, 1, 2, 3]) for d in rng.sample(range(30), 8)} for q in range(12)}
    ranked = {f"q{q}": {f"d{d}": round(rng.uniform(0, 5), rng.choice([0, 1, 3])) for d in rng.sample(range(30), 15)}
              for q in range(14)}  # ties, and two queries the qrels lack
    write(tmp_path / "q.txt", "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    write(tmp_path / "r.txt", "".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in ranked.items() for d, s in docs.items()))
    saved_qrels, saved_run = tmp_path / f"q{suffix}", tmp_path / f"r{suffix}"
    save(qrels, saved_qrels)
    save(ranked, saved_run)
    measures = "map,ndcg_cut.10,P.5,recip_rank,bpref,num_ret,num_rel,infAP,ERR@10"
    as_text = run("eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", measures, "-q", "-f", "trec")
    as_saved = run("eval", saved_qrels, saved_run, "-m", measures, "-q", "-f", "trec")
    assert as_text.exit_code == as_saved.exit_code == 0, as_saved.output
    assert as_saved.stdout == as_text.stdout and as_text.stdout.count("\n") == 9 * 13  # 12 queries and 'all'
    (tmp_path / "r.txt").rename(tmp_path / "text.run")
    compared = run("compare", saved_qrels, saved_run, tmp_path / "text.run", "-m", "AP", "-f", "csv")
    assert compared.exit_code == 0, compared.output
    # equal: neither marked better; the saved run is named by its file's stem, as a TREC run is
    assert compared.stdout.splitlines()[1:] == ["a,r,0.1487,", "b,text,0.1487,"]
    assert read_run(saved_run).to_dict() == ranked and read_qrels(saved_qrels).to_dict() == qrels


@pytest.mark.parametrize("table,message", [
    ({"qid": ["q"], "doc_id": ["a"], "score": [1.0]}, "r.parquet: no column 'q_id' (columns: qid, doc_id, score) (a run in "
                                                       "Parquet has ranx's columns q_id, doc_id and score)"),
    ({"q_id": ["q", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}, "r.parquet: row 2 has no q_id"),
    ({"q_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]}, "r.parquet: row 2: score nan is not a finite number"),
    ({"q_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}, "r.parquet: duplicate document in run for query 'q' and doc "
                                                                       "'a' (row 2)"),
    ({"q_id": ["q"], "doc_id": ["a"], "score": ["high"]}, "r.parquet: cannot read q_id, doc_id and score as ids and numbers"),
])
def test_a_broken_parquet_run_is_one_line(tmp_path, table, message):
    qrels = write(tmp_path / "q.txt", "q 0 a 1\nq 0 b 0\n")
    pq.write_table(pa.table(table), tmp_path / "r.parquet")
    assert_one_error(run("eval", qrels, tmp_path / "r.parquet"), message)


@pytest.mark.parametrize("grade", [0.5, 1e30])  # 1e30 is whole as a float, and past every int64 grade
def test_parquet_qrels_grades_are_whole(tmp_path, grade):
    pq.write_table(pa.table({"q_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, grade]}), tmp_path / "q.parquet")
    assert_one_error(run("eval", tmp_path / "q.parquet", write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     f"q.parquet: row 2: score {grade:g} is not a whole number (a relevance grade)")


@pytest.mark.parametrize("relation", ["qrels_jg", "prefs", "qrels_prefs"])
def test_parquet_qrels_are_refused_where_trec_text_with_groups_is_read(tmp_path, relation):
    """-R qrels_jg and the preference relations read TREC text: a Parquet file was read as text, 'not valid UTF-8'."""
    pq.write_table(pa.table({"q_id": ["q"], "doc_id": ["a"], "score": [1]}), tmp_path / "q.parquet")
    assert_one_error(run("eval", "-R", relation, tmp_path / "q.parquet", write(tmp_path / "r.txt", "q Q0 a 1 1 r\n")),
                     "q.parquet: Parquet holds plain qrels (ranx's q_id, doc_id, score), not ")


def test_a_parquet_table_that_would_expand_like_a_bomb_is_refused_before_decoding(tmp_path):
    """300,000 equal rows run-length encode into a few KB, and the footer's sizes stay small too: a run or golden set
    of such rows filled memory as it was decoded. Each cell takes 8 bytes or more once decoded, so the table is held to
    the expansion a .gz input is held to (SEMREL_MAX_GZIP_RATIO)."""
    rows = 300_000
    pq.write_table(pa.table({"q_id": pa.array(["q"] * rows), "doc_id": pa.array(["a"] * rows), "score": pa.array([1.0] * rows)}),
                   tmp_path / "bomb.parquet")
    assert (tmp_path / "bomb.parquet").stat().st_size < 20_000
    message = "bomb.parquet: the table (300,000 rows) expands more than 100 times (a decompression bomb?); refused before it fills memory"
    assert_one_error(run("eval", write(tmp_path / "q.txt", "q 0 a 1\n"), tmp_path / "bomb.parquet"), message, "SEMREL_MAX_GZIP_RATIO")
    assert_one_error(run("golden", "import", tmp_path / "bomb.parquet", "-o", tmp_path / "g.jsonl"), message)
    assert not (tmp_path / "g.jsonl").exists()
