"""`semrel.export_reviews` and `semrel.simulate_review`: the labels, files and decisions `semrel review export` and
`simulate` make, from files or qrels in memory; wrong arguments refused, naming them."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

import semrel
from helpers import ok, read_lines, run
from review_helpers import reviewed_by_two, write_pool
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.formats.trec import read_judgment_groups
from semrel.review.adjudicate import ReviewedLabels


def manifest(path) -> dict:
    return json.loads(Path(f"{path}.manifest.json").read_text())


@pytest.mark.parametrize("options,cli_args", [
    ({}, []),
    ({"adjudicate": "bob"}, ["--adjudicate", "bob"]),
    ({"adjudicate": "alice", "only_reviewed": True}, ["--adjudicate", "alice", "--only-reviewed"]),
])
def test_export_reviews_gives_the_labels_semrel_review_export_writes(tmp_path, options, cli_args):
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    (tmp_path / "cli").mkdir()
    ok("review", "export", "--db", db, "--labels", pool["labels"], "-o", tmp_path / "cli" / "reviewed.qrels", *cli_args)
    written = read_qrels(tmp_path / "cli" / "reviewed.qrels").to_dict()
    sources = read_lines(tmp_path / "cli" / "reviewed.qrels.sources.jsonl")
    exported = semrel.export_reviews(db, pool["labels"], tmp_path / "reviewed.qrels", **options)
    assert isinstance(exported, ReviewedLabels) and isinstance(exported.qrels, semrel.Qrels)
    assert exported.qrels.to_dict() == written and exported.sources == sources  # exact: the same computation
    assert exported.counts == {s: sum(r["source"] == s for r in sources) for s in {r["source"] for r in sources}}
    assert ("judge" in exported.counts) != options.get("only_reviewed", False)
    for name in ("reviewed.qrels", "reviewed.qrels.sources.jsonl"):
        ours, theirs = tmp_path / name, tmp_path / "cli" / name
        assert ours.read_bytes() == theirs.read_bytes()
        assert manifest(ours)["inputs"] == manifest(theirs)["inputs"] and manifest(ours)["rows"] == manifest(theirs)["rows"]
        assert {k: v for k, v in manifest(ours)["params"].items() if k != "qrels"} == \
            {k: v for k, v in manifest(theirs)["params"].items() if k != "qrels"}
    in_memory = semrel.export_reviews(db, read_qrels(pool["labels"]).to_dict(), **options)  # nothing written
    assert in_memory.qrels.to_dict() == written and in_memory.sources == sources
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("reviewed")) == [
        "reviewed.qrels", "reviewed.qrels.manifest.json", "reviewed.qrels.sources.jsonl", "reviewed.qrels.sources.jsonl.manifest.json"]
    contested = pairs[1]  # alice 1, bob 0
    assert exported.qrels.to_dict()[contested.query_id][contested.chunk_id] == {"bob": 0, "alice": 1}.get(options.get("adjudicate"), 0)


def test_export_reviews_refuses_wrong_kinds_and_bad_values(tmp_path):
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    labels = pool["labels"]
    for args, kwargs, message in [
        ((3, labels), {}, "db: give the review database's file path, not int"),
        ((db, 3), {}, "labels: give a Qrels, a dict {query: {doc: grade}}, a pandas DataFrame or a file path, not int"),
        ((db, labels, 3), {}, "output: give a file path, not int"),
        ((db, labels), {"adjudicate": 1}, "adjudicate: give majority, strict or a reviewer's name, not int"),
        ((db, labels), {"only_reviewed": "yes"}, "only_reviewed: give True or False, not str"),
        ((db, labels), {"warn": 3}, "warn: give a function taking one message, not int"),
        ((db, labels), {"by_reviewer": 3}, "by_reviewer: give a file path, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.export_reviews(*args, **kwargs)
    with pytest.raises(UsageError, match=r"^adjudicate='zed': not majority, strict or a reviewer of this database \(alice, bob\)$"):
        semrel.export_reviews(db, labels, adjudicate="zed")
    with pytest.raises(UsageError, match=r"^output='-': the reviewed qrels are written with OUTPUT.sources.jsonl beside them"):
        semrel.export_reviews(db, labels, "-")
    with pytest.raises(UsageError, match=r"^by_reviewer= is written with the reviewed qrels: give output= too$"):
        semrel.export_reviews(db, labels, by_reviewer=tmp_path / "jg.qrels")
    grouped = semrel.export_reviews(db, labels, tmp_path / "r.qrels", by_reviewer=tmp_path / "jg.qrels")
    assert [(group, q.to_dict()) for group, q in grouped.by_reviewer] == [
        (group, q.to_dict()) for group, q in read_judgment_groups(tmp_path / "jg.qrels")] and len(grouped.by_reviewer) == 2
    conflict = f"{pairs[1].query_id}/{pairs[1].chunk_id}: alice=1, bob=0"
    with pytest.raises(ValidationError, match=re.escape(f"{conflict}; settle them in a review or use adjudicate='majority' or")):
        semrel.export_reviews(db, labels, tmp_path / "strict.qrels", adjudicate="strict")
    result = run("review", "export", "--db", db, "--labels", labels, "-o", tmp_path / "strict.qrels", "--adjudicate", "strict")
    assert result.exit_code == 1 and f"{conflict}; settle them in a review or use --adjudicate majority or a reviewer's" in result.stderr
    with pytest.raises(ValidationError, match=r"^labels shares no query with the pairs reviewed in"):
        semrel.export_reviews(db, {"elsewhere": {"x#0": 1}})
    before = Path(labels).read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.export_reviews(db, labels, labels)
    assert Path(labels).read_bytes() == before and not (tmp_path / "strict.qrels").exists()
    with pytest.raises(SemrelError, match="SQLite keeps the review database"):
        semrel.export_reviews(db, labels, f"{db}-wal")
    empty = "the review database's path is empty; give {} a file name (e.g. review.sqlite)"
    for call in (lambda: semrel.export_reviews("", labels), lambda: semrel.review_stats("")):
        with pytest.raises(SemrelError) as refused:
            call()
        assert str(refused.value) == empty.format("db=")
    result = run("review", "export", "--db", "", "--labels", labels, "-o", tmp_path / "e.qrels")
    assert result.exit_code == 1 and result.stderr == f"semrel: error: {empty.format('--db')}\n"


def _decisions(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT t.query_id, t.chunk_id, d.kind, d.grade, d.simulated FROM decisions d JOIN tasks t "
                            "ON t.id = d.task_id ORDER BY d.id").fetchall()
    finally:
        conn.close()


def test_simulate_review_records_the_decisions_semrel_review_simulate_records(tmp_path):
    """A learning curve from a notebook: the queue built, then graded by known labels, as the command does (the same
    order, the same skips of pairs the labels leave out), so export, calibrate and estimate read the same database."""
    pool = write_pool(tmp_path / "pool")
    gold = tmp_path / "gold.qrels"
    gold.write_text("q1 0 c2 1\nq2 0 c3 1\nq2 0 c4 1\n")
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    ok("review", "simulate", "--db", tmp_path / "cli.sqlite", "--reviewer", "gold", *files, "--thresholds", "0.3,0.5",
       "--limit", "8", "--random-share", "0.5", "--seed", "3", "--human", gold)
    queue = {k: pool[k] for k in ("judgments", "labels", "corpus", "golden")}
    with pytest.warns(UserWarning, match="the labels simulated grade up to 1 and the queue's labels up to 2"):  # as the command warns
        graded = semrel.simulate_review(tmp_path / "api.sqlite", str(gold), reviewer="gold", **queue, thresholds=[0.3, 0.5], limit=8,
                                        random_share=0.5, seed=3)
    assert _decisions(tmp_path / "api.sqlite") == _decisions(tmp_path / "cli.sqlite")
    kinds = [d[2] for d in _decisions(tmp_path / "api.sqlite")]
    assert graded == (kinds.count("grade"), kinds.count("skip")) == (2, 6)
    # grades in memory; the other queued pairs of a query they list graded 0, as --unlisted-as-zero does
    assert semrel.simulate_review(tmp_path / "zero.sqlite", {"q1": {"c2": 1}}, reviewer="zero", **queue, unlisted_as_zero=True,
                                  thresholds="0.5") == (4, 8)  # q1's four pairs graded
    for kwargs, message in [({"order": "best"}, "order='best': choose one of uncertain, random, query, query-sample"),
                            ({"on": "Q"}, "on='Q': choose one of p, P, R, F"),
                            ({"random_share": 2}, "random_share=2: give a share from 0 to 1"),
                            ({"order": "query", "random_share": 0.5},  # recorded in the manifest and used nowhere before
                             "random_share= mixes random pairs into order='uncertain'; it does not apply to order='query'")]:
        with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
            semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold", **queue, **kwargs)
    with pytest.raises(TypeError, match="^reviewer: give a reviewer's name, not None$"):
        semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer=None)
    for thresholds, message in [(5, "thresholds: give a list of numbers, e.g. [0.5, 0.7], or the file `semrel calibrate -o` wrote, "
                                    "not int"),  # was "'int' object is not iterable"
                                (["0.5"], "thresholds: give numbers, not str")]:  # was "could not convert string to float"
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold", **queue, thresholds=thresholds)
    assert not (tmp_path / "x.sqlite").exists()
    with pytest.raises(UsageError, match="give all of judgments=, labels=, corpus= and golden=, or none"):
        semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold", judgments=pool["judgments"])
    with pytest.raises(ValidationError, match="^the review database is new: give judgments=, labels=, corpus= and golden=$"):
        semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold")  # it named the CLI's --judgments, ...
    unruled = {**queue, "labels": str(gold)}  # qrels whose manifest records no rule: the thresholds must be given
    with pytest.raises(UsageError, match=r"^give the labelling thresholds, e.g. on='R' thresholds='0.5' \(or '0.4,0.5,0.6' for grades"):
        semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold", **unruled)  # it named the CLI's --on R
    told = run("review", "simulate", "--db", tmp_path / "x.sqlite", "--reviewer", "gold", *files[:2], "--labels", gold, *files[4:],
               "--human", gold)
    assert told.exit_code == 2 and told.stderr.startswith("semrel: error: give the labelling thresholds, e.g. --on R --thresholds 0.5 (")
    assert not (tmp_path / "x.sqlite").exists()
    refused = run("review", "simulate", "--db", tmp_path / "x.sqlite", "--reviewer", "gold", *files, "--order", "random",
                  "--random-share", "0.5", "--human", gold)
    assert refused.exit_code == 2 and refused.stderr == ("semrel: error: --random-share mixes random pairs into --order uncertain; it "
                                                         "does not apply to --order random\n")
    assert not (tmp_path / "x.sqlite").exists()
    with pytest.MonkeyPatch.context() as env:  # from the environment, a default for the uncertain order only
        env.setenv("SEMREL_REVIEW_SIMULATE_RANDOM_SHARE", "0.5")
        ok("review", "simulate", "--db", tmp_path / "random.sqlite", "--reviewer", "gold", *files, "--thresholds", "0.3,0.5", "--order",
           "random", "--human", gold)



def ruled_pool(tmp_path):
    """(python's queue files, the commands' options, the same with labels whose manifest records R >= 0.6, gold qrels)."""
    pool = write_pool(tmp_path / "pool")
    gold = tmp_path / "gold.qrels"
    gold.write_text("q1 0 c2 1\nq2 0 c3 1\n")
    ok("label", pool["judgments"], "--threshold", "0.6", "-o", tmp_path / "l6.qrels")
    queue = {k: pool[k] for k in ("judgments", "labels", "corpus", "golden")}
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    return queue, files, {**queue, "labels": str(tmp_path / "l6.qrels")}, [*files[:2], "--labels", tmp_path / "l6.qrels", *files[4:]], gold


def test_the_labelling_asked_for_is_refused_naming_the_parameters_to_python_and_the_options_to_the_command(tmp_path):
    """simulate_review was told --thresholds and --on; `review simulate` still says those options."""
    queue, files, ruled, labelled, gold = ruled_pool(tmp_path)
    ok("calibrate", queue["judgments"], gold, "--unlisted-as-zero", "-o", tmp_path / "cal.json")  # on R
    manifest_file, calibration = f"{ruled['labels']}.manifest.json", str(tmp_path / "cal.json")
    for kwargs, options, said, shown in [
        ({**queue, "thresholds": "0.5,x"}, [*files, "--thresholds", "0.5,x"],
         "thresholds= expects comma-separated numbers or a .json file, not '0.5,x'",
         "--thresholds expects comma-separated numbers or a .json file, not '0.5,x'"),
        ({**ruled, "on": "F"}, [*labelled, "--on", "F"], f"on='F' does not match {manifest_file}, whose rule is on R: give it without on=",
         f"--on F does not match {manifest_file}, whose rule is on R: give it without --on"),
        ({**queue, "on": "F", "thresholds": calibration}, [*files, "--on", "F", "--thresholds", calibration],
         f"on='F' does not match {calibration}, whose rule is on R: give it without on=",
         f"--on F does not match {calibration}, whose rule is on R: give it without --on"),
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(said)}$"):
            semrel.simulate_review(tmp_path / "x.sqlite", str(gold), reviewer="gold", **kwargs)
        told = run("review", "simulate", "--db", tmp_path / "x.sqlite", "--reviewer", "gold", *options, "--human", gold)
        assert told.exit_code == 2 and told.stderr.splitlines()[-1] == f"semrel: error: {shown}", told.stderr
    assert not (tmp_path / "x.sqlite").exists()


def test_thresholds_beside_labels_of_another_rule_warn_naming_the_parameters_to_python_and_the_options_to_the_command(tmp_path):
    _, _, ruled, labelled, gold = ruled_pool(tmp_path)
    other_rule = "holds labels of --on R --thresholds 0.6 (its manifest), and the queue is built on --on R --thresholds 0.5: "
    with pytest.warns(UserWarning, match=re.escape(other_rule) + ".*or leave out on= and thresholds= to queue by the labels' rule$"):
        semrel.simulate_review(tmp_path / "api.sqlite", str(gold), reviewer="gold", **ruled, thresholds="0.5")  # it said --on
    warned = ok("review", "simulate", "--db", tmp_path / "cli.sqlite", "--reviewer", "gold", *labelled, "--thresholds", "0.5",
                "--human", gold)
    assert other_rule in warned.stderr and "or leave out --on and --thresholds to queue by the labels' rule\n" in warned.stderr


def test_a_database_without_a_queue_says_how_one_is_built_to_python_and_to_the_commands(tmp_path):
    """review_stats and export_reviews (and `review stats` and `export`, which take no --judgments) were told to give --judgments,
    --labels, --corpus and --golden."""
    from semrel.review.store import open_db

    pool = write_pool(tmp_path / "pool")
    empty = tmp_path / "empty.sqlite"
    open_db(empty).close()  # the review tables and no queue (as a start refused for want of its files leaves an empty SQLite file)
    none_yet = f"{empty}: holds no queue yet (build one with `semrel review start` from the judgments, labels, corpus and golden files)"
    for call in (lambda: semrel.review_stats(empty), lambda: semrel.export_reviews(empty, pool["labels"])):
        with pytest.raises(ValidationError, match=f"^{re.escape(none_yet)}$"):
            call()
    for command in (["stats"], ["export", "--labels", pool["labels"], "-o", tmp_path / "r.qrels"]):
        assert run("review", *command, "--db", empty).stderr == f"semrel: error: {none_yet}\n"


@pytest.mark.parametrize("resamples", [9, 1_000_001])
def test_review_stats_takes_10_to_a_million_resamples_in_python_and_at_the_command(tmp_path, resamples):
    """Past a million the bootstrap's resampled kappas were held unbounded (every draw kept for the interval)."""
    with pytest.raises(UsageError, match=rf"^resamples={resamples}: give 10 to 1,000,000$"):
        semrel.review_stats(tmp_path / "r.db", resamples=resamples)
    result = run("review", "stats", "--db", str(tmp_path / "r.db"), "--resamples", str(resamples))
    assert result.exit_code == 2 and "is not in the range 10<=x<=1000000" in result.output
