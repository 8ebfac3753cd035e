"""Every golden importer (CSV/TSV, JSONL, SQuAD, LlamaIndex, ragas, DeepEval, PubMedQA, MS MARCO, Cranfield) and the TOML
config reader, fed arbitrary or almost-right input, returns a result or raises one SemrelError:
never another exception. What an importer returns must be writable: query ids are single tokens
and unique. Examples per reader are bounded (EXAMPLES) so the file runs in CI."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semrel.cli.run_config import load_config
from semrel.errors import SemrelError
from semrel.formats.files import check_id
from semrel.golden.importers import import_golden
from semrel.golden.sources import ImportOptions

EXAMPLES = 200
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CORPUS = '{"_id": "a#0", "text": "chain oil keeps the chain quiet", "doc_id": "a", "start": 0, "end": 31}\n'

WORDS = ["q1", "q 1", " ", "", "a#0", "c1", "x,y", "chain oil", "[1, 2]", '["a#0"]', "[oops", "\t", "\u00e9", "nan", "-1", "3"]
KEYS = ["query_id", "id", "qid", "_id", "query", "question", "text", "reference_answer", "answer", "answers",
        "gold_chunk_ids", "chunk_ids", "gold", "data", "paragraphs", "context", "qas", "answer_start", "title",
        "document_id", "examples", "reference_contexts", "CONTEXTS", "QUESTION", "LONG_ANSWER", "passages", "is_selected",
        "passage_text", "x"]
SCALARS = st.one_of(st.sampled_from(WORDS), st.integers(-3, 40), st.none(), st.booleans(), st.floats(allow_nan=True))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
                           max_leaves=25)
RAW = st.lists(st.sampled_from([b"\xef\xbb\xbf", b"\xff", b"\r\n", b"\n", b",", b"\t", b'"', b"{", b"[", b"\x00"])
               | st.binary(max_size=5), max_size=20).map(b"".join)


def squad_like():
    qa = st.fixed_dictionaries({"id": SCALARS, "question": SCALARS},
                               optional={"answers": st.lists(st.fixed_dictionaries(
                                   {"text": SCALARS}, optional={"answer_start": SCALARS}), max_size=3)})
    paragraph = st.fixed_dictionaries({"context": st.sampled_from(["chain oil keeps it quiet", "", 3]),
                                       "qas": st.lists(qa, max_size=3) | SCALARS},
                                      optional={"document_id": SCALARS})
    article = st.fixed_dictionaries({"paragraphs": st.lists(paragraph, max_size=3) | SCALARS}, optional={"title": SCALARS})
    return st.fixed_dictionaries({"data": st.lists(article, max_size=3) | SCALARS})


def llamaindex_like():
    example = st.fixed_dictionaries({"query": SCALARS}, optional={
        "reference_contexts": st.lists(SCALARS, max_size=3) | SCALARS, "reference_answer": SCALARS, "query_id": SCALARS})
    return st.fixed_dictionaries({"examples": st.lists(example, max_size=4) | SCALARS})


def pubmedqa_like():
    record = st.fixed_dictionaries({"QUESTION": SCALARS, "CONTEXTS": st.lists(SCALARS, max_size=3) | SCALARS},
                                   optional={"LONG_ANSWER": SCALARS, "final_decision": SCALARS})
    return st.dictionaries(st.sampled_from(WORDS), record | SCALARS, max_size=3)


def msmarco_like():
    passage = st.fixed_dictionaries({"passage_text": SCALARS, "is_selected": SCALARS}, optional={"url": SCALARS})
    columns = st.fixed_dictionaries({"passage_text": st.lists(SCALARS, max_size=3) | SCALARS,
                                     "is_selected": st.lists(SCALARS, max_size=3) | SCALARS})
    record = st.fixed_dictionaries({"query": SCALARS, "passages": st.lists(passage, max_size=3) | columns | SCALARS},
                                   optional={"query_id": SCALARS, "answers": st.lists(SCALARS, max_size=2) | SCALARS,
                                             "wellFormedAnswers": st.lists(SCALARS, max_size=2) | SCALARS})
    v21 = st.dictionaries(st.sampled_from(["query", "query_id", "passages", "answers"]),
                          st.dictionaries(st.sampled_from(["0", "1"]), SCALARS | st.lists(passage, max_size=2), max_size=2) | SCALARS)
    return st.lists(record | SCALARS, max_size=3) | v21


def as_json(strategy):
    return strategy.map(lambda v: json.dumps(v).encode())


def csv_rows(separator: str):
    header = st.lists(st.sampled_from(KEYS[:13] + [" query ", "x"]), min_size=1, max_size=5)
    rows = st.lists(st.lists(st.sampled_from(WORDS + ['"a,b"', '"']), max_size=6), max_size=5)
    return st.tuples(header, rows).map(lambda t: "\n".join(separator.join(r) for r in [t[0], *t[1]]).encode())


def jsonl_rows():
    row = st.dictionaries(st.sampled_from(KEYS[:13]), SCALARS | st.lists(SCALARS, max_size=3), max_size=5)
    return st.lists(row.map(json.dumps) | st.sampled_from(["", "{", "[]", "3"]), max_size=5).map(lambda r: "\n".join(r).encode())


def check_import(path, fmt, corpus=None):
    """Import; a result must hold unique single-token query ids, a failure must be one line."""
    try:
        result = import_golden(str(path), fmt, ImportOptions(corpus=corpus))
    except SemrelError as exc:
        assert str(exc) and "\n" not in str(exc).strip(), str(exc)
        return
    ids = [item.query_id for item in result.items]
    assert len(set(ids)) == len(ids), ids
    for query_id in ids:
        check_id(query_id, "query id")
    for chunk in result.chunks or ():  # the corpus it builds must be writable too
        check_id(chunk.id, "chunk id")


@SETTINGS
@given(content=csv_rows(",") | csv_rows("\t") | RAW, suffix=st.sampled_from([".csv", ".tsv"]))
def test_csv_import(tmp_path, content, suffix):
    path = tmp_path / f"golden{suffix}"
    path.write_bytes(content)
    check_import(path, "csv")


# format: (file name, what goes in it)
def llamaindex_pairs_like():
    nodes = st.sampled_from(["n1", "n 2", "n_2", "", "#n"])
    text = st.sampled_from(["chain oil", "Where?", " "]) | SCALARS
    return st.fixed_dictionaries({"queries": st.dictionaries(st.sampled_from(["q1", "q 2", "", "#q"]), text, max_size=3) | SCALARS,
                                  "corpus": st.dictionaries(nodes, text, max_size=4) | SCALARS,
                                  "relevant_docs": st.dictionaries(st.sampled_from(["q1", "q 2"]), st.lists(nodes, max_size=3) | SCALARS)
                                  | SCALARS})


SINGLE_FILE = {
    "jsonl": ("golden.jsonl", jsonl_rows() | RAW),
    "squad": ("squad.json", as_json(squad_like() | JSON_VALUES) | RAW),
    "pubmedqa": ("ori_pqal.json", as_json(pubmedqa_like() | JSON_VALUES) | RAW),
    "msmarco": ("train_v1.1.json", as_json(msmarco_like() | JSON_VALUES) | RAW),
    "llamaindex-pairs": ("qa_pairs.json", as_json(llamaindex_pairs_like() | JSON_VALUES) | RAW),
}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", SINGLE_FILE)
@SETTINGS
@given(data=st.data())
def test_single_file_import(tmp_path, fmt, data):
    name, content = SINGLE_FILE[fmt]
    path = tmp_path / name
    path.write_bytes(data.draw(content))
    check_import(path, fmt)


@SETTINGS
@given(content=as_json(llamaindex_like() | JSON_VALUES) | RAW, with_corpus=st.booleans())
def test_llamaindex_import(tmp_path, content, with_corpus):
    """With a corpus its contexts are matched to its chunks; without one they become the corpus."""
    path, corpus = tmp_path / "rag_dataset.json", tmp_path / "corpus.jsonl"
    path.write_bytes(content)
    corpus.write_text(CORPUS)
    check_import(path, "llamaindex", corpus=str(corpus) if with_corpus else None)


TESTSET_KEYS = ["user_input", "question", "reference_contexts", "contexts", "reference", "ground_truth", "ground_truths", "answer",
                "query_id", "x", "input", "expected_output", "context", "retrieval_context", "eval_sample", "approval_status",
                "reference_answer", "reference_context", "conversation_history", "metadata"]


def synthetic_testsets():
    """Rows of ragas's, DeepEval's and Giskard's field names, as CSV (lists as Python literals, as pandas writes them), JSON Lines,
    JSON records or pandas' column-wise JSON."""
    value = SCALARS | st.lists(SCALARS, max_size=3) | st.sampled_from(["['a']", "['a', 'b'", "[]", "[1] a", "['<1-hop>\\n\\na']"])
    almost = st.fixed_dictionaries({"user_input": st.sampled_from(WORDS) | SCALARS, "reference_contexts": value, "reference": value},
                                   optional={"query_id": SCALARS, "x": value, "approval_status": st.sampled_from(["rejected", "x"])})
    golden = st.fixed_dictionaries({"input": st.sampled_from(WORDS) | SCALARS, "expected_output": value,
                                    "context": value | st.sampled_from(["a|b", "|", "a|"])}, optional={"name": SCALARS})
    nested = st.fixed_dictionaries({"eval_sample": almost | value})
    documents = st.sampled_from(["Document 1: a", "Document 1: a\n\nDocument x y: b", "Document : ", "Document 2: \n\nDocument 3: c",
                                 "a\n\nDocument 1: b", "{'a': 1}"])
    turns = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", 1]), "content": SCALARS}) | SCALARS, max_size=2)
    giskard = st.fixed_dictionaries({"question": st.sampled_from(WORDS) | SCALARS, "reference_answer": value,
                                     "reference_context": documents | value},
                                    optional={"id": SCALARS, "conversation_history": turns | value,
                                              "metadata": st.fixed_dictionaries({}, optional={
                                                  "question_type": st.sampled_from(["simple", "out of scope"]) | SCALARS}) | value})
    rows = st.lists(st.dictionaries(st.sampled_from(TESTSET_KEYS), value, max_size=5) | almost | golden | nested | giskard, max_size=4)

    def as_csv(rows: list[dict]) -> bytes:
        header = list(dict.fromkeys(k for row in rows for k in row))
        out = io.StringIO()
        csv.writer(out).writerows([header, *[[repr(v) if isinstance(v, list) else v for v in (row.get(k) for k in header)]
                                             for row in rows]])
        return out.getvalue().encode()

    return st.one_of(
        rows.map(as_csv).map(lambda b: ("testset.csv", b)),
        rows.map(lambda rows: ("testset.jsonl", "\n".join(map(json.dumps, rows)).encode())),
        (rows.map(json.dumps) | rows.map(lambda rows: json.dumps({k: {str(n): row.get(k) for n, row in enumerate(rows)}
                                                                    for k in dict.fromkeys(k for row in rows for k in row)})))
        .map(lambda text: ("testset.json", text.encode())),
        RAW.map(lambda b: ("testset.csv", b)))


@pytest.mark.parametrize("fmt", ["ragas", "deepeval", "giskard", "auto"])
@SETTINGS
@given(named=synthetic_testsets(), with_corpus=st.booleans())
def test_testset_import(tmp_path, fmt, named, with_corpus):
    name, content = named
    (tmp_path / name).write_bytes(content)
    (tmp_path / "corpus.jsonl").write_text(CORPUS)
    check_import(tmp_path / name, fmt, corpus=str(tmp_path / "corpus.jsonl") if with_corpus else None)


SMART = st.lists(st.sampled_from([".I 1", ".I 2", ".I", ".T", ".W", ".A x", ".B", ".X", "chain oil", "", " ", "\r"]),
                 max_size=10).map(lambda lines: "\n".join(lines).encode())
CRANQREL = st.lists(st.tuples(st.sampled_from(["1", "2", "3", "x", "-1"]), st.sampled_from(["1", "2", "9"]),
                              st.sampled_from(["1", "2", "4", "-1", "5", "0"])).map(" ".join), max_size=6)


@pytest.mark.slow
@SETTINGS
@given(docs=SMART | RAW, queries=SMART | RAW, qrels=CRANQREL.map(lambda r: "\n".join(r).encode()) | RAW)
def test_cranfield_import(tmp_path, docs, queries, qrels):
    for name, content in (("cran.all.1400", docs), ("cran.qry", queries), ("cranqrel", qrels)):
        (tmp_path / name).write_bytes(content)
    check_import(tmp_path, "cranfield")


TOML_KEYS = {
    "": ["out", "x"], "corpus": ["docs", "file", "size", "overlap", "x"], "golden": ["file", "format"],
    "retrieve": ["methods", "k", "model"], "pool": ["depth", "enabled"], "judge": ["enabled", "layer", "idf", "cache"],
    "label": ["threshold", "on", "grades"], "eval": ["measures"], "sensitivity": ["from", "to", "step"], "nope": ["x"],
}
TOML_VALUES = st.sampled_from(['"docs"', '"golden.csv"', '"."', '""', "3", "-1", "0.7", "nan", "inf", "true",
                               '["bm25"]', "[1, 2]", "[]", "{a = 1}", '"\\u00e9"', "1979-05-27", "[[1]]"])


def toml_documents():
    """A valid config (docs folder, golden file) with keys of right and wrong types set over it."""
    overrides = st.lists(st.sampled_from(sorted(TOML_KEYS)).flatmap(
        lambda s: st.tuples(st.just(s), st.sampled_from(TOML_KEYS[s]), TOML_VALUES)), max_size=4)

    def render(changes):
        sections = {"": {}, "corpus": {"docs": '"docs"'}, "golden": {"file": '"golden.csv"'}}
        for section, key, value in changes:
            sections.setdefault(section, {})[key] = value
        lines = [f"{k} = {v}" for k, v in sections.pop("").items()]
        for name, pairs in sections.items():
            lines += [f"[{name}]", *(f"{k} = {v}" for k, v in pairs.items())]
        return "\n".join(lines).encode()

    return overrides.map(render)


@SETTINGS
@given(content=toml_documents() | RAW)
def test_config_reader(tmp_path, content):
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "golden.csv").write_text("query,answer\nx,y\n")
    path = tmp_path / "semrel.toml"
    path.write_bytes(content)
    try:
        config = load_config(str(path))
    except SemrelError as exc:
        assert str(exc) and "\n" not in str(exc).strip(), str(exc)
        return
    # a file, or a folder (BEIR, Cranfield): either way one that exists
    assert config["golden"]["file"] in (str(tmp_path / "golden.csv"), str(tmp_path / "docs"), str(tmp_path))
