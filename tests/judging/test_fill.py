"""Holes filled on demand: a run that did not contribute to the pool gets its unjudged top chunks judged
with the qrels' own settings, and then scores as if it had been pooled.

Real all-MiniLM-L6-v2 on the bundled data/: the qrels come from pooling one run; a second run's holes
are filled; the result must equal judging and labelling the pool of both runs directly.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import semrel
from helpers import SecondWriter, assert_one_error, ok, run
from semrel.evaluation import files as files_module
from semrel.formats.judgments import read_judgments
from semrel.formats.manifest import read_manifest, read_params
from semrel.formats.trec import read_run, read_trec_qrels, write_run
from semrel.judging import fill as fill_module
from semrel.records import Qrels, Run

DATA = Path(__file__).resolve().parents[2] / "data"



@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """corpus, golden, two runs (bm25, and the same chunks ranked from the bottom up), qrels pooled from bm25 only."""
    f = tmp_path_factory.mktemp("fill")
    ok("corpus", "chunk", DATA / "docs", "--size", "60", "--overlap", "10", "-o", f / "corpus.jsonl")
    ok("golden", "import", DATA / "golden.csv", "--corpus", f / "corpus.jsonl", "-o", f / "golden.jsonl")
    ok("retrieve", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--method", "bm25", "-k", "12",
        "-o", f / "bm25.run")
    bm25 = read_run(f / "bm25.run")
    reverse = Run.from_columns(bm25.query_ids, bm25.doc_ids, -bm25.scores, "reverse")  # bm25's bottom first: mostly holes
    write_run(reverse, f / "reverse.run")
    for pool, runs in (("pool", ["bm25.run"]), ("both", ["bm25.run", "reverse.run"])):
        ok("pool", *[f / r for r in runs], "--golden", f / "golden.jsonl", "--depth", "4", "-o", f / f"{pool}.tsv")
        ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / f"{pool}.tsv",
            "-o", f / f"{pool}.jsonl", "--cache", f / "cache")
        ok("label", f / f"{pool}.jsonl", "-o", f / f"{pool}.qrels", "--threshold", "0.6")
    return f


@pytest.mark.slow
def test_filled_run_scores_as_if_it_had_been_pooled(pipeline, monkeypatch):
    f = pipeline
    before = read_trec_qrels(f / "pool.qrels")
    args = ["eval", f / "pool.qrels", f / "reverse.run", "-m", "nDCG@4,P@4,Judged@4", "-q", "-f", "json"]
    unfilled = json.loads(ok(*args).stdout)["reverse"]
    reads = []
    for module in (fill_module, files_module):  # each reads runs through its own name for read_run
        monkeypatch.setattr(module, "read_run", lambda path, *rest, read=module.read_run: reads.append(path) or read(path, *rest))
    result = ok(*args, "--fill-judgments", f / "pool.jsonl", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl",
                 "--fill-depth", "4", "--filled-qrels", f / "filled.qrels")
    assert [Path(p).name for p in reads] == ["reverse.run"]  # the fill's read is the one the scores use
    filled = json.loads(result.stdout)["reverse"]
    pooled = json.loads(ok("eval", f / "both.qrels", f / "reverse.run", "-m", "nDCG@4,P@4,Judged@4", "-q", "-f", "json").stdout)
    assert unfilled["all"]["Judged@4"] < 1.0 and filled["all"]["Judged@4"] == 1.0
    assert filled == pooled["reverse"]  # as if the run had been in the pool
    assert "holes in the runs' top 4" in result.stderr and "Judged@4 reverse:" in result.stderr
    # filled to depth 4, its top 10 (where AP looks) still has holes: the filled qrels name the judgments to fill them from
    deeper = ok("eval", f / "filled.qrels", f / "reverse.run", "-m", "P@4,AP").stderr
    assert f"--fill-judgments {f / 'pool.jsonl'} --corpus {f / 'corpus.jsonl'} --golden {f / 'golden.jsonl'}`" in deeper, deeper

    # the new judgments equal the pooled judge's, were appended, and the manifests say so
    judged = {(j.query_id, j.chunk_id): j for j in read_judgments(f / "pool.jsonl")}
    direct = {(j.query_id, j.chunk_id): j for j in read_judgments(f / "both.jsonl")}
    completed = read_trec_qrels(f / "filled.qrels")
    assert len(completed) > len(before) and set(judged) <= set(direct)
    for pair, j in judged.items():
        assert (j.P, j.R, j.F) == pytest.approx((direct[pair].P, direct[pair].R, direct[pair].F), abs=1e-5)
    fills = read_manifest(f / "pool.jsonl")["fills"]
    assert fills[-1]["params"]["pairs"] == len(completed) - len(before)
    assert read_manifest(f / "filled.qrels")["params"]["filled"][-1]["holes"] == len(completed) - len(before)
    assert not (f / "pool.jsonl.fill.partial").exists()

    # a second fill finds nothing to judge
    again = ok("fill", f / "filled.qrels", f / "reverse.run", "--judgments", f / "pool.jsonl", "--corpus", f / "corpus.jsonl",
                "--golden", f / "golden.jsonl", "--depth", "4", "-o", f / "again.qrels")
    assert "filled 0 holes" in again.stderr and read_trec_qrels(f / "again.qrels").to_dict() == completed.to_dict()


@pytest.mark.slow
def test_holes_are_not_judged_with_other_settings(pipeline, tmp_path):
    f = pipeline
    manifest = json.loads((f / "pool.qrels.manifest.json").read_text())
    manifest["params"]["judge"]["layer"] = 3  # as if the qrels had been labelled from judgments of another layer
    qrels = tmp_path / "other.qrels"
    qrels.write_bytes((f / "pool.qrels").read_bytes())
    manifest["output"] = str(qrels)
    (tmp_path / "other.qrels.manifest.json").write_text(json.dumps(manifest))
    common = ["--judgments", f / "pool.jsonl", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "-o", tmp_path / "x"]
    assert_one_error(run("fill", qrels, f / "reverse.run", *common), "labelled from judgments made with layer=3")
    bare = tmp_path / "bare.qrels"
    bare.write_bytes((f / "pool.qrels").read_bytes())
    assert_one_error(run("fill", bare, f / "reverse.run", *common), "has no current manifest")
    write_run(Run.from_columns(["chain-oil"], ["no-such-chunk#0"], [1.0], "stranger"), tmp_path / "stranger.run")
    assert_one_error(run("fill", f / "pool.qrels", tmp_path / "stranger.run", "--judgments", f / "pool.jsonl", "--corpus",
                         f / "corpus.jsonl", "--golden", f / "golden.jsonl", "-o", tmp_path / "z"),
                     "the holes of", "stranger.run: chunk 'no-such-chunk#0'")
    other_golden = tmp_path / "golden.jsonl"
    other_golden.write_text((f / "golden.jsonl").read_text().replace("?", "?!"))
    assert_one_error(run("fill", f / "pool.qrels", f / "reverse.run", "--judgments", f / "pool.jsonl", "--corpus",
                         f / "corpus.jsonl", "--golden", other_golden, "-o", tmp_path / "y"), "is not the golden set")


@pytest.mark.slow
def test_holes_get_the_probability_rule_the_pooled_judge_gives(pipeline, tmp_path):
    """Under the default rule (p, relative to the query's pool), a hole is judged with its query's whole
    pool, so its label is the one judging the pool of both runs gives; labels made before stay."""
    f = pipeline
    judgments = tmp_path / "pool.jsonl"  # judged afresh (from the cache): other tests fill the fixture's own
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
        "--cache", f / "cache")
    ok("label", judgments, "-o", tmp_path / "pool.qrels")
    ok("label", f / "both.jsonl", "-o", tmp_path / "both.qrels")
    before = read_trec_qrels(tmp_path / "pool.qrels").to_dict()
    ok("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
        "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    filled = read_trec_qrels(tmp_path / "filled.qrels").to_dict()
    pooled = read_trec_qrels(tmp_path / "both.qrels").to_dict()
    holes = {(q, d) for q, docs in filled.items() for d in docs} - {(q, d) for q, docs in before.items() for d in docs}
    assert holes and {pooled[q][d] for q, d in holes} == {0, 1}  # some holes relevant, some not
    assert {(q, d): filled[q][d] for q, d in holes} == {(q, d): pooled[q][d] for q, d in holes}
    assert all(filled[q][d] == rel for q, docs in before.items() for d, rel in docs.items())


@pytest.mark.slow
def test_a_fill_run_from_another_folder_uses_the_judges_cache(pipeline, tmp_path, monkeypatch):
    """The judge records its cache as it was named, relative to where it ran; a fill run from another
    folder finds that cache through the judgments file instead of starting a new one where it runs."""
    f = pipeline
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copytree(f / "cache", work / "cache")
    for name in ("corpus.jsonl", "golden.jsonl", "pool.tsv"):
        shutil.copy(f / name, work / name)
    monkeypatch.chdir(tmp_path)
    ok("judge", "--corpus", "work/corpus.jsonl", "--golden", "work/golden.jsonl", "--pool", "work/pool.tsv",
        "-o", "work/pool.jsonl", "--cache", "work/cache")
    ok("label", "work/pool.jsonl", "-o", "work/pool.qrels", "--threshold", "0.6")
    assert read_params(work / "pool.jsonl")["options"]["cache_dir"] == "work/cache"
    monkeypatch.chdir(elsewhere)
    result = ok("fill", work / "pool.qrels", f / "reverse.run", "--judgments", work / "pool.jsonl", "--corpus",
                work / "corpus.jsonl", "--golden", work / "golden.jsonl", "--depth", "4", "-o", work / "filled.qrels")
    assert "filled 0 holes" not in result.stderr
    assert list(elsewhere.iterdir()) == []  # no new cache where the fill ran
    # judgments copied without their cache: the user cache dir, not a new cache where the fill runs
    copied = tmp_path / "copied"
    copied.mkdir()
    for name in ("pool.jsonl", "pool.jsonl.manifest.json", "filled.qrels", "filled.qrels.manifest.json"):
        shutil.copy(work / name, copied / name)
    monkeypatch.chdir(copied)
    result = ok("fill", "filled.qrels", f / "bm25.run", "--judgments", "pool.jsonl", "--corpus", work / "corpus.jsonl",
                "--golden", work / "golden.jsonl", "--depth", "8", "-o", "again.qrels")
    assert "filled 0 holes" not in result.stderr
    assert not (copied / "work").exists() and not (copied / "cache").exists()
    assert read_manifest(copied / "pool.jsonl")["fills"][-1]["params"]["cache_dir"] is None


@pytest.mark.slow
@pytest.mark.parametrize("command", ["fill", "eval"])
def test_fill_takes_cache_and_no_cache_as_judge_does(pipeline, tmp_path, monkeypatch, command):
    """fill (and eval --fill-judgments) took no cache option: it always used the judge's cache, and where that could
    not be opened its message said `--cache DIR or --no-cache`, which neither took (eval's said `cache='DIR'`). --cache
    DIR encodes into DIR (a later fill reads every text from it), --no-cache opens no cache, and an unusable cache names
    both options."""
    import sqlite3

    from semrel.judging import judge as judge_module

    f, judgments, judges = pipeline, tmp_path / "pool.jsonl", tmp_path / "judges"
    shutil.copytree(f / "cache", judges)
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
       "--cache", judges)
    ok("label", judgments, "-o", tmp_path / "pool.qrels", "--threshold", "0.6")
    judged = {path: path.read_bytes() for path in (judgments, Path(f"{judgments}.manifest.json"))}
    opened: list[Path] = []
    encoded: list[int] = []

    class Recorded(judge_module.EmbeddingCache):
        def __init__(self, folder):
            opened.append(Path(folder))
            super().__init__(folder)

    run_model = judge_module.TextEncoder._run_model
    monkeypatch.setattr(judge_module, "EmbeddingCache", Recorded)
    monkeypatch.setattr(judge_module.TextEncoder, "_run_model",
                        lambda self, todo, *rest: encoded.append(len(todo)) or run_model(self, todo, *rest))

    def fill_again(*options):
        for path, data in judged.items():  # the judgments as judged, so every fill has the same holes to judge
            path.write_bytes(data)
        opened.clear()
        encoded.clear()
        if command == "eval":
            return run("eval", tmp_path / "pool.qrels", f / "reverse.run", "--fill-judgments", judgments, "--corpus", f / "corpus.jsonl",
                       "--golden", f / "golden.jsonl", "--fill-depth", "4", *options)
        return run("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
                   "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels", *options)

    mine = tmp_path / "mine"
    assert fill_again("--cache", mine).exit_code == 0
    with sqlite3.connect(mine / "embeddings.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    assert opened == [mine] and sum(encoded) == stored > 0
    assert read_manifest(judgments)["fills"][-1]["params"].items() >= {"cache_dir": str(mine), "use_cache": True}.items()
    assert fill_again("--cache", mine).exit_code == 0
    assert opened == [mine] and sum(encoded) == 0  # every text read from DIR
    assert fill_again("--no-cache").exit_code == 0
    assert opened == [] and sum(encoded) == stored
    assert read_manifest(judgments)["fills"][-1]["params"].items() >= {"cache_dir": None, "use_cache": False}.items()
    for name in judges.iterdir():  # the judge's cache, which fill uses by default, unusable: its database a folder
        name.unlink()
    (judges / "embeddings.sqlite").mkdir()
    assert_one_error(fill_again(), f"{judges / 'embeddings.sqlite'}: cannot open the embedding cache", "; pass --cache DIR or --no-cache")
    assert fill_again("--no-cache").exit_code == 0
    if command == "eval":  # the cache is the fill's: without --fill-judgments it would be ignored in silence
        assert_one_error(run("eval", tmp_path / "pool.qrels", f / "reverse.run", "--cache", mine),
                         "--cache and --no-cache go with --fill-judgments", code=2)


@pytest.mark.slow
def test_the_judgments_manifest_keeps_the_judges_record_through_fills(pipeline, tmp_path, monkeypatch):
    """Filling rewrites judgments.jsonl; its manifest keeps the judge's command and inputs (with their
    sha256, as the judge named them) and lists each fill's own record, so from any folder and after any
    number of fills a golden set other than the judge's is still refused."""
    f = pipeline
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    for name in ("corpus.jsonl", "golden.jsonl", "pool.tsv"):
        shutil.copy(f / name, work / name)
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "argv", ["semrel", "judge"])  # the command a manifest records
    ok("judge", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--pool", "pool.tsv", "-o", "pool.jsonl", "--cache", f / "cache")
    ok("label", "pool.jsonl", "-o", "pool.qrels", "--threshold", "0.6")
    judged = read_manifest(work / "pool.jsonl")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(sys, "argv", ["semrel", "fill"])
    common = ["--judgments", work / "pool.jsonl", "--corpus", work / "corpus.jsonl"]
    ok("fill", work / "pool.qrels", f / "reverse.run", *common, "--golden", work / "golden.jsonl", "--depth", "4", "-o", "one.qrels")
    ok("fill", "one.qrels", f / "bm25.run", *common, "--golden", work / "golden.jsonl", "--depth", "8", "-o", "two.qrels")
    manifest = read_manifest(work / "pool.jsonl")
    assert manifest is not None and judged["command"] == ["semrel", "judge"] and all(r["sha256"] for r in judged["inputs"])
    for key in ("command", "inputs", "params", "output", "created_utc", "versions"):
        assert manifest[key] == judged[key], key
    fills = manifest["fills"]
    added = [len(read_trec_qrels(elsewhere / "one.qrels")) - len(read_trec_qrels(work / "pool.qrels")),
             len(read_trec_qrels(elsewhere / "two.qrels")) - len(read_trec_qrels(elsewhere / "one.qrels"))]
    assert [fill["params"]["pairs"] for fill in fills] == added and all(added)
    assert manifest["rows"] == judged["rows"] + sum(added) == len(read_judgments(work / "pool.jsonl"))
    for fill, qrels, run_file in zip(fills, ("pool.qrels", "one.qrels"), ("reverse.run", "bm25.run")):
        assert fill["command"] == ["semrel", "fill"] and fill["created_utc"]
        assert [Path(r["path"]).name for r in fill["inputs"]] == [qrels, run_file, "corpus.jsonl", "golden.jsonl"]
        assert all(r["sha256"] for r in fill["inputs"])
    other_golden = elsewhere / "golden.jsonl"
    other_golden.write_text((f / "golden.jsonl").read_text().replace("?", "?!"))
    assert_one_error(run("fill", "two.qrels", f / "reverse.run", *common, "--golden", other_golden, "--depth", "8", "-o", "three.qrels"),
                     "is not the golden set")


@pytest.mark.slow
def test_judgments_whose_manifest_records_no_sha256_are_filled_with_a_warning(pipeline, tmp_path):
    """A manifest without the sha256 of its inputs (rewritten by an older fill) cannot tell whether the
    corpus and golden set are the judge's: the fill goes on, since the judgments are sound, but says so."""
    f = pipeline
    for folder in (tmp_path, tmp_path / "api"):  # the command fills one copy, semrel.fill the other
        folder.mkdir(exist_ok=True)
        for name in ("both.jsonl", "both.qrels"):
            shutil.copy(f / name, folder / name)
            shutil.copy(f / f"{name}.manifest.json", folder / f"{name}.manifest.json")
        manifest = json.loads((folder / "both.jsonl.manifest.json").read_text())
        manifest["inputs"] = [{"path": r["path"]} for r in manifest["inputs"]]
        (folder / "both.jsonl.manifest.json").write_text(json.dumps(manifest))
    result = ok("fill", tmp_path / "both.qrels", f / "reverse.run", "--judgments", tmp_path / "both.jsonl", "--corpus",
                f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--depth", "8", "-o", tmp_path / "filled.qrels")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("semrel: warning:")]
    assert len(warnings) == 1 and "records no sha256" in warnings[0] and "golden.jsonl could not be checked" in warnings[0]
    unchecked = read_manifest(tmp_path / "both.jsonl")["fills"][-1]["params"]["unchecked"]
    assert unchecked == [str(f / "corpus.jsonl"), str(f / "golden.jsonl")]

    # semrel.fill: the same completed qrels and Judged@8, its warning through warn= (moved there from the command)
    heard: list[str] = []
    api = tmp_path / "api"
    filled = semrel.fill(api / "both.qrels", f / "reverse.run", judgments=api / "both.jsonl", corpus=f / "corpus.jsonl",
                         golden=f / "golden.jsonl", depth=8, warn=heard.append)
    assert isinstance(filled, fill_module.FillResult) and filled.holes
    assert filled.qrels.to_dict() == read_trec_qrels(tmp_path / "filled.qrels").to_dict()
    said = [f"Judged@8 {name}: {before:.4f} before, {filled.judged_after[name]:.4f} after" for name, before in filled.judged_before.items()]
    assert said == [line for line in result.stderr.splitlines() if line.startswith("Judged@8")]
    assert heard == [warnings[0].removeprefix("semrel: warning: ").replace(str(tmp_path / "both"), str(api / "both"))]
    assert read_judgments(api / "both.jsonl") == read_judgments(tmp_path / "both.jsonl")


@pytest.mark.slow
def test_a_ctrl_c_as_the_judgments_are_replaced_leaves_no_checkpoint(pipeline, tmp_path, monkeypatch):
    """A Ctrl-C held while the extended judgments and their manifest were renamed into place was delivered
    before the fill's checkpoint was removed: a stale judgments.jsonl.fill.partial stayed, which no later
    fill (it finds nothing to judge) removed. The checkpoint now goes with the renames, and the message
    says the judgments are complete."""
    import os
    import signal

    import semrel.formats.files as files

    f, judgments = pipeline, tmp_path / "pool.jsonl"  # judged afresh (from the cache): other tests fill the fixture's own
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
        "--cache", f / "cache")
    ok("label", judgments, "-o", tmp_path / "pool.qrels", "--threshold", "0.6")
    judged = len(read_judgments(judgments))
    replace, calls = os.replace, []

    def ctrl_c_at_the_first(source, target):
        if Path(target).parent == tmp_path:  # a rename into place, not a write of a staged file
            calls.append(target)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGINT)
        replace(source, target)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal: a background job starts ignoring it
    monkeypatch.setattr(files.os, "replace", ctrl_c_at_the_first)
    try:
        result = run("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
                     "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    finally:
        signal.signal(signal.SIGINT, before)
    assert (result.exit_code, result.stderr.strip().splitlines()[-1]) == (
        130, f"semrel: error: interrupted after {judgments} took the judged holes (new and complete), before the filled qrels: "
             "run the same fill again (it judges nothing twice)")
    assert not (tmp_path / "pool.jsonl.fill.partial").exists() and not (tmp_path / "filled.qrels").exists()
    assert len(read_judgments(judgments)) > judged and read_manifest(judgments)["fills"]


@pytest.mark.slow
def test_a_fill_does_not_write_over_rows_another_fill_appended_meanwhile(pipeline, tmp_path, monkeypatch):
    """Two fills of one judgments.jsonl at once: each rewrote the file as it had read it plus its own rows, so
    the one finishing last dropped the other's rows (and its manifest still listed the other's fill). A file
    changed since the fill read it is now refused, nothing written."""
    f, judgments = pipeline, tmp_path / "pool.jsonl"
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
        "--cache", f / "cache")
    ok("label", judgments, "-o", tmp_path / "pool.qrels", "--threshold", "0.6")
    last = judgments.read_text().splitlines()[-1]
    other = last.replace('"chunk_id":"', '"chunk_id":"other-fill-')  # a row the other fill appended
    assert other != last

    def read_then_another_fill_appends(path, *rest, read=fill_module.read_judgment_columns):
        rows = read(path, *rest)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(other + "\n")
        return rows

    monkeypatch.setattr(fill_module, "read_judgment_columns", read_then_another_fill_appends)
    result = run("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
                 "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    assert (result.exit_code, result.stderr.strip().splitlines()[-1]) == (
        1, f"semrel: error: {judgments} changed while this fill ran (another fill or judge of it finished meanwhile): "
           "nothing was appended, so none of its rows is lost; run the same fill again")
    assert judgments.read_text().splitlines()[-1] == other  # the other fill's row is kept
    assert "fills" not in json.loads((tmp_path / "pool.jsonl.manifest.json").read_text()) and not (tmp_path / "filled.qrels").exists()


@pytest.mark.slow
def test_another_model_is_refused_before_any_hole_is_judged(pipeline, tmp_path):
    """The judgments' model fingerprint was compared after every hole had been judged (27 s on an audit's set),
    leaving a .fill.partial, and the message did not say what differs or what to do."""
    f, judgments = pipeline, tmp_path / "pool.jsonl"
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
        "--cache", f / "cache")
    manifest = json.loads(Path(f"{judgments}.manifest.json").read_text())
    manifest["params"]["model_fingerprint"] = "0" * 32  # as if judged with other weights
    Path(f"{judgments}.manifest.json").write_text(json.dumps(manifest))
    ok("label", judgments, "-o", tmp_path / "pool.qrels", "--threshold", "0.6")
    result = run("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
                 "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    assert_one_error(result, "was judged with: its fingerprint differs (its files hold other bytes)", code=1)
    assert "judging" not in result.stderr and not (tmp_path / "pool.jsonl.fill.partial").exists()


@pytest.mark.slow
def test_holes_of_int8_judgments_are_judged_at_int8(pipeline, tmp_path):
    """fill judged every hole at exact precision whatever the judgments recorded: exact scores beside int8
    ones (0.08 apart here), and exact vectors encoded where an int8 cache was meant."""
    f, judgments, cache = pipeline, tmp_path / "pool.jsonl", tmp_path / "cache"
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
       "--cache", cache, "--precision", "int8")
    ok("label", judgments, "-o", tmp_path / "pool.qrels")
    ok("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
       "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    # the holes' texts are in the int8 cache now (if the fill encoded them at int8), so judging the pool of both runs
    # at int8 reads every text the fill read and must give the holes the same scores
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "both.tsv", "-o", tmp_path / "both.jsonl",
       "--cache", cache, "--precision", "int8")
    both = {(j.query_id, j.chunk_id): (j.P, j.R, j.F) for j in read_judgments(tmp_path / "both.jsonl")}
    holes = [j for j in read_judgments(judgments) if j.source.startswith("fill:")]
    assert holes
    assert max(abs(a - b) for j in holes for a, b in zip((j.P, j.R, j.F), both[j.query_id, j.chunk_id])) < 1e-6


def test_holes_of_fp16_judgments_need_a_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(fill_module.ValidationError, match=r"j.jsonl was judged at precision fp16, which runs on a GPU only"):
        fill_module._engine({"precision": "fp16"}, "j.jsonl")
    assert fill_module._engine({}, "j.jsonl").precision == "exact"  # judged before --precision
    assert fill_module._engine({"precision": "int8"}, "j.jsonl").params()["device"] == "cpu"  # where int8 runs


@pytest.mark.slow
@pytest.mark.parametrize("case", ["twice", "other queries"])
def test_a_run_eval_would_refuse_is_refused_before_any_hole_is_judged(pipeline, tmp_path, case):
    """A document twice in a run took two of its top-depth places and was refused only by the Judged@depth
    figures, after the holes were judged, appended to the judgments and the qrels written; a run of other
    queries (empty, or of another golden set) filled 0 holes and exited 0."""
    f = pipeline
    for name in ("pool.jsonl", "pool.jsonl.manifest.json", "pool.qrels", "pool.qrels.manifest.json"):
        shutil.copy(f / name, tmp_path / name)
    judged = (tmp_path / "pool.jsonl").read_bytes()
    rows = (f / "reverse.run").read_text().splitlines(keepends=True)
    given = tmp_path / "given.run"
    given.write_text(rows[0] + "".join(rows) if case == "twice" else "other Q0 x 1 1.0 r\n")
    result = run("fill", tmp_path / "pool.qrels", given, "--judgments", tmp_path / "pool.jsonl", "--corpus", f / "corpus.jsonl",
                 "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    query = rows[0].split()[0]
    assert_one_error(result, f"{given}:2: duplicate document in run for query {query!r}" if case == "twice"
                     else f"{given} shares no query id with {tmp_path / 'pool.qrels'}")
    assert "judging" not in result.stderr and (tmp_path / "pool.jsonl").read_bytes() == judged
    assert not (tmp_path / "filled.qrels").exists() and not (tmp_path / "pool.jsonl.fill.partial").exists()


def test_holes_are_each_runs_unjudged_top_depth_in_trec_evals_order_for_the_qrels_queries():
    """A hole is a chunk of a run's top `depth` (score descending, ties by doc id descending, as trec_eval ranks) that
    the qrels do not judge, for a query the qrels have; each once, in the order found."""
    qrels = Qrels.from_columns(["q1", "q2"], ["d1", "e1"], [1, 0])
    first = Run.from_columns(["q1", "q1", "q1", "q3"], ["d1", "d2", "d5", "x"], [3.0, 2.0, 2.0, 9.0], "first")  # d5 ranks above d2
    second = Run.from_columns(["q1", "q1", "q2", "q2", "q1"], ["d4", "d3", "e2", "e1", "d5"], [0.5, 4.0, 1.0, 2.0, 0.1], "second")
    assert fill_module.holes(qrels, [first, second], 2) == [("q1", "d5"), ("q1", "d3"), ("q1", "d4"), ("q2", "e2")]
    assert fill_module.holes(qrels, [first, second], 1) == [("q1", "d3")]
    assert fill_module.holes(qrels, [second], 10) == [("q1", "d3"), ("q1", "d4"), ("q1", "d5"), ("q2", "e2")]


def test_a_depth_under_one_is_refused_before_anything_is_read(tmp_path):
    with pytest.raises(fill_module.UsageError, match=r"^depth=0: must be at least 1$"):
        fill_module.fill(tmp_path / "none.qrels", [tmp_path / "none.run"], judgments=tmp_path / "none.jsonl", corpus=tmp_path / "c",
                         golden=tmp_path / "g", depth=0)


def test_completed_qrels_named_as_the_fills_checkpoint_are_refused(tmp_path, monkeypatch):
    """`fill -o judgments.jsonl.fill.partial` wrote the qrels where the next fill keeps its checkpoint: that fill
    took them for one and removed them with its renames (their manifest left behind). Refused before anything is read."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(fill_module.UsageError, match=re.escape(
            "j.jsonl.fill.partial is where a fill of j.jsonl keeps its checkpoint (the next fill would take it for one and "
            "remove it): give the completed qrels another name")):
        fill_module.fill("none.qrels", ["none.run"], judgments="j.jsonl", corpus="c", golden="g", output=tmp_path / "j.jsonl.fill.partial")
    assert not list(tmp_path.iterdir())


def test_holes_are_judged_with_the_options_the_judgments_record():
    """Every option that moves a score or p is taken from the judge's manifest: the model's folder (not its display
    name), layer, idf, window and overlap, the null sample and the seed that draws it; rescaling is applied afterwards."""
    settings = {"model": "all-MiniLM-L6-v2", "model_folder": "/models/mini", "layer": 4, "idf": True, "rescale": "corpus",
                "windows": {"tokens": 256, "overlap": 32}, "cache": None,
                "options": {"seed": 3, "null_sample": 50, "max_tokens": 1024, "cache_dir": None, "use_cache": True}}
    assert fill_module._options(settings, "j.jsonl") == fill_module.JudgeOptions(
        model="/models/mini", layer=4, idf=True, rescale="none", window=256, overlap=32, seed=3, null_sample=50, max_tokens=1024,
        cache_dir=None, use_cache=True)
    unset = fill_module._options({"model": "m", "layer": 6, "windows": {}, "options": {"use_cache": False}}, "j.jsonl")
    assert (unset.model, unset.idf, unset.seed, unset.null_sample, unset.use_cache) == ("m", False, 0, fill_module.NULL_SAMPLE, False)


@pytest.mark.parametrize("key", ["model_fingerprint", "layer", "idf", "rescale", "baseline", "windows.tokens", "windows.overlap"])
def test_qrels_labelled_from_judgments_of_other_settings_are_refused_for_each_setting(tmp_path, key):
    settings = {"model": "m", "model_fingerprint": "f" * 32, "layer": 6, "idf": False, "rescale": "none", "baseline": None,
                "windows": {"tokens": 512, "overlap": 128}}
    for name, params in (("j.jsonl", settings), ("q.qrels", {"rule": "p", "judge": settings})):
        (tmp_path / name).write_text("")
        (tmp_path / f"{name}.manifest.json").write_text(json.dumps({"params": params, "inputs": [{"path": "c", "sha256": "0"}]}))
    rule, found = fill_module.judge_settings(tmp_path / "q.qrels", tmp_path / "j.jsonl")
    assert rule["rule"] == "p" and found["layer"] == 6 and found["inputs"] == [{"path": "c", "sha256": "0"}]
    other = json.loads(json.dumps(settings))
    if "." in key:
        outer, inner = key.split(".")
        other[outer][inner] = 7
    else:
        other[key] = 7
    (tmp_path / "q.qrels.manifest.json").write_text(json.dumps({"params": {"rule": "p", "judge": other}}))
    with pytest.raises(fill_module.ValidationError, match=rf"q\.qrels was labelled from judgments made with {re.escape(key)}=7, "
                                                          rf"\S*j\.jsonl has {re.escape(key)}="):
        fill_module.judge_settings(tmp_path / "q.qrels", tmp_path / "j.jsonl")


@pytest.mark.slow
def test_holes_of_rescaled_judgments_get_their_baseline_and_follow_the_old_rows(pipeline, tmp_path):
    """Judgments rescaled by a corpus baseline: a hole's P, R, F are its raw scores (those of the judge of both runs' pool,
    which is not rescaled) rescaled by the baseline the judgments record; the old rows come first, unchanged, and the
    command's summary counts the holes and Judged@4 before and after."""
    f, judgments = pipeline, tmp_path / "pool.jsonl"
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", judgments,
       "--cache", f / "cache", "--rescale", "corpus", "--baseline-pairs", "40")
    ok("label", judgments, "-o", tmp_path / "pool.qrels", "--threshold", "0.2")
    before = read_judgments(judgments)
    unfilled = json.loads(ok("eval", tmp_path / "pool.qrels", f / "reverse.run", "-m", "Judged@4", "-q", "-f", "json").stdout)
    result = ok("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
                "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "filled.qrels")
    after = read_judgments(judgments)
    holes = after[len(before):]
    assert after[: len(before)] == before and holes and all(j.source == "fill:reverse" for j in holes)
    b = np.array([read_params(judgments)["baseline"][k] for k in "PRF"])
    assert 0.05 < b.min() and b.max() < 0.9
    raw = {(j.query_id, j.chunk_id): np.array([j.P, j.R, j.F]) for j in read_judgments(f / "both.jsonl")}
    assert max(np.abs(np.array([j.P, j.R, j.F]) - (raw[j.query_id, j.chunk_id] - b) / (1 - b)).max() for j in holes) < 1e-5
    added = len(read_trec_qrels(tmp_path / "filled.qrels")) - len(read_trec_qrels(tmp_path / "pool.qrels"))
    assert added == len(holes)
    assert f"filled {len(holes)} holes in the runs' top 4: {len(holes)} judged now, 0 already in {judgments}; " in result.stderr
    assert f"Judged@4 reverse: {unfilled['reverse']['all']['Judged@4']:.4f} before, 1.0000 after" in result.stderr
    record = read_manifest(tmp_path / "filled.qrels")["params"]["filled"][-1]
    assert (record["holes"], record["judged"], record["from_judgments"]) == (len(holes), len(holes), 0)
    # the same qrels filled again: every hole is in the judgments now, so each is labelled from them, none judged twice
    again = ok("fill", tmp_path / "pool.qrels", f / "reverse.run", "--judgments", judgments, "--corpus", f / "corpus.jsonl",
               "--golden", f / "golden.jsonl", "--depth", "4", "-o", tmp_path / "again.qrels")
    assert f"filled {len(holes)} holes in the runs' top 4: 0 judged now, {len(holes)} already in {judgments}; " in again.stderr
    assert read_judgments(judgments) == after
    assert read_trec_qrels(tmp_path / "again.qrels").to_dict() == read_trec_qrels(tmp_path / "filled.qrels").to_dict()


@pytest.mark.slow
def test_judged_before_and_after_are_over_the_runs_own_queries(pipeline, tmp_path):
    """A run of one query, filled: every pair of its top 8 is judged after, so Judged@8 is 1, as eval's hole
    warning measures it (the run's queries); over all 18 queries of the qrels it had read 1/18 = 0.0556 after."""
    f = pipeline
    bm25 = read_run(f / "bm25.run")
    first = bm25.query_ids[0].as_py()
    keep = [i for i, q in enumerate(bm25.query_ids.to_pylist()) if q == first]
    one = Run.from_columns(bm25.query_ids.take(keep), bm25.doc_ids.take(keep), bm25.scores.take(keep), "one")
    write_run(one, tmp_path / "one.run")
    shutil.copy(f / "pool.jsonl", tmp_path / "pool.jsonl")
    shutil.copy(f / "pool.jsonl.manifest.json", tmp_path / "pool.jsonl.manifest.json")
    per_query = json.loads(ok("eval", f / "pool.qrels", tmp_path / "one.run", "-m", "Judged@8", "-q", "-f", "json").stdout)
    before = per_query["one"][first]["Judged@8"]
    assert 0 < before < 1
    result = ok("fill", f / "pool.qrels", tmp_path / "one.run", "--judgments", tmp_path / "pool.jsonl", "--corpus",
                f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--depth", "8", "-o", tmp_path / "filled.qrels")
    assert f"Judged@8 one: {before:.4f} before, 1.0000 after" in result.stderr, result.stderr


def test_judgments_changed_since_their_manifest_say_how_and_what_to_do(tmp_path):
    """A hard kill between a fill's two renames leaves judgments.jsonl with the new rows beside its old manifest:
    every later fill was refused as if `semrel judge` had not written the file ('has no current manifest ...
    fill judgments `semrel judge` wrote'). Rows only appended since are now told apart from an edit, with the fix."""
    from semrel.formats.files import file_digest

    settings = {"model": "m", "model_fingerprint": "f" * 32, "layer": 6}
    judgments = tmp_path / "j.jsonl"
    judgments.write_text('{"row": 1}\n{"row": 2}\n')
    (tmp_path / "j.jsonl.manifest.json").write_text(json.dumps({"params": settings, "output_digest": {
        "bytes": judgments.stat().st_size, **file_digest(judgments)}}))
    (tmp_path / "q.qrels").write_text("")
    (tmp_path / "q.qrels.manifest.json").write_text(json.dumps({"params": {"rule": "p", "judge": settings}}))
    assert fill_module.judge_settings(tmp_path / "q.qrels", judgments)[1]["layer"] == 6
    with judgments.open("a") as handle:
        handle.write('{"row": 3}\n')
    with pytest.raises(fill_module.ValidationError, match=re.escape(
            "j.jsonl was appended to since its manifest was written (its first 2 lines, those the manifest describes, are as they were: "
            "a fill killed before it updated the manifest, or rows added by hand): keep only those lines (`head -n 2`) and run the fill "
            "again (it judges the rest again)")):
        fill_module.judge_settings(tmp_path / "q.qrels", judgments)
    judgments.write_text('{"row": 1}\n{"row": 5}\n')
    with pytest.raises(fill_module.ValidationError, match=re.escape(
            "j.jsonl changed since its manifest was written (edited, or written by another tool): the judge's settings it records "
            "may not be those of its rows; restore it, or judge the pool again")):
        fill_module.judge_settings(tmp_path / "q.qrels", judgments)


def test_a_judge_writing_while_a_fill_renames_waits_for_the_fills_lock_and_its_judgments_stand(tmp_path, monkeypatch):
    """`semrel judge -o` over the judgments a fill was extending took no lock: writing between the fill's check and its
    rename, its new judgments were replaced by the old rows and the fill's holes. Now it waits for the fill's lock
    (rewrite_lock) and writes last, as it was asked to."""
    from semrel.formats.files import file_digest
    from semrel.formats.judgments import write_judgments
    from semrel.judging.judge import JudgeResult, write_judged
    from semrel.records import Judgment

    judgments = tmp_path / "pool.jsonl"
    old = [Judgment("q1", "d#0", 0.5, 0.5, 0.5, "bm25")]
    write_judgments(old, judgments)
    read_as = file_digest(judgments)
    writer = SecondWriter(monkeypatch, lambda: write_judged(JudgeResult([Judgment("q2", "e#0", 0.7, 0.7, 0.7, "bm25")], {}),
                                                            judgments, [], None))
    digest = fill_module.file_digest

    def checked_then_the_judge(path):
        found = digest(path)
        if not writer.thread.is_alive() and not writer.settled.is_set():  # the fill's check: the judge writes now
            writer.start()
        return found

    monkeypatch.setattr(fill_module, "file_digest", checked_then_the_judge)
    fill_module._append(judgments, len(old), [Judgment("q1", "first#0", 0.9, 0.9, 0.9, "fill:x")], [], {}, f"{judgments}.fill.partial",
                        read_as)
    assert writer.outcome() is None and writer.waited
    assert [j.chunk_id for j in read_judgments(judgments)] == ["e#0"]


def test_two_fills_in_the_same_instant_cannot_both_pass_the_check_the_second_waits_for_the_lock_and_is_refused(
        tmp_path, monkeypatch):
    """The "changed while this fill ran" check was no lock: a second fill appending between the first's check and its
    rename passed the check too, and the first's rename then dropped its rows. Now the second waits for the first's lock
    (rewrite_lock) from check to rename, then finds the file changed and writes nothing."""
    from semrel.errors import SemrelError
    from semrel.formats.files import file_digest
    from semrel.formats.judgments import write_judgments
    from semrel.records import Judgment

    judgments = tmp_path / "pool.jsonl"
    old = [Judgment("q1", "d#0", 0.5, 0.5, 0.5, "bm25")]
    write_judgments(old, judgments)
    read_as = file_digest(judgments)  # both fills read the file as it is now

    def append(chunk_id: str) -> None:
        fill_module._append(judgments, len(old), [Judgment("q1", chunk_id, 0.9, 0.9, 0.9, "fill:x")], [], {}, f"{judgments}.fill.partial",
                            read_as)

    writer = SecondWriter(monkeypatch, lambda: append("second#0"))
    digest = fill_module.file_digest

    def checked_then_the_other_fill(path):
        found = digest(path)
        if not writer.thread.is_alive() and not writer.settled.is_set():  # the first fill's check: the other comes now
            writer.start()
        return found

    monkeypatch.setattr(fill_module, "file_digest", checked_then_the_other_fill)
    append("first#0")
    refused = writer.outcome()
    assert isinstance(refused, SemrelError) and writer.waited and "changed while this fill ran" in str(refused)
    assert [j.chunk_id for j in read_judgments(judgments)] == ["d#0", "first#0"]
