"""`semrel run` and `semrel init`: every step runs, then skips, a threshold change reruns only label
and what depends on it, settings come from --set over SEMREL_* over the file, the lift step, and a
bad config is one line naming the key and where the value came from."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import semrel.formats.files as files
from helpers import SHARED_DATA, assert_one_error, needs_shared, read_lines, run
from semrel.cli import pipeline, run_config
from semrel.formats.manifest import write_manifest
from semrel.judging import labels
from small_corpus import TEXTS

GOLDEN = [
    ("q-cats", "Why do cats purr?", "Cats purr when they are content.", "cats#0"),
    ("q-ships", "What do container ships carry?", "Steel boxes across the ocean.", "ships#0"),
    ("q-bread", "Why does sourdough rise?", "Wild yeast ferments the dough.", "bread#0"),
]


def write_data(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for chunk_id, text in TEXTS.items():
        (docs / f"{chunk_id.split('#')[0]}.md").write_text(text + "\n")
    rows = ["query_id,query,reference_answer,gold_chunk_ids"] + [",".join(f'"{v}"' for v in row) for row in GOLDEN]
    (tmp_path / "golden.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


def write_config(tmp_path: Path, judge: bool = False, extra: str = "") -> Path:
    config = tmp_path / "semrel.toml"
    config.write_text(f"""
out = "out"
[corpus]
docs = "docs"
[golden]
file = "golden.csv"
[retrieve]
methods = ["bm25"]
k = 5
{'[pool]' + chr(10) + 'depth = 2' if judge else ''}
[judge]
enabled = {'true' if judge else 'false'}
{extra}
""")
    return config


def statuses(output: str) -> dict[str, str]:
    rows = {}
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[-2:-1] and parts[-2] in ("ran", "skipped", "run"):
            rows[" ".join(parts[:-2]).removesuffix(" would")] = parts[-2]
    return rows


@pytest.mark.slow
def test_run_bm25_then_skip_everything(tmp_path):
    config = write_config(write_data(tmp_path))
    first = run("run", config)
    assert first.exit_code == 0, first.output
    assert set(statuses(first.stdout).values()) == {"ran"}
    assert list(statuses(first.stdout)) == ["chunk", "import", "qrels", "retrieve bm25", "eval gold", "report"]
    out = tmp_path / "out"
    for name in ("corpus.jsonl", "golden.jsonl", "gold.qrels", "runs/bm25.run", "report.html"):
        assert (out / name).is_file() and (out / f"{name}.manifest.json").is_file(), name
    assert (out / "eval.gold.txt").read_text().strip()  # the eval table, captured, with a manifest of its own
    manifest = json.loads((out / "eval.gold.txt.manifest.json").read_text())
    assert manifest["params"]["command"].startswith("semrel eval ") and manifest["params"]["command"].endswith(f"> {out / 'eval.gold.txt'}")
    assert [i["path"] for i in manifest["inputs"]] == [str(out / "gold.qrels"), str(out / "runs" / "bm25.run")]
    assert all(len(i["sha256"]) == 64 for i in manifest["inputs"]) and manifest["output_digest"]["bytes"] > 0
    second = run("run", config)
    assert set(statuses(second.stdout).values()) == {"skipped"}, second.stdout
    (out / "eval.gold.txt.manifest.json").unlink()  # as a table printed by an older semrel has none
    remade = statuses(run("run", config).stdout)
    assert remade["eval gold"] == "ran" and remade["retrieve bm25"] == "skipped", remade
    assert (out / "eval.gold.txt.manifest.json").is_file()
    # an input newer than its outputs but with the same bytes (a touch, a checkout) reruns nothing
    os.utime(tmp_path / "golden.csv", ns=(os.stat(out / "report.html").st_mtime_ns + 10**9,) * 2)
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"}
    # a changed input reruns that step and what depends on it (retrieval reads only the queries, not the reference answers)
    (tmp_path / "golden.csv").write_text((tmp_path / "golden.csv").read_text().replace("content", "happy"))
    third = statuses(run("run", config).stdout)
    assert third["chunk"] == third["retrieve bm25"] == "skipped" and all(third[s] == "ran" for s in ("import", "qrels", "report"))
    assert statuses(run("run", config, "--force", "chunk").stdout)["chunk"] == "ran"
    # a document removed from the folder (its newest file unchanged) rechunks too
    os.remove(tmp_path / "docs" / "chess.md")
    after_removal = run("run", config)
    assert statuses(after_removal.stdout)["chunk"] == "ran", after_removal.output
    assert "chess#0" not in (out / "corpus.jsonl").read_text()


def test_the_run_ends_with_the_labels_agreement_with_gold(tmp_path):
    from semrel.cli.run import agreement_line

    figures = {"n": 266, "kappa": 0.9241, "kappa_low": 0.8154, "kappa_high": 1.0, "labels": [0, 1], "confusion": [[243, 1], [2, 20]]}
    path = tmp_path / "agreement.json"
    path.write_text(json.dumps({"labels": figures}))
    assert agreement_line(str(path), "semrel review start --db r.sqlite") == (
        f"derived labels against the golden set's ({path}): kappa 0.924 (95% interval 0.815 to 1.000) over 266 pairs; check them "
        "against people's grades with `semrel review start --db r.sqlite` (docs/review.md)")
    # a lower bound below 0 read as a range of '-0.122-1.000', as the report does not write it
    path.write_text(json.dumps({"labels": {**figures, "kappa": 0.327, "kappa_low": -0.1221, "kappa_high": 1.0}}))
    assert "kappa 0.327 (95% interval -0.122 to 1.000) over 266 pairs;" in agreement_line(str(path), "semrel review start")
    path.write_text(json.dumps({"labels": {**figures, "kappa_low": None, "kappa_high": None}}))
    assert f"({path}): kappa 0.924 over 266 pairs;" in agreement_line(str(path), "semrel review start")
    path.write_text(json.dumps({"labels": {**figures, "n": 22, "queries": 2}}))  # how little it rests on
    assert "kappa 0.924 (95% interval 0.815 to 1.000) over 22 pairs of 2 queries;" in agreement_line(str(path), "semrel review start")
    # labels refitted on reviewed pairs (gold standing in for the reviewers, as `review simulate` has it): the kappa over
    # every pair, those included, rose from 0.739 to 0.763 while on the pairs not reviewed it stayed 0.816
    derived = tmp_path / "derived.qrels"
    derived.write_text("q1 0 c1 1\n")
    write_manifest(derived, params={"rule": "probability", "calibration": {"slope": 1.0, "shift": 0.0, "fit": "features", "pairs": 100}})
    path.write_text(json.dumps({"labels": figures, "test": str(derived)}))
    assert agreement_line(str(path), "semrel review start").startswith(
        f"derived labels against the golden set's ({path}): kappa 0.924 (95% interval 0.815 to 1.000) over 266 pairs (the labels "
        "were fitted to 100 reviewed pairs: where they are among the pairs compared, the figure counts them in-sample (`semrel "
        "calibrate ... --test QRELS` gives it on the others)); check them")


@pytest.mark.slow
def test_threshold_change_relabels_without_rejudging(tmp_path, monkeypatch):
    config = write_config(write_data(tmp_path), judge=True)
    first = run("run", config)
    assert first.exit_code == 0, first.output
    assert statuses(first.stdout)["judge"] == "ran" and statuses(first.stdout)["label"] == "ran"
    # the labels' agreement with gold, which only the report showed, ends the run beside the tables it qualifies
    agreement = json.loads((tmp_path / "out" / "agreement.json").read_text())["labels"]
    assert agreement["kappa"] is None  # nan: both sides give these few pairs one grade (formatting None failed)
    assert (f"derived labels against the golden set's ({tmp_path / 'out' / 'agreement.json'}): kappa undefined over "
            f"{agreement['n']} pairs of {agreement['queries']} queries; check them against people's grades with "
            "`semrel review start --db ") in first.stdout
    # the command to paste, with the run's files (bare, it failed on --db, then asked for four files the run had made)
    review = shlex.split(re.search(r"`(semrel review start [^`]*)`", first.stdout).group(1).replace("YOUR_NAME", "ann"))
    assert review[review.index("--labels") + 1] == str(tmp_path / "out" / "derived.qrels")
    started = run(*review[1:], input="q\n")
    assert started.exit_code == 0, started.output
    assert (tmp_path / "out" / "review.sqlite").exists()
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"}
    config.write_text(config.read_text() + "[label]\nthreshold = 0.5\n")
    planned = run("run", config, "--dry-run").stdout
    dry = statuses(planned)
    assert dry["label"] == "run" and dry["judge"] == "skipped"
    # a dry run times nothing: its table had a column of 0.00 and 'total: 0.00s, 0 ran'
    assert " 0.00" not in planned and f"total: {sum(v == 'run' for v in dry.values())} would run, " in planned
    after = statuses(run("run", config).stdout)
    assert after["judge"] == "skipped" and after["pool"] == "skipped" and after["retrieve bm25"] == "skipped"
    for step in ("label", "eval derived", "agree", "report"):
        assert after[step] == "ran", (step, after)
    assert after["eval gold"] == "skipped"
    manifest = json.loads((tmp_path / "out" / "derived.qrels.manifest.json").read_text())
    assert manifest["params"]["thresholds"] == [0.5]
    # an upgrade of semrel that moves the default cut relabels; one that changes p's model rejudges
    monkeypatch.setattr(labels, "GRADE_CUTS", (0.1, 0.2, 0.3))
    upgraded = statuses(run("run", config).stdout)
    assert upgraded["label"] == "ran" and upgraded["judge"] == "skipped", upgraded
    monkeypatch.setattr(labels, "NULL_SAMPLE", labels.NULL_SAMPLE + 1)
    assert statuses(run("run", config).stdout)["judge"] == "ran"


def test_a_threshold_is_swept_on_the_score_it_labels_and_lift_reranks_all_of_base(tmp_path):
    """[label] threshold without `on` labels on R (label's default): sensitivity sweeps R too, where it swept p
    and marked 0.65 on p's curves; [lift] without depth reranks every chunk of the base run, as documented."""
    config = write_config(write_data(tmp_path), judge=True, extra="")
    config.write_text(config.read_text().replace('methods = ["bm25"]', 'methods = ["bm25", "dense"]').replace("k = 5", "k = 150")
                      + "[label]\nthreshold = 0.65\n[lift]\nbase = \"bm25\"\n")
    planned = " ".join(run("run", config, "--dry-run").stdout.replace("\\\n", " ").split())
    sensitivity = planned.split("semrel sensitivity ", 1)[1].split(" > ", 1)[0]
    assert "--on R --at 0.65" in sensitivity
    assert "--rerank dense -k 150" in planned and "--rerank-depth 150" in planned
    (tmp_path / "graded").mkdir()
    graded = write_config(write_data(tmp_path / "graded"), judge=True, extra="")
    graded.write_text(graded.read_text().replace('methods = ["bm25"]', 'methods = ["bm25", "dense"]') + '[label]\ngrades = "0.6,0.7"\n')
    assert "--on R" in run("run", graded, "--dry-run").stdout.split("semrel sensitivity ", 1)[1].split(" > ", 1)[0]


@pytest.mark.parametrize("extra, fragments", [
    ("layer = \"six\"", ("semrel.toml:13: [judge] layer: expected an integer",)),
    ("colour = 1", ("semrel.toml:13: [judge] colour: unknown key",)),
    ("[nope]\nx = 1", ("semrel.toml:13: [nope]: unknown section",)),
    ("[retrieve2]", ("[retrieve2]",)),
    ("[golden]\nformat = 3", ("not valid TOML", "twice")),  # TOML itself refuses a second [golden]
    ("[engine]\nname = \"spark\"", ("semrel.toml:14: [engine] name: expected local or ray",)),
    ("rescale = \"bogus\"", ("semrel.toml:13: [judge] rescale: choose one of none, baseline, corpus",)),  # before any step runs
    ("[retrieve]\nmethods = [\"bm26\"]", ("not valid TOML",)),  # TOML refuses a second [retrieve]; the key below
    ("[label]\nthreshold = nan", ("semrel.toml:14: [label] threshold: give a finite number",)),
    ("[sensitivity]\nstep = 0.0", ("semrel.toml:14: [sensitivity] step: give a number above 0",)),
    ("layer = true", ("semrel.toml:13: [judge] layer: expected an integer",)),  # TOML's true is no 1
    ("[sensitivity]\nstep = true", ("semrel.toml:14: [sensitivity] step: expected a number",)),
    ("[sensitivity]\nfrom = 0.5\nto = 0.5", ("semrel.toml:14: [sensitivity] from: give a number below [sensitivity] to (0.5)",)),
])
def test_bad_config_is_one_line(tmp_path, extra, fragments):
    config = write_config(write_data(tmp_path), extra=extra)
    result = run("run", config)
    assert_one_error(result, *fragments, code=2)


def test_a_bad_key_is_named_with_the_config_as_typed_and_its_line(tmp_path, monkeypatch):
    """The error named the config by its base name alone (`semrel.toml`, of which a project may hold several) and no
    line: `configs/a/semrel.toml:9: [retrieve] methd: unknown key`, as every other file error names its line."""
    (tmp_path / "configs" / "a").mkdir(parents=True)
    config = write_config(write_data(tmp_path / "configs" / "a"))
    monkeypatch.chdir(tmp_path)
    typed = os.path.join("configs", "a", "semrel.toml")
    text = config.read_text()
    for old, new, message in (
            ("methods =", "methd =", f"{typed}:8: [retrieve] methd: unknown key (known: methods, k, model, runs)"),
            ("k = 5", "k = '5'", f"{typed}:9: [retrieve] k: expected an integer"),
            ("k = 5", "k = 0", f"{typed}:9: [retrieve] k: give 1 or more"),
            ('file = "golden.csv"', 'file = "nope.csv"', f"{typed}:6: [golden] file: no such folder or file 'nope.csv'"),
            ("[retrieve]", "[retreive]", f"{typed}:7: [retreive]: unknown section"),
            ('out = "out"', 'out = "out"\npool.depth = 0', f"{typed}:3: [pool] depth: give 1 or more")):  # a dotted key
        config.write_text(text.replace(old, new))
        assert_one_error(run("run", typed, "--dry-run"), f"semrel: error: {message}", code=2)


def test_a_config_that_is_not_utf8_is_a_config_error(tmp_path):
    """Exit 2, as every other problem of the config (it was 1, a data error)."""
    config = write_config(write_data(tmp_path))
    config.write_bytes(config.read_bytes() + b"# caf\xe9\n")
    assert_one_error(run("run", config), "semrel.toml:", "not valid UTF-8", "re-save the file as UTF-8", code=2)


@pytest.mark.parametrize("out, golden, extra, fragments", [
    ('"."', 'qrels = "gold.qrels"', "", ("the qrels step would write ./gold.qrels over [golden] qrels",)),
    ('"docs"', "", "", ("the chunk step would write docs/corpus.jsonl into [corpus] docs",)),
    ('"."', "", '[bm25]\nstopwords = "eval.gold.txt"', ("would write ./eval.gold.txt over [bm25] stopwords",)),
    ('"."', "", '[bm25]\nstopwords = "eval.gold.txt.manifest.json"', ("would write ./eval.gold.txt.manifest.json over [bm25] stopwords",)),
])
def test_outputs_never_land_on_the_users_files_or_in_their_documents(tmp_path, monkeypatch, out, golden, extra, fragments):
    """`out` beside the user's qrels or stopwords, or inside the documents folder, is refused before any step
    runs (the user's 22-line qrels were cut to the sampled queries' 6, and the documents folder filled up)."""
    data = write_data(tmp_path)
    (data / "gold.qrels").write_text("q-cats 0 cats#0 1\n")
    (data / "eval.gold.txt").write_text("a\nthe\n")
    (data / "eval.gold.txt.manifest.json").write_text("a\nthe\n")  # a file of words whose name is a step's manifest
    config = write_config(data, extra=extra)
    config.write_text(config.read_text().replace('out = "out"', f"out = {out}")
                      .replace('file = "golden.csv"', f'file = "golden.csv"\n{golden}'))
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    monkeypatch.chdir(data)
    assert_one_error(run("run", config.name), *fragments, "set `out` to another folder", code=2)
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before


def test_ctrl_c_in_a_step_is_interrupted_with_130(tmp_path, monkeypatch):
    """click turns Ctrl-C inside a step into Abort ('Aborted!', exit 1); semrel run reports it as every command does."""
    import semrel.cli.corpus

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(semrel.cli.corpus, "chunk_files", ctrl_c)
    result = run("run", write_config(write_data(tmp_path)))
    assert result.exit_code == 130 and result.stderr.strip().splitlines()[-1] == "semrel: error: interrupted", result.stderr
    assert "Aborted" not in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_a_golden_set_without_gold_runs_to_the_end_on_derived_labels(tmp_path):
    """semrel's promise, an unlabelled corpus bootstrapped into qrels: with no gold chunks nothing is scored
    against them (eval gold, agree and the report's gold column failed on the empty gold qrels)."""
    data = write_data(tmp_path)
    (data / "golden.csv").write_text("query_id,query,reference_answer\n" + "".join(f'{q},"{text}","{answer}"\n'
                                                                               for q, text, answer, _ in GOLDEN))
    config = write_config(data, judge=True)
    result = run("run", config)
    assert result.exit_code == 0, result.output
    assert "the golden set has no gold chunks: nothing is scored against them" in result.stderr
    # the label step warns that p rests on each pool's best chunk, and the report (which shows it) does not say it again
    said = [line for line in result.stderr.splitlines() if line.startswith("semrel: warning: ")]
    assert any("lists no gold chunks" in line for line in said) and len(said) == len(set(said)), said
    assert not any("gold.qrels is empty" in line for line in said), said  # run's own line says it: no qrels warning beside it
    # its remedy names `semrel label --calibration`; under `semrel run` the refit goes in the config, and run says where
    assert f"set [label] calibration in {config} to the file `semrel calibrate -o` wrote" in result.stderr, result.stderr
    ran = statuses(result.stdout)
    assert ran["judge"] == "ran" and ran["eval derived"] == "ran" and ran["report"] == "ran"
    assert "eval gold" not in ran and "agree" not in ran
    again = run("run", config)
    assert set(statuses(again.stdout).values()) == {"skipped"} and "[label] calibration" not in again.stderr


@pytest.mark.slow
def test_a_dry_run_does_not_plan_from_the_gold_qrels_the_golden_set_had_before(tmp_path):
    """The gold steps hang on whether the golden set has gold chunks; a dry run that would remake it cannot know
    before the import runs, so it lists them and says so (it dropped them, reading the old empty gold.qrels).
    Without gold or the judge nothing can be scored: refused once that is known (the report failed on empty qrels)."""
    data = write_data(tmp_path)
    with_gold = (data / "golden.csv").read_text()
    (data / "golden.csv").write_text("query_id,query,reference_answer\n" + "".join(f'{q},"{text}","{answer}"\n'
                                                                               for q, text, answer, _ in GOLDEN))
    refused = run("run", write_config(data))  # once the import has shown it, after the steps before it
    assert refused.exit_code == 2 and refused.stderr.splitlines()[-1].startswith(
        "semrel: error: the golden set has no gold chunks and [judge] enabled = false: there are no qrels to score the runs on")
    config = write_config(data, judge=True)
    first = run("run", config)
    assert first.exit_code == 0 and "eval gold" not in statuses(first.stdout), first.output
    (data / "golden.csv").write_text(with_gold)
    dry = run("run", config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert statuses(dry.stdout)["eval gold"] == "run" and "is known only once it is: those steps are listed" in dry.stderr
    assert statuses(run("run", config).stdout)["eval gold"] == "ran"


@pytest.mark.parametrize("setting, message", [
    ('retrieve.methods=["bm26"]', "[retrieve] methods: 'bm26' is not a method"),
    ('retrieve.methods=["bm25","bm25"]', "[retrieve] methods: a method is listed twice"),
    ("pool.depth=-1", "[pool] depth: give 1 or more"),
    ("corpus.overlap=500", "[corpus] overlap: give 0 or more, below the chunk size"),
    ("out=", "out: empty; give a path"),
    ("bm25.k1=nan", "[bm25] k1: give a finite number, 0 or more"),  # every query got an empty run, then eval failed
    ("bm25.b=1.5", "[bm25] b: give a number from 0 to 1"),
    ("bm25.stemmer=klingon", "[bm25] stemmer: none or a PyStemmer algorithm"),
    ('eval.measures=["nDCG@x"]', "[eval] measures: unknown measure 'nDCG@x'"),
    ("sensitivity.measure=P@0", "[sensitivity] measure: "),
    ("golden.format=xyz", "--set golden.format=xyz: [golden] format: choose one of auto, squad, llamaindex, "),
    ("golden.doc_qrels=all", "--set golden.doc_qrels=all: [golden] doc_qrels: choose one of all-chunks, first-chunk, answer-chunk"),
    ("sensitivity.to=1.5", "[sensitivity] to: give a number in 0..1: the sweep is on the judge's probability p"),  # after the judge
    ("golden.sample=0", "--set golden.sample=0: [golden] sample: give 1 or more queries"),
    ("golden.limit=0", "--set golden.limit=0: [golden] limit: give 1 or more queries"),
    ("retrieve.methods=[]", "--set retrieve.methods=[]: [retrieve] methods: give at least one method"),
    ("retrieve.k=0", "--set retrieve.k=0: [retrieve] k: give 1 or more"),
    ("corpus.overlap=120", "[corpus] overlap: give 0 or more, below the chunk size (120)"),  # the default size: 120 words
    ("lift.rerank=colbert", "--set lift.rerank=colbert: [lift] rerank: choose one of "),
    ("label.on=Z", "--set label.on=Z: [label] on: choose one of "),
    ("label.calibration=nowhere.json", "--set label.calibration=nowhere.json: [label] calibration: no such file 'nowhere.json'"),
])
def test_values_the_steps_would_refuse_are_refused_before_any_step(tmp_path, setting, message):
    config = write_config(write_data(tmp_path))
    assert_one_error(run("run", config, "--set", setting), message, code=2)
    assert not (tmp_path / "out").exists()


def test_a_file_a_step_cannot_read_is_named_with_the_step(tmp_path):
    """A step's format error named the file alone ("golden.csv: no column 'nope'"), not which step read it."""
    config = write_config(write_data(tmp_path))
    result = run("run", config, "--set", "golden.query_col=nope")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (f"semrel: error: import: {tmp_path / 'golden.csv'}: no column 'nope' (columns: "
                                              "query_id, query, reference_answer, gold_chunk_ids)")


def test_a_golden_set_without_documents_needs_a_corpus_key(tmp_path):
    """A CSV golden set with no [corpus] passed the dry run, then failed in the import step on an option the user never
    gave: 'import: --corpus-out only applies to squad, pubmedqa, cranfield and trec with --docs; this source is csv'."""
    config = write_config(write_data(tmp_path))
    config.write_text(config.read_text().replace("[corpus]\ndocs = \"docs\"\n", ""))
    for args in ((), ("--dry-run",)):
        assert_one_error(run("run", config, *args), "semrel.toml: [corpus] docs: missing: a csv golden set holds no documents; "
                         "give [corpus] docs (a folder of documents to chunk) or [corpus] file (a corpus.jsonl)", code=2)
    assert not (tmp_path / "out").exists()


def test_the_config_named_from_another_folder_reruns_nothing(tmp_path, monkeypatch):
    """Steps are hashed with absolute paths: `semrel run data/x.toml`, then the same config by its full
    path or from its own folder, reran every step (the judge and dense retrieval too)."""
    (tmp_path / "project").mkdir()
    config = write_config(write_data(tmp_path / "project"))
    monkeypatch.chdir(tmp_path)
    assert run("run", "project/semrel.toml").exit_code == 0
    for folder, name in ((tmp_path, str(config)), (tmp_path / "project", "semrel.toml"),
                         (tmp_path / "project" / "docs", "../semrel.toml")):
        monkeypatch.chdir(folder)
        assert set(statuses(run("run", name, "--dry-run").stdout).values()) == {"skipped"}, (folder, name)


def test_a_step_hashes_the_same_whatever_its_values_look_like(tmp_path, monkeypatch):
    """Arguments were made absolute in the hash when they held a '/' or named something in the current folder: a
    Hugging Face model name (org/name) reran dense retrieval and the judge when the config was named from another
    folder, and with `out = "."` the cache folder ("cache") hashed otherwise once deleted (or a folder named "dense")."""
    config = write_config(write_data(tmp_path), judge=True, extra='model = "sentence-transformers/all-MiniLM-L6-v2"')
    config.write_text(config.read_text().replace('out = "out"', 'out = "."').replace(
        "k = 5", 'k = 5\nmodel = "sentence-transformers/all-MiniLM-L6-v2"').replace('["bm25"]', '["bm25", "dense"]'))

    def hashes() -> dict[str, str]:
        return {s.name: s.settings_hash() for s in run_config.plan(run_config.load_config(os.path.relpath(config)))}

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache").mkdir()
    before = hashes()
    assert {"retrieve dense", "judge"} <= set(before)
    (tmp_path / "cache").rmdir()
    (tmp_path / "dense").mkdir()
    assert hashes() == before
    monkeypatch.chdir(tmp_path / "docs")
    assert hashes() == before


def test_a_path_from_home_is_one_in_every_key(tmp_path, monkeypatch):
    """`~` was expanded in a model path only: `out = "~/semrel-out"` made a folder named '~' beside the config
    (which `rm -rf ~` then removes with the home folder), and `[golden] file = "~/..."` was 'no such folder or file'."""
    (tmp_path / "home").mkdir()
    data = write_data(tmp_path / "home")
    monkeypatch.setenv("HOME", str(data))
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('out = "out"', 'out = "~/semrel-out"').replace('"docs"', '"~/docs"')
                      .replace('"golden.csv"', '"~/golden.csv"'))
    loaded = run_config.load_config(str(config))
    assert (loaded[""]["out"], loaded["corpus"]["docs"], loaded["golden"]["file"]) == (
        str(data / "semrel-out"), str(data / "docs"), str(data / "golden.csv"))
    assert run("run", config).exit_code == 0
    assert (data / "semrel-out" / "report.html").is_file() and not (tmp_path / "~").exists()


def test_missing_files_name_the_key(tmp_path):
    config = write_config(tmp_path)  # no docs, no golden.csv
    assert_one_error(run("run", config), "[corpus] docs: no such folder or file 'docs'", code=2)
    assert_one_error(run("run", tmp_path / "absent.toml"), "no such config file", code=2)


def test_init_writes_a_config_that_runs(tmp_path, monkeypatch):
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert run("init", "--docs", "docs", "--golden", "golden.csv").exit_code == 0
    assert_one_error(run("init"), "semrel.toml: already exists", code=2)
    text = Path("semrel.toml").read_text()
    assert text.count("#") > 10
    # the starter compares bm25 with dense and judges; keep this test on bm25 without the judge
    text = text.replace('methods = ["bm25", "dense"]', 'methods = ["bm25"]').replace("enabled = true                 # BERTScore",
                                                                                  "enabled = false  # BERTScore")
    Path("semrel.toml").write_text(text)
    result = run("run", "semrel.toml")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "report.html").is_file()
    assert run("init", "--force", "-o", "sub.toml").exit_code == 0
    piped = run("init", "--docs", "docs", "--golden", "golden.csv", "-o", "-")  # its closing line went into the config
    Path("piped.toml").write_text(piped.stdout)
    assert piped.exit_code == 0 and "wrote the config to stdout" in piped.stderr and run("run", "piped.toml", "--dry-run").exit_code == 0


def test_init_alone_without_a_golden_csv_says_to_name_the_golden_set(tmp_path, monkeypatch):
    """`semrel init`, as README.md says it, in a folder without golden.csv (the default): the error said only 'golden.csv: no
    such file or folder (check the path)', a file the user never named."""
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("init"), "no --golden given, and no golden.csv here: name your golden set with --golden FILE", code=2)
    assert_one_error(run("init", "--golden", "golden.csv"), "golden.csv: no such file or folder (check the path)")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_step_is_one_line_and_reruns_next_time(tmp_path):
    config = write_config(write_data(tmp_path))
    (tmp_path / "golden.csv").write_text("query_id,query,reference_answer,gold_chunk_ids\nq1,Why?,Because.,no-such-chunk#9\n")
    result = run("run", config)
    assert result.exit_code in (1, 2)
    errors = [line for line in result.stderr.splitlines() if line.startswith("semrel: error: ")]
    assert len(errors) == 1 and "no-such-chunk#9" in errors[0] and result.stderr.strip().endswith(errors[0])
    assert "Traceback" not in result.output and "semrel run: import" in result.stderr
    state = json.loads((tmp_path / "out" / ".semrel-run.json").read_text())["steps"]
    assert "chunk" in state and "import" not in state


def run_k(run_file: Path) -> int:
    """The k a run was made with, from its manifest."""
    return json.loads(Path(f"{run_file}.manifest.json").read_text())["params"]["k"]


def test_set_beats_environment_beats_file_and_reruns_what_changed(tmp_path, monkeypatch):
    config = write_config(write_data(tmp_path))
    config.write_text(config.read_text().replace("k = 5", "k = 4"))
    runs = tmp_path / "out" / "runs" / "bm25.run"
    assert run("run", config).exit_code == 0 and run_k(runs) == 4  # the file
    monkeypatch.setenv("SEMREL_RETRIEVE_K", "3")
    dry = run("run", config, "--dry-run")
    commands = dry.stdout.replace(" \\\n    ", " ")  # continuation lines joined
    assert "semrel retrieve --corpus" in commands and " -k 3 -o " in commands
    assert statuses(dry.stdout) == {"chunk": "skipped", "import": "skipped", "qrels": "skipped", "retrieve bm25": "run",
                                    "eval gold": "run", "report": "run"}
    after = run("run", config)
    assert after.exit_code == 0 and run_k(runs) == 3  # the environment over the file
    assert statuses(after.stdout)["retrieve bm25"] == "ran" and statuses(after.stdout)["chunk"] == "skipped"
    assert run("run", config, "--set", "retrieve.k=2").exit_code == 0 and run_k(runs) == 2  # --set over both
    assert set(statuses(run("run", config, "--set", "retrieve.k=2").stdout).values()) == {"skipped"}
    # paths given in the environment or with --set are relative to the current folder, not the config's
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    moved = run("run", config, "--set", "out=elsewhere", "--dry-run")
    assert moved.exit_code == 0 and f"-o {tmp_path / 'here' / 'elsewhere' / 'corpus.jsonl'}" in moved.stdout
    state = json.loads((tmp_path / "out" / ".semrel-run.json").read_text())["steps"]
    assert state["retrieve bm25"]["seconds"] > 0 and state["retrieve bm25"]["finished"].endswith("Z")
    # steps ran in process without changing the commands a user runs next (click caches help options)
    assert "  -h, --help " in run("corpus", "chunk", "--help").stdout


@pytest.mark.parametrize("env, sets, message", [
    ({"SEMREL_LABEL_THRESHOLD": "high"}, (), "SEMREL_LABEL_THRESHOLD=high: [label] threshold: expected a number"),
    ({"SEMREL_JUDGE_ENABLED": "yes"}, (), "SEMREL_JUDGE_ENABLED=yes: [judge] enabled: expected true or false"),
    ({}, ("retrieve.k=many",), "--set retrieve.k=many: [retrieve] k: expected an integer"),
    ({}, ("retrieve.colour=red",), "--set retrieve.colour=red: [retrieve] colour: unknown key (known: methods, k, model, runs)"),
    ({}, ("colour.k=1",), "--set colour.k=1: [colour]: unknown section (known: corpus, golden,"),
    ({}, ("threshold",), "--set threshold: expected SECTION.KEY=VALUE"),
    ({}, ("=1",), "--set =1: expected SECTION.KEY=VALUE"),  # "--set =1:: unknown key"
    ({"SEMREL_RETRIEVE_K": "3"}, ("retrieve.k=many",), "--set retrieve.k=many: [retrieve] k: expected an integer"),
    ({}, ("corpus.docs=nowhere",), "--set corpus.docs=nowhere: [corpus] docs: no such folder or file 'nowhere'"),
    ({}, ("lift.base=dense",), "--set lift.base=dense: [lift] base: 'dense' is not one of [retrieve] methods (bm25)"),
])
def test_bad_override_is_one_line_naming_its_source(tmp_path, monkeypatch, env, sets, message):
    config = write_config(write_data(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert_one_error(run("run", config, *[a for s in sets for a in ("--set", s)]), message, code=2)


def test_only_the_winning_value_of_a_key_is_read_and_checked(tmp_path, monkeypatch):
    """A bad SEMREL_LABEL_THRESHOLD refused the --set label.threshold given to replace it ("expected a number"), as a
    bad --set did the later one of the same key: a value overridden is not used, so it is not checked either."""
    config = write_config(write_data(tmp_path))
    environ = {"SEMREL_LABEL_THRESHOLD": "abc", "SEMREL_RETRIEVE_K": "many"}
    loaded = run_config.load_config(str(config), ["label.threshold=0.5", "retrieve.k=lots", "retrieve.k=3"], environ)
    assert loaded["label"]["threshold"] == 0.5 and loaded["retrieve"]["k"] == 3
    monkeypatch.setenv("SEMREL_LABEL_THRESHOLD", "abc")
    dry = run("run", config, "--dry-run", "--set", "label.threshold=0.5")
    assert dry.exit_code == 0, dry.output


def test_a_variable_of_a_section_that_is_no_key_is_said_to_be_ignored(tmp_path, monkeypatch):
    """SEMREL_LABEL_FOO=1 was ignored without a word while --set label.foo=1 is refused. The variables of the options of
    the commands the steps run (also SEMREL_<SECTION>_..., read by the command of that name) are ignored too, since a step
    reads only the config: they were ignored in silence, and are now named in one line with the key to set instead, where
    one is; those of other commands (the judge is off here, review serve runs no step) and of the limits are not."""
    config = write_config(write_data(tmp_path))
    for name in ("SEMREL_LABEL_FOO", "SEMREL_BM25_K2", "SEMREL_EVAL_PLACES", "SEMREL_JUDGE_CACHE_DIR", "SEMREL_RETRIEVE_BM25_K1",
                 "SEMREL_GOLDEN_IMPORT_FORMAT", "SEMREL_CORPUS_CHUNK_SIZE", "SEMREL_REVIEW_SERVE_TOKEN", "SEMREL_MAX_LINE_MB",
                 "SEMREL_LABEL_GRADED", "SEMREL_DATA"):
        monkeypatch.setenv(name, "1" if name != "SEMREL_LABEL_GRADED" else "false")
    monkeypatch.setenv("SEMREL_LABEL_BAR", "")  # empty: unset
    dry = run("run", config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert [line for line in dry.stderr.splitlines() if line.startswith("semrel: warning: ")] == [
        "semrel: warning: SEMREL_BM25_K2: ignored by `semrel run`: [bm25] has no key k2 (keys: k1, b, method, stemmer, stopwords)",
        "semrel: warning: SEMREL_LABEL_FOO: ignored by `semrel run`: [label] has no key foo (keys: threshold, on, grades, graded, "
        "calibration), and no option of `semrel label` reads it",
        "semrel: warning: `semrel run` ignores these variables of its steps' commands (a step reads only the config): "
        "SEMREL_CORPUS_CHUNK_SIZE: set [corpus] size instead (SEMREL_CORPUS_SIZE, or --set corpus.size=VALUE); "
        "SEMREL_EVAL_PLACES: no config key sets it, it applies to `semrel eval` run alone; "
        "SEMREL_GOLDEN_IMPORT_FORMAT: set [golden] format instead (SEMREL_GOLDEN_FORMAT, or --set golden.format=VALUE); "
        "SEMREL_RETRIEVE_BM25_K1: set [bm25] k1 instead (SEMREL_BM25_K1, or --set bm25.k1=VALUE)"]


def test_override_values_are_toml_or_plain_text(tmp_path, monkeypatch):
    config = write_config(write_data(tmp_path))
    monkeypatch.setenv("SEMREL_RETRIEVE_METHODS", "bm25, hybrid")  # comma-separated list
    monkeypatch.setenv("SEMREL_REPORT_TITLE", "2026")  # a string key keeps the text as typed
    monkeypatch.setenv("SEMREL_EVAL_MEASURES", '["nDCG@5"]')  # a TOML list
    dry = run("run", config, "--dry-run", "--set", "label.grades=0.6,0.7")
    assert dry.exit_code == 0, dry.output
    commands = dry.stdout.replace(" \\\n    ", " ")
    assert "--title 2026" in commands and "-m nDCG@5" in commands
    # '.5' is no TOML number but what `semrel label --threshold .5` takes: it was "expected a number"
    for given in ({"SEMREL_LABEL_THRESHOLD": ".5"}, {"SEMREL_LABEL_THRESHOLD": "5."}):
        assert run_config.load_config(str(config), (), given)["label"]["threshold"] == float(given["SEMREL_LABEL_THRESHOLD"])
    assert run_config.load_config(str(config), ["label.threshold=.5"], {})["label"]["threshold"] == 0.5


def test_every_command_reads_its_options_from_the_environment(tmp_path, monkeypatch):
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEMREL_CORPUS_CHUNK_SIZE", "7")
    monkeypatch.setenv("SEMREL_VERSION", "1")  # not an option: must not print the version instead
    assert run("corpus", "chunk", "docs", "-o", "c.jsonl").exit_code == 0
    chunks = read_lines("c.jsonl")
    assert max(len(c["text"].split()) for c in chunks) == 7
    assert json.loads(Path("c.jsonl.manifest.json").read_text())["params"]["size"] == 7
    assert run("corpus", "chunk", "docs", "-o", "c.jsonl", "--size", "9").exit_code == 0  # the command line wins
    assert max(len(c["text"].split()) for c in read_lines("c.jsonl")) == 9
    monkeypatch.setenv("SEMREL_CORPUS_CHUNK_SIZE", "big")
    bad = run("corpus", "chunk", "docs", "-o", "c.jsonl")
    assert bad.exit_code == 2 and "Invalid value for '--size'" in bad.stderr
    assert "'big' is not a valid integer range. (from the environment variable SEMREL_CORPUS_CHUNK_SIZE)" in bad.stderr
    assert "[env var: SEMREL_JUDGE_MODEL]" in run("judge", "--help").stdout
    assert "SEMREL_JUDGE_CACHE_DIR" in run("judge", "--help").stdout.replace("\n", " ").replace(" ", "")


@pytest.mark.slow
def test_lift_step_reranks_the_base_run_and_reports_it(tmp_path):
    config = write_config(write_data(tmp_path), extra="[lift]\nbase = \"bm25\"\ndepth = 3\n[eval]\nmeasures = [\"nDCG@10\", \"R@5\"]")
    result = run("run", config)
    assert result.exit_code == 0, result.output
    assert list(statuses(result.stdout)) == ["chunk", "import", "qrels", "retrieve bm25", "retrieve bm25+dense",
                                             "eval gold", "compare", "lift", "report"]
    out = tmp_path / "out"
    reranked = json.loads((out / "runs" / "bm25+dense.run.manifest.json").read_text())["params"]
    assert reranked["rerank"] == "dense" and reranked["rerank_depth"] == 3
    lift = (out / "lift.txt").read_text().splitlines()
    gold = {line.split()[0]: line.split()[1:] for line in (out / "eval.gold.txt").read_text().splitlines()[2:]}
    assert lift[2].split()[:3] == ["nDCG@10", *gold["nDCG@10"]]  # base and reranked as eval scores them
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "bm25+dense" in html and "3 queries" in (out / "lift.txt").read_text()
    # every table shows the config's measures (compare and the report once kept their defaults, R@100 among them)
    assert (out / "compare.txt").read_text().splitlines()[0].split()[2:] == ["nDCG@10", "R@5"]
    assert [line.split()[0] for line in lift[2:4]] == ["nDCG@10", "R@5"]
    assert ">R@5<" in html and "R@100" not in html
    assert f"report: {os.path.abspath(out / 'report.html')}" in result.stdout.splitlines()[-1]


@pytest.mark.slow
def test_engine_is_passed_on_but_does_not_rerun_steps(tmp_path):
    """Where the model runs changes no output, so switching engines skips what is up to date."""
    config = write_config(write_data(tmp_path), extra="[lift]\nbase = \"bm25\"\ndepth = 3")
    assert run("run", config).exit_code == 0
    config.write_text(config.read_text() + "[engine]\nname = \"ray\"\naddress = \"auto\"\nworkers = 3\n")
    assert set(statuses(run("run", config, "--dry-run").stdout).values()) == {"skipped"}
    forced = run("run", config, "--dry-run", "--force", "retrieve")
    assert forced.exit_code == 0, forced.output
    commands = forced.stdout.replace(" \\\n    ", " ").splitlines()
    reranking = next(c for c in commands if "--rerank dense" in c)
    assert reranking.endswith("/out/runs/bm25+dense.run --engine ray --ray-address auto --ray-workers 3")
    assert not any("--engine" in c for c in commands if "--method bm25" in c)  # bm25 runs no model


def test_the_models_own_layer_said_aloud_reruns_nothing(tmp_path):
    """`[judge] layer = 6` is MiniLM's own layer: the judge command was the same but for `--layer 6`, so every
    judgment was made anew; another layer still is."""
    config = write_config(write_data(tmp_path), judge=True)
    judge = {layer: next(s for s in run_config.plan(run_config.load_config(str(config), [f"judge.layer={layer}"] if layer else []))
                     if s.name == "judge")
             for layer in (None, 6, 5)}
    assert judge[6].settings_hash() == judge[None].settings_hash() != judge[5].settings_hash()
    assert "--layer" not in judge[6].args and judge[5].args[-2:] == ["--layer", "5"]


def idle_warnings(result) -> list[str]:
    """The warnings of keys that do nothing, of a run that went through."""
    assert result.exit_code == 0, result.output
    return [line for line in result.stderr.splitlines() if "does nothing" in line]


def test_keys_of_a_step_switched_off_are_named_in_a_warning(tmp_path):
    """`[label] threshold` beside `[judge] enabled = false` did nothing without a word; keys left at their defaults
    are not named, and the steps run as before."""
    config = write_config(write_data(tmp_path), extra="idf = true\n[pool]\ndepth = 3\n[label]\nthreshold = 0.5\non = \"R\"\n"
                          "[sensitivity]\nenabled = false\nmeasure = \"nDCG@10\"\nstep = 0.1\n")
    assert idle_warnings(run("run", config, "--dry-run")) == [
        "semrel: warning: [pool] depth does nothing while [judge] enabled = false",
        "semrel: warning: [judge] idf does nothing while [judge] enabled = false",
        "semrel: warning: [label] threshold does nothing while [judge] enabled = false",
        "semrel: warning: [label] on does nothing while [judge] enabled = false",
        "semrel: warning: [sensitivity] step does nothing while [sensitivity] enabled = false"]
    judged = write_config(tmp_path, judge=True, extra="[label]\nthreshold = 0.5\non = \"R\"\n[sensitivity]\nstep = 0.1\n")
    assert "does nothing" not in run("run", judged, "--dry-run").stderr
    unjudged = write_config(tmp_path, extra="[sensitivity]\nstep = 0.1\n")
    assert "semrel: warning: [sensitivity] step does nothing while [judge] enabled = false" in run("run", unjudged, "--dry-run").stderr


def test_keys_no_planned_step_reads_are_named_in_a_warning(tmp_path):
    """`[bm25] k1` beside methods = ["dense"], `[lift] depth` without a base, `[engine] workers` with the local engine and
    `[golden] seed` without a sample did nothing without a word; where a step reads them, nothing is said."""
    config = write_config(write_data(tmp_path), extra="[bm25]\nk1 = 1.2\n[lift]\ndepth = 3\n[engine]\nworkers = 2\n")
    config.write_text(config.read_text().replace('methods = ["bm25"]', 'methods = ["dense"]\nmodel = "all-MiniLM-L6-v2"')
                      .replace('file = "golden.csv"', 'file = "golden.csv"\nseed = 7'))
    assert idle_warnings(run("run", config, "--dry-run")) == [
        "semrel: warning: [bm25] k1 does nothing while no [retrieve] method is bm25 or hybrid",
        "semrel: warning: [lift] depth does nothing while [lift] base is not set",
        "semrel: warning: [engine] workers does nothing while [engine] name = \"local\"",
        "semrel: warning: [golden] seed does nothing while [golden] sample is not set"]
    read = run("run", config, "--dry-run", "--set", "retrieve.methods=bm25,dense", "--set", "lift.base=bm25", "--set", "engine.name=ray",
               "--set", "golden.sample=2")
    assert read.exit_code == 0 and "does nothing" not in read.stderr, read.output
    bm25 = run("run", config, "--dry-run", "--set", "retrieve.methods=bm25")
    assert "semrel: warning: [retrieve] model does nothing while no [retrieve] method is dense or hybrid, and [lift] base is not set" \
        in bm25.stderr.splitlines()


def run_from_the_golden_file(tmp_path: Path, golden: str) -> tuple[Path, list[dict]]:
    """`semrel run` on a config of `golden` (the [golden] section's lines, and any sections after) with no [corpus]
    docs and the judge off: the import writes the corpus, and the steps are those that need no model. (config, corpus)."""
    config = tmp_path / "semrel.toml"
    config.write_text(f"[judge]\nenabled = false\n[golden]\n{golden}")
    result = run("run", config)
    assert result.exit_code == 0, result.output
    assert list(statuses(result.stdout)) == ["import", "qrels", "retrieve bm25", "eval gold", "report"]
    return config, read_lines(tmp_path / "out" / "corpus.jsonl")


def test_a_squad_file_holds_the_corpus(tmp_path):
    paragraphs = []
    for i, text in enumerate(TEXTS.values()):
        answer = " ".join(text.split()[2:5])
        paragraphs.append({"context": text, "qas": [{"id": f"q{i}", "question": f"What about {text.split()[1]}?",
                                                     "answers": [{"text": answer, "answer_start": text.index(answer)}]}]})
    squad = {"data": [{"title": f"doc{i}", "paragraphs": [p]} for i, p in enumerate(paragraphs)]}
    (tmp_path / "squad.json").write_text(json.dumps(squad))
    config, corpus = run_from_the_golden_file(tmp_path, 'file = "squad.json"\nformat = "squad"\n[corpus]\nsize = 4\n')
    assert len(corpus) > len(paragraphs)  # 4-word chunks: several per context
    assert max(len(c["text"].split()) for c in corpus) == 4
    gold = (tmp_path / "out" / "gold.qrels").read_text().split("\n")
    assert {line.split()[0] for line in gold if line} == {f"q{i}" for i in range(len(paragraphs))}
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"}


@pytest.mark.parametrize("name", ["rag_dataset.json", "testset.csv", "testset.jsonl"])
def test_a_testset_without_documents_runs_on_its_contexts(tmp_path, name):
    """A LlamaIndex rag_dataset.json (or a ragas or Giskard testset) with no [corpus] was refused by the config check
    ('holds no documents'); its contexts are now the corpus, a chunk each."""
    contexts = list(TEXTS.values())
    examples = [(f"What about {text.split()[1]}?", text, " ".join(text.split()[:6])) for text in contexts]
    if name == "rag_dataset.json":
        (tmp_path / name).write_text(json.dumps({"examples": [
            {"query": query, "reference_contexts": [text], "reference_answer": answer} for query, text, answer in examples]}))
    elif name == "testset.jsonl":  # as Giskard's QATestset.save writes it
        (tmp_path / name).write_text("".join(json.dumps({
            "id": f"q{n + 1}", "question": query, "reference_answer": answer, "reference_context": f"Document {n}: {text}",
            "conversation_history": [], "metadata": {"question_type": "simple", "seed_document_id": n}}) + "\n"
            for n, (query, text, answer) in enumerate(examples)))
    else:  # as pandas writes ragas's to_pandas(): the list of contexts a Python literal
        with open(tmp_path / name, "w", newline="") as f:
            csv.writer(f).writerows([["user_input", "reference_contexts", "reference"],
                                     *[[query, repr([text]), answer] for query, text, answer in examples]])
    _, corpus = run_from_the_golden_file(tmp_path, f'file = "{name}"\n')
    assert [c["text"] for c in corpus] == contexts
    gold = [line.split() for line in (tmp_path / "out" / "gold.qrels").read_text().splitlines()]
    assert [(q, c) for q, _, c, _ in gold] == [(f"q{i + 1}", chunk["_id"]) for i, chunk in enumerate(corpus)]


def test_llamaindex_question_context_pairs_run_on_their_nodes(tmp_path):
    """The file generate_question_context_pairs writes holds its corpus and no answers: init gives no docs and the
    judge off, and the run scores bm25 against the relevant nodes."""
    nodes = {f"node-{i}": text for i, text in enumerate(TEXTS.values())}
    pairs = {"queries": {f"q{i}": f"What about {text.split()[1]}?" for i, text in enumerate(nodes.values())}, "corpus": nodes,
             "relevant_docs": {f"q{i}": [node] for i, node in enumerate(nodes)}, "mode": "text"}
    (tmp_path / "qa_pairs.json").write_text(json.dumps(pairs))
    text, said, _ = init_and_plan(tmp_path, "--golden", tmp_path / "qa_pairs.json")
    assert 'format = "llamaindex-pairs"' in text and 'docs = "' not in text and "enabled = false" in text
    assert "LlamaIndex question-context pairs, 6 queries, 0 with a reference answer" in said
    _, corpus = run_from_the_golden_file(tmp_path, 'file = "qa_pairs.json"\n')
    assert [(c["_id"], c["text"]) for c in corpus] == list(nodes.items())


def squad_file(path: Path, words_per_context: int) -> Path:
    paragraphs = []
    for i, text in enumerate(TEXTS.values()):
        context = " ".join([text] * (words_per_context // len(text.split()) + 1))
        answer = " ".join(text.split()[2:5])
        paragraphs.append({"context": context, "qas": [{"id": f"q{i}", "question": f"What about {text.split()[1]}?",
                                                        "answers": [{"text": answer, "answer_start": context.index(answer)}]}]})
    path.write_text(json.dumps({"data": [{"title": f"doc{i}", "paragraphs": [p]} for i, p in enumerate(paragraphs)]}))
    return path


def test_an_output_another_config_wrote_into_a_shared_out_is_made_again(tmp_path):
    """Two configs over one `out`: a SQuAD import wrote its corpus.jsonl over the one the other config's chunk step
    made, and that chunk step, its settings and documents unchanged, was skipped: the import then read the other
    corpus ('3 gold chunk ids are not in the corpus'; with no gold ids, every run was on the wrong documents)."""
    data = write_data(tmp_path)
    squad_file(data / "squad.json", 10)
    chunked = write_config(data)
    imported = tmp_path / "squad.toml"
    imported.write_text('out = "out"\n[golden]\nfile = "squad.json"\n[judge]\nenabled = false\n')
    for config in (chunked, imported):
        with typed("semrel", "run", str(config)):
            assert run("run", config).exit_code == 0
    assert "doc0#0" in (tmp_path / "out" / "corpus.jsonl").read_text()
    with typed("semrel", "run", str(chunked)):
        again = run("run", chunked)
    assert again.exit_code == 0, again.output
    assert statuses(again.stdout)["chunk"] == "ran" and statuses(again.stdout)["import"] == "ran", again.stdout
    assert {c["_id"] for c in read_lines(tmp_path / "out" / "corpus.jsonl")} == set(TEXTS)
    assert set(statuses(run("run", chunked).stdout).values()) == {"skipped"}


def init_and_plan(tmp_path: Path, *args) -> tuple[str, str, str]:
    """`semrel init ARGS` then `semrel run --dry-run`: (config text, init's stderr, the planned commands)."""
    config = tmp_path / "semrel.toml"
    made = run("init", *args, "-o", config, "--force")
    assert made.exit_code == 0, made.output
    planned = run("run", config, "--dry-run")
    assert planned.exit_code == 0, planned.output
    return config.read_text(), made.stderr, planned.stdout


def test_init_fits_the_config_to_a_squad_file(tmp_path):
    text, said, planned = init_and_plan(tmp_path, "--golden", squad_file(tmp_path / "xquad.json", 30))
    assert 'docs = "' not in text and "# size = 150" in text and 'format = "squad"' in text
    assert "semrel golden import" in planned and "--corpus-out" in planned and "--size" not in planned
    assert "corpus chunk" not in planned and "a SQuAD-style set, 6 queries, 6 with a reference answer" in said
    text, said, planned = init_and_plan(tmp_path, "--golden", squad_file(tmp_path / "long.json", 400), "--sample", "3")
    assert "\nsize = 150" in text and "--size 150 --overlap 0" in planned and "--sample 3 --sample-seed 0" in planned
    assert "contexts are long (median" in said


@needs_shared("msmarco_qna_v11")
def test_init_fits_the_config_to_an_ms_marco_file(tmp_path):
    source = SHARED_DATA / "msmarco_qna_v11" / "ifn647_sample.json"
    text, said, planned = init_and_plan(tmp_path, "--golden", source)
    assert 'format = "msmarco"' in text and "each MS MARCO passage is one chunk" in text and 'docs = "' not in text
    assert "MS MARCO QnA, 50 queries, 48 with a reference answer" in said
    assert "semrel golden import" in planned and "--corpus-out" in planned and "corpus chunk" not in planned
    # tmp_path and the shared data share no folder but the root: "../../../work/shared/..." broke when the config moved
    assert f"file = {json.dumps(os.path.abspath(source))}" in text


def test_init_fits_llamaindex_beir_and_csv(tmp_path):
    (tmp_path / "rag" / "source_files").mkdir(parents=True)
    (tmp_path / "rag" / "source_files" / "notes.txt").write_text(" ".join(TEXTS.values()))
    # chunks as long as 9 in 10 contexts, rounded up: at the median (it said 70 for 73-word contexts) half were split
    lengths = [84] + [40] * 8 + [300]
    dataset = {"examples": [{"query": "Why?", "reference_contexts": [" ".join(["word"] * n)], "reference_answer": "So."} for n in lengths]}
    (tmp_path / "rag" / "rag_dataset.json").write_text(json.dumps(dataset))
    text, _, planned = init_and_plan(tmp_path, "--golden", tmp_path / "rag" / "rag_dataset.json")
    assert 'docs = "rag/source_files"' in text and "\nsize = 90" in text and "9 in 10 have 84 words or fewer; median 40" in text
    planned = planned.replace(" \\\n    ", " ")
    assert re.search(r"semrel corpus chunk \S*rag/source_files --size 90 --overlap 0", planned)
    # without documents beside it (it said "docs: no such folder yet"), the import writes the contexts as the corpus
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "rag_dataset.json").write_text(json.dumps(dataset))
    text, said, planned = init_and_plan(tmp_path, "--golden", tmp_path / "bare" / "rag_dataset.json")
    assert 'docs = "' not in text and "writes its reference contexts as" in text and "the corpus is its reference contexts" in said
    assert "--corpus-out" in planned and "corpus chunk" not in planned
    # a ragas testset the same: documents beside it are chunked near its contexts' length, else its contexts are the corpus
    for folder, docs in (("rag", True), ("bare", False)):
        with open(tmp_path / folder / "testset.csv", "w", newline="") as f:
            csv.writer(f).writerows([["user_input", "reference_contexts", "reference"],
                                     *[["Why?", repr(e["reference_contexts"]), "So."] for e in dataset["examples"]]])
        text, said, planned = init_and_plan(tmp_path, "--golden", tmp_path / folder / "testset.csv")
        assert 'format = "ragas"' in text and "a ragas testset, 10 queries" in said
        assert ('docs = "rag/source_files"' in text and "\nsize = 90" in text) if docs else \
            ("--corpus-out" in planned and 'docs = "' not in text)
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("".join(json.dumps({"_id": k.split("#")[0], "text": t}) + "\n" for k, t in TEXTS.items()))
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "why do cats purr"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tcats\t1\n")
    text, said, planned = init_and_plan(tmp_path, "--golden", beir)
    assert 'file = "beir/corpus.jsonl"' in text and "enabled = false" in text and "no reference answers" in said
    assert "semrel judge" not in planned and "beir/corpus.jsonl" in planned
    config = tmp_path / "semrel.toml"
    result = run("run", config, "--set", "retrieve.methods=bm25")
    assert result.exit_code == 0, result.output  # the BEIR document ids are the corpus's chunk ids
    # as the hub serves it, the corpus in Parquet shards: chunked whole, a chunk a document, named as the qrels name them
    (beir / "corpus").mkdir()
    pq.write_table(pa.Table.from_pylist([json.loads(line) for line in (beir / "corpus.jsonl").read_text().splitlines()]),
                   beir / "corpus" / "beir-corpus-00000-of-00001.parquet")
    (beir / "corpus.jsonl").unlink()
    text, said, planned = init_and_plan(tmp_path, "--golden", beir)
    assert 'docs = "beir"' in text and "whole = true" in text and "file = " not in text.split("[golden]")[0]
    assert re.search(r"semrel corpus chunk \S*beir --whole -o", planned.replace(" \\\n    ", " "))
    result = run("run", config, "--set", "retrieve.methods=bm25")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "gold.qrels").read_text() == "1 0 cats 1\n"
    write_data(tmp_path)
    text, said, planned = init_and_plan(tmp_path, "--golden", tmp_path / "golden.csv", "--docs", tmp_path / "docs")
    assert re.search(r"semrel corpus chunk \S*docs --size 120 --overlap 20", planned.replace(" \\\n    ", " "))
    assert said.count("semrel: ") == 1
    made = run("init", "--golden", tmp_path / "golden.csv", "--docs", tmp_path / "nowhere", "-o", tmp_path / "n.toml")
    assert made.exit_code == 0 and "nowhere: no such folder yet: put the documents there" in made.stderr


def test_init_says_which_options_it_could_not_use(tmp_path):
    """--docs beside a file that holds its documents, and a sample of more queries than there are, were dropped unsaid."""
    (tmp_path / "docs").mkdir()
    text, said, _ = init_and_plan(tmp_path, "--golden", squad_file(tmp_path / "xquad.json", 30), "--docs", tmp_path / "docs",
                                  "--sample", "50")
    assert 'docs = "' not in text
    assert f"--docs {tmp_path / 'docs'}: not used: a SQuAD-style set holds its documents" in said
    assert "--sample 50: the file has 6 queries; all of them are used" in said


def test_init_keeps_the_outputs_out_of_a_folder_that_holds_the_golden_set(tmp_path):
    """A golden.jsonl in out/ got `out = "out"`, a config whose import step `run` refused to write over it."""
    (tmp_path / "out").mkdir()
    write_data(tmp_path / "out")
    (tmp_path / "out" / "golden.jsonl").write_text("".join(json.dumps(
        {"query_id": q, "query": t, "reference_answer": a, "gold_chunk_ids": [c]}) + "\n" for q, t, a, c in GOLDEN))
    text, said, planned = init_and_plan(tmp_path, "--golden", tmp_path / "out" / "golden.jsonl", "--docs", tmp_path / "out" / "docs")
    assert '\nout = "out-2"' in text and 'out = "out-2": out/ holds files of yours' in said
    assert "out-2/golden.jsonl" in planned
    # the documents folder named out: `out = "out"` too, which run refused ('would write out/corpus.jsonl into [corpus] docs')
    (tmp_path / "out" / "docs").rename(tmp_path / "docs-out")
    (tmp_path / "out").rename(tmp_path / "elsewhere")
    (tmp_path / "docs-out").rename(tmp_path / "out")
    text, said, planned = init_and_plan(tmp_path, "--golden", tmp_path / "elsewhere" / "golden.csv", "--docs", tmp_path / "out")
    assert '\nout = "out-2"' in text and 'out = "out-2": out/ holds files of yours' in said
    assert "out-2/corpus.jsonl" in planned


def test_init_quotes_paths_that_hold_quotes_backslashes_or_newlines(tmp_path):
    """The paths init writes are TOML strings: a quote, backslash or newline in a name must not break the config."""
    folder = tmp_path / 'we"ird\\dir\nx'
    folder.mkdir()
    write_data(folder)
    text, _, planned = init_and_plan(tmp_path, "--golden", folder / "golden.csv", "--docs", folder / "docs")
    assert 'file = "we\\"ird\\\\dir\\nx/golden.csv"' in text
    assert "semrel corpus chunk" in planned


def test_init_refuses_trec_topics_without_their_qrels_and_notes_a_sample_of_all_the_queries(tmp_path):
    (tmp_path / "topics.txt").write_text("<top>\n<num> Number: 301\n<title> organized crime\n</top>\n")
    made = run("init", "--golden", tmp_path / "topics.txt", "--format", "trec", "-o", tmp_path / "semrel.toml")
    assert_one_error(made, f"{tmp_path / 'topics.txt'}: TREC topics need their qrels: give --qrels QRELS", code=2)
    assert not (tmp_path / "semrel.toml").exists()
    (tmp_path / "topics.qrels").write_text("301 0 d1 1\n")
    made = run("init", "--golden", tmp_path / "topics.txt", "--format", "trec", "--qrels", tmp_path / "topics.qrels",
               "-o", tmp_path / "semrel.toml")
    assert made.exit_code == 0, made.output
    text = (tmp_path / "semrel.toml").read_text()
    assert 'qrels = "topics.qrels"' in text and '\n# answer_col = "desc"' in text and "whole = true" in text
    # a sample of exactly as many queries as the file holds is all of them, said as a larger one is
    _, said, _ = init_and_plan(tmp_path, "--golden", squad_file(tmp_path / "xquad.json", 30), "--sample", "6")
    assert "--sample 6: the file has 6 queries; all of them are used" in said


def test_init_chunks_contexts_over_200_words_and_caps_a_testsets_chunk_size_at_200(tmp_path):
    """SQuAD contexts of a median over 200 words (MiniLM reads 256 tokens) are cut into 150-word chunks; a testset's
    documents are chunked near its contexts' length, but never in chunks over 200 words."""
    text, _, planned = init_and_plan(tmp_path, "--golden", squad_file(tmp_path / "mid.json", 250))
    assert "\nsize = 150" in text and "--size 150 --overlap 0" in planned
    (tmp_path / "rag" / "source_files").mkdir(parents=True)
    (tmp_path / "rag" / "source_files" / "notes.txt").write_text(" ".join(TEXTS.values()))
    dataset = {"examples": [{"query": "Why?", "reference_contexts": [" ".join(["word"] * 600)], "reference_answer": "So."}] * 10}
    (tmp_path / "rag" / "rag_dataset.json").write_text(json.dumps(dataset))
    text, _, planned = init_and_plan(tmp_path, "--golden", tmp_path / "rag" / "rag_dataset.json")
    assert "\nsize = 200" in text and "9 in 10 have 600 words or fewer" in text
    assert "--size 200 --overlap 0" in planned.replace(" \\\n    ", " ")


def test_init_says_docs_are_not_used_with_a_beir_folder_and_writes_del_in_a_name_as_toml_takes_it(tmp_path):
    beir = tmp_path / "be\x7fir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("".join(json.dumps({"_id": k.split("#")[0], "text": t}) + "\n" for k, t in TEXTS.items()))
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "why do cats purr"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tcats\t1\n")
    (tmp_path / "docs").mkdir()
    text, said, planned = init_and_plan(tmp_path, "--golden", beir, "--docs", tmp_path / "docs")
    assert f"--docs {tmp_path / 'docs'}: not used: a BEIR folder holds its documents" in said
    assert 'file = "be\\u007fir"' in text and 'file = "be\\u007fir/corpus.jsonl"' in text


def test_run_config_samples_queries_tunes_bm25_and_reports_both_qrels(tmp_path):
    write_data(tmp_path)
    config = write_config(tmp_path, extra='[bm25]\nk1 = 1.2\nstemmer = "porter"\n')
    config.write_text(config.read_text().replace('file = "golden.csv"', 'file = "golden.csv"\nsample = 2\nseed = 1'))
    result = run("run", config)
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    assert len(read_lines(out / "golden.jsonl")) == 2
    manifest = json.loads((out / "runs" / "bm25.run.manifest.json").read_text())
    assert manifest["params"]["bm25"]["k1"] == 1.2 and manifest["params"]["bm25"]["stemmer"] == "porter"
    planned = run("run", config, "--dry-run", "--force", "report").stdout
    assert "--gold-qrels" not in planned  # no judge, no derived labels: the gold qrels are the report's qrels
    config.write_text(config.read_text().replace("enabled = false", "enabled = true"))
    planned = run("run", config, "--dry-run").stdout
    assert re.search(r"--gold-qrels \S*out/gold.qrels", planned.replace(" \\\n    ", " "))
def test_the_steps_that_use_the_default_cut_are_replanned_when_it_moves(tmp_path, monkeypatch):
    """label and sensitivity take the cut from semrel, not from the config: their settings hash follows it."""
    config = run_config.load_config(str(write_config(write_data(tmp_path), judge=True)), ["retrieve.methods=bm25,dense"])

    def hashes() -> dict[str, str]:
        return {step.name: step.settings_hash() for step in run_config.plan(config)}

    before = hashes()
    monkeypatch.setattr(labels, "CUT", 0.5)
    after = hashes()
    assert {name for name in before if before[name] != after[name]} == {"label", "sensitivity"}


def test_every_table_of_metrics_takes_the_eval_measures(tmp_path):
    """compare and the report kept their default set (R@100 of runs 20 deep) and agree its own, beside eval's R@20."""
    config = run_config.load_config(str(write_config(write_data(tmp_path), judge=True, extra='[eval]\nmeasures = ["nDCG@10", "R@5"]')),
                                  ["retrieve.methods=bm25,dense", "lift.base=bm25"])
    measures = {step.name: [value for flag, value in zip(step.args, step.args[1:]) if flag == "-m"] for step in run_config.plan(config)}
    tables = ("eval derived", "eval gold", "agree", "compare", "lift", "report")
    assert {name: measures[name] for name in tables} == {name: ["nDCG@10", "R@5"] for name in tables}


def test_the_dense_steps_are_replanned_when_the_vectors_recipe_changes(tmp_path, monkeypatch):
    """Dense vectors changed (cut at 256 tokens, not 512) with no change to the command lines: the old
    dense, hybrid and reranked runs were skipped as up to date."""
    from semrel.encoding import sentences

    config = run_config.load_config(str(write_config(write_data(tmp_path))), ["retrieve.methods=bm25,dense,hybrid", "lift.base=bm25"])

    def hashes() -> dict[str, str]:
        return {step.name: step.settings_hash() for step in run_config.plan(config)}

    before = hashes()
    monkeypatch.setattr(sentences, "RECIPE", "another")
    after = hashes()
    assert {name for name in before if before[name] != after[name]} == {"retrieve dense", "retrieve hybrid", "retrieve bm25+dense"}


def test_agree_ranks_the_runs_only_where_there_are_two(tmp_path):
    """One method and no lift: the agree step compares the labels only (`semrel agree` refuses a single run, which
    has no ranking to agree on) instead of failing the pipeline."""
    config = write_config(write_data(tmp_path), judge=True)
    for methods, ranked in (("bm25", []), ("bm25,dense", ["bm25.run", "dense.run"])):
        dry = run("run", config, "--dry-run", "--set", f"retrieve.methods={methods}")
        assert dry.exit_code == 0, dry.output
        agree = re.search(r"semrel agree [^>]*", dry.stdout.replace(" \\\n    ", " "))
        assert agree and [os.path.basename(a) for a in agree.group(0).split() if a.endswith(".run")] == ranked
        assert statuses(dry.stdout)["agree"] == "run"
    assert not (tmp_path / "out").exists()


def test_label_calibration_and_graded_reach_label_and_sensitivity(tmp_path):
    """[label] calibration = the file `semrel calibrate -o` wrote: label applies it, sensitivity marks its cut on p."""
    config = write_config(write_data(tmp_path), judge=True)
    (tmp_path / "cal.json").write_text(json.dumps({"rule": "probability", "on": "p", "thresholds": [0.47], "cut": 0.4,
                                                   "labels": "binary", "calibration": {"slope": 1.0, "shift": -0.3}}))
    dry = run("run", config, "--dry-run", "--set", f"label.calibration={tmp_path / 'cal.json'}", "--set", "label.graded=true",
              "--set", "retrieve.methods=bm25,dense")
    assert dry.exit_code == 0, dry.output
    commands = dry.stdout.replace(" \\\n    ", " ")
    assert f"--calibration {tmp_path / 'cal.json'} --graded" in commands
    assert re.search(r"semrel sensitivity .* --on p --at 0\.4\d+", commands)
    missing = run("run", config, "--dry-run", "--set", "label.calibration=nope.json")
    assert missing.exit_code == 2 and "no such file 'nope.json'" in missing.stderr
    (tmp_path / "refit.json").write_text(json.dumps({"rule": "probability", "on": "p", "thresholds": None, "cut": 0.4, "labels": "binary",
                                                     "calibration": {"slope": 1.0, "shift": 0.0, "fit": "features",
                                                                     "refit": [0.5, -1.0, 0, 0, 0, 0, 0, 0, 0]},
                                                     "model": labels.model_params()}))
    refit = run("run", config, "--dry-run", "--set", f"label.calibration={tmp_path / 'refit.json'}", "--set", "retrieve.methods=bm25,dense")
    assert refit.exit_code == 0, refit.output  # labels from the features: the sensitivity curve sweeps that p
    sensitivity = re.search(r"semrel sensitivity [^\n]*", refit.stdout.replace(" \\\n    ", " "))
    assert sensitivity and f"--calibration {tmp_path / 'refit.json'}" in sensitivity.group(0) and "--at" not in sensitivity.group(0)


def test_a_second_run_over_one_folder_waits_for_the_first(tmp_path):
    """Two runs over one out folder each wrote the state file from what they had read at their start,
    so it could name outputs the other had replaced since. The second now waits for the first, then
    reads the state the first left."""
    config = write_config(write_data(tmp_path))
    (tmp_path / "out").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; lock = open(sys.argv[1], 'a'); "
                               "fcntl.flock(lock, fcntl.LOCK_EX); print('held', flush=True); time.sleep(2)",
                               str(tmp_path / "out" / pipeline.LOCK_FILE)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    result = run("run", config)
    assert holder.poll() is not None  # it ran only once the other process had ended
    holder.stdout.close()
    assert result.exit_code == 0, result.output
    assert f"semrel run: waiting for the other `semrel run` writing {tmp_path / 'out'}" in result.stderr
    assert set(statuses(result.stdout).values()) == {"ran"}


def test_a_printed_table_and_its_manifest_are_replaced_together(tmp_path, monkeypatch):
    """What a step prints (eval's table) was renamed into place before its manifest was written: a Ctrl-C
    between the two left the new table beside the manifest of the old one. Now both or neither."""
    from semrel.formats import manifest

    config = write_config(write_data(tmp_path), extra='[eval]\nmeasures = ["nDCG@10"]\n')
    assert run("run", config).exit_code == 0
    table, record = tmp_path / "out" / "eval.gold.txt", tmp_path / "out" / "eval.gold.txt.manifest.json"
    before = table.read_bytes(), record.read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C as the table's manifest is written

    monkeypatch.setattr(manifest, "write_manifest", interrupted)
    result = run("run", config, "--set", "eval.measures=AP")
    assert (result.exit_code, result.stderr.strip().splitlines()[-1]) == (130, "semrel: error: interrupted")
    assert (table.read_bytes(), record.read_bytes()) == before
    assert not [f for f in os.listdir(tmp_path / "out") if f.endswith(".tmp")]
    monkeypatch.undo()
    assert run("run", config, "--set", "eval.measures=AP").exit_code == 0
    assert "AP" in table.read_text() and manifest.read_manifest(table) is not None


def test_every_file_a_step_reads_is_an_input(tmp_path):
    """A stopwords file was no input of the bm25 run: editing it reran nothing and left a run made with the old words."""
    config = write_config(write_data(tmp_path), extra='[bm25]\nstopwords = "stop.txt"\n')
    (tmp_path / "stop.txt").write_text("the\na\n")
    assert run("run", config).exit_code == 0
    state = json.loads((tmp_path / "out" / pipeline.STATE_FILE).read_text())["steps"]
    assert str(tmp_path / "stop.txt") in state["retrieve bm25"]["inputs"]
    (tmp_path / "stop.txt").write_text("the\na\ncats\n")
    again = statuses(run("run", config).stdout)
    assert again["retrieve bm25"] == "ran" and again["chunk"] == "skipped", again


def model_folder(path: Path) -> Path:
    """A model folder of one's own: the default model's files, linked."""
    from semrel.encoding.models import resolve_model

    path.mkdir(parents=True)
    for name in os.listdir(resolve_model()):
        (path / name).symlink_to(Path(resolve_model()) / name)
    return path


def test_a_model_folder_is_relative_to_the_config_and_an_input(tmp_path, monkeypatch):
    """`[retrieve] model = "models/m"` was passed on as it was, so read from the current folder, not the config's."""
    (tmp_path / "project").mkdir()
    data = write_data(tmp_path / "project")
    model_folder(data / "models" / "m")
    config = write_config(data, judge=True, extra='model = "models/m"')  # [judge] model
    config.write_text(config.read_text().replace("k = 5", 'k = 5\nmodel = "models/m"'))
    monkeypatch.chdir(tmp_path)
    dry = run("run", "project/semrel.toml", "--dry-run", "--set", "retrieve.methods=bm25,dense")
    assert dry.exit_code == 0, dry.output
    commands = dry.stdout.replace(" \\\n    ", " ")
    assert commands.count("--model project/models/m") == 2, commands
    steps = {s.name: s for s in run_config.plan(run_config.load_config("project/semrel.toml", ["retrieve.methods=bm25,dense"]))}
    assert "project/models/m" in steps["retrieve dense"].inputs and "project/models/m" in steps["judge"].inputs
    assert "project/models/m" not in steps["retrieve bm25"].inputs
    # a name stays a name; a path that is not there is refused up front
    named = run("run", "project/semrel.toml", "--dry-run", "--set", "judge.model=sentence-transformers/all-MiniLM-L6-v2")
    assert named.exit_code == 0 and "--model sentence-transformers/all-MiniLM-L6-v2" in named.stdout, named.output
    assert_one_error(run("run", "project/semrel.toml", "--set", "judge.model=./nowhere"),
                     "--set judge.model=./nowhere: [judge] model: no such folder or file './nowhere'", code=2)


def test_a_changed_input_reruns_whatever_its_mtime(tmp_path, monkeypatch):
    """The skip rule trusted mtimes: an input replaced by other bytes with an older mtime (mv of an older version,
    cp -p, rsync -a, tar x) left the outputs made from the old bytes. Bytes decide; a stamp (size, mtime, ctime,
    inode) the last run recorded spares reading the file again, and one read again after a touch is kept."""
    monkeypatch.setattr(files, "RACY_NS", 0)  # this test's files are seconds old: take their stamps all the same
    config = write_config(write_data(tmp_path))
    golden = tmp_path / "golden.csv"
    assert run("run", config).exit_code == 0
    before = os.stat(golden).st_mtime_ns
    golden.write_text(golden.read_text().replace("content", "happy"))
    os.utime(golden, ns=(before - 10**9, before - 10**9))  # older than before, and than every output
    changed = statuses(run("run", config).stdout)
    assert changed["import"] == "ran" and changed["chunk"] == "skipped", changed
    read = []
    digest = pipeline.content_sha256
    monkeypatch.setattr(pipeline, "content_sha256", lambda path: read.append(path) or digest(path))
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"} and not read, read
    os.utime(golden)  # the same bytes, another stamp: read once, and its new stamp kept
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"} and read == [str(golden)], read
    read.clear()
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"} and not read, read


def test_a_stamp_is_kept_only_once_its_file_is_old_enough(tmp_path, monkeypatch):
    """A file changed twice in one tick of the file system's clock keeps its stamp: a stamp taken in that tick is not kept."""
    (tmp_path / "in.txt").write_text("a\n")
    step = run_config.Step("x", ("eval",), [], [str(tmp_path / "in.txt")], [])
    assert pipeline.Digests().of(step)["stamps"] == {str(tmp_path / "in.txt"): [None, None]}
    monkeypatch.setattr(files, "RACY_NS", 0)
    assert pipeline.Digests().of(step)["stamps"][str(tmp_path / "in.txt")][0] is not None


@contextlib.contextmanager
def typed(*argv: str) -> Iterator[None]:
    """sys.argv as a user's command line: the manifests written meanwhile name that command (under pytest they name pytest)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", list(argv))
        yield


def picked(golden: Path) -> str:
    """golden.jsonl as `semrel golden pick` leaves it: a gold chunk added to a query, the manifest naming pick."""
    golden.write_text(golden.read_text().replace('"cats#0"', '"cats#0", "rain#0"'))
    with typed("semrel", "golden", "pick", "--golden", str(golden), "--corpus", "corpus.jsonl"):
        write_manifest(golden, inputs=[golden])
    return golden.read_text()


def test_an_output_another_command_rewrote_is_not_replaced_unasked(tmp_path, monkeypatch):
    """`semrel golden pick` writes its picks into out/golden.jsonl; `semrel run` after a config change imported the
    golden set again over them. Now it refuses, naming the file, the command and the way on."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    golden = tmp_path / "out" / "golden.jsonl"
    picks_made = picked(golden)
    picks = statuses(run("run", config).stdout)  # the same config: the picks are the golden set from now on
    assert picks["import"] == "skipped" and picks["qrels"] == "ran", picks
    assert "rain#0" in (tmp_path / "out" / "gold.qrels").read_text()
    for args in ((), ("--dry-run",)):
        assert_one_error(run("run", config, "--set", "golden.limit=2", *args),
                         f"import would replace {golden}, which `semrel golden pick --golden {golden}", "--force import", code=2)
    assert golden.read_text() == picks_made
    forced = run("run", config, "--set", "golden.limit=2", "--force", "import")
    assert forced.exit_code == 0 and "rain#0" not in golden.read_text(), forced.output


def test_the_refusal_to_replace_picks_says_the_journal_keeps_them(tmp_path):
    """--force import, as the refusal suggests, made a golden.jsonl without the picks and ran every later step on it;
    nothing said that pick's journal still held them and replays them. The refusal, and the run's note when the new
    set has no gold, say so."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    golden = tmp_path / "out" / "golden.jsonl"
    picked(golden)
    journal = tmp_path / "out" / "golden.jsonl.pick.jsonl"
    kept = (f"; the picks of `semrel golden pick` stay in {journal} and are not in a golden.jsonl made anew: `semrel golden "
            f"pick --golden {golden} --corpus CORPUS` replays them onto it, then run again")
    refused = run("run", config, "--set", "golden.limit=2")
    assert refused.exit_code == 2 and kept not in refused.stderr
    journal.write_text('{"action": "next", "query_id": "q1"}\n')
    assert_one_error(run("run", config, "--set", "golden.limit=2"), f"run again with --force import{kept}", code=2)
    assert pipeline._picks_kept(str(tmp_path / "out" / "other.jsonl")) == ""


def test_retrieval_reruns_on_a_changed_query_not_on_changed_gold(tmp_path):
    """golden.jsonl was an input of retrieve by its bytes: a `semrel golden pick` that changed only gold chunk ids reran every
    retrieve step (dense encodes). Retrieval reads the queries' ids and texts, and their digest decides: gold alone
    reruns qrels and what reads gold, a changed query text or id reruns retrieve; --dry-run says the same."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    csv_file, golden = tmp_path / "golden.csv", tmp_path / "out" / "golden.jsonl"
    csv_file.write_text(csv_file.read_text().replace('"cats#0"', '"rain#0"'))  # gold only: import makes golden.jsonl anew
    dry = run("run", config, "--dry-run")
    assert statuses(dry.stdout)["import"] == statuses(dry.stdout)["retrieve bm25"] == "run", dry.output
    assert (f"semrel run: retrieve bm25 reads only the queries of {golden}, which would be made anew: listed, but skipped if "
            "the new file's queries are the old ones") in dry.stderr
    ran = statuses(run("run", config).stdout)
    assert ran["import"] == ran["qrels"] == ran["eval gold"] == "ran" and ran["retrieve bm25"] == "skipped", ran
    assert "q-cats 0 rain#0 1" in (tmp_path / "out" / "gold.qrels").read_text()
    golden.write_text(golden.read_text().replace('"rain#0"', '"rain#0", "cats#0"'))  # as `semrel golden pick` leaves it
    with typed("semrel", "golden", "pick", "--golden", str(golden), "--corpus", "corpus.jsonl"):
        write_manifest(golden, inputs=[golden])
    dry = run("run", config, "--dry-run")
    assert statuses(dry.stdout)["retrieve bm25"] == "skipped" and statuses(dry.stdout)["qrels"] == "run", dry.output
    assert "reads only the queries" not in dry.stderr
    ran = statuses(run("run", config).stdout)
    assert ran["qrels"] == "ran" and ran["retrieve bm25"] == "skipped" and ran["import"] == "skipped", ran
    csv_file.write_text(csv_file.read_text().replace("Why do cats purr?", "Why do cats purr at night?"))
    assert statuses(run("run", config, "--force", "import").stdout)["retrieve bm25"] == "ran"
    assert "Why do cats purr at night?" in golden.read_text()
    csv_file.write_text(csv_file.read_text().replace('"q-cats"', '"q-purr"'))  # an id renamed, its text as it was
    assert statuses(run("run", config).stdout)["retrieve bm25"] == "ran"  # the run names queries by id: the old one scored nothing
    ids = {line.split()[0] for line in (tmp_path / "out" / "runs" / "bm25.run").read_text().splitlines()}
    assert ids == {"q-purr", "q-ships", "q-bread"}


def test_a_gold_chunk_whose_text_an_edit_moved_is_warned_of(tmp_path):
    """Chunk ids are positions: a paragraph inserted at the top of a document gave cats#0 other text, the gold id still
    resolved, and every score was against the wrong gold without a word. The state keeps the sha256 of each gold chunk's
    text (gold chunks only), and a run whose corpus moved a gold chunk's text says so once; not a first run, nor one
    where nothing changed."""
    config = write_config(write_data(tmp_path))
    small = ("--set", "corpus.size=6", "--set", "corpus.overlap=0")
    out = tmp_path / "out"
    said = "other text than at the last run"
    first = run("run", config, *small)
    assert first.exit_code == 0 and said not in first.stderr, first.output
    reading = f"semrel run: reading {out / 'corpus.jsonl'} for the texts of 3 gold chunks"  # a long read has its line on stderr
    assert first.stderr.count(reading) == 1
    gold = json.loads((out / pipeline.STATE_FILE).read_text())["gold"]["chunks"]
    texts = {c["_id"]: c["text"] for c in read_lines(out / "corpus.jsonl")}
    assert len(texts) > 3 and gold == {c: hashlib.sha256(texts[c].encode()).hexdigest() for c in ("cats#0", "ships#0", "bread#0")}
    again = run("run", config, *small)
    assert set(statuses(again.stdout).values()) == {"skipped"} and said not in again.stderr and reading not in again.stderr
    cats = tmp_path / "docs" / "cats.md"
    cats.write_text("A note on house pets and their habits.\n\n" + cats.read_text())
    assert said not in run("run", config, *small, "--dry-run").stderr  # the corpus is not chunked anew in a dry run
    edited = run("run", config, *small)
    assert edited.exit_code == 0 and statuses(edited.stdout)["chunk"] == "ran", edited.output
    warned = [line for line in edited.stderr.splitlines() if said in line]
    assert edited.stderr.count(reading) == 1
    assert warned == [f"semrel: warning: 1 gold chunk of {out / 'golden.jsonl'} holds other text than at the last run (e.g. cats#0, "
                      "gold for query q-cats): chunk ids are positions in their document, so an edited document, or another "
                      "[corpus] size or overlap, moves text between them, and the scores are against the text now there; check the "
                      "gold and fix the ids, or clear them and pick "
                      f"again with `semrel golden pick --golden {out / 'golden.jsonl'} --corpus {out / 'corpus.jsonl'}`"], edited.stderr
    assert said not in run("run", config, *small).stderr  # said once: the state now holds the new texts
    # another chunk size moves text between the same ids too; the warning blamed an edited document alone
    resized = run("run", config, "--set", "corpus.size=5", "--set", "corpus.overlap=0")
    assert resized.exit_code == 0, resized.output
    assert "so an edited document, or another [corpus] size or overlap, moves text" in resized.stderr, resized.stderr


def test_an_output_changed_since_run_made_it_is_not_replaced_even_with_the_config_unchanged(tmp_path, monkeypatch):
    """A hand edit after a pick left golden.jsonl's manifest describing another file, which was taken for a plain
    hand edit and made again: the picks and the edit were lost, silently (a hand edit alone was lost too). Now
    `semrel run` replaces only what it made itself."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setattr(sys, "argv", ["semrel", "run", str(config)])  # as a user runs it: its manifests name `semrel run`
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    golden = out / "golden.jsonl"
    golden.write_text(golden.read_text().replace("Cats purr", "Cats often purr"))
    edited = golden.read_text()
    for args in ((), ("--dry-run",)):
        assert_one_error(run("run", config, *args),
                         f"import would replace {golden}, which was changed after `semrel run {config}` wrote it: to keep it, "
                         f"copy it out of {out} and give the copy as [golden] file; to replace it, run again with --force import",
                         code=2)
    assert golden.read_text() == edited
    picks = picked(golden)
    assert statuses(run("run", config).stdout)["import"] == "skipped"  # the picks are the golden set
    golden.write_text(picks.replace("Steel boxes", "Steel containers"))  # one line fixed by hand after the pick
    assert_one_error(run("run", config), f"import would replace {golden}, which was changed after `semrel golden pick --golden "
                     f"{golden} --corpus corpus.jsonl` wrote it", "--force import", code=2)
    assert "often" in golden.read_text() and "rain#0" in golden.read_text() and "Steel containers" in golden.read_text()
    forced = run("run", config, "--force", "import")
    assert forced.exit_code == 0 and "often" not in golden.read_text(), forced.output


def test_what_a_stopped_run_left_is_made_again(tmp_path, monkeypatch):
    """What a run killed mid-step leaves is its own: the old output beside the new manifest (a kill between the two
    renames), or the new output with its manifest, unrecorded (a kill before the state was written). Both are made again."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setattr(sys, "argv", ["semrel", "run", str(config)])
    assert run("run", config).exit_code == 0
    golden = tmp_path / "out" / "golden.jsonl"
    old = golden.read_bytes()
    write_state = pipeline._write_state

    def killed(*args):
        raise KeyboardInterrupt

    for limit in ("2", "1"):
        monkeypatch.setattr(pipeline, "_write_state", killed)
        assert run("run", config, "--set", f"golden.limit={limit}").exit_code == 130
        assert len(read_lines(golden)) == int(limit)
        if limit == "2":
            golden.write_bytes(old)  # the old file beside the new manifest
        monkeypatch.setattr(pipeline, "_write_state", write_state)
        again = run("run", config, "--set", f"golden.limit={limit}")
        assert again.exit_code == 0 and statuses(again.stdout)["import"] == "ran", again.output
        assert len(read_lines(golden)) == int(limit)
        old = golden.read_bytes()


def test_a_refusal_comes_before_any_step_runs(tmp_path):
    """A document changed: chunk wrote a new corpus.jsonl before import refused to replace the picked golden.jsonl,
    leaving a new chunking beside gold chunk ids of the old one. Every step that would run is checked first."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    picked(out / "golden.jsonl")
    (tmp_path / "docs" / "chess.md").write_text("Chess is a board game for two.\n")
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert_one_error(run("run", config), f"import would replace {out / 'golden.jsonl'}, which `semrel golden pick", code=2)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def test_an_output_no_config_key_names_is_kept_by_copying_it_elsewhere(tmp_path):
    """The refusal advised pointing [golden] file or [corpus] file at a copy, for any output: gold.qrels, derived.qrels
    have no key. A manifest another command wrote counts even over the same bytes: that command's file would go."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    qrels = ["golden", "qrels", str(out / "golden.jsonl"), "-o", str(out / "gold.qrels")]
    made = (out / "gold.qrels").read_bytes()
    with typed("semrel", *qrels):
        assert run(*qrels).exit_code == 0
    assert (out / "gold.qrels").read_bytes() == made
    assert_one_error(run("run", config, "--force", "import"),
                     f"qrels would replace {out / 'gold.qrels'}, which `semrel golden qrels {out / 'golden.jsonl'} -o "
                     f"{out / 'gold.qrels'}` wrote: to keep it, copy it elsewhere; to replace it, run again with --force qrels",
                     code=2)


@pytest.mark.slow
def test_rows_a_fill_added_and_qrels_another_command_wrote_are_not_replaced_unasked(tmp_path, monkeypatch):
    """`semrel fill` adds rows to judgments.jsonl and keeps the judge's manifest (`semrel run ...`): a judge rerun dropped
    them, silently. A derived.qrels that a `semrel label` run by hand wrote was refused with advice to give a copy as
    [golden] file or [corpus] file, keys that take no qrels."""
    config = write_config(write_data(tmp_path), judge=True)
    config.write_text(config.read_text().replace('methods = ["bm25"]', 'methods = ["dense"]'))  # 5 chunks a query, 2 pooled
    monkeypatch.setattr(sys, "argv", ["semrel", "run", str(config)])
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    judgments, derived = out / "judgments.jsonl", out / "derived.qrels"
    rows = len(read_lines(judgments))
    fill = ["fill", str(derived), str(out / "runs" / "dense.run"), "--judgments", str(judgments), "--corpus",
            str(out / "corpus.jsonl"), "--golden", str(out / "golden.jsonl"), "--depth", "5", "-o", str(out / "filled.qrels")]
    with typed("semrel", *fill):
        assert run(*fill).exit_code == 0
    assert len(read_lines(judgments)) > rows
    assert_one_error(run("run", config, "--set", "judge.idf=true"),
                     f"judge would replace {judgments}, to which `semrel fill {derived}", "added rows: to keep it, copy it "
                     "elsewhere; to replace it, run again with --force judge", code=2)
    label = ["label", str(judgments), "-o", str(derived), "--threshold", "0.5"]
    with typed("semrel", *label):
        assert run(*label).exit_code == 0
    assert_one_error(run("run", config), f"label would replace {derived}, which `semrel label {judgments}", "wrote: to keep "
                     "it, copy it elsewhere; to replace it, run again with --force label; to label with `semrel calibrate`'s "
                     "file in this pipeline, set [label] calibration (--set label.calibration=FILE)", code=2)


@pytest.mark.parametrize("sets, message", [
    (["label.grades=0.9,0.5"], "[label] grades: thresholds must be strictly increasing, got 0.9,0.5"),
    (["label.threshold=0.7", "label.grades=0.6,0.8"], "[label] grades: give either threshold= (binary labels) or grades="),
    (["label.threshold=0.7", "label.graded=true"], "[label] graded: graded= grades by p: give it without threshold="),
    (["label.on=p", "label.threshold=1.5"], "[label] threshold: thresholds on p must lie between 0 and 1"),
    (["judge.layer=7"], "--set judge.layer=7: [judge] layer: layer=7: model all-MiniLM-L6-v2 has layers 0..6"),
    (["judge.layer=-1"], "[judge] layer: layer=-1: model all-MiniLM-L6-v2 has layers 0..6"),
    (["judge.cache=pool.tsv"], "--set judge.cache=pool.tsv: [judge] cache: the pool step writes "),
    (["judge.cache=runs/bm25.run.manifest.json"], "[judge] cache: the retrieve bm25 step writes "),
    (["judge.cache=../golden.csv"], "[judge] cache: '../golden.csv' is a file; give a folder"),
    (["judge.model=a--b"], "--set judge.model=a--b: [judge] model: model 'a--b' is neither a folder nor in the local Hugging Face"),
    (["engine.workers=-3"], "--set engine.workers=-3: [engine] workers: give 1 or more"),
    (["corpus.whole=true", "corpus.overlap=5"], "--set corpus.whole=true: [corpus] whole: give [corpus] overlap or whole, not both"),
    (["label.foo=1"], "--set label.foo=1: [label] foo: unknown key (known: threshold, on, grades, graded, calibration)"),
])
def test_label_judge_and_engine_values_are_refused_before_any_step(tmp_path, sets, message):
    """These were refused only by their step, after the steps before it had run, naming a command option."""
    config = write_config(write_data(tmp_path), judge=True)
    assert_one_error(run("run", config, *[a for s in sets for a in ("--set", s)]), message, code=2)
    assert not (tmp_path / "out").exists()


def test_out_is_a_folder_and_corpus_file_takes_no_chunking(tmp_path, monkeypatch):
    """`out` naming a file failed with 'File exists' after the config was read (or, in a dry run, printed commands writing
    under it); chunking keys beside [corpus] file did nothing; --force of a step the config has not was taken."""
    data = write_data(tmp_path)
    config = write_config(data)
    monkeypatch.chdir(data)
    assert_one_error(run("run", config, "--set", "out=golden.csv"), "--set out=golden.csv: out: 'golden.csv' is a file; give a folder",
                     code=2)
    config.write_text(config.read_text().replace('out = "out"', 'out = "golden.csv"'))
    assert_one_error(run("run", config, "--dry-run"), "semrel.toml:2: out: 'golden.csv' is a file; give a folder", code=2)
    (data / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in TEXTS.items()))
    config.write_text(config.read_text().replace('out = "golden.csv"', 'out = "out"').replace('docs = "docs"', 'file = "corpus.jsonl"'))
    for key, value in (("size", "50"), ("overlap", "0"), ("whole", "true")):
        assert_one_error(run("run", config, "--set", f"corpus.{key}={value}"),
                         f"[corpus] {key}: does nothing with [corpus] file, a corpus already chunked", code=2)
    assert_one_error(run("run", config, "--force", "chunk"),
                     "--force chunk: no chunk step in this config (its steps: import, qrels, retrieve, eval, report)", code=2)
    assert not (data / "out").exists()


def test_init_takes_the_format_where_the_file_does_not_tell_it(tmp_path):
    """A file whose format the name and first bytes do not tell was refused with 'give format=', an option
    init lacked: it has --format, as `golden import` has."""
    golden = squad_file(tmp_path / "xquad.json", 30).rename(tmp_path / "xquad.txt")
    with_hint = run("init", "--golden", golden, "-o", tmp_path / "q.toml")
    assert_one_error(with_hint, "cannot tell the format", "--format")
    text, said, _ = init_and_plan(tmp_path, "--golden", golden, "--format", "squad")
    assert 'format = "squad"' in text and "a SQuAD-style set, 6 queries" in said


def test_a_golden_file_whose_format_is_not_told_names_the_config_key(tmp_path):
    """A [golden] file of an extension that does not tell its format failed the import step with '(give --format)', a flag
    the config's user does not type: the key that gives it is [golden] format."""
    config = write_config(write_data(tmp_path))
    (tmp_path / "golden.csv").rename(tmp_path / "golden.toml")
    config.write_text(config.read_text().replace('file = "golden.csv"', 'file = "golden.toml"'))
    result = run("run", config)
    assert result.exit_code == 1 and "semrel run: import" in result.stderr
    assert result.stderr.strip().splitlines()[-1].endswith("golden.toml: cannot tell the format (give [golden] format)")
    assert run("run", config, "--set", "golden.format=csv").exit_code == 0


def test_a_golden_csv_of_its_own_columns_naming_each_answers_file_runs_with_golden_keys(tmp_path):
    """`semrel run` had no key for golden import's columns or --doc-qrels: a CSV with its own column names, whose gold
    column names each answer's file, could not be run from a config. The import's refusal names the key, not a flag."""
    config = write_config(write_data(tmp_path))
    rows = [f'"{q}","{a}","{g.split("#")[0]}.md"' for _, q, a, g in GOLDEN]
    (tmp_path / "golden.csv").write_text("\n".join(["Question,Answer,Source", *rows]) + "\n")
    config.write_text(config.read_text().replace('file = "golden.csv"', 'file = "golden.csv"\nquery_col = "Question"\n'
                                                 'answer_col = "Answer"\nchunk_ids_col = "Source"'))
    result = run("run", config)
    assert result.exit_code == 1
    assert "give [golden] doc_qrels all-chunks (every chunk of a relevant document is gold)" in result.stderr.splitlines()[-1]
    result = run("run", config, "--set", "golden.doc_qrels=answer-chunk")
    assert result.exit_code == 0, result.output
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "out" / "golden.jsonl")] == [[g] for *_, g in GOLDEN]
    # gold found by its answer at each import moves with an edit: cats#0 holds other text, and the answer still
    cats = tmp_path / "docs" / "cats.md"
    cats.write_text("A note on house pets.\n\n" + cats.read_text())
    edited = run("run", config, "--set", "golden.doc_qrels=answer-chunk")
    assert edited.exit_code == 0 and "other text than at the last run" not in edited.stderr, edited.output


def test_init_makes_a_column_naming_each_answers_file_the_gold_column(tmp_path, monkeypatch):
    """A CSV whose 'Source' column names each answer's file in the documents folder had its gold dropped (an unread
    column) and ran on derived labels alone; init now reads gold from it, the answer's chunk of the file, and the run
    gets one gold chunk a query. A column naming no document gives no such keys."""
    monkeypatch.chdir(write_data(tmp_path))
    rows = [f'"{q}","{a}","{g.split("#")[0]}.md",note' for _, q, a, g in GOLDEN]
    Path("golden.csv").write_text("\n".join(["Question,Answer,Source,Remark", *rows]) + "\n")
    result = run("init", "--golden", "golden.csv", "--docs", "docs", "-o", "semrel.toml")
    assert "column 'Source' names each answer's document: the chunk holding the answer is gold" in result.stderr
    text = Path("semrel.toml").read_text()
    assert 'chunk_ids_col = "Source"       # names each answer\'s document\ndoc_qrels = "answer-chunk"' in text
    assert run("run", "semrel.toml").exit_code == 0
    assert [i["gold_chunk_ids"] for i in read_lines(Path("out") / "golden.jsonl")] == [[g] for *_, g in GOLDEN]
    Path("golden.csv").write_text("\n".join(["Question,Answer,Source", *(r.rsplit(",", 2)[0] + ",elsewhere.md" for r in rows)]))
    run("init", "--golden", "golden.csv", "--docs", "docs", "-o", "other.toml")
    assert "doc_qrels" not in Path("other.toml").read_text()
    # a typo in one of five names: the column is still the gold column, and init says what the import would stop on
    more = [*rows, *(f'"more {n}?","a","{doc}.md",x' for n, doc in enumerate(("ships", "bread")))]
    more[1] = more[1].replace("ships.md", "shipz.md")
    Path("golden.csv").write_text("\n".join(["Question,Answer,Source,Remark", *more]) + "\n")
    said = run("init", "--golden", "golden.csv", "--docs", "docs", "-o", "third.toml").stderr
    assert "1 value of 'Source' names no document of docs (first: 'shipz.md', line 3): fix it, or the import stops on it" in said


def test_the_users_own_runs_are_scored_beside_the_configs_with_their_ids_checked(tmp_path):
    """A RAG engineer's own system could not be scored by `semrel run`: [retrieve] runs takes their run files, which are
    pooled, judged and scored beside the config's runs, and their chunk ids checked against the corpus (a misspelt id
    counts as not relevant). A run named as one the config makes is refused before any step."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    rows = (out / "runs" / "bm25.run").read_text().splitlines()
    (tmp_path / "mine.run").write_text("".join(f"{r.replace('cats#', 'cats-')}\n" for r in rows))  # cats' chunks misspelt
    config.write_text(config.read_text().replace("k = 5", 'k = 5\nruns = ["mine.run"]'))
    result = run("run", config)
    assert result.exit_code == 0, result.output
    assert statuses(result.stdout)["retrieve bm25"] == "skipped" and statuses(result.stdout)["compare"] == "ran"
    header = (out / "eval.gold.txt").read_text().splitlines()[0].split()
    assert header == ["measure", "bm25", "mine"]
    assert "1 of the 3 rows of run 'mine' (33%) names a chunk the corpus does not list (e.g. 'cats-0')" in result.stderr
    assert "'cats#0' of the corpus is spelt 'cats-0' in the run" in result.stderr
    # an edited document moves text under the run's positional ids: the run was made over the corpus as it was
    ships = tmp_path / "docs" / "ships.md"
    ships.write_text("A note on harbours.\n\n" + ships.read_text())
    said = [line for line in run("run", config).stderr.splitlines() if "holding other text" in line]
    assert said == [f"semrel: warning: run 'mine' ({tmp_path / 'mine.run'}) names 1 chunk holding other text than at the last "
                    "run (e.g. ships#0): it was made over the corpus as it was, and is scored against the text now there; make "
                    "it again over the current corpus"]
    (tmp_path / "bm25.run").write_text((tmp_path / "mine.run").read_text())
    config.write_text(config.read_text().replace('runs = ["mine.run"]', 'runs = ["bm25.run"]'))
    assert_one_error(run("run", config), "[retrieve] runs: two runs would be named 'bm25' (a run the config makes)", code=2)


@pytest.mark.slow
def test_a_misspelt_chunk_id_in_the_users_run_is_left_out_of_the_pool_not_a_stop(tmp_path):
    """One misspelt id in a [retrieve] runs file stopped `semrel run` at the judge, which has no text for it: the pool
    step now leaves it out, said in one line, and every step runs; eval says it counts as not relevant."""
    config = write_config(write_data(tmp_path), judge=True)
    assert run("run", config).exit_code == 0
    rows = (tmp_path / "out" / "runs" / "bm25.run").read_text().splitlines()
    (tmp_path / "mine.run").write_text("".join(f"{r.replace('cats#0', 'cat#0')}\n" for r in rows))
    config.write_text(config.read_text().replace("k = 5", 'k = 5\nruns = ["mine.run"]'))
    result = run("run", config)
    assert result.exit_code == 0, result.output
    left = [line for line in result.stderr.splitlines() if "left out of the pool" in line]
    assert left == ["semrel: warning: 1 of the 3 rows of run 'mine' (33%) names a chunk the corpus does not list (e.g. 'cat#0'): "
                    "it is left out of the pool, as the judge has no text for it, and counts as not relevant; check that the "
                    "run and the corpus match"]
    assert "cat#0" not in (tmp_path / "out" / "pool.tsv").read_text()


def test_a_hidden_file_changing_in_a_folder_input_reads_nothing(tmp_path, monkeypatch):
    """A folder input is known by the files its digest reads (files.folder_files): a hidden file (an editor's
    swap file, a staged output) changing made run read the whole folder again to find the same digest."""
    monkeypatch.setattr(files, "RACY_NS", 0)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("a\n")
    step = run_config.Step("x", ("eval",), [], [str(docs)], [])
    recorded = pipeline.Digests().of(step)
    read = []
    digest = pipeline.content_sha256
    monkeypatch.setattr(pipeline, "content_sha256", lambda path: read.append(path) or digest(path))
    (docs / ".a.txt.swp").write_text("x\n")
    (docs / ".staged").mkdir()
    (docs / ".staged" / "b.txt").write_text("b\n")
    assert pipeline.Digests().of(step, recorded) == recorded and not read, read
    (docs / "b.txt").write_text("b\n")
    assert pipeline.Digests().of(step, recorded) != recorded and read == [str(docs)], read
    (docs / os.fsdecode(b"caf\xe9.txt")).write_text("c\n")  # a name that is not UTF-8 failed to encode
    assert pipeline.Digests().of(step, recorded) != recorded


def test_init_refuses_documents_in_the_configs_own_folder(tmp_path, monkeypatch):
    """`semrel init --docs .` wrote a config whose every `out` lay inside the documents folder, which run then refused."""
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path / "docs")
    for docs in (".", str(tmp_path)):  # the config's folder itself, or a folder above it
        made = run("init", "--golden", tmp_path / "golden.csv", "--docs", docs, "-o", "semrel.toml")
        assert_one_error(made, f"--docs {docs}: the documents folder holds the config's folder", "(e.g. docs/)", "-o", code=2)
        assert not (tmp_path / "docs" / "semrel.toml").exists()


def test_a_manifest_deleted_or_edited_by_hand_is_made_again_by_its_step(tmp_path, monkeypatch):
    """A deleted manifest was never made again (pool.tsv kept none for good), and one edited by hand (the judge's model
    said roberta-large; the corpus's overlap 21) was skipped over, its lie copied into later manifests and the report."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setattr(sys, "argv", ["semrel", "run", str(config)])  # as a user runs it: its manifests name `semrel run`
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    corpus, golden = out / "corpus.jsonl.manifest.json", out / "golden.jsonl.manifest.json"
    kept = json.loads(golden.read_text())["params"]
    golden.unlink()
    assert statuses(run("run", config).stdout)["import"] == "ran" and json.loads(golden.read_text())["params"] == kept
    record = json.loads(corpus.read_text())
    overlap = record["params"]["overlap"]
    corpus.write_text(json.dumps({**record, "params": {**record["params"], "overlap": overlap + 1}}))
    assert statuses(run("run", config).stdout)["chunk"] == "ran" and json.loads(corpus.read_text())["params"]["overlap"] == overlap
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"}


@pytest.mark.parametrize("own,make", [(".semrel-run.lock", os.mkfifo), (".semrel-run.json", os.mkdir)])
def test_run_refuses_its_own_lock_or_state_when_no_plain_file(tmp_path, own, make):
    """A FIFO as the lock hung the run for good; a folder as the state failed the run after chunk had rewritten corpus.jsonl."""
    config = write_config(write_data(tmp_path))
    (tmp_path / "out").mkdir()
    make(tmp_path / "out" / own)
    assert_one_error(run("run", config), f"{own}: semrel run keeps its own", "no plain file: remove it (nothing was run)", code=2)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [own]


def test_a_state_without_a_record_of_the_outputs_skips_them_and_remakes_a_table_without_a_manifest(tmp_path, monkeypatch):
    """A state that records no digests of a step's outputs (an older semrel's, or one damaged) vouches for nothing: the
    outputs as they are skip, not every step rerun after an upgrade; a printed table that has no manifest (an older
    semrel printed it without) is made again, not refused as work another command did."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setattr(sys, "argv", ["semrel", "run", str(config)])  # as a user runs it: its manifests name `semrel run`
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    state_file = out / pipeline.STATE_FILE
    state = json.loads(state_file.read_text())
    for step in state["steps"].values():
        step["outputs"] = {}
    state_file.write_text(json.dumps(state))
    assert set(statuses(run("run", config).stdout).values()) == {"skipped"}
    for step in state["steps"].values():
        del step["outputs"]
    state_file.write_text(json.dumps(state))
    (out / "eval.gold.txt.manifest.json").unlink()
    again = run("run", config)
    assert again.exit_code == 0, again.output
    remade = statuses(again.stdout)
    assert remade.pop("eval gold") == "ran" and set(remade.values()) == {"skipped"}, again.stdout
    assert (out / "eval.gold.txt.manifest.json").is_file()


def test_a_blank_path_and_a_folder_for_a_file_key_are_refused_naming_the_key(tmp_path, monkeypatch):
    """out = " " wrote into a folder named by a space; a folder given for a file key got past the check."""
    config = write_config(write_data(tmp_path))
    config.write_text(config.read_text().replace('out = "out"', 'out = "  "'))
    assert_one_error(run("run", config), "semrel.toml:2: out: empty; give a path", code=2)
    assert not (tmp_path / "  ").exists()
    config = write_config(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("run", config, "--set", "golden.qrels=docs"), "--set golden.qrels=docs: [golden] qrels: no such file 'docs'",
                     code=2)


def test_each_warning_is_said_once_within_a_run(capsys):
    from semrel.cli.base import warn, warnings_once

    with warnings_once():
        warn("the runs are shallow")
        warn("the runs are shallow")
        warn("another")
    warn("the runs are shallow")
    warn("the runs are shallow")
    assert capsys.readouterr().err.splitlines() == ["semrel: warning: the runs are shallow", "semrel: warning: another",
                                                    "semrel: warning: the runs are shallow", "semrel: warning: the runs are shallow"]


def test_two_of_the_users_runs_of_one_name_are_refused(tmp_path, monkeypatch):
    config = write_config(write_data(tmp_path))
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.run").write_text("q-cats Q0 cats#0 1 1 x\n")
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("run", config, "--set", 'retrieve.runs=["a/x.run", "b/x.run"]'),
                     "[retrieve] runs: two runs would be named 'x' (another of them): runs are told apart by their file's name", code=2)


def test_no_step_writes_over_the_config_itself(tmp_path, monkeypatch):
    data = write_data(tmp_path)
    config = write_config(data)
    config = config.rename(data / "corpus.jsonl")
    config.write_text(config.read_text().replace('out = "out"', 'out = "."'))
    before = config.read_text()
    monkeypatch.chdir(data)
    assert_one_error(run("run", "corpus.jsonl"), "corpus.jsonl: the chunk step would write ./corpus.jsonl over the config corpus.jsonl",
                     "set `out` to another folder", code=2)
    assert config.read_text() == before


def test_a_section_given_as_a_value_is_refused(tmp_path):
    config = write_config(write_data(tmp_path))
    config.write_text("agree = 3\n" + config.read_text())
    assert_one_error(run("run", config), "semrel.toml:1: [agree] expected a table", code=2)


def test_keys_at_odds_are_refused_and_an_empty_variable_is_unset(tmp_path, monkeypatch):
    config = write_config(write_data(tmp_path))
    (tmp_path / "corpus.jsonl").write_text('{"_id": "cats#0", "text": "Cats purr."}\n')
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("run", config, "--set", "corpus.file=corpus.jsonl"),
                     "semrel.toml: [corpus] docs: give docs (a folder to chunk) or file (a corpus.jsonl), not both", code=2)
    assert_one_error(run("run", config, "--set", "golden.sample=2", "--set", "golden.limit=2"),
                     "--set golden.sample=2: [golden] sample: give [golden] sample or limit, not both", code=2)
    monkeypatch.setenv("SEMREL_RETRIEVE_K", "")  # as a shell's `SEMREL_RETRIEVE_K= semrel run`: not set
    dry = run("run", config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert " -k 5 " in dry.stdout.replace(" \\\n    ", " ")
