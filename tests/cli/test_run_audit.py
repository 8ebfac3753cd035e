"""`semrel run`: what a mutation audit of cli/pipeline.py and cli/run_config.py found unpinned. The exact steps a config
plans (every key reaching its command line, input list and output), the checks of keys that the steps would refuse,
and what the run records (manifests of captured tables, stamps of folder inputs, the gold test of a dry run)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from test_run import statuses, typed, write_config, write_data

import semrel.formats.files as files
from helpers import assert_one_error, run
from semrel.cli import pipeline, run_config

RICH = """
out = "o"
[corpus]
docs = "docs"
size = 50
overlap = 0
[golden]
file = "golden.csv"
format = "csv"
sample = 2
seed = 7
query_col = "query"
[bm25]
k1 = 1.2
stopwords = "stop.txt"
[retrieve]
methods = ["bm25", "dense", "hybrid"]
k = 7
runs = ["mine.run"]
[pool]
depth = 3
[judge]
idf = true
rescale = "baseline"
layer = 5
[label]
threshold = 0.6
on = "F"
[eval]
measures = ["nDCG@10"]
[sensitivity]
from = 0.5
to = 0.9
step = 0.05
[lift]
base = "bm25"
depth = 4
[report]
title = "T"
[engine]
name = "ray"
address = "auto"
workers = 2
"""


def planned(tmp_path: Path, config: str, sets: tuple[str, ...] = ()) -> dict[str, run_config.Step]:
    """The steps of `config` (written to tmp_path/semrel.toml beside write_data's files), by name, every path in them
    made relative to tmp_path, so that a test reads them as the config gives them."""
    (tmp_path / "semrel.toml").write_text(config)
    steps = run_config.plan(run_config.load_config(str(tmp_path / "semrel.toml"), sets, environ={}))

    def rel(value):
        if isinstance(value, list):
            return [rel(v) for v in value]
        return value.replace(f"{tmp_path}{os.sep}", "") if isinstance(value, str) else value

    return {s.name: run_config.Step(s.name, s.command, rel(s.args), rel(s.inputs), rel(s.outputs), rel(s.stdout), s.placement,
                                    rel(s.folders), s.builtin, {rel(k): v for k, v in s.parts.items()}) for s in steps}


def rich(tmp_path: Path) -> dict[str, run_config.Step]:
    write_data(tmp_path)
    (tmp_path / "stop.txt").write_text("the\n")
    (tmp_path / "mine.run").write_text("q-cats Q0 cats#0 1 1.0 mine\n")
    return planned(tmp_path, RICH)


RUNS = ["o/runs/bm25.run", "o/runs/dense.run", "o/runs/hybrid.run", "o/runs/bm25+dense.run", "mine.run"]
RAY = ["--engine", "ray", "--ray-address", "auto", "--ray-workers", "2"]


def test_every_key_of_a_config_reaches_the_command_line_of_its_steps(tmp_path):
    """Each key's value, as docs/run.md's reference and step table say it is passed on: chunking (an overlap of 0 is 0),
    the import's format, column, sample and seed, the bm25 settings and stopwords for the bm25 and hybrid runs (their
    file an input of both), the bm25 index beside the dense vectors, the rerank of base at [lift] depth, the pool depth,
    the user's run checked against the corpus, the judge's rescale, idf and layer, label's rule, the sensitivity sweep
    on the labelled score with its threshold marked, lift's depth, the report's title, and the engine for the model steps."""
    steps = rich(tmp_path)
    assert list(steps) == ["chunk", "import", "qrels", "retrieve bm25", "retrieve dense", "retrieve hybrid", "retrieve bm25+dense",
                           "pool", "judge", "label", "eval derived", "eval gold", "agree", "compare", "sensitivity", "lift", "report"]
    expected = {
        "chunk": (["docs", "--size", "50", "--overlap", "0", "-o", "o/corpus.jsonl"], ["docs"], ["o/corpus.jsonl"]),
        "import": (["golden.csv", "--format", "csv", "--query-col", "query", "--sample", "2", "--sample-seed", "7",
                    "--corpus", "o/corpus.jsonl", "-o", "o/golden.jsonl"], ["golden.csv", "o/corpus.jsonl"], ["o/golden.jsonl"]),
        "qrels": (["o/golden.jsonl", "-o", "o/gold.qrels"], ["o/golden.jsonl"], ["o/gold.qrels"]),
        "retrieve bm25": (["--corpus", "o/corpus.jsonl", "--golden", "o/golden.jsonl", "--cache", "o/cache", "--method", "bm25", "-k", "7",
                           "--bm25-k1", "1.2", "--bm25-stopwords", "stop.txt", "-o", "o/runs/bm25.run"],
                          ["o/corpus.jsonl", "o/golden.jsonl", "stop.txt"], ["o/runs/bm25.run"]),
        "retrieve dense": (["--corpus", "o/corpus.jsonl", "--golden", "o/golden.jsonl", "--method", "dense", "-k", "7",
                            "--cache", "o/cache", "-o", "o/runs/dense.run"], ["o/corpus.jsonl", "o/golden.jsonl"], ["o/runs/dense.run"]),
        "retrieve hybrid": (["--corpus", "o/corpus.jsonl", "--golden", "o/golden.jsonl", "--method", "hybrid", "-k", "7",
                             "--bm25-k1", "1.2", "--bm25-stopwords", "stop.txt", "--cache", "o/cache", "-o", "o/runs/hybrid.run"],
                            ["o/corpus.jsonl", "o/golden.jsonl", "stop.txt"], ["o/runs/hybrid.run"]),
        "retrieve bm25+dense": (["--corpus", "o/corpus.jsonl", "--golden", "o/golden.jsonl", "--run", "o/runs/bm25.run",
                                 "--rerank", "dense", "-k", "7", "--cache", "o/cache", "--rerank-depth", "4",
                                 "-o", "o/runs/bm25+dense.run"],
                                ["o/corpus.jsonl", "o/golden.jsonl", "o/runs/bm25.run"], ["o/runs/bm25+dense.run"]),
        "pool": ([*RUNS, "--golden", "o/golden.jsonl", "--depth", "3", "--corpus", "o/corpus.jsonl", "-o", "o/pool.tsv"],
                 ["o/golden.jsonl", *RUNS, "o/corpus.jsonl"], ["o/pool.tsv"]),
        "judge": (["--corpus", "o/corpus.jsonl", "--golden", "o/golden.jsonl", "--pool", "o/pool.tsv", "--rescale", "baseline", "--idf",
                   "--cache", "o/cache", "-o", "o/judgments.jsonl", "--layer", "5"],
                  ["o/corpus.jsonl", "o/golden.jsonl", "o/pool.tsv"], ["o/judgments.jsonl"]),
        "label": (["o/judgments.jsonl", "-o", "o/derived.qrels", "--on", "F", "--threshold", "0.6"], ["o/judgments.jsonl"],
                  ["o/derived.qrels"]),
        "eval derived": (["o/derived.qrels", *RUNS, "-m", "nDCG@10", "--corpus", "o/corpus.jsonl"],
                         ["o/derived.qrels", *RUNS, "o/corpus.jsonl"], ["o/eval.derived.txt"]),
        "eval gold": (["o/gold.qrels", *RUNS, "-m", "nDCG@10", "--corpus", "o/corpus.jsonl"], ["o/gold.qrels", *RUNS, "o/corpus.jsonl"],
                      ["o/eval.gold.txt"]),
        "agree": (["o/gold.qrels", "o/derived.qrels", *RUNS, "-m", "nDCG@10", "--unlisted-as-zero", "-f", "json"],
                  ["o/gold.qrels", "o/derived.qrels", *RUNS], ["o/agreement.json"]),
        "compare": (["o/derived.qrels", *RUNS, "-m", "nDCG@10", "--corpus", "o/corpus.jsonl"], ["o/derived.qrels", *RUNS, "o/corpus.jsonl"],
                    ["o/compare.txt"]),
        "sensitivity": (["o/judgments.jsonl", *RUNS, "-m", "nDCG@10", "--curves", "o/sensitivity.csv", "--from", "0.5", "--to", "0.9",
                         "--step", "0.05", "--on", "F", "--at", "0.6"], ["o/judgments.jsonl", *RUNS],
                        ["o/sensitivity.csv", "o/sensitivity.txt"]),
        "lift": (["o/derived.qrels", "--base", "o/runs/bm25.run", "--reranked", "o/runs/bm25+dense.run", "--depth", "4", "-m", "nDCG@10"],
                 ["o/derived.qrels", "o/runs/bm25.run", "o/runs/bm25+dense.run"], ["o/lift.txt"]),
        "report": ([*["o/derived.qrels", *RUNS], "--golden", "o/golden.jsonl", "--corpus", "o/corpus.jsonl", "--base", "o/runs/bm25.run",
                    "--reranked", "o/runs/bm25+dense.run", "--depth", "4", "-m", "nDCG@10", "--gold-qrels", "o/gold.qrels",
                    "--judgments", "o/judgments.jsonl", "--sensitivity", "o/sensitivity.csv", "--agreement", "o/agreement.json",
                    "--title", "T", "-o", "o/report.html"],
                   ["o/derived.qrels", *RUNS, "o/golden.jsonl", "o/corpus.jsonl", "o/gold.qrels", "o/judgments.jsonl",
                    "o/sensitivity.csv", "o/agreement.json"], ["o/report.html"]),
    }
    assert {name: (s.args, s.inputs, s.outputs) for name, s in steps.items()} == expected
    # what each prints goes to its table (the report's to nowhere); the model steps run where [engine] says, bm25 runs no model
    assert {name: s.stdout for name, s in steps.items() if s.stdout} == {
        "eval derived": "o/eval.derived.txt", "eval gold": "o/eval.gold.txt", "agree": "o/agreement.json", "compare": "o/compare.txt",
        "sensitivity": "o/sensitivity.txt", "lift": "o/lift.txt", "report": os.devnull}
    model_steps = {"retrieve dense", "retrieve hybrid", "retrieve bm25+dense", "judge"}
    assert {name for name, s in steps.items() if s.placement == RAY} == model_steps
    assert all(s.placement in ([], RAY) for s in steps.values())
    assert {name for name, s in steps.items() if s.folders == ["o/cache"]} == {
        "retrieve bm25", "retrieve dense", "retrieve hybrid", "retrieve bm25+dense", "judge"}
    assert {name for name, s in steps.items() if s.parts == {"o/golden.jsonl": "queries"}} == {
        "retrieve bm25", "retrieve dense", "retrieve hybrid", "retrieve bm25+dense"}


def test_each_option_a_step_takes_from_the_config_is_named_by_its_variable_or_option_keys(tmp_path):
    """`semrel run` says which key to set instead of a variable of its steps' commands (SEMREL_JUDGE_CACHE_DIR: [judge]
    cache): every option of the rich config's command lines that is none of the run's own files nor a fixed setting is
    a config key's variable or in OPTION_KEYS, and every entry there is a variable some command reads and a config key."""
    import click

    from semrel.cli.base import command_variables, main

    fixed = {(("agree",), "--unlisted-as-zero"), (("agree",), "-f")}
    unnamed = []
    for step in rich(tmp_path).values():
        command = main
        for name in step.command:
            command = command.get_command(click.Context(command), name)
        options = {flag: p for p in command.params if isinstance(p, click.Option) for flag in (*p.opts, *p.secondary_opts)}
        files = {*step.inputs, *step.outputs, *step.folders}
        for at, arg in enumerate(step.args):
            option = options.get(arg)
            if option is None or (step.command, arg) in fixed or (not option.is_flag and step.args[at + 1] in files - set(step.folders)):
                continue
            variable = "_".join(["SEMREL", *step.command, option.name]).upper()
            if variable not in run_config.config_variables() and variable not in run_config.OPTION_KEYS:
                unnamed.append(f"{step.name} {arg}")
    assert unnamed == []
    everything = command_variables()
    assert [v for v, (section, key) in run_config.OPTION_KEYS.items() if v not in everything or key not in run_config.SCHEMA[section]] == []


def test_a_config_of_two_keys_plans_the_documented_defaults(tmp_path):
    """docs/run.md's defaults: 120-word chunks with 20 of overlap, the format told from the file (no --format auto), k 20,
    a pool 10 deep, the judge and label with their own defaults, agree on the labels alone (one run), sensitivity of the
    one run (its curve, checked for a cliff at the cut), no compare or lift; the cache inside out."""
    write_data(tmp_path)
    steps = planned(tmp_path, '[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n')
    assert {name: s.args for name, s in steps.items()} == {
        "chunk": ["docs", "--size", "120", "--overlap", "20", "-o", "out/corpus.jsonl"],
        "import": ["golden.csv", "--corpus", "out/corpus.jsonl", "-o", "out/golden.jsonl"],
        "qrels": ["out/golden.jsonl", "-o", "out/gold.qrels"],
        "retrieve bm25": ["--corpus", "out/corpus.jsonl", "--golden", "out/golden.jsonl", "--cache", "out/cache", "--method", "bm25",
                          "-k", "20", "-o", "out/runs/bm25.run"],
        "pool": ["out/runs/bm25.run", "--golden", "out/golden.jsonl", "--depth", "10", "-o", "out/pool.tsv"],
        "judge": ["--corpus", "out/corpus.jsonl", "--golden", "out/golden.jsonl", "--pool", "out/pool.tsv", "--cache", "out/cache",
                  "-o", "out/judgments.jsonl"],
        "label": ["out/judgments.jsonl", "-o", "out/derived.qrels"],
        "eval derived": ["out/derived.qrels", "out/runs/bm25.run"],
        "eval gold": ["out/gold.qrels", "out/runs/bm25.run"],
        "agree": ["out/gold.qrels", "out/derived.qrels", "--unlisted-as-zero", "-f", "json"],
        "sensitivity": ["out/judgments.jsonl", "out/runs/bm25.run", "-m", "nDCG@10", "--curves", "out/sensitivity.csv"],
        "report": ["out/derived.qrels", "out/runs/bm25.run", "--golden", "out/golden.jsonl", "--corpus", "out/corpus.jsonl",
                   "--gold-qrels", "out/gold.qrels", "--judgments", "out/judgments.jsonl", "--sensitivity", "out/sensitivity.csv",
                   "--agreement", "out/agreement.json", "-o", "out/report.html"]}
    assert all(s.placement == [] for s in steps.values())


@pytest.mark.parametrize("config, step, args, inputs", [
    # [corpus] whole: one chunk per document, in the chunk step or (no docs) in the import that writes the corpus
    ('[corpus]\ndocs = "docs"\nwhole = true\n[golden]\nfile = "golden.csv"\n', "chunk",
     ["docs", "--whole", "-o", "out/corpus.jsonl"], ["docs"]),
    ('[corpus]\nwhole = true\n[golden]\nfile = "squad.json"\n', "import",
     ["squad.json", "--whole", "--corpus-out", "out/corpus.jsonl", "-o", "out/golden.jsonl"], ["squad.json"]),
    ('[corpus]\nsize = 30\noverlap = 5\n[golden]\nfile = "squad.json"\n', "import",
     ["squad.json", "--size", "30", "--overlap", "5", "--corpus-out", "out/corpus.jsonl", "-o", "out/golden.jsonl"], ["squad.json"]),
    ('[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\nlimit = 2\n', "import",
     ["golden.csv", "--limit", "2", "--corpus", "out/corpus.jsonl", "-o", "out/golden.jsonl"], ["golden.csv", "out/corpus.jsonl"]),
    # TREC topics: their qrels are read by the import, so an edit of them makes golden.jsonl again
    ('[corpus]\ndocs = "docs"\nwhole = true\n[golden]\nfile = "topics.txt"\nformat = "trec"\nqrels = "topics.qrels"\n', "import",
     ["topics.txt", "--format", "trec", "--qrels", "topics.qrels", "--corpus", "out/corpus.jsonl", "-o", "out/golden.jsonl"],
     ["topics.txt", "topics.qrels", "out/corpus.jsonl"]),
    # [pool] enabled = false: no pool step, and the judge judges the gold chunks alone
    ('[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n[pool]\nenabled = false\n', "judge",
     ["--corpus", "out/corpus.jsonl", "--golden", "out/golden.jsonl", "--cache", "out/cache", "-o", "out/judgments.jsonl"],
     ["out/corpus.jsonl", "out/golden.jsonl"]),
    # a model named by the config: dense retrieval and the rerank load it
    ('[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n[judge]\nenabled = false\n[retrieve]\nmethods = ["bm25"]\n'
     'model = "sentence-transformers/all-MiniLM-L6-v2"\n[lift]\nbase = "bm25"\n', "retrieve bm25+dense",
     ["--corpus", "out/corpus.jsonl", "--golden", "out/golden.jsonl", "--run", "out/runs/bm25.run", "--rerank", "dense", "-k", "20",
      "--cache", "out/cache", "--rerank-depth", "20", "--model", "sentence-transformers/all-MiniLM-L6-v2", "-o", "out/runs/bm25+dense.run"],
     ["out/corpus.jsonl", "out/golden.jsonl", "out/runs/bm25.run"]),
])
def test_each_key_reaches_its_step(tmp_path, config, step, args, inputs):
    write_data(tmp_path)
    (tmp_path / "squad.json").write_text(json.dumps({"data": [{"title": "d", "paragraphs": [{"context": "Cats purr.", "qas": [
        {"id": "q", "question": "Why?", "answers": [{"text": "purr", "answer_start": 5}]}]}]}]}))
    (tmp_path / "topics.txt").write_text("<top>\n<num> Number: 301\n<title> cats\n</top>\n")
    (tmp_path / "topics.qrels").write_text("301 0 cats 1\n")
    steps = planned(tmp_path, config)
    assert (steps[step].args, steps[step].inputs) == (args, inputs)
    if "[pool]" in config:  # enabled = false
        assert "pool" not in steps


def test_a_calibration_file_is_an_input_of_label_and_sensitivity_marks_its_middle_cut(tmp_path):
    """A refit `semrel calibrate -o` wrote is read by label (edited, it relabels); with grade cuts the sweep marks the
    middle one, the binary cut between them."""
    write_data(tmp_path)
    (tmp_path / "cal.json").write_text(json.dumps({"rule": "probability", "on": "p", "thresholds": [0.25, 0.5, 0.75], "cut": 0.5,
                                                   "labels": "graded", "calibration": {"slope": 1.0, "shift": 0.0}}))
    steps = planned(tmp_path, '[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n[retrieve]\nmethods = ["bm25", "dense"]\n'
                              '[label]\ncalibration = "cal.json"\n')
    assert steps["label"].args == ["out/judgments.jsonl", "-o", "out/derived.qrels", "--calibration", "cal.json"]
    assert steps["label"].inputs == ["out/judgments.jsonl", "cal.json"]
    assert steps["sensitivity"].args[-4:] == ["--on", "p", "--at", "0.5"]


def test_a_captured_table_gets_a_manifest_naming_its_step_its_one_line_command_and_every_input(tmp_path, monkeypatch):
    """The manifest `semrel run` writes beside what a step prints: the step, the command on one line as `semrel eval`
    would be typed (as --dry-run prints it, unwrapped), and each file the step read. The steps read only their command
    lines: a SEMREL_* variable of a command's option (eval's --places) changes no table `semrel run` makes."""
    config = write_config(write_data(tmp_path), extra='[eval]\nmeasures = ["nDCG@10"]\n')
    monkeypatch.setenv("SEMREL_EVAL_PLACES", "1")
    monkeypatch.setenv("SEMREL_PLACES", "1")
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    record = json.loads((out / "eval.gold.txt.manifest.json").read_text())
    command = f"semrel eval {out / 'gold.qrels'} {out / 'runs' / 'bm25.run'} -m nDCG@10 > {out / 'eval.gold.txt'}"
    assert record["params"] == {"step": "eval gold", "command": command}
    assert [i["path"] for i in record["inputs"]] == [str(out / "gold.qrels"), str(out / "runs" / "bm25.run")]
    monkeypatch.delenv("SEMREL_EVAL_PLACES")
    monkeypatch.delenv("SEMREL_PLACES")
    typed = run("eval", out / "gold.qrels", out / "runs" / "bm25.run", "-m", "nDCG@10")
    assert typed.exit_code == 0 and (out / "eval.gold.txt").read_text() == typed.stdout


@pytest.mark.parametrize("sets, message", [
    (["lift.base=bm25", "lift.depth=0"], "--set lift.depth=0: [lift] depth: give 1 or more"),
    (["corpus.size=0"], "--set corpus.size=0: [corpus] size: give 1 or more"),
    (["corpus.whole=true", "corpus.size=50"], "--set corpus.whole=true: [corpus] whole: give [corpus] size or whole, not both"),
    (['retrieve.runs=["runs/bm25.run"]'], "--set retrieve.runs=[\"runs/bm25.run\"]: [retrieve] runs: two runs would be named 'bm25' "
                                          "(a run the config makes): runs are told apart by their file's name, so rename the file"),
    # the rerank of [lift] base loads [retrieve] model even where every method is bm25
    (["lift.base=bm25", "retrieve.model=a--b"], "--set retrieve.model=a--b: [retrieve] model: model 'a--b' is neither a folder nor"),
    (["golden.seed=x"], "--set golden.seed=x: [golden] seed: expected an integer"),
])
def test_more_values_the_steps_would_refuse_are_refused_before_any_step(tmp_path, monkeypatch, sets, message):
    config = write_config(write_data(tmp_path))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bm25.run").write_text("q-cats Q0 cats#0 1 1.0 mine\n")
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("run", config, *[a for s in sets for a in ("--set", s)]), message, code=2)
    assert not (tmp_path / "out").exists()


def test_a_list_key_takes_only_strings(tmp_path):
    config = write_config(write_data(tmp_path))
    config.write_text(config.read_text().replace('methods = ["bm25"]', "methods = [1]"))
    assert_one_error(run("run", config), "semrel.toml:8: [retrieve] methods: expected a list of strings", code=2)


def test_a_set_value_is_taken_without_the_spaces_around_it(tmp_path):
    """`--set "report.title = My title "` as a shell user types it: the title is `My title`."""
    config = write_config(write_data(tmp_path))
    loaded = run_config.load_config(str(config), [" report.title =  My title  "], environ={})
    assert loaded["report"]["title"] == "My title"


def test_every_path_the_config_gives_is_made_absolute_from_the_configs_folder(tmp_path, monkeypatch):
    """Named from another folder, the config's relative paths are its own folder's: the TREC qrels, the user's runs and a
    model folder named by a bare name that is a folder beside the config (as the model loader takes it)."""
    from test_run import model_folder

    (tmp_path / "project").mkdir()
    project = write_data(tmp_path / "project")
    model_folder(project / "m")
    (project / "topics.txt").write_text("<top>\n<num> Number: 301\n<title> cats\n</top>\n")
    (project / "topics.qrels").write_text("301 0 cats 1\n")
    (project / "mine.run").write_text("301 Q0 cats 1 1.0 mine\n")
    (project / "semrel.toml").write_text('[corpus]\ndocs = "docs"\nwhole = true\n[golden]\nfile = "topics.txt"\nformat = "trec"\n'
                                         'qrels = "topics.qrels"\n[retrieve]\nruns = ["mine.run"]\n[judge]\nmodel = "m"\n')
    monkeypatch.chdir(tmp_path)
    loaded = run_config.load_config("project/semrel.toml", environ={})
    assert (loaded["golden"]["qrels"], loaded["retrieve"]["runs"], loaded["judge"]["model"]) == (
        "project/topics.qrels", ["project/mine.run"], "project/m")
    steps = {s.name: s for s in run_config.plan(loaded)}
    assert "project/topics.qrels" in steps["import"].inputs and "project/m" in steps["judge"].inputs
    assert steps["judge"].args[-2:] == ["--model", "project/m"]


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"steps": [1], "gold": 2}'])
def test_a_damaged_state_is_no_state(tmp_path, damage):
    """A .semrel-run.json that is not the state (cut short, edited) vouches for nothing: every step is made again,
    the outputs the last run left replaced without a refusal, and the state written anew."""
    config = write_config(write_data(tmp_path))
    with typed("semrel", "run", str(config)):  # the outputs' manifests name `semrel run`, as when a user runs it
        assert run("run", config).exit_code == 0
    state = tmp_path / "out" / pipeline.STATE_FILE
    state.write_text(damage)
    dry = run("run", config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert set(statuses(dry.stdout).values()) == {"run"}
    again = run("run", config)
    assert again.exit_code == 0 and set(statuses(again.stdout).values()) == {"ran"}, again.output
    assert set(json.loads(state.read_text())["steps"]) == {"chunk", "import", "qrels", "retrieve bm25", "eval gold", "report"}


def test_a_folder_input_keeps_its_stamp_only_once_its_newest_file_is_old_enough(tmp_path, monkeypatch):
    """As for a file: a documents folder one of whose files changed within the file system's tick is read again next
    time (its newest file's change, ctime, decides)."""
    write_data(tmp_path)
    step = run_config.Step("chunk", ("corpus", "chunk"), [], [str(tmp_path / "docs")], [])
    assert pipeline.Digests().of(step)["stamps"] == {str(tmp_path / "docs"): [None, None]}
    monkeypatch.setattr(files, "RACY_NS", 0)
    assert pipeline.Digests().of(step)["stamps"][str(tmp_path / "docs")][0] is not None


def test_a_dry_run_that_remakes_the_gold_qrels_reads_gold_off_a_golden_set_where_some_queries_have_none(tmp_path):
    """`--force qrels --dry-run` tells from golden.jsonl whether there is gold: one query with gold chunks is enough
    for eval gold (a set where some queries have none is scored on those that have)."""
    config = write_config(write_data(tmp_path))
    golden = tmp_path / "golden.csv"
    golden.write_text(golden.read_text().replace('"bread#0"', '""'))
    assert run("run", config).exit_code == 0
    dry = run("run", config, "--dry-run", "--force", "qrels")
    assert dry.exit_code == 0, dry.output
    assert statuses(dry.stdout) == {"chunk": "skipped", "import": "skipped", "qrels": "run", "retrieve bm25": "skipped",
                                    "eval gold": "run", "report": "run"}
    assert "no gold chunks" not in dry.stderr


P_RULE = json.dumps({"rule": "probability", "on": "p", "thresholds": [0.47], "cut": 0.4, "labels": "binary",
                     "calibration": {"slope": 1.0, "shift": -0.3}})


@pytest.mark.parametrize("sets", [
    ["label.on=p", "label.threshold=0.5", "sensitivity.to=1.5"],
    ["label.on=p", "label.grades=0.3,0.6", "sensitivity.from=-0.5"],
    ["label.calibration=cal.json", "sensitivity.to=1.5"],
])
def test_a_sweep_on_p_beyond_0_to_1_is_refused_before_any_step_whatever_label_rule_cuts_p(tmp_path, monkeypatch, sets):
    """A sweep on p outside 0..1 is refused before any step, whichever [label] key makes the labels cut p (it had been
    checked only where no [label] key was set, and refused by the sensitivity step after the judge had run)."""
    config = write_config(write_data(tmp_path), judge=True)
    (tmp_path / "cal.json").write_text(P_RULE)
    monkeypatch.chdir(tmp_path)
    planned = run("run", config, "--dry-run", "--set", "retrieve.methods=bm25,dense", *[a for s in sets for a in ("--set", s)])
    key = sets[-1].split("=")[0].split(".")[1]
    assert_one_error(planned, f"[sensitivity] {key}: give a number in 0..1", code=2)


def test_a_sweep_on_a_raw_score_takes_any_range(tmp_path):
    """The range check is on p alone: [label] on = "R" sweeps R, which may run past 1."""
    config = write_config(write_data(tmp_path), judge=True)
    planned = run("run", config, "--dry-run", "--set", "retrieve.methods=bm25,dense", "--set", "label.on=R", "--set", "label.threshold=0.5",
                  "--set", "sensitivity.to=1.5")
    assert planned.exit_code == 0, planned.output
    assert "--to 1.5 --on R --at 0.5 " in planned.stdout.replace(" \\\n    ", " ")


def test_force_takes_a_step_kind_and_runs_each_step_of_it(tmp_path):
    """`--force retrieve` (the choice --force offers) runs every retrieve step, `retrieve bm25` among them, and what reads them."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    dry = run("run", config, "--dry-run", "--force", "retrieve")
    assert dry.exit_code == 0, dry.output
    assert statuses(dry.stdout) == {"chunk": "skipped", "import": "skipped", "qrels": "skipped", "retrieve bm25": "run",
                                    "eval gold": "run", "report": "run"}


def test_a_table_changed_by_hand_after_its_manifest_was_deleted_is_not_replaced_unasked(tmp_path):
    """No manifest tells whose the bytes are, but the state's sha256 of what the step left does: other bytes are work."""
    config = write_config(write_data(tmp_path))
    with typed("semrel", "run", str(config)):
        assert run("run", config).exit_code == 0
    table = tmp_path / "out" / "eval.gold.txt"
    Path(f"{table}.manifest.json").unlink()
    table.write_text(table.read_text() + "my note\n")
    assert_one_error(run("run", config), f"eval gold would replace {table}, which holds other bytes than `semrel run` wrote and no "
                     "manifest: to keep it, copy it elsewhere; to replace it, run again with --force eval", code=2)
    assert table.read_text().endswith("my note\n")


def test_a_run_of_the_users_that_a_step_would_write_over_is_refused_before_any_step(tmp_path):
    """[retrieve] runs are the user's files: one kept where a step writes (here the pool's table) is named, not replaced."""
    config = write_config(write_data(tmp_path), judge=True)
    config.write_text(config.read_text().replace('methods = ["bm25"]', 'methods = ["bm25"]\nruns = ["out/pool.tsv"]'))
    (tmp_path / "out").mkdir()
    mine = tmp_path / "out" / "pool.tsv"
    mine.write_text("q-cats Q0 cats#0 1 1.0 mine\n")
    assert_one_error(run("run", config), f"semrel.toml: the pool step would write {mine} over [retrieve] runs {mine}; semrel never "
                                         "writes over its inputs: set `out` to another folder", code=2)
    assert mine.read_text() == "q-cats Q0 cats#0 1 1.0 mine\n"


def test_a_moved_gold_chunk_is_named_with_the_first_query_it_is_gold_for(tmp_path):
    """A chunk gold for several queries is named with the first of them in the golden set's order."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"query_id": q, "query": "Why?", "reference_answer": "Because.", "gold_chunk_ids": ["c#0"]})
                              + "\n" for q in ("q2", "q1")))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "c#0", "title": "", "text": "new text"}) + "\n")
    known = {"chunks": {"c#0": hashlib.sha256(b"old text").hexdigest()}}
    _, warnings = pipeline.watched_texts(str(golden), [], str(corpus), known, pipeline.Digests())
    assert len(warnings) == 1 and "(e.g. c#0, gold for query q2)" in warnings[0]
    # a run of the user's naming the chunk is warned of while it is the file of the last run; changed since, it is new
    mine = tmp_path / "mine.run"
    mine.write_text("q1 Q0 c#0 1 1.0 mine\n")
    as_then = {**known, "runs": {str(mine): [hashlib.sha256(mine.read_bytes()).hexdigest(), None]}}
    _, warnings = pipeline.watched_texts(str(golden), [str(mine)], str(corpus), as_then, pipeline.Digests())
    assert len(warnings) == 2 and warnings[1].startswith(f"run 'mine' ({mine}) names 1 chunk holding other text than at the last run")
    remade = {**known, "runs": {str(mine): [hashlib.sha256(b"an older run").hexdigest(), None]}}
    assert len(pipeline.watched_texts(str(golden), [str(mine)], str(corpus), remade, pipeline.Digests())[1]) == 1


def test_the_hint_to_put_a_refit_in_the_config_is_given_only_where_the_config_has_none(tmp_path):
    """After a label step whose warnings say `semrel calibrate`, run names the [label] calibration key; not where the config
    already labels by a calibration file, nor where the label step was skipped."""
    from semrel.formats.manifest import write_manifest

    labels = tmp_path / "derived.qrels"
    labels.write_text("q1 0 c#0 1\n")
    write_manifest(labels, params={"warnings": ["review 100 pairs and run `semrel calibrate`"]})
    step = run_config.Step("label", ("label",), [], [], [str(labels)])
    config = {"label": {"calibration": None}}
    said: list[str] = []
    pipeline._calibration_hint([(step, "ran", 1.0)], config, "semrel.toml", said.append)
    assert len(said) == 1 and said[0].startswith("semrel run: to label with the refit the warning names, set [label] calibration in "
                                                 "semrel.toml to the file `semrel calibrate -o` wrote")
    pipeline._calibration_hint([(step, "skipped", 0.0)], config, "semrel.toml", said.append)
    pipeline._calibration_hint([(step, "ran", 1.0)], {"label": {"calibration": "cal.json"}}, "semrel.toml", said.append)
    assert len(said) == 1


def test_a_hand_edited_corpus_is_kept_by_giving_it_as_the_corpus_file(tmp_path, monkeypatch):
    """The refusal to replace an output edited by hand says how to keep it: corpus.jsonl given as [corpus] file, as
    golden.jsonl as [golden] file; a table no key takes is copied elsewhere."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setattr("sys.argv", ["semrel", "run", str(config)])  # as a user runs it: its manifests name `semrel run`
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    corpus = out / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace("purr", "often purr"))
    assert_one_error(run("run", config), f"chunk would replace {corpus}, which was changed after `semrel run {config}` wrote it: to "
                     f"keep it, copy it out of {out} and give the copy as [corpus] file; to replace it, run again with --force chunk",
                     code=2)
    assert run("run", config, "--force", "chunk").exit_code == 0
    table = out / "eval.gold.txt"
    table.write_text("my notes\n")
    assert_one_error(run("run", config), f"eval gold would replace {table}, which was changed after", "to keep it, "
                     "copy it elsewhere; to replace it", code=2)


def test_a_plan_without_gold_scores_nothing_against_it(tmp_path):
    """Where the golden set turns out to hold no gold chunks, the rest of the run is planned anew without them: no eval
    gold, no agree, and a report without the gold column (the slow end-to-end test runs such a set)."""
    write_data(tmp_path)
    (tmp_path / "semrel.toml").write_text('[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n')
    config = run_config.load_config(str(tmp_path / "semrel.toml"), environ={})
    names = [s.name for s in run_config.plan(config, gold=False)]
    assert names == ["chunk", "import", "qrels", "retrieve bm25", "pool", "judge", "label", "eval derived", "sensitivity", "report"]
    report = next(s for s in run_config.plan(config, gold=False) if s.name == "report")
    assert "--gold-qrels" not in report.args and "--agreement" not in report.args


@pytest.mark.parametrize("label, swept", [("threshold = 0.6", ["--on", "R", "--at", "0.6"]), ("grades = \"0.5,0.7\"", ["--on", "R"]),
                                          ("on = \"F\"", ["--on", "F"])])
def test_a_sweep_is_on_the_score_the_labels_cut(tmp_path, label, swept):
    """label's thresholds without `on` cut R (its default), so the sweep is on R, marked at the threshold."""
    write_data(tmp_path)
    steps = planned(tmp_path, f'[corpus]\ndocs = "docs"\n[golden]\nfile = "golden.csv"\n[retrieve]\nmethods = ["bm25", "dense"]\n'
                              f'[label]\n{label}\n')
    assert steps["sensitivity"].args[-len(swept):] == swept and "--on" not in steps["sensitivity"].args[:-len(swept)]


def test_a_dry_run_from_the_configs_folder_says_retrieval_may_be_skipped_when_golden_is_made_anew(tmp_path, monkeypatch):
    """The note that retrieve reads only the queries of a golden.jsonl made anew was said only where `out` was an absolute
    path: the check left golden.jsonl out of the step's inputs, and with them out of the paths its settings hash makes
    absolute, so with `out = "out"` named from the config's folder the step never looked up to date but for it."""
    config = write_config(write_data(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert run("run", config.name).exit_code == 0
    csv_file = tmp_path / "golden.csv"
    csv_file.write_text(csv_file.read_text().replace('"Cats purr when', '"Cats often purr when'))  # an answer: queries as they were
    dry = run("run", config.name, "--dry-run")
    assert statuses(dry.stdout)["retrieve bm25"] == "run", dry.output
    assert ("semrel run: retrieve bm25 reads only the queries of out/golden.jsonl, which would be made anew: listed, but skipped "
            "if the new file's queries are the old ones") in dry.stderr
    assert statuses(run("run", config.name).stdout)["retrieve bm25"] == "skipped"


def test_the_config_named_through_a_linked_folder_reruns_nothing(tmp_path):
    """Paths were made absolute but not resolved: the config named through a symlinked folder (a home folder linked
    elsewhere, macOS's /tmp) hashed other settings and state keys than named by its real path, so each name reran every
    step after the other."""
    real = tmp_path / "real"
    real.mkdir()
    config = write_config(write_data(real))
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    assert set(statuses(run("run", tmp_path / "link" / config.name).stdout).values()) == {"ran"}
    again = run("run", config)
    assert set(statuses(again.stdout).values()) == {"skipped"}, again.output
    assert set(statuses(run("run", tmp_path / "link" / config.name, "--dry-run").stdout).values()) == {"skipped"}


def test_a_moved_chunk_of_the_users_run_is_warned_of_with_the_config_named_from_another_folder(tmp_path, monkeypatch):
    """The state kept the user's run files by their paths as spelt: named from the config's folder, then by its full
    path, the run file looked made anew, and a chunk an edited document had moved under its ids went without a warning."""
    config = write_config(write_data(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert run("run", config.name).exit_code == 0
    (tmp_path / "mine.run").write_text((tmp_path / "out" / "runs" / "bm25.run").read_text())
    config.write_text(config.read_text().replace("k = 5", 'k = 5\nruns = ["mine.run"]'))
    assert run("run", config.name).exit_code == 0
    ships = tmp_path / "docs" / "ships.md"
    ships.write_text("A note on harbours.\n\n" + ships.read_text())
    edited = run("run", config)
    assert edited.exit_code == 0, edited.output
    assert f"semrel: warning: run 'mine' ({tmp_path / 'mine.run'}) names 1 chunk holding other text" in edited.stderr, edited.stderr


def test_init_names_a_config_with_a_space_as_a_shell_takes_it(tmp_path, monkeypatch):
    """`semrel init -o "my cfg.toml"` said to check it with `semrel run my cfg.toml --dry-run`: pasted, two arguments."""
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    made = run("init", "--docs", "docs", "--golden", "golden.csv", "-o", "my cfg.toml")
    assert made.exit_code == 0, made.output
    assert made.stderr.strip().splitlines()[-1] == ("wrote my cfg.toml; check it with `semrel run 'my cfg.toml' --dry-run`, "
                                                     "run it with: semrel run 'my cfg.toml'")
    assert made.stdout == ""  # on stderr, as every other command's 'wrote ...' line


def test_the_pick_command_a_moved_gold_chunk_suggests_quotes_a_path_with_a_space(tmp_path):
    """The warning's `semrel golden pick --golden ... --corpus ...` named a folder with a space unquoted: pasted, it
    split the path in two."""
    folder = tmp_path / "my project"
    folder.mkdir()
    config = write_config(write_data(folder))
    small = ("--set", "corpus.size=6", "--set", "corpus.overlap=0")
    assert run("run", config, *small).exit_code == 0
    cats = folder / "docs" / "cats.md"
    cats.write_text("A note on house pets and their habits.\n\n" + cats.read_text())
    edited = run("run", config, *small)
    out = folder / "out"
    assert f"`semrel golden pick --golden '{out / 'golden.jsonl'}' --corpus '{out / 'corpus.jsonl'}'`" in edited.stderr, edited.stderr


def test_each_manifest_a_step_writes_records_the_steps_command(tmp_path, monkeypatch):
    """A file's manifest named `semrel run semrel.toml` alone: made with SEMREL_RETRIEVE_K=3, its record did not say how
    it was made (that command, run again without the variable, makes another file). It records the step's command too."""
    config = write_config(write_data(tmp_path))
    monkeypatch.setenv("SEMREL_RETRIEVE_K", "3")
    assert run("run", config).exit_code == 0
    out = tmp_path / "out"
    made = json.loads((out / "runs" / "bm25.run.manifest.json").read_text())
    step = made["step"]
    assert step[:2] == ["semrel", "retrieve"] and step[step.index("-k") + 1] == "3", step
    assert json.loads((out / "eval.gold.txt.manifest.json").read_text())["step"][:2] == ["semrel", "eval"]


@pytest.mark.slow
def test_a_dry_run_says_the_rerank_of_a_run_that_may_be_skipped_may_be_skipped_too(tmp_path, monkeypatch):
    """Where golden.jsonl would be made anew, the note named the retrieve steps that read only its queries, but not the
    rerank of one of them: it reads that run too, which the dry run counted as rewritten, so the rerank was listed
    without the note and the real run then skipped it."""
    config = write_config(write_data(tmp_path), extra='[lift]\nbase = "bm25"\ndepth = 3\n')
    monkeypatch.chdir(tmp_path)
    assert run("run", config.name).exit_code == 0
    csv_file = tmp_path / "golden.csv"
    csv_file.write_text(csv_file.read_text().replace('"Cats purr when', '"Cats often purr when'))
    dry = run("run", config.name, "--dry-run")
    assert ("semrel run: retrieve bm25, retrieve bm25+dense read only the queries of out/golden.jsonl, which would be made "
            "anew: listed, but skipped if the new file's queries are the old ones") in dry.stderr, dry.stderr
    ran = statuses(run("run", config.name).stdout)
    assert ran["retrieve bm25"] == ran["retrieve bm25+dense"] == "skipped", ran


def test_a_review_database_in_the_config_puts_the_corrected_metrics_in_the_report(tmp_path):
    """[report] reviewed passes the database to the report step (`report --reviewed`), among the step's inputs so that new
    grades make the page anew; with the judge off there are no derived labels to correct, said in one line."""
    write_data(tmp_path)
    (tmp_path / "r.sqlite").write_bytes(b"")
    config = write_config(tmp_path, judge=True, extra='[report]\nreviewed = "r.sqlite"')
    dry = run("run", config, "--dry-run")
    assert dry.exit_code == 0, dry.output
    [step] = [s for s in run_config.plan(run_config.load_config(str(config))) if s.name == "report"]
    assert step.args[step.args.index("--reviewed") + 1] == str(tmp_path / "r.sqlite") and str(tmp_path / "r.sqlite") in step.inputs
    assert "--reviewed" in dry.stdout
    off = write_config(tmp_path, judge=False, extra='[report]\nreviewed = "r.sqlite"')
    assert_one_error(run("run", off, "--dry-run"), "semrel.toml:14: [report] reviewed: corrects the derived labels by a review, and "
                     "[judge] enabled = false derives none; remove it, or set [judge] enabled = true", code=2)


def test_a_run_kept_over_a_changed_reference_answer_is_as_verify_records_it(tmp_path):
    """retrieve reads only the golden set's queries, so run skips it when an answer changes; the run's manifest recorded
    golden.jsonl's bytes alone, and `semrel verify out` then said each run had changed (exit 1) and told to make it again.
    A changed query still counts."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    golden, bm25 = tmp_path / "golden.csv", tmp_path / "out" / "runs" / "bm25.run"
    golden.write_text(golden.read_text().replace("content", "happy"))
    assert statuses(run("run", config).stdout)["retrieve bm25"] == "skipped"
    kept = run("verify", tmp_path / "out")
    assert kept.exit_code == 0, kept.output
    assert f"{bm25}: input {tmp_path / 'out' / 'golden.jsonl'}: other bytes (" in kept.stdout
    assert "the same queries, which are all the command read of it" in kept.stdout
    made = tmp_path / "out" / "golden.jsonl"
    made.write_text(made.read_text().replace('"query":"Why do cats purr?"', '"query":"Why do dogs purr?"'))
    changed = run("verify", bm25)
    assert changed.exit_code == 1 and "input changed" in changed.stdout, changed.output


@pytest.mark.parametrize("cache", ["../docs", "../docs/cache"])
def test_a_cache_in_the_documents_folder_is_refused_before_any_step(tmp_path, cache):
    """[judge] cache is relative to out, so `..` leads out of it: the bm25 index and embeddings went into the documents,
    and the next run chunked them as 7 documents."""
    config = write_config(write_data(tmp_path), extra=f'cache = "{cache}"')
    before = sorted(p.name for p in (tmp_path / "docs").iterdir())
    assert_one_error(run("run", config), f"the retrieve bm25 step would write its cache {os.path.normpath(tmp_path / 'out' / cache)} "
                     f"into [corpus] docs {tmp_path / 'docs'}", "set [judge] cache to a folder of its own", code=2)
    assert sorted(p.name for p in (tmp_path / "docs").iterdir()) == before


def test_files_of_steps_the_config_no_longer_runs_are_named_after_the_run(tmp_path):
    """A step switched off leaves its outputs in out (the step may come back), and `semrel verify` later found them made from
    inputs that had changed since, with no word from the run of why they were there."""
    config = write_config(write_data(tmp_path))
    assert run("run", config).exit_code == 0
    off = run("run", config, "--set", "report.enabled=false")
    assert off.exit_code == 0, off.output
    assert [line for line in off.stderr.splitlines() if "no longer runs" in line] == [
        f"semrel: warning: 1 file in {tmp_path / 'out'} comes from steps this config no longer runs (report): "
        f"{os.path.relpath(tmp_path / 'out' / 'report.html')}; nothing this run made reads them, and `semrel verify` checks them "
        "against inputs that may have changed since: remove them if you no longer need them"]
    assert (tmp_path / "out" / "report.html").exists()  # kept: the step may come back
    assert "no longer runs" not in run("run", config).stderr
