"""`semrel.lift`, `estimate`, `validate_golden`, `golden_stats` and `review_stats`: the values the commands print (their
`-f json`), from the same inputs, as the typed results the commands print from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import semrel
from helpers import SHARED_DATA, assert_one_error, ok, run
from review_helpers import R_SCORES, queued_db, reviewed_by_two, write_pool
from semrel.analysis.lift import Lift, lift_json
from semrel.formats.jsonl import json_text
from semrel.golden.validate import Issue, Validation
from semrel.review.engine import QueueSettings, Session

TREC = SHARED_DATA / "trec_eval_test"


def test_lift_gives_what_semrel_lift_prints(tmp_path):
    """results.test reranked: each query's top 20 in reverse order, the rest as they were (trec_eval's own run and qrels)."""
    rows = [line.split() for line in (TREC / "results.test").read_text().splitlines()]
    by_query: dict[str, list[list[str]]] = {}
    for row in rows:
        by_query.setdefault(row[0], []).append(row)
    reranked = tmp_path / "reranked.run"
    with reranked.open("w") as out:
        for q, ranked in by_query.items():
            ranked = sorted(ranked, key=lambda r: -float(r[4]))
            order = ranked[:20][::-1] + ranked[20:]
            out.writelines(f"{q} Q0 {r[2]} {i + 1} {len(order) - i} rr\n" for i, r in enumerate(order))
    args = ["-m", "RR,P@10", "--permutations", "300", "--bootstrap", "300", "--base-latency-ms", "10", "--reranked-latency-ms", "30"]
    printed = json.loads(ok("lift", TREC / "qrels.test", "--base", TREC / "results.test", "--reranked", reranked, *args,
                            "-f", "json").stdout)
    heard: list[str] = []
    result = semrel.lift(TREC / "qrels.test", TREC / "results.test", reranked, ["RR", "P@10"], permutations=300, bootstrap=300,
                         base_ms=10, reranked_ms=30, warn=heard.append)
    assert isinstance(result, Lift) and lift_json(result) == printed
    assert round(result.rows[0].base, 4) == 0.4064  # recip_rank of trec_eval's out.test
    assert result.latency is not None and result.latency.extra_ms == 20
    assert any("3 queries" in message for message in heard)  # the few-queries warning the command prints
    with pytest.raises(semrel.errors.UsageError, match="^base_ms= and reranked_ms= go together$"):
        semrel.lift(TREC / "qrels.test", TREC / "results.test", reranked, "RR", base_ms=10)
    with pytest.raises(semrel.errors.UsageError, match="base and reranked are one file"):
        semrel.lift(TREC / "qrels.test", TREC / "results.test", TREC / "results.test", "RR")


def test_golden_validate_and_stats_give_what_the_commands_print(tmp_path):
    pool = write_pool(tmp_path / "pool")
    bad = tmp_path / "bad.jsonl"
    lines = (tmp_path / "pool" / "golden.jsonl").read_text().splitlines()
    bad.write_text("\n".join([*lines, lines[0], "not json"]) + "\n")
    printed = run("golden", "validate", bad, "--corpus", pool["corpus"])
    assert printed.exit_code == 1
    found = semrel.validate_golden(bad, pool["corpus"])
    assert isinstance(found, Validation) and all(isinstance(i, Issue) for i in found.issues)
    assert [f"{bad}:{i.line}: {i.severity}: {i.message}" for i in found.issues] == printed.stdout.splitlines()
    assert (found.queries, found.errors) == (len(lines) + 1, 2)
    assert semrel.validate_golden(pool["golden"]).errors == 0
    stats = semrel.golden_stats(pool["golden"], pool["corpus"])
    assert stats == json.loads(ok("golden", "stats", pool["golden"], "--corpus", pool["corpus"], "-f", "json").stdout)
    assert stats["counts"]["queries"] == len(lines)


def test_review_stats_gives_what_semrel_review_stats_prints(tmp_path):
    pool, db, _, _ = reviewed_by_two(tmp_path)
    stats = semrel.review_stats(db, resamples=50, seed=3)
    printed = ok("review", "stats", "--db", db, "--resamples", "50", "--seed", "3", "-f", "json").stdout
    assert json.loads(json_text(stats.to_json())) == json.loads(printed)  # untimed grades: nan, JSON's null
    assert (stats.tasks, stats.reviewed) == (len(read_lines(pool["labels"])), 4)


def test_estimate_gives_what_semrel_estimate_prints(tmp_path):
    """Six pairs of the review's random sample graded against the judge (as tests/analysis/test_ppi.py reviews)."""
    conn, pool = queued_db(tmp_path, QueueSettings(order="random", seed=1))
    session = Session(conn, "alice")
    for _ in range(6):
        task = session.next_task()
        session.grade(task, 1 - task.proposed)
    conn.close()
    db, system = str(tmp_path / "r.sqlite"), tmp_path / "sys.run"
    system.write_text("".join(f"{q} Q0 {c} 1 {r} sys\n" for (q, c), r in R_SCORES.items()))
    printed = json.loads(ok("estimate", pool["labels"], system, "--reviewed", db, "-m", "P@4,RR", "-f", "json").stdout)
    estimates = semrel.estimate(pool["labels"], [system], db, ["P@4", "RR"], warn=lambda message: None)
    assert [e.to_json() for e in estimates] == printed
    assert [(e.measure, e.sampled, e.changed, e.pool) for e in estimates] == [("P@4", 6, 6, 12), ("RR", 6, 6, 12)]


def read_lines(path) -> list[str]:
    return [line for line in open(path).read().splitlines() if line.strip()]


def eval_json(*args) -> dict:
    """`semrel eval ... -f json`'s values of its one run."""
    (values,) = json.loads(ok("eval", *args, "-f", "json").stdout).values()
    return values


@pytest.mark.parametrize("relation, qrels, ranked", [("qrels_jg", "qrels.123", "results.test"),
                                                     ("prefs", "prefs.test", "prefs.results.test"),
                                                     ("qrels_prefs", "qrels.rel_level", "results.test")])
def test_evaluate_with_a_relation_gives_what_semrel_eval_r_prints(relation, qrels, ranked):
    """-R: judgment groups (qrels.123, three assessors) and preferences (prefs.test; qrels.rel_level's grades read as
    preferences), each scored by its own measures when none are named, as the command scores them."""
    printed = eval_json("-R", relation, TREC / qrels, TREC / ranked)
    values = semrel.evaluate(TREC / qrels, TREC / ranked, relation=relation)
    assert values == printed["all"] and len(values) > 5
    per_query = semrel.evaluate(TREC / qrels, TREC / ranked, "map_avgjg" if relation == "qrels_jg" else "prefs_simp", relation=relation,
                                per_query=True)
    (name, by_query), = per_query.items()
    assert by_query == {q: row[name] for q, row in eval_json("-R", relation, TREC / qrels, TREC / ranked, "-m", name, "-n").items()}
    if relation == "qrels_jg":
        assert round(values["map_avgjg"], 4) == float(_trec_eval_all("out.test.qrels_jg", "map_avgjg"))
    refused = rf"^relation='{relation}' scores its own judgments; it does not go with doc_level=True$"
    with pytest.raises(semrel.errors.UsageError, match=refused):
        semrel.evaluate(TREC / qrels, TREC / ranked, relation=relation, doc_level=True)
    with pytest.raises(TypeError, match=rf"^qrels: give a file path \(relation='{relation}' reads its own format\), not dict$"):
        semrel.evaluate({"301": {"d": 1}}, TREC / ranked, relation=relation)


def _trec_eval_all(out: str, measure: str) -> str:
    """The 'all' value trec_eval printed for `measure` in its reference output `out`."""
    return next(line.split()[2] for line in (TREC / out).read_text().splitlines() if line.split()[:2] == [measure, "all"])


def test_evaluate_refuses_a_relation_it_does_not_know_and_prefs_measures_on_qrels():
    with pytest.raises(semrel.errors.UsageError, match=r"^relation='jg': give qrels, qrels_jg, prefs or qrels_prefs$"):
        semrel.evaluate(TREC / "qrels.test", TREC / "results.test", relation="jg")
    with pytest.raises(semrel.errors.UsageError, match=r"give relation='prefs' or relation='qrels_prefs'$"):
        semrel.evaluate(TREC / "qrels.test", TREC / "results.test", "prefs_simp")
    with pytest.raises(TypeError, match=r"^relation: give one of qrels, qrels_jg, prefs, qrels_prefs, not int$"):
        semrel.evaluate(TREC / "qrels.test", TREC / "results.test", relation=1)


def test_evaluate_with_zscores_gives_what_semrel_eval_z_prints():
    """-Z with trec_eval's own zscores_file; its 'all' row matches trec_eval's out.test.aqZ."""
    printed = eval_json(TREC / "qrels.test", TREC / "results.test", "-m", "P@10,AP", "-Z", TREC / "zscores_file")
    values = semrel.evaluate(TREC / "qrels.test", TREC / "results.test", ["P@10", "AP"], zscores=TREC / "zscores_file")
    assert list(values.values()) == list(printed["all"].values()) and list(printed["all"]) == ["ZP@10", "ZAP"]
    assert round(values["AP"], 4) == float(_trec_eval_all("out.test.aqZ", "Zmap"))
    with pytest.raises(semrel.errors.UsageError, match=r"^zscores= standardises the values of relation='qrels'; it does not go with "
                                                       r"relation='qrels_jg'$"):
        semrel.evaluate(TREC / "qrels.123", TREC / "results.test", relation="qrels_jg", zscores=TREC / "zscores_file")


def test_evaluate_per_query_gives_what_semrel_eval_n_prints():
    """-n: each query's values without the 'all' row, which is what per_query=True returns."""
    printed = eval_json(TREC / "qrels.test", TREC / "results.trunc", "-m", "P@10,AP", "-n")
    with pytest.warns(UserWarning, match=r"^1 of 3 queries in the qrels has no results in run 'results.trunc'; they score 0"):
        values = semrel.evaluate(TREC / "qrels.test", TREC / "results.trunc", ["P@10", "AP"], per_query=True)
    assert values == {m: {q: row[m] for q, row in printed.items()} for m in ("P@10", "AP")} and set(printed) == {"301", "302", "303"}


def test_evaluate_at_document_level_gives_what_semrel_eval_doc_level_prints(tmp_path):
    """results.test as a chunk run: each document as two chunks, the second scored lower; at document level (MaxP) it scores
    as results.test does, its documents found from the chunk ids, or from a corpus where the chunks are named c1, c2, ..."""
    rows = [line.split() for line in (TREC / "results.test").read_text().splitlines()]
    documents = sorted({r[2] for r in rows})
    chunk_of = {d: f"c{i}" for i, d in enumerate(documents)}
    by_id, by_corpus, corpus = tmp_path / "chunks.run", tmp_path / "named.run", tmp_path / "corpus.jsonl"
    by_id.write_text("".join(f"{q} Q0 {d}#{n} 1 {float(s) - 100 * n} c\n" for q, _, d, _, s, _ in rows for n in (0, 1)))
    by_corpus.write_text("".join(f"{q} Q0 {chunk_of[d]} 1 {s} c\n" for q, _, d, _, s, _ in rows))
    corpus.write_text("".join(json.dumps({"_id": c, "text": "t", "doc_id": d}) + "\n" for d, c in chunk_of.items()))
    measures = ["AP", "P@10", "NumRet"]
    whole = semrel.evaluate(TREC / "qrels.test", TREC / "results.test", measures)
    assert round(whole["AP"], 4) == 0.1785  # trec_eval's map in out.test
    for chunks, given in ((by_id, []), (by_corpus, ["--corpus", corpus])):
        printed = eval_json(TREC / "qrels.test", chunks, "-m", ",".join(measures), "--doc-level", *given)["all"]
        values = semrel.evaluate(TREC / "qrels.test", chunks, measures, doc_level=True, corpus=given[1] if given else None)
        assert values == printed == whole
    with pytest.raises(semrel.errors.ValidationError) as refused:
        semrel.evaluate(TREC / "qrels.test", by_id, measures)
    assert str(refused.value).endswith("score at document level with doc_level=True")  # the parameter, not eval's --doc-level
    assert assert_one_error(run("eval", TREC / "qrels.test", by_id, "-m", "AP")).endswith("score at document level with --doc-level")


def test_compare_and_lift_do_not_tell_of_a_doc_level_they_lack(tmp_path, monkeypatch):
    """A chunk run against document qrels: only eval (and evaluate) score at document level, so compare and lift, on the
    command line or in Python, name the chunk id instead of an option they do not have."""
    monkeypatch.chdir(tmp_path)
    qrels, chunks, other = Path("docs.qrels"), Path("a.run"), Path("b.run")
    qrels.write_text("q1 0 A 1\nq1 0 B 1\n")
    chunks.write_text("q1 Q0 A#0 1 2 a\nq1 Q0 B#1 2 1 a\n")
    other.write_text("q1 Q0 B#1 1 2 b\nq1 Q0 A#0 2 1 b\n")
    said = " shares no document id with {}: the qrels judge 'A', 'B', the run returns 'A#0', 'B#1' ('A#0' names a chunk of 'A', " \
           "a whole document in the qrels: the run may come from another chunking)"
    for call, who, where in ((lambda: semrel.compare(qrels, [chunks, other], ["P@1"]), "run 'a'", "the qrels"),
                             (lambda: semrel.lift(qrels, chunks, other, ["P@1"]), "a.run", "docs.qrels")):
        with pytest.raises(semrel.errors.ValidationError) as refused:
            call()
        assert str(refused.value) == who + said.format(where)
    assert assert_one_error(run("compare", qrels, chunks, other, "-m", "P@1")) == "semrel: error: a.run" + said.format("docs.qrels")
    assert assert_one_error(run("lift", qrels, "--base", chunks, "--reranked", other, "-m", "P@1")) == \
        "semrel: error: a.run" + said.format("docs.qrels")


def test_evaluate_with_a_corpus_warns_of_chunks_it_does_not_list_as_semrel_eval_does(tmp_path):
    """--corpus without --doc-level: the run's ids the corpus does not list (here the documents of query 303) are warned of."""
    rows = [line.split() for line in (TREC / "results.test").read_text().splitlines()]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": "t"}) + "\n" for d in sorted({r[2] for r in rows if r[0] != "303"})))
    result = run("eval", TREC / "qrels.test", TREC / "results.test", "-m", "AP", "--corpus", corpus, "-f", "json")
    printed = json.loads(result.stdout)["results.test"]["all"]
    with pytest.warns(UserWarning) as heard:
        values = semrel.evaluate(TREC / "qrels.test", TREC / "results.test", "AP", corpus=corpus)
    said = [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if "does not list" in line]
    assert values == printed and len(said) == 1 and [str(w.message) for w in heard if "does not list" in str(w.message)] == said


def test_fill_refuses_a_wrong_kind_or_no_runs_before_reading_anything(tmp_path):
    """semrel.fill's arguments as the other functions check theirs (the fill itself: tests/judging/test_fill.py)."""
    files = dict(judgments=tmp_path / "j.jsonl", corpus=tmp_path / "c.jsonl", golden=tmp_path / "g.jsonl")
    with pytest.raises(TypeError, match=r"^runs: give a run file path or a list of them, not int$"):
        semrel.fill(tmp_path / "q.qrels", 3, **files)
    with pytest.raises(TypeError, match=r"^runs: give a run file path, not Run$"):
        semrel.fill(tmp_path / "q.qrels", [semrel.Run.from_dict({"q": {"d": 1.0}})], **files)
    with pytest.raises(TypeError, match=r"^depth: give a whole number of chunks, at least 1, not float$"):
        semrel.fill(tmp_path / "q.qrels", tmp_path / "r.run", depth=2.5, **files)
    with pytest.raises(TypeError, match=r"^judgments: give a file path, not list$"):
        semrel.fill(tmp_path / "q.qrels", tmp_path / "r.run", **{**files, "judgments": []})
    with pytest.raises(TypeError, match=r"^cache: give a folder, or False for no cache, not int$"):
        semrel.fill(tmp_path / "q.qrels", tmp_path / "r.run", cache=0, **files)
    with pytest.raises(semrel.errors.UsageError, match=r"^runs: none given; give the run files whose holes to fill$"):
        semrel.fill(tmp_path / "q.qrels", [], **files)
    with pytest.raises(semrel.errors.UsageError, match=r"^depth=0: must be at least 1$"):
        semrel.fill(tmp_path / "q.qrels", tmp_path / "r.run", depth=0, **files)
    assert not list(tmp_path.iterdir())
