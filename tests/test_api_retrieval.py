"""`semrel.fuse`, `semrel.retrieve` and `semrel.pool`: the runs `semrel fuse` and `semrel retrieve` write and the
pool `semrel pool` writes, on the demo data (data/docs, data/golden.csv), from files, dicts and records alike;
wrong arguments refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import semrel
from helpers import ok, run
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.formats import files
from semrel.formats.corpus import read_corpus, read_golden
from semrel.formats.pool import given_pool, read_pool
from semrel.formats.trec import read_run
from semrel.records import Chunk, GoldenItem

DATA = Path(__file__).resolve().parent.parent / "data"
BM25_OPTIONS = {"bm25_k1": 0.9, "bm25_b": 0.4, "bm25_stemmer": "none", "bm25_stopwords": "none"}


def cli_options(options: dict) -> list[str]:
    """The command's spelling of the keyword arguments: bm25_k1=0.9 -> --bm25-k1 0.9."""
    return [part for key, value in options.items() for part in (f"--{key.replace('_', '-')}", str(value))]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, Path]:
    """The demo's corpus and golden set as `make demo` builds them, and two BM25 runs written by the CLI."""
    folder = tmp_path_factory.mktemp("demo")
    paths = {"corpus": folder / "corpus.jsonl", "golden": folder / "golden.jsonl", "bm25": folder / "bm25.run",
             "plain": folder / "plain.run"}
    ok("corpus", "chunk", DATA / "docs", "--size", "120", "--overlap", "20", "-o", paths["corpus"])
    ok("golden", "import", DATA / "golden.csv", "--corpus", paths["corpus"], "-o", paths["golden"])
    for name, options in (("bm25", {}), ("plain", BM25_OPTIONS)):
        ok("retrieve", "--corpus", paths["corpus"], "--golden", paths["golden"], "-k", "20", "-o", paths[name],
           "--cache", folder / "cli-cache", *cli_options(options))
    return paths


# ---------------------------------------------------------------- fuse


@pytest.mark.parametrize("options,cli_args", [
    ({}, []),
    ({"rrf_k": 10, "depth": 5}, ["--rrf-k", "10", "-k", "5"]),
    ({"method": "combsum", "norm": "zscore"}, ["--method", "combsum", "--norm", "zscore"]),
    ({"method": "wsum", "weights": [0.25, 0.75]}, ["--method", "wsum", "--weights", "0.25,0.75"]),
])
def test_fuse_gives_the_run_semrel_fuse_writes(demo, tmp_path, options, cli_args):
    out = tmp_path / "fused.run"
    result = run("fuse", demo["bm25"], demo["plain"], "-o", out, *cli_args)
    assert result.exit_code == 0, result.output
    written = read_run(out).to_dict()
    from_files = semrel.fuse([demo["bm25"], str(demo["plain"])], **options)
    from_dicts = semrel.fuse({name: read_run(demo[name]).to_dict() for name in ("bm25", "plain")}, name="mine", **options)
    assert isinstance(from_files, semrel.Run) and (from_files.name, from_dicts.name) == ("fused", "mine")
    assert from_files.to_dict() == written and from_dicts.to_dict() == written  # exact: the same computation
    assert written != read_run(demo["bm25"]).to_dict() and written != read_run(demo["plain"]).to_dict()
    if "depth" in options:
        assert {len(docs) for docs in written.values()} == {5}


def test_fuse_refuses_wrong_kinds_and_bad_values(demo):
    runs = [demo["bm25"], demo["plain"]]
    for kwargs, message in [({"method": 3}, "method: give a name"), ({"rrf_k": "60"}, "rrf_k: give a whole number"),
                            ({"rrf_k": True}, "rrf_k: give a whole number"), ({"depth": 2.5}, "depth: give a whole number"),
                            ({"method": "wsum", "weights": "0.3,0.7"}, "weights: give one number per run"),
                            ({"method": "wsum", "weights": [0.3, "x"]}, "weights: give numbers"),
                            ({"method": "wsum", "weights": [None, 1.0]}, "weights: give numbers, one per run, not None")]:  # float()'s own
        with pytest.raises(TypeError, match=f"^{message}"):
            semrel.fuse(runs, **kwargs)
    with pytest.raises(TypeError, match="^runs: give a Run"):
        semrel.fuse(5)
    for given, kwargs, message in [
        (runs[:1], {}, "fuse needs at least two runs"),
        (runs, {"method": "borda"}, "method='borda': choose one of rrf, combsum, combmnz, wsum"),
        (runs, {"method": "combsum", "norm": ""}, "norm='': choose one of"),  # it was taken for the default, minmax
        (runs, {"norm": "minmax"}, "norm= does not apply to method='rrf'"),
        (runs, {"method": "combsum", "rrf_k": 10}, "rrf_k=10 is rrf's k; it does not apply to method='combsum'"),
        (runs, {"method": "wsum", "weights": [1.0]}, "give one weight per run in weights= (2 runs, 1 given)"),
        (runs, {"method": "wsum", "weights": [1.0, float("nan")]}, "weights='1,nan': weights must be finite numbers of 0 or more"),
        (runs, {"depth": 0}, "depth=0: give a positive number of documents per query"),
        ([{"q": {"d": 1.0}}, {"q": {"e": 1.0}}], {}, "runs: two runs are named 'run'"),
        (runs, {"name": ""}, "name: a run name may not be empty"),  # it was taken for no name: "fused"
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(message)}"):
            semrel.fuse(given, **kwargs)


# ---------------------------------------------------------------- retrieve


@pytest.mark.parametrize("options", [{}, BM25_OPTIONS, {"bm25_method": "robertson", "k": 3}])
def test_retrieve_bm25_gives_the_run_semrel_retrieve_writes(demo, tmp_path, options):
    out = tmp_path / "bm25.run"
    k = options.get("k", 100)
    bm25 = {key: value for key, value in options.items() if key != "k"}
    ok("retrieve", "--corpus", demo["corpus"], "--golden", demo["golden"], "-o", out, "-k", k, "--cache", tmp_path / "cli",
       *cli_options(bm25))
    written = read_run(out).to_dict()
    files = semrel.retrieve(demo["corpus"], str(demo["golden"]), k=k, cache=tmp_path / "api", **bm25)  # the on-disk index
    records = semrel.retrieve(read_corpus(demo["corpus"]), read_golden(demo["golden"]), "bm25", k=k, cache=False, **bm25)
    assert isinstance(files, semrel.Run) and (files.name, records.name) == ("bm25", "bm25")
    assert files.to_dict() == written and records.to_dict() == written
    assert len(written) == 18 and max(len(docs) for docs in written.values()) <= k
    assert k == 100 or {len(docs) for docs in written.values()} == {k}
    assert (tmp_path / "api" / "bm25").is_dir()  # cached as the command caches, in the folder given


def test_retrieve_output_writes_the_run_and_manifest_the_command_writes(demo, tmp_path):
    (tmp_path / "cli").mkdir()
    ok("retrieve", "--corpus", demo["corpus"], "--golden", demo["golden"], "-o", tmp_path / "cli" / "bm25.run", "-k", "10",
       "--no-cache", *cli_options(BM25_OPTIONS))
    returned = semrel.retrieve(demo["corpus"], demo["golden"], k=10, output=tmp_path / "bm25.run", cache=False, **BM25_OPTIONS)
    assert (tmp_path / "bm25.run").read_bytes() == (tmp_path / "cli" / "bm25.run").read_bytes()
    assert returned.name == "bm25" and returned.to_dict() == read_run(tmp_path / "bm25.run").to_dict()
    ours, theirs = (json.loads(Path(f"{p}.manifest.json").read_text()) for p in (tmp_path / "bm25.run", tmp_path / "cli" / "bm25.run"))
    assert ours["params"] == theirs["params"] and ours["params"]["bm25"]["k1"] == 0.9
    assert ours["inputs"] == theirs["inputs"] and ours["rows"] == theirs["rows"] == len(returned)
    # records in memory: only the files among the inputs are recorded
    semrel.retrieve(read_corpus(demo["corpus"]), demo["golden"], k=10, output=tmp_path / "mixed.run", cache=False, name="x")
    mixed = json.loads((tmp_path / "mixed.run.manifest.json").read_text())
    assert [i["path"] for i in mixed["inputs"]] == [str(demo["golden"])] and read_run(tmp_path / "mixed.run").tag == "x"
    before = demo["golden"].read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.retrieve(demo["corpus"], demo["golden"], output=demo["golden"], cache=False)
    assert demo["golden"].read_bytes() == before


def test_retrieve_refuses_an_output_over_the_corpus_its_cached_index_stands_for(demo, tmp_path, monkeypatch):
    """A BM25 index taken from the cache by the corpus's stamp stands for reading it: the corpus is an input all the same
    (the run was written over it, and the corpus lost)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(demo["corpus"].read_bytes())
    monkeypatch.setattr(files, "RACY_NS", 0)  # the corpus is taken by its stamp although it was just written
    semrel.retrieve(corpus, demo["golden"], cache=tmp_path / "cache")  # builds the index
    before = corpus.read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.retrieve(corpus, demo["golden"], output=corpus, cache=tmp_path / "cache")
    assert corpus.read_bytes() == before


def test_queries_left_without_chunks_are_warnings_at_the_callers_line_or_go_to_warn(demo):
    items = [*read_golden(demo["golden"])[:2], GoldenItem("nothing", "xylophone quasar", ("none",))]
    with pytest.warns(UserWarning, match="1 of 3 queries got no chunks [(]e.g. 'nothing'[)]") as caught:
        found = semrel.retrieve(demo["corpus"], items, k=5, cache=False)
    assert caught[0].filename == __file__ and set(found.to_dict()) == {i.query_id for i in items[:2]}
    heard: list[str] = []
    semrel.retrieve(demo["corpus"], items, k=5, cache=False, warn=heard.append)
    assert heard == [str(caught[0].message)]


def test_blank_queries_of_records_are_counted_in_one_warning_naming_the_first_few():
    """The command's warning (tests/retrieval/test_retrieve.py), for records: past three ids the list ends with '...'."""
    chunks = [Chunk("ships#0", "Container ships carry steel boxes between ports.", "ships", 0, 48)]
    items = [GoldenItem(f"q{n}", "" if n % 2 else "ocean ports", ("x",)) for n in range(1, 10)]
    heard: list[str] = []
    semrel.retrieve(chunks, items, cache=False, warn=heard.append)
    assert [note for note in heard if "empty or blank" in note] == [
        "golden: 5 of 9 queries are empty or blank ('q1', 'q3', 'q5', ...): there is nothing to retrieve for them (bm25 finds "
        "no chunk, dense ranks chunks against empty text); give them their text (`semrel golden validate` lists them)"]


def test_retrieve_refuses_wrong_kinds_and_bad_values(demo):
    corpus, golden = demo["corpus"], demo["golden"]
    chunk = Chunk("c1", "a text", "doc", 0, 6)
    for args, kwargs, message in [
        ((3, golden), {}, "corpus: give a file path or a list of Chunk, not int"),
        (([chunk, "text"], golden), {}, "corpus: give a file path or a list of Chunk, not of str (item 1: 'text')"),
        ((corpus, [chunk]), {}, "golden: give a file path or a list of GoldenItem, not of Chunk"),
        ((corpus, golden, 3), {}, "method: give a name"),
        ((corpus, golden), {"k": "5"}, "k: give a whole number"),
        ((corpus, golden), {"bm25_k1": "1.2"}, "bm25_k1: give a number"),
        ((corpus, golden), {"output": 3}, "output: give a file path"),
        ((corpus, golden), {"cache": 3}, "cache: give a folder"),
        ((corpus, golden), {"warn": 3}, "warn: give a function"),
        ((corpus, golden), {"engine": 3}, "engine: give a name (local, ray) or semrel.encoding.engines.make_engine(...), not int"),
        ((corpus, golden), {"name": 3}, "name: give a run name, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}"):
            semrel.retrieve(*args, cache=kwargs.pop("cache", False), **kwargs)
    for args, kwargs, error, message in [
        ((corpus, golden, "sparse"), {}, UsageError, "unknown method 'sparse'; choose one of bm25, dense, hybrid"),
        ((corpus, golden), {"k": 0}, UsageError, "k=0: give a positive number of chunks per query"),
        ((corpus, golden), {"bm25_b": 2}, UsageError, "bm25_b=2.0: give a number from 0 to 1"),
        ((corpus, golden), {"bm25_stemmer": "klingon"}, UsageError, "bm25_stemmer='klingon': none or a PyStemmer"),
        ((corpus, golden), {"bm25_stopwords": "enn"}, UsageError, "bm25_stopwords='enn': no such file; give none, "),  # not --bm25-*
        (([chunk, chunk], golden), {}, ValidationError, "corpus: item 1: id 'c1' is given twice (first as item 0)"),
        (([], golden), {}, ValidationError, "corpus: the list is empty"),
        ((corpus, golden), {"name": " "}, UsageError, "name: a run name may not be empty"),
    ]:
        with pytest.raises(error, match=f"^{re.escape(message)}"):
            semrel.retrieve(*args, cache=False, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dense", "hybrid"])
def test_retrieve_dense_and_hybrid_give_the_run_semrel_retrieve_writes(demo, tmp_path, method):
    out = tmp_path / f"{method}.run"
    ok("retrieve", "--corpus", demo["corpus"], "--golden", demo["golden"], "--method", method, "-k", "10", "-o", out,
       "--cache", tmp_path / "cli")
    ours = semrel.retrieve(read_corpus(demo["corpus"]), demo["golden"], method, k=10, cache=tmp_path / "api")
    assert ours.name == method and ours.to_dict() == read_run(out).to_dict()
    assert any((tmp_path / "api" / "vectors").iterdir())  # the chunk vectors kept, as the command keeps them


# ---------------------------------------------------------------- pool


def test_pool_gives_the_pairs_semrel_pool_writes_and_judge_takes(demo, tmp_path):
    (tmp_path / "cli").mkdir()
    ok("pool", "--golden", demo["golden"], demo["bm25"], demo["plain"], "--depth", "5", "-o", tmp_path / "cli" / "pool.tsv")
    written = read_pool(tmp_path / "cli" / "pool.tsv")
    from_files = semrel.pool([demo["bm25"], str(demo["plain"])], demo["golden"], depth=5, output=tmp_path / "pool.tsv")
    from_records = semrel.pool({"bm25": read_run(demo["bm25"]).to_dict(), "plain": semrel.Run.from_file(demo["plain"])},
                               read_golden(demo["golden"]), depth=5)
    assert from_files == from_records == written  # exact: the same computation, sources named alike
    assert {sources for _, _, sources in written} >= {("bm25", "plain"), ("bm25", "gold", "plain")}
    assert (tmp_path / "pool.tsv").read_bytes() == (tmp_path / "cli" / "pool.tsv").read_bytes()
    ours, theirs = (json.loads(Path(f"{p}.manifest.json").read_text()) for p in (tmp_path / "pool.tsv", tmp_path / "cli" / "pool.tsv"))
    assert ours["params"] == theirs["params"] == {"depth": 5, "runs": [str(demo["bm25"]), str(demo["plain"])]}
    assert ours["inputs"] == theirs["inputs"] and ours["rows"] == theirs["rows"] == len(written)
    assert given_pool(from_files)[0] == written  # the pool semrel.judge takes, as it takes pool.tsv
    gold = sorted((item.query_id, chunk, ("gold",)) for item in read_golden(demo["golden"]) for chunk in item.gold_chunk_ids)
    with pytest.warns(UserWarning, match="^no run given: the pool is the golden set's gold chunks alone"):
        alone = semrel.pool([], demo["golden"])
    assert alone == semrel.pool({}, demo["golden"], warn=lambda message: None) == gold  # the gold chunks alone, as `pool` without runs


def test_pool_warnings_are_the_commands_at_the_callers_line_or_go_to_warn(demo, write):
    other = write("other.run", "nowhere Q0 a#0 1 1.0 other\n")
    result = run("pool", "--golden", demo["golden"], demo["bm25"], other, "-o", Path(other).with_suffix(".tsv"))
    assert result.exit_code == 0, result.output
    printed = [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if line.startswith("semrel: warning: ")]
    assert len(printed) == 2 and "run other adds no pair to the pool" in printed[1]
    heard: list[str] = []
    semrel.pool([demo["bm25"], other], demo["golden"], warn=heard.append)
    assert heard == printed
    with pytest.warns(UserWarning) as caught:
        semrel.pool([demo["bm25"], other], demo["golden"])
    assert [str(w.message) for w in caught] == printed and caught[0].filename == __file__


def test_pool_takes_the_commands_corpus_and_leaves_out_the_chunks_it_does_not_list(demo, write, tmp_path):
    """`semrel pool --corpus` had no Python side: a misspelt chunk id went into the pool and stopped the judge later."""
    first = read_run(demo["bm25"])
    query, chunk = first.query_ids[0], first.doc_ids[0]
    stray = write("stray.run", f"{query} Q0 {chunk}-typo 1 9.0 stray\n")
    ok("pool", "--golden", demo["golden"], demo["bm25"], stray, "--depth", "3", "--corpus", demo["corpus"], "-o", tmp_path / "cli.tsv")
    result = run("pool", "--golden", demo["golden"], demo["bm25"], stray, "--depth", "3", "--corpus", demo["corpus"], "-o", "-")
    printed = [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if line.startswith("semrel: warning: ")]
    heard: list[str] = []
    pairs = semrel.pool([demo["bm25"], stray], demo["golden"], depth=3, corpus=Path(demo["corpus"]), output=tmp_path / "api.tsv",
                        warn=heard.append)
    assert pairs == read_pool(tmp_path / "cli.tsv") and all(not c.endswith("-typo") for _, c, _ in pairs)
    assert heard == printed and any(f"{chunk}-typo" in said for said in heard), heard
    ours, theirs = (json.loads((tmp_path / f"{name}.tsv.manifest.json").read_text()) for name in ("api", "cli"))
    assert ours["inputs"] == theirs["inputs"] and str(demo["corpus"]) in [i["path"] for i in ours["inputs"]]
    with pytest.raises(TypeError, match=r"^corpus: give a corpus.jsonl path, not int"):
        semrel.pool([demo["bm25"]], demo["golden"], corpus=3)


def test_pool_refuses_wrong_kinds_and_bad_values(demo, write):
    runs, golden = [demo["bm25"], demo["plain"]], demo["golden"]
    for args, kwargs, message in [
        ((runs, golden), {"depth": "5"}, "depth: give a whole number of chunks per run and query, not str"),
        ((runs, golden), {"depth": None}, "depth: give a whole number of chunks per run and query, not None"),
        ((runs, golden), {"output": 3}, "output: give a file path, not int"),
        ((runs, golden), {"warn": 3}, "warn: give a function taking one message, not int"),
        ((runs, 3), {}, "golden: give a file path or a list of GoldenItem, not int"),
        ((runs, [Chunk("c1", "a text", "doc", 0, 6)]), {}, "golden: give a file path or a list of GoldenItem, not of Chunk"),
        ((5, golden), {}, "runs: give a Run, a dict {query: {doc: score}}, a pandas DataFrame or a file path, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}"):
            semrel.pool(*args, **kwargs)
    item = read_golden(golden)[0]
    for args, kwargs, error, message in [
        ((runs, golden), {"depth": 0}, UsageError, "depth=0: give a positive number of chunks per run and query"),
        (({"gold": runs[0]}, golden), {}, UsageError, "run name 'gold' is reserved; runs are named by their file stem (in Python, "
                                                      "their key): rename it"),
        (({"a,b": runs[0]}, golden), {}, UsageError, "run name 'a,b' is not one word without commas"),  # pool.tsv's sources
        ((runs, [item, item]), {}, ValidationError, f"golden: item 1: query_id {item.query_id!r} is given twice (first as item 0)"),
        ((runs, []), {}, ValidationError, "golden: the list is empty; give at least one GoldenItem"),
        # a record gets the checks a golden.jsonl line gets: a str of gold ids was read letter by letter, a None id accepted
        ((runs, [GoldenItem("q1", "q", ("a",), "chain")]), {}, ValidationError,
         "golden: item 0: gold_chunk_ids should be a tuple of strings, found str 'chain'"),
        ((runs, [GoldenItem(None, "q", ("a",), ("c1",))]), {}, ValidationError,
         "golden: item 0: query id should be a string, found NoneType"),
        ((runs, [GoldenItem("q 1", "q", ("a",), ("c1",))]), {}, ValidationError,
         "golden: item 0: query id 'q 1' is empty or contains whitespace"),
        ((runs, [GoldenItem("q1", "q", "an answer", ("c1",))]), {}, ValidationError,
         "golden: item 0: reference_answers should be a tuple of strings"),
    ]:
        with pytest.raises(error, match=f"^{re.escape(message)}"):
            semrel.pool(*args, **kwargs)
    before = golden.read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.pool(runs, golden, output=golden)
    assert golden.read_bytes() == before


def test_retrieve_takes_its_sample_steps_cache_and_bm25_numbers_as_the_command_does(demo, tmp_path, monkeypatch):
    """sample= keeps those queries and says so in the manifest; steps= hears the progress; cache None or True is the user cache
    dir, as the command's default; a whole-number bm25_k1 is recorded as the command records it (1.0, a float)."""
    import contextlib

    from semrel.records import QuerySample

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    calls: list = []

    @contextlib.contextmanager
    def steps(label, total):
        calls.append((label, total))
        yield calls.append

    found = semrel.retrieve(demo["corpus"], demo["golden"], k=3, sample=QuerySample(limit=2), steps=steps, bm25_k1=1, bm25_b=0,
                            output=tmp_path / "two.run")
    first = [item.query_id for item in read_golden(demo["golden"])[:2]]
    assert sorted(found.to_dict()) == sorted(first) and len(found) == 6
    params = json.loads((tmp_path / "two.run.manifest.json").read_text())["params"]
    assert params["queries"] == {"limit": 2, "kept": 2} and params["bm25"]["k1"] == 1.0 and type(params["bm25"]["k1"]) is float
    assert ("bm25: queries", 2) in calls and calls[calls.index(("bm25: queries", 2)) + 1:][:2] == [1, 1]
    assert (tmp_path / "user-cache" / "semrel" / "bm25").is_dir()  # cache=None: the user cache dir
    assert semrel.retrieve(demo["corpus"], demo["golden"], k=3, cache=True).to_dict() == \
        semrel.retrieve(demo["corpus"], demo["golden"], k=3).to_dict()


def test_retrieve_encodes_with_the_model_given():
    """A model that is not there is an error naming it, not the default model used in its place."""
    chunks = [Chunk("ships#0", "Container ships carry steel boxes between ports.", "ships", 0, 48)]
    with pytest.raises(SemrelError, match="model 'no-such-org/no-such-model' is neither a folder nor in the local Hugging Face cache"):
        semrel.retrieve(chunks, [GoldenItem("q1", "ocean ports", ("x",))], "dense", model="no-such-org/no-such-model", cache=False)
