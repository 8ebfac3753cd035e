"""`semrel.import_golden`, `semrel.split_golden` and `semrel.dedup_golden`: the records and files `semrel golden
import`, `golden split` and `golden dedup` write, from files and records alike; wrong arguments refused, naming them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import semrel
from helpers import ok, read_lines, run, write
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.formats.corpus import read_golden
from semrel.golden.curate import Deduplicated
from semrel.records import GoldenItem, Judgment, QuerySample

DATA = Path(__file__).resolve().parent.parent / "data"
PUBMEDQA = {"123": {"QUESTION": "Does it work?", "CONTEXTS": ["First part.", "Second part."], "LONG_ANSWER": "It works."},
            "456": {"QUESTION": "Is it safe?", "CONTEXTS": ["Only part."], "LONG_ANSWER": "Mostly."}}
NEAR = [  # q1, q2 and q5, q6 are near-duplicates (tests/golden/test_golden_curate.py); q2 has a gold chunk q1 lacks
    ("q1", "How far do honey bees fly to find food?", ["a#0"]),
    ("q2", "What distance do honey bees fly to find food?", ["a#1"]),
    ("q3", "What temperature does a beehive keep in winter?", ["b#0"]),
    ("q4", "Who lays the eggs in a colony?", ["b#1"]),
    ("q5", "Why do beekeepers use smoke?", ["c#0"]),
    ("q6", "WHY do beekeepers use  smoke?", ["c#0"]),
]


def manifest(path) -> dict:
    return json.loads(Path(f"{path}.manifest.json").read_text())


def same_files(ours: Path, theirs: Path) -> None:
    """The same bytes, and manifests that record the same inputs, parameters and rows."""
    assert ours.read_bytes() == theirs.read_bytes()
    for key in ("inputs", "params", "rows"):
        assert manifest(ours)[key] == manifest(theirs)[key], key


def warnings_printed(result) -> list[str]:
    return [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if line.startswith("semrel: warning: ")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The demo's corpus, as `make demo` chunks it."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    ok("corpus", "chunk", DATA / "docs", "--size", "120", "--overlap", "20", "-o", path)
    return path


@pytest.fixture
def near(tmp_path) -> Path:
    return write(tmp_path / "golden.jsonl", "".join(json.dumps({"query_id": q, "query": t, "reference_answer": "An answer.",
                                                                "gold_chunk_ids": gold}) + "\n" for q, t, gold in NEAR))


# ---------------------------------------------------------------- import


def test_import_gives_the_golden_set_semrel_golden_import_writes(corpus, tmp_path):
    (tmp_path / "cli").mkdir()
    ok("golden", "import", DATA / "golden.csv", "--corpus", corpus, "-o", tmp_path / "cli" / "golden.jsonl",
       "--qrels-out", tmp_path / "cli" / "gold.qrels")
    written = read_golden(tmp_path / "cli" / "golden.jsonl")
    returned = semrel.import_golden(DATA / "golden.csv", tmp_path / "golden.jsonl", corpus=corpus, qrels_out=tmp_path / "gold.qrels")
    assert returned == written and len(written) == 18 and all(isinstance(i, GoldenItem) for i in returned)
    same_files(tmp_path / "golden.jsonl", tmp_path / "cli" / "golden.jsonl")
    assert (tmp_path / "gold.qrels").read_bytes() == (tmp_path / "cli" / "gold.qrels").read_bytes()
    assert semrel.import_golden(str(DATA / "golden.csv"), corpus=corpus) == written  # nothing written without output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli", "gold.qrels", "gold.qrels.manifest.json", "golden.jsonl",
                                                          "golden.jsonl.manifest.json"]
    sampled = semrel.import_golden(DATA / "golden.csv", sample=QuerySample(limit=3))
    assert [i.query_id for i in sampled] == [i.query_id for i in written[:3]]
    # a number is `--sample N`: N drawn at random with seed 0 (it was a TypeError naming a class the docs never showed)
    ok("golden", "import", DATA / "golden.csv", "--sample", "5", "-o", tmp_path / "cli" / "sample.jsonl")
    assert semrel.import_golden(DATA / "golden.csv", sample=5) == read_golden(tmp_path / "cli" / "sample.jsonl")


def test_an_import_that_builds_the_corpus_writes_it_as_the_command_does(tmp_path):
    source = write(tmp_path / "ori_pqal.json", json.dumps(PUBMEDQA))
    (tmp_path / "cli").mkdir()
    result = run("golden", "import", source, "--corpus-out", tmp_path / "cli" / "corpus.jsonl", "-o", tmp_path / "cli" / "golden.jsonl",
                 "--size", "50")
    assert result.exit_code == 0, result.output
    heard: list[str] = []
    items = semrel.import_golden(source, tmp_path / "golden.jsonl", corpus_out=tmp_path / "corpus.jsonl", size=50, warn=heard.append)
    assert items == read_golden(tmp_path / "cli" / "golden.jsonl") and [i.gold_chunk_ids for i in items] == [("123#0", "123#1"), ("456#0",)]
    for name in ("corpus.jsonl", "golden.jsonl"):
        same_files(tmp_path / name, tmp_path / "cli" / name)
    assert heard == ["size= does not apply to pubmedqa: each context is one chunk"]  # the library names its parameter
    assert warnings_printed(result) == ["--size does not apply to pubmedqa: each context is one chunk"]  # the command its option
    message = "format='pubmedqa' builds the corpus too: give corpus_out='corpus.jsonl'"
    with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
        semrel.import_golden(source, tmp_path / "other.jsonl")
    result = run("golden", "import", source, "-o", tmp_path / "other.jsonl")
    assert result.exit_code == 2
    assert result.stderr == "semrel: error: --format pubmedqa builds the corpus too: give --corpus-out corpus.jsonl\n"
    assert not (tmp_path / "other.jsonl").exists()


def test_import_warnings_and_errors_name_parameters_where_the_command_names_options(corpus, tmp_path):
    source = write(tmp_path / "docs.csv", "query_id,query,reference_answer,gold_chunk_ids\n"
                                          "q1,Where is oil applied?,On the rollers.,chain-care\n")  # a document id as gold
    message = ("give doc_qrels='all-chunks' (every chunk of a relevant document is gold), doc_qrels='first-chunk' or "
               "doc_qrels='answer-chunk'")
    with pytest.raises(ValidationError, match=re.escape(message)):
        semrel.import_golden(source, corpus=corpus)
    result = run("golden", "import", source, "--corpus", corpus, "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 1 and ("give --doc-qrels all-chunks (every chunk of a relevant document is gold), --doc-qrels "
                                      "first-chunk or --doc-qrels answer-chunk") in result.stderr
    heard: list[str] = []
    items = semrel.import_golden(source, corpus=corpus, doc_qrels="first-chunk", warn=heard.append)
    assert items[0].gold_chunk_ids == ("chain-care#0",)
    assert heard == ["relevant documents (made into 1 gold chunk, doc_qrels='first-chunk'): 1"]
    result = run("golden", "import", source, "--corpus", corpus, "--doc-qrels", "first-chunk", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0
    assert warnings_printed(result) == ["relevant documents (made into 1 gold chunk, --doc-qrels first-chunk): 1"]
    with pytest.warns(UserWarning, match="made into 1 gold chunk") as caught:
        semrel.import_golden(source, corpus=corpus, doc_qrels="first-chunk")
    assert caught[0].filename == __file__
    topics = write(tmp_path / "topics.txt", "<top>\n<num> Number: 1\n<title> chain oil\n</top>\n")
    qrels = write(tmp_path / "q.txt", "1 0 chain-care 1\n")
    for kwargs, cli_args, said, shown in [  # the importers' own messages named options to Python callers too
        ({"format": "trec"}, ["--format", "trec"], "format='trec' needs qrels=QRELS", "--format trec needs --qrels QRELS"),
        ({"format": "trec", "qrels": qrels, "query_col": "body"}, ["--format", "trec", "--qrels", qrels, "--query-col", "body"],
         "query_col='body': a TREC topic field is one of", "--query-col body: a TREC topic field is one of"),
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(said)}"):
            semrel.import_golden(topics, corpus=corpus, **kwargs)
        result = run("golden", "import", topics, "--corpus", corpus, *cli_args, "-o", tmp_path / "t.jsonl")
        assert result.exit_code == 2 and result.stderr.startswith(f"semrel: error: {shown}"), result.stderr



@pytest.mark.parametrize("kwargs, option, said", [
    ({"split": "dev"}, ["--split", "dev"], "split= names a BEIR folder's qrels split"),
    ({"threshold": 0.7}, ["--threshold", "0.7"], "threshold= matches the reference contexts of llamaindex"),
])
def test_import_refuses_the_options_of_other_source_formats_as_the_command_does(tmp_path, kwargs, option, said):
    """`semrel golden import` refused --split and --threshold for a CSV (they do not apply); import_golden took them in silence."""
    source = write(tmp_path / "g.csv", "query,answer\nWhy?,Because.\n")
    with pytest.raises(UsageError, match=f"^{re.escape(said)}.*it does not apply to this csv source$"):
        semrel.import_golden(source, **kwargs)
    result = run("golden", "import", source, *option, "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 2 and f"error: {option[0]}{said.removeprefix(option[0][2:] + '=')}" in result.stderr
    assert len(semrel.import_golden(source, threshold=0.5)) == 1  # the default given is no option of another format

def test_import_refuses_wrong_kinds_and_bad_values(corpus, tmp_path):
    source = DATA / "golden.csv"
    for kwargs, message in [
        ({"source": 3}, "source: give a file or folder path, not int"),
        ({"format": 3}, "format: give a name, not int"),
        ({"output": 3}, "output: give a file path, not int"),
        ({"corpus_out": 3}, "corpus_out: give a file path, not int"),
        ({"threshold": "0.5"}, "threshold: give a number, not str"),
        ({"size": 1.5}, "size: give a whole number, not float"),
        ({"whole": "yes"}, "whole: give True or False, not str"),
        ({"docs": [3]}, "docs: give paths, not int"),
        ({"sample": 3.5}, "sample: give a number of queries or a semrel.records.QuerySample, not float"),
        ({"sample": None}, "sample: give a number of queries or a semrel.records.QuerySample, not None"),  # it failed deep inside
        ({"overlap": None}, "overlap: give a whole number, not None"),
        ({"format": None}, "format: give a name, not None"),
        ({"warn": 3}, "warn: give a function taking one message, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.import_golden(**{"source": source, **kwargs})
    for kwargs, message in [
        ({"format": "xml"}, "format='xml': choose one of auto, squad, llamaindex, llamaindex-pairs, ragas, deepeval, giskard, csv, "
                            "jsonl, parquet, beir, pubmedqa, msmarco, cranfield, trec"),
        ({"docs": DATA / "docs"}, "docs= goes with format='trec' (the collection's documents); this source is csv"),
        ({"qrels": source}, "qrels= goes with format='trec'; this source is csv"),
        ({"docs": DATA / "docs", "corpus": tmp_path / "c.jsonl"},  # chunked twice over: which corpus would the gold be of?
         "give docs= (documents chunked by this import, with corpus_out=) or corpus= (chunked already), not both"),
        ({"corpus_out": tmp_path / "c.jsonl"}, "corpus_out= only applies to squad, pubmedqa, msmarco, cranfield, llamaindex-pairs, "
                                              "to llamaindex, ragas, deepeval and giskard without corpus=, and to trec with docs=; "
                                              "this source is csv"),
        ({"size": 10, "whole": True}, "give size= (chunks of N words) or whole= (one chunk per document), not both"),
        ({"doc_qrels": "answer-chunk"},  # gold 'manual.pdf' was kept as it stood, a chunk id no corpus has, without a word
         "doc_qrels='answer-chunk' maps gold document ids to chunks of corpus=, which is not given: give corpus="),
        ({"threshold": 5.0}, "threshold=5.0: give the least share of an answer's words a context must hold, 0 to 1"),
        ({"threshold": float("nan")}, "threshold=nan: give the least share"),
        ({"output": "-", "qrels_out": "-"}, "two outputs are '-' (stdout): only one output can go to stdout"),  # they ran together
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(message)}"):
            semrel.import_golden(source, **kwargs)
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.stderr == ("semrel: error: --corpus-out only applies to squad, pubmedqa, msmarco, cranfield, llamaindex-pairs, to "
                             "llamaindex, ragas, deepeval and giskard without --corpus, and to trec with --docs; this source is csv\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    result = run("golden", "import", source, "--doc-qrels", "answer-chunk", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 2 and result.stderr.startswith(
        "semrel: error: --doc-qrels answer-chunk maps gold document ids to chunks of --corpus, which is not given: give --corpus")
    assert not (tmp_path / "g.jsonl").exists()
    squad = tmp_path / "squad.json"  # its gold is the chunk at the answer's offset: no document ids to map
    squad.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "Up there.", "qas": [
        {"id": "q1", "question": "Where?", "answers": [{"text": "Up", "answer_start": 0}]}]}]}]}))
    with pytest.raises(UsageError,
                       match=r"^doc_qrels= applies to gold document ids \(trec, beir, csv, jsonl, parquet\); this source is squad$"):
        semrel.import_golden(squad, doc_qrels="answer-chunk", corpus_out=tmp_path / "c.jsonl")


# ---------------------------------------------------------------- split


def test_split_gives_the_parts_semrel_golden_split_writes(near, tmp_path):
    ok("golden", "split", near, "-o", tmp_path / "cli", "--ratio", "0.5", "--seed", "1")
    written = {name: read_golden(tmp_path / "cli" / f"{name}.jsonl") for name in ("train", "test")}
    parts = semrel.split_golden(near, tmp_path / "api", ratio=0.5, seed=1)
    assert parts == written and list(parts) == ["train", "test"]
    for name in parts:
        same_files(tmp_path / "api" / f"{name}.jsonl", tmp_path / "cli" / f"{name}.jsonl")
    assert semrel.split_golden(read_golden(near), ratio=[0.5], seed=1) == written  # records; nothing written
    train = {i.query_id for i in parts["train"]}
    assert {"q1", "q2"} <= train or not {"q1", "q2"} & train  # near-duplicates stay together
    ok("golden", "split", near, "-o", tmp_path / "sizes", "--sizes", "2", "--names", "sample")
    sized = semrel.split_golden(near, sizes=2, names=["sample"])
    assert list(sized) == ["sample", "rest"] and sized == {n: read_golden(tmp_path / "sizes" / f"{n}.jsonl") for n in sized}


def test_split_refuses_wrong_kinds_and_bad_values_naming_parameters_where_the_command_names_options(near, tmp_path):
    for kwargs, message in [
        ({"ratio": "0.5"}, "ratio: give a number or a list of numbers, e.g. [0.8, 0.1], not str"),
        ({"sizes": [2.5]}, "sizes: give whole numbers, not float"),
        ({"names": "a,b"}, "names: give a list of names, e.g. ['train', 'test'], not str"),
        ({"seed": "1"}, "seed: give a whole number, not str"),
        ({"seed": None}, "seed: give a whole number, not None"),
        ({"threshold": None}, "threshold: give a cosine similarity, e.g. 0.95, not None"),
        ({"threshold": "high"}, "threshold: give a cosine similarity, e.g. 0.95, not str"),
        ({"output_dir": 3}, "output_dir: give a folder path, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.split_golden(near, **kwargs)
    for kwargs, cli_args, message, flags in [
        ({"ratio": 0.5, "sizes": [2]}, ["--ratio", "0.5", "--sizes", "2"], "give ratio= or sizes=, not both",
         "give --ratio or --sizes, not both"),
        ({"names": ["a", "a"]}, ["--names", "a,a"], "names= gives two parts the name 'a': give each part its own name",
         "--names gives two parts the name 'a': give each part its own name"),
        ({"sizes": [2], "names": ["a", "b", "c"]}, ["--sizes", "2", "--names", "a,b,c"],
         "names= gives 3 names for 2 parts (1 sizes= and the rest)", "--names gives 3 names for 2 parts (1 --sizes and the rest)"),
        ({"sizes": [2], "names": ["rest"]}, ["--sizes", "2", "--names", "rest"],
         "names= has no name for the queries sizes= leave over, and 'rest', their default, is taken: add a last name for them",
         "--names has no name for the queries --sizes leave over, and 'rest', their default, is taken: add a last name for them"),
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
            semrel.split_golden(near, tmp_path / "parts", **kwargs)
        result = run("golden", "split", near, "-o", tmp_path / "parts", *cli_args)
        assert result.exit_code == 2 and result.stderr == f"semrel: error: {flags}\n"
    with pytest.raises(ValidationError, match=r"^golden: the list is empty; give at least one GoldenItem$"):
        semrel.split_golden([])
    count = len(read_golden(near))
    result = run("golden", "split", near, "-o", tmp_path / "parts", "--ratio", "0.01")  # wrote an empty train.jsonl, exit 0
    assert result.exit_code == 2 and result.stderr == (f"semrel: error: train would get none of the {count} queries (targets 0, "
                                                       f"{count}): give larger ratios or sizes (nothing was written)\n")
    for name in ("ratio", "sizes", "names"):  # an empty list meant something: it is not the default
        with pytest.raises(UsageError, match=f"^{name}=\\[\\]: give at least one value, or leave {name} out$"):
            semrel.split_golden(near, **{name: []})
    before = Path(near).read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):  # before any work, as the command checks
        semrel.split_golden(near, Path(near).parent, names=["golden", "test"])
    assert Path(near).read_bytes() == before and not (tmp_path / "parts").exists()


# ---------------------------------------------------------------- dedup


def test_dedup_gives_the_golden_set_and_report_semrel_golden_dedup_writes(near, tmp_path):
    (tmp_path / "cli").mkdir()
    result = run("golden", "dedup", near, "--apply", "-o", tmp_path / "cli" / "dedup.jsonl", "--report", tmp_path / "cli" / "groups.jsonl")
    assert result.exit_code == 0, result.output
    heard: list[str] = []
    found = semrel.dedup_golden(near, tmp_path / "dedup.jsonl", report=tmp_path / "groups.jsonl", warn=heard.append)
    assert isinstance(found, Deduplicated)
    assert found.kept == read_golden(tmp_path / "cli" / "dedup.jsonl") and [i.query_id for i in found.kept] == ["q1", "q3", "q4", "q5"]
    assert found.report == read_lines(tmp_path / "cli" / "groups.jsonl") and len(found.report) == 2
    assert found.kept[0].gold_chunk_ids == ("a#0", "a#1")  # q2's gold chunk merged into q1
    for name in ("dedup.jsonl", "groups.jsonl"):
        same_files(tmp_path / name, tmp_path / "cli" / name)
    assert heard == found.merges == warnings_printed(result) and len(heard) == 1 and "merged into 'q1'" in heard[0]
    with pytest.warns(UserWarning, match="merged into 'q1'") as caught:
        again = semrel.dedup_golden(read_golden(near))  # records; nothing written
    assert again == found and caught[0].filename == __file__


def test_dedup_refuses_wrong_kinds_and_bad_values(near, tmp_path):
    for kwargs, message in [
        ({"output": 3}, "output: give a file path, not int"),
        ({"report": 3}, "report: give a file path, not int"),
        ({"threshold": "0.9"}, "threshold: give a cosine similarity, e.g. 0.95, not str"),
        ({"model": 3}, "model: give a model name or folder, not int"),
        ({"warn": 3}, "warn: give a function taking one message, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.dedup_golden(near, **kwargs)
    with pytest.raises(TypeError, match=r"^golden: give a file path or a list of GoldenItem, not dict$"):
        semrel.dedup_golden({"q1": "x"})
    with pytest.raises(UsageError, match=r"^threshold= must be in \(0, 1\], not 1.5$"):
        semrel.dedup_golden(near, threshold=1.5)
    before = Path(near).read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.dedup_golden(near, near)
    assert Path(near).read_bytes() == before


def test_qrels_of_an_import_written_alone_name_its_sources_and_numpy_sizes_are_counts(corpus, tmp_path):
    """qrels_out= without output= wrote a manifest with no inputs; numpy's ints in sizes= went into the
    parts' manifests as strings ("5")."""
    import numpy as np

    from semrel.formats.manifest import read_manifest
    from semrel.golden.neardup import split_targets

    semrel.import_golden(DATA / "golden.csv", corpus=corpus, qrels_out=tmp_path / "gold.qrels")
    inputs = [Path(i["path"]).name for i in read_manifest(tmp_path / "gold.qrels")["inputs"]]
    assert inputs == ["golden.csv", Path(corpus).name]
    targets = split_targets(12, None, [np.int64(5), np.int64(4)])  # as split_golden passes sizes=np.array([5, 4]) on
    assert targets == [5, 4] and all(type(t) is int for t in targets)



def test_an_empty_output_path_is_refused_not_taken_for_no_output(tmp_path, monkeypatch):
    """import_golden(output='') and `semrel golden import -o ''` returned the golden set, said '-> ' and wrote nothing; label
    refused '' as ': is a folder'. An unset variable in a script ends in one clear error everywhere."""
    monkeypatch.chdir(tmp_path)
    source = write(tmp_path / "g.csv", "query,answer\nWhy?,Because.\n")
    for name in ("output", "qrels_out"):
        with pytest.raises(UsageError, match="^an output's path is empty: give a file name$"):
            semrel.import_golden(source, **{name: ""})
    result = run("golden", "import", source, "-o", "")
    assert result.exit_code == 2 and "error: an output's path is empty: give a file name" in result.stderr
    with pytest.raises(UsageError, match="^an output's path is empty"):
        semrel.label([Judgment("q", "d", 0.5, 0.5, 0.5, p=0.9)], "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv"]
