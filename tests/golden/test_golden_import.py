"""`semrel golden import`: every format on small files, and one clear line for broken ones."""

from __future__ import annotations

import csv
import gzip
import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import semrel
from helpers import SHARED_DATA, assert_one_error, needs_shared, read_lines, run, write
from semrel.formats.files import file_digest
from semrel.formats.manifest import read_manifest
from semrel.golden.locate import COVER, ContextMatcher, _pairs, _squash, _tokens, chunks_holding, find_answer
from semrel.records import Chunk

CONTEXT = "Bees forage widely. The hive holds wax combs. Honey is stored in the upper combs of the hive."


def squad(answer_start: int, text: str = "wax combs", title: str | None = None) -> str:
    article = {"paragraphs": [{"document_id": 7, "context": CONTEXT, "qas": [
        {"id": "q 1", "question": " What does the hive hold? ", "answers": [{"text": text, "answer_start": answer_start}]},
        {"id": "q2", "question": "Where is honey stored?", "answers": [{"text": "upper combs", "answer_start": 66}]},
        {"id": "q3", "question": "Who is the queen?", "answers": [{"text": "a dragon", "answer_start": 3}]},
    ]}]}
    if title:
        article["title"] = title
    return json.dumps({"data": [article]})


def test_find_answer_prefers_the_offset_then_the_nearest_occurrence():
    context = "ab cd ab cd ab"
    assert find_answer(context, "cd", 3) == (3, 5)
    assert find_answer(context, " cd", 8) == (9, 11)  # leading space, offset one off (COVID-QA)
    assert find_answer(context, "ab", 11) == (12, 14)
    assert find_answer(context, "cd\n ab", 0) == (3, 8)  # spacing inside the answer differs
    assert find_answer(context, "zz", 0) is None


def test_a_straddling_span_goes_to_the_chunk_holding_most_of_it():
    chunks = [Chunk("d#0", "", "d", 0, 10), Chunk("d#1", "", "d", 8, 20), Chunk("d#2", "", "d", 18, 30)]
    assert chunks_holding(chunks, 8, 10) == ["d#0", "d#1"]  # whole in both (overlap)
    assert chunks_holding(chunks, 14, 27) == ["d#2"]  # 6 characters in d#1, 9 in d#2
    assert chunks_holding(chunks, 12, 26) == ["d#1"]  # 8 and 8: the earlier chunk


def test_squad_writes_corpus_and_locates_gold_chunks(tmp_path):
    source = write(tmp_path / "squad.json", squad(answer_start=25))  # true offset 34
    corpus, golden, qrels = tmp_path / "corpus.jsonl", tmp_path / "golden.jsonl", tmp_path / "gold.qrels"
    result = run("golden", "import", source, "--corpus-out", corpus, "-o", golden, "--size", "6", "--qrels-out", qrels)
    assert result.exit_code == 0, result.output
    chunks = read_lines(corpus)
    assert [(c["_id"], c["text"]) for c in chunks] == [
        ("7#0", "Bees forage widely. The hive holds"), ("7#1", "wax combs. Honey is stored in"),
        ("7#2", "the upper combs of the hive."),
    ]
    items = read_lines(golden)
    assert [i["query_id"] for i in items] == ["q_1", "q2", "q3"]
    assert items[0]["query"] == "What does the hive hold?" and items[0]["gold_chunk_ids"] == ["7#1"]
    assert items[0]["meta"]["answer_spans"] == [[CONTEXT.index("wax combs"), CONTEXT.index("wax combs") + 9]]
    assert items[1]["gold_chunk_ids"] == ["7#2"]
    assert items[2]["gold_chunk_ids"] == [] and items[2]["meta"]["answer_not_found"] is True
    assert "answer text is not in its context" in result.stderr and ": 1" in result.stderr
    assert qrels.read_text() == "q_1 0 7#1 1\nq2 0 7#2 1\n"
    assert (tmp_path / "corpus.jsonl.manifest.json").exists() and (tmp_path / "golden.jsonl.manifest.json").exists()


def squad_rows(text: str) -> list[dict]:
    """SQuAD's JSON flattened a row per question, as Hugging Face's datasets hold it (answers as columns of lists)."""
    return [{"title": article.get("title", ""), **({"document_id": p["document_id"]} if "document_id" in p else {}),
             "context": p["context"], "id": qa["id"], "question": qa["question"],
             "answers": {"text": [a["text"] for a in qa["answers"]], "answer_start": [a["answer_start"] for a in qa["answers"]]}}
            for article in json.loads(text)["data"] for p in article["paragraphs"] for qa in p["qas"]]


def test_squad_rows_from_hugging_face_import_as_its_json_does(tmp_path):
    """SQuAD-style sets on Hugging Face's hub (squad, COVID-QA) come a row per question, in Parquet or exported as JSON
    Lines: both give the corpus and golden set SQuAD's own JSON gives, titled or numbered by document_id. A row whose
    context is no string is one line naming it."""
    titled = json.loads(squad(34, title="Bee keeping"))
    del titled["data"][0]["paragraphs"][0]["document_id"]
    titled["data"][0]["paragraphs"].append({"context": "Drones do not sting.", "qas": [
        {"id": "q4", "question": "Do drones sting?", "answers": [{"text": "do not sting", "answer_start": 7}]}]})
    for name, text in (("numbered", squad(25)), ("titled", json.dumps(titled))):
        source = write(tmp_path / f"{name}.json", text)
        rows = squad_rows(text)
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / f"{name}.parquet")
        write(tmp_path / f"{name}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
        made = []
        for given in (source, tmp_path / f"{name}.parquet", tmp_path / f"{name}.jsonl"):
            result = run("golden", "import", given, "--corpus-out", f"{given}.corpus", "-o", f"{given}.golden", "--size", "6")
            assert result.exit_code == 0, result.output
            assert read_manifest(f"{given}.golden")["params"]["format"] == "squad"
            made.append((Path(f"{given}.corpus").read_bytes(), Path(f"{given}.golden").read_bytes()))
        assert made[0] == made[1] == made[2]
    assert [c["_id"] for c in read_lines(tmp_path / "titled.parquet.corpus")] == ["Bee_keeping_0#0", "Bee_keeping_0#1", "Bee_keeping_0#2",
                                                                          "Bee_keeping_1#0"]
    for field, value, message in (("context", None, "'context' and 'title' should be strings, found null and \"\""),
                                  ("document_id", [7], "'document_id' should be a string or a whole number, found [7]")):
        pq.write_table(pa.Table.from_pylist([{**squad_rows(squad(25))[0], field: value}]), tmp_path / "bad.parquet")
        assert_one_error(run("golden", "import", tmp_path / "bad.parquet", "--corpus-out", tmp_path / "c.jsonl", "-o",
                             tmp_path / "g.jsonl"), f"bad.parquet:1: {message}")


def test_squad_default_is_one_chunk_per_context_and_ids_come_from_titles(tmp_path):
    text = json.loads(squad(34, title="Bee keeping"))
    del text["data"][0]["paragraphs"][0]["document_id"]
    source = write(tmp_path / "s.json", json.dumps(text))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert [c["_id"] for c in read_lines(tmp_path / "c.jsonl")] == ["Bee_keeping#0"]
    assert read_lines(tmp_path / "g.jsonl")[0]["gold_chunk_ids"] == ["Bee_keeping#0"]


def test_ids_whose_blanks_become_underscores_are_counted_in_one_warning(tmp_path):
    """SQuAD's question ids and title-made document ids, and every other importer's ids (made one token in one place,
    sanitise_id), differ from the source's once their blanks are '_': one line says so, with a count and an example.
    Spaces only around an id are dropped without a word."""
    text = json.loads(squad(34, title="Bee keeping"))
    paragraph = text["data"][0]["paragraphs"][0]
    del paragraph["document_id"]
    paragraph["qas"][1]["id"], paragraph["qas"][2]["id"] = "q\t2", " q3 "
    source = write(tmp_path / "s.json", json.dumps(text))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert [i["query_id"] for i in read_lines(tmp_path / "g.jsonl")] == ["q_1", "q_2", "q3"]
    blanks = [line for line in result.stderr.splitlines() if "become '_'" in line]
    assert blanks == ["semrel: warning: ids with blanks, which become '_' so that they differ from the source's "
                      "(e.g. 'Bee keeping' is 'Bee_keeping'): 3"]
    rows = write(tmp_path / "g.csv", "id,query,answer\nq 1,x,y\nq2,z,w\n")
    assert "(e.g. 'q 1' is 'q_1'): 1" in run("golden", "import", rows, "-o", tmp_path / "g2.jsonl").stderr
    pairs = {"queries": {"q1": "Where is honey?"}, "corpus": {"n 1": HONEY}, "relevant_docs": {"q1": ["n 1"]}}
    source = write(tmp_path / "qa_pairs.json", json.dumps(pairs))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c3.jsonl", "-o", tmp_path / "g3.jsonl")
    assert "(e.g. 'n 1' is 'n_1'): 1" in result.stderr
    clean = write(tmp_path / "clean.csv", "id,query,answer\n q1 ,x,y\nq_2,z,w\n")
    assert "become '_'" not in run("golden", "import", clean, "-o", tmp_path / "g4.jsonl").stderr


def test_squad_errors(tmp_path):
    broken = write(tmp_path / "b.json", '{"data": [\n  {"paragraphs": [}\n]}')
    assert_one_error(run("golden", "import", broken, "--format", "squad", "--corpus-out", tmp_path / "c.jsonl",
                         "-o", tmp_path / "g.jsonl"), "b.json:2", "invalid JSON")
    no_context = write(tmp_path / "n.json", '{"data": [{"paragraphs": [{"qas": []}]}]}')
    assert_one_error(run("golden", "import", no_context, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "data[0].paragraphs[0].context", "should be a str")
    good = write(tmp_path / "s.json", squad(34))
    assert_one_error(run("golden", "import", good, "-o", tmp_path / "g.jsonl"), "--corpus-out", code=2)
    assert not (tmp_path / "g.jsonl").exists()


CORPUS = [
    {"_id": "a#0", "title": "", "text": "The hive holds wax combs built by young workers.", "doc_id": "a", "start": 0, "end": 48},
    {"_id": "a#1", "title": "", "text": "Honey is stored in the upper combs, pollen lower down.", "doc_id": "a", "start": 49, "end": 103},
    {"_id": "b#0", "title": "", "text": "Queens mate in flight early in life.", "doc_id": "b", "start": 0, "end": 36},
]


def corpus_file(tmp_path):
    return write(tmp_path / "corpus.jsonl", "".join(json.dumps(c) + "\n" for c in CORPUS))


def test_llamaindex_matches_contexts_exactly_then_by_overlap(tmp_path):
    dataset = {"examples": [
        {"query": "What holds wax?", "reference_contexts": ["holds wax   combs built"], "reference_answer": "The hive."},
        {"query": "Where is honey?", "reference_contexts": ["honey stored in upper combs while pollen is lower"],
         "reference_answer": "Upper combs."},
        {"query": "Drones?", "reference_contexts": ["drones have no sting at all"], "reference_answer": ""},
    ]}
    source = write(tmp_path / "rag_dataset.json", json.dumps(dataset))
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    items = read_lines(tmp_path / "g.jsonl")
    assert [i["gold_chunk_ids"] for i in items] == [["a#0"], ["a#1"], []]
    assert items[0]["meta"]["context_matches"] == [{"how": "exact", "score": 1.0, "chunks": 1}]
    # 8 of the context's 9 distinct words are in a#1 (10 words): 8 / min(9, 10); in other order, so no word pairs cover it
    assert items[1]["meta"]["context_matches"] == [{"how": "overlap", "score": 0.8889, "chunks": 1}]
    assert items[2]["meta"]["no_answer"] is True
    assert "1 exact" in result.stderr and "1 none" in result.stderr and "threshold 0.5" in result.stderr
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "g.jsonl"), "--corpus", "--corpus-out", code=2)


def test_llamaindex_without_its_documents_makes_the_contexts_the_corpus(tmp_path):
    """A rag_dataset.json often comes without the documents its contexts were cut from; its import then stopped at
    'needs --corpus'. --corpus-out writes the distinct contexts as the corpus, each named by its text."""
    honey, drones = "Bees keep honey in the upper combs.", "Drones have no sting."
    dataset = {"examples": [
        {"query": "Where is honey?", "reference_contexts": [honey], "reference_answer": "Upper combs."},
        {"query": "Drones?", "reference_contexts": [drones, honey, "  "], "reference_answer": "No sting."},
        {"query": "Wax?", "reference_contexts": [drones], "reference_answer": None},
    ]}
    source = write(tmp_path / "rag_dataset.json", json.dumps(dataset))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    chunks = read_lines(tmp_path / "c.jsonl")
    assert [c["text"] for c in chunks] == [honey, drones]  # each once, the blank one left out
    ids = [c["_id"] for c in chunks]
    assert all(i.startswith("ctx-") and len(i) == 16 for i in ids) and ids[0] != ids[1]
    items = read_lines(tmp_path / "g.jsonl")
    assert [i["gold_chunk_ids"] for i in items] == [[ids[0]], [ids[1], ids[0]], [ids[1]]]
    assert items[2]["meta"]["no_answer"] is True and items[1]["meta"]["context_matches"][0]["how"] == "exact"
    assert read_manifest(tmp_path / "c.jsonl")["params"]["corpus"] == "the 2 distinct reference contexts, a chunk each"
    assert "corpus: the 2 distinct reference contexts, a chunk each ->" in result.stderr
    # the same ids whatever the examples' order, and the chunks they name are what the matcher finds
    dataset["examples"].reverse()
    write(source, json.dumps(dataset))
    assert run("golden", "import", source, "--corpus-out", tmp_path / "c2.jsonl", "-o", tmp_path / "g2.jsonl").exit_code == 0
    assert sorted(read_lines(tmp_path / "c2.jsonl"), key=lambda c: c["_id"]) == sorted(chunks, key=lambda c: c["_id"])
    matched = run("golden", "import", source, "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "g3.jsonl")
    assert matched.exit_code == 0, matched.output
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "g3.jsonl")] == [[ids[1]], [ids[1], ids[0]], [ids[0]]]
    assert_one_error(run("golden", "import", source, "--corpus", tmp_path / "c.jsonl", "--corpus-out", tmp_path / "c4.jsonl",
                         "-o", tmp_path / "g4.jsonl"), "--corpus", "--corpus-out", "not both", code=2)
    # no context with text: no corpus to write (it was an IndexError from the median of no chunks)
    write(source, json.dumps({"examples": [{"query": "Wax?", "reference_contexts": ["  "], "reference_answer": "Combs."}]}))
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c5.jsonl", "-o", tmp_path / "g5.jsonl"),
                     "rag_dataset.json: no reference context holds any text", "give --corpus")
    assert not (tmp_path / "c5.jsonl").exists() and not (tmp_path / "g5.jsonl").exists()


HONEY, DRONES = "Bees keep honey in the upper combs.", "Drones have no sting, said \"Ann\"; it's so."
RAGAS = [  # as ragas's TestsetGenerator writes them (v0.2 on): a multi-hop context starts with its hop
    {"user_input": "Where is honey?", "reference_contexts": [HONEY], "reference": "Upper combs.",
     "synthesizer_name": "single_hop_specifc_query_synthesizer"},
    {"user_input": "Drones and honey?", "reference_contexts": [f"<1-hop>\n\n{DRONES}", f"<2-hop>\n\n{HONEY}"],
     "reference": " No sting; upper combs. ", "synthesizer_name": "multi_hop_specific_query_synthesizer"},
]


def ragas_files(folder: Path, rows: list[dict]) -> list[Path]:
    """`rows` saved as a user saves ragas's to_pandas(): CSV (lists as Python literals, the index first), JSON Lines,
    JSON records and pandas' default to_json (column -> row -> value); as Parquet, the format Hugging Face's hub serves
    a dataset pushed to it in; and as the Ragas app exports them, each sample's fields in `eval_sample`, with a sample
    its reviewer rejected."""
    folder.mkdir(exist_ok=True)
    with open(folder / "testset.csv", "w", newline="") as f:
        csv.writer(f).writerows([["", *rows[0]], *[[n, *(repr(v) if isinstance(v, list) else v for v in row.values())]
                                                     for n, row in enumerate(rows)]])
    write(folder / "testset.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    write(folder / "records.json", json.dumps(rows))
    write(folder / "columns.json", json.dumps({k: {str(n): row[k] for n, row in enumerate(rows)} for k in rows[0]}))
    app = [{"eval_sample": {**{k: v for k, v in row.items() if k != "synthesizer_name"}, "response": None, "rubrics": None},
            "synthesizer_name": row.get("synthesizer_name"), "approval_status": "approved"} for row in rows]
    rejected = {"eval_sample": {**app[0]["eval_sample"], "user_input": "Wat iz hunny?", "reference_contexts": ["Junk."]},
                "approval_status": "rejected"}
    write(folder / "app.json", json.dumps([*app, rejected]))
    pq.write_table(pa.Table.from_pylist(rows), folder / "testset.parquet")
    return [folder / name for name in ("testset.csv", "testset.jsonl", "records.json", "columns.json", "app.json", "testset.parquet")]


def test_a_ragas_testset_imports_alike_from_csv_json_jsonl_and_parquet(tmp_path):
    """Its questions, references and the contexts they were written from, detected by their field names; a multi-hop
    context is the same chunk as the single-hop one once its "<1-hop>" marker is cut."""
    found = []
    for source in ragas_files(tmp_path / "in", RAGAS):
        out = tmp_path / source.name
        result = run("golden", "import", source, "--corpus-out", f"{out}.corpus.jsonl", "-o", f"{out}.golden.jsonl")
        assert result.exit_code == 0, result.output
        assert "reference contexts matched: 3 exact" in result.stderr
        assert ("samples rejected in review (approval_status), left out: 1" in result.stderr) == (source.name == "app.json")
        assert read_manifest(f"{out}.golden.jsonl")["params"]["format"] == "ragas"
        chunks = read_lines(f"{out}.corpus.jsonl")
        items = [{k: v for k, v in item.items() if k != "meta"} for item in read_lines(f"{out}.golden.jsonl")]
        found.append((chunks, items))
    chunks, items = found[0]
    assert [c["text"] for c in chunks] == [HONEY, DRONES]
    assert items == [{"query_id": "q1", "query": "Where is honey?", "reference_answer": "Upper combs.",
                      "gold_chunk_ids": [chunks[0]["_id"]]},
                     {"query_id": "q2", "query": "Drones and honey?", "reference_answer": "No sting; upper combs.",
                      "gold_chunk_ids": [chunks[1]["_id"], chunks[0]["_id"]]}]
    assert all(f == found[0] for f in found[1:])
    # v0.1's names, and v0.0's list of references; a corpus given is matched as for a rag_dataset
    old = [{"question": "Where is honey?", "contexts": [HONEY], "ground_truths": ["Upper combs.", "Top combs."],
            "evolution_type": "simple"}]
    source = ragas_files(tmp_path / "old", old)[0]
    result = run("golden", "import", source, "--corpus", f"{tmp_path / 'testset.csv'}.corpus.jsonl", "-o", tmp_path / "old.jsonl")
    assert result.exit_code == 0, result.output
    assert [(i["reference_answer"], i["gold_chunk_ids"]) for i in read_lines(tmp_path / "old.jsonl")] == \
        [(["Upper combs.", "Top combs."], [chunks[0]["_id"]])]


def test_a_deepeval_dataset_imports_from_json_and_csv(tmp_path):
    """Goldens as DeepEval's save_as writes them: `context` (a list; in CSV joined by "|") is gold, `retrieval_context`
    (what a RAG system retrieved) is not."""
    goldens = [{"input": "Where is honey?", "actual_output": None, "expected_output": "Upper combs.", "context": [HONEY, DRONES],
                "retrieval_context": ["Wax is white."], "source_file": "bees.txt"},
               {"input": "Drones?", "actual_output": "They sting.", "expected_output": "No sting.", "context": [DRONES]}]
    write(tmp_path / "goldens.json", json.dumps(goldens, indent=4))
    with open(tmp_path / "goldens.csv", "w", newline="") as f:
        csv.writer(f).writerows([["input", "actual_output", "expected_output", "context", "retrieval_context", "source_file"],
                                 *[[g["input"], g["actual_output"], g["expected_output"], "|".join(g["context"]),
                                    "|".join(g.get("retrieval_context", [])), g.get("source_file")] for g in goldens]])
    found = []
    for name in ("goldens.json", "goldens.csv"):
        result = run("golden", "import", tmp_path / name, "--corpus-out", tmp_path / f"{name}.c.jsonl", "-o", tmp_path / f"{name}.g.jsonl")
        assert result.exit_code == 0, result.output
        assert read_manifest(tmp_path / f"{name}.g.jsonl")["params"]["format"] == "deepeval"
        chunks = read_lines(tmp_path / f"{name}.c.jsonl")
        assert [c["text"] for c in chunks] == [HONEY, DRONES]  # retrieval_context's "Wax is white." is no chunk
        found.append([(i["query"], i["reference_answer"], i["gold_chunk_ids"]) for i in read_lines(tmp_path / f"{name}.g.jsonl")])
    assert found[0] == found[1] == [("Where is honey?", "Upper combs.", [chunks[0]["_id"], chunks[1]["_id"]]),
                                    ("Drones?", "No sting.", [chunks[1]["_id"]])]
    write(tmp_path / "bare.csv", "input,expected_output\nWhere?,Up\n")
    assert_one_error(run("golden", "import", tmp_path / "bare.csv", "--format", "deepeval", "--corpus-out", tmp_path / "c.jsonl",
                         "-o", tmp_path / "g.jsonl"), "bare.csv: no 'context' field (columns: input, expected_output)")


WAX = "Workers make wax.\n\nThey build combs of it."  # a document with a blank line inside, as a reference_context holds it
GISKARD = [  # as Giskard's QATestset.save writes them: each document of reference_context as "Document <id>: <text>"
    {"id": "9b1e-4c", "question": "Where is honey?", "reference_answer": "Upper combs.", "reference_context": f"Document 3: {HONEY}",
     "conversation_history": [], "metadata": {"question_type": "simple", "seed_document_id": 3, "topic": "Bees"}},
    {"id": "77ad-02", "question": "Is that true of drones?", "reference_answer": " No sting. ",
     "reference_context": f"Document 12: {DRONES}\n\nDocument 3: {HONEY}",
     "conversation_history": [{"role": "user", "content": "Bees sting, I hear. "},
                              {"role": "assistant", "content": "How can I help you with that?"}],
     "metadata": {"question_type": "conversational", "seed_document_id": 12, "topic": "Bees"}},
    {"id": "0f3c-9a", "question": "What do drones pay for honey?", "reference_answer": "This question can not be answered by the "
     "context. No sufficient information is provided in the context to answer this question.",
     "reference_context": f"Document 3: {HONEY}", "conversation_history": [],
     "metadata": {"question_type": "out of scope", "seed_document_id": 3, "fake_fact": "drones pay one euro"}},
    {"id": "c1d2-33", "question": "What is wax for?", "reference_answer": "Combs.", "reference_context": f"Document doc-7: {WAX}",
     "conversation_history": [], "metadata": {"question_type": "distracting element", "seed_document_id": "doc-7"}},
]


def test_a_giskard_testset_imports_from_jsonl_json_and_csv(tmp_path):
    """Each document of reference_context is a context (a blank line inside one does not cut it); a conversational
    question is asked with its opening user turns; an out-of-scope question, on a fact no document holds, is left out
    and counted; question_type goes to meta. JSON Lines as Giskard writes them (also under a .json name), a JSON list
    (also in a .jsonl file), and CSV as pandas writes the table (dicts and lists as Python literals), all detected by
    their field names."""
    write(tmp_path / "testset.jsonl", "".join(json.dumps(row) + "\n" for row in GISKARD))
    write(tmp_path / "lines.json", (tmp_path / "testset.jsonl").read_text())
    write(tmp_path / "records.json", json.dumps(GISKARD))
    write(tmp_path / "list.jsonl", json.dumps(GISKARD, indent=1))
    with open(tmp_path / "testset.csv", "w", newline="") as f:
        csv.writer(f).writerows([["", *GISKARD[0]], *[[n, *(repr(v) if isinstance(v, (list, dict)) else v for v in row.values())]
                                                        for n, row in enumerate(GISKARD)]])
    found = []
    for name in ("testset.jsonl", "lines.json", "records.json", "list.jsonl", "testset.csv"):
        out = tmp_path / name
        result = run("golden", "import", out, "--corpus-out", f"{out}.c.jsonl", "-o", f"{out}.g.jsonl")
        assert result.exit_code == 0, result.output
        assert read_manifest(f"{out}.g.jsonl")["params"]["format"] == "giskard"
        assert "out-of-scope questions (on a fact the documents lack, so no chunk is relevant), left out: 1" in result.stderr
        assert "reference contexts matched: 4 exact" in result.stderr
        chunks = read_lines(f"{out}.c.jsonl")
        found.append((chunks, [(i["query_id"], i["query"], i["reference_answer"], i["gold_chunk_ids"], i["meta"]["question_type"])
                               for i in read_lines(f"{out}.g.jsonl")]))
    chunks, items = found[0]
    assert [c["text"] for c in chunks] == [HONEY, DRONES, WAX]
    assert items == [("9b1e-4c", "Where is honey?", "Upper combs.", [chunks[0]["_id"]], "simple"),
                     ("77ad-02", "Bees sting, I hear. Is that true of drones?", "No sting.", [chunks[1]["_id"], chunks[0]["_id"]],
                      "conversational"),
                     ("c1d2-33", "What is wax for?", "Combs.", [chunks[2]["_id"]], "distracting element")]
    assert all(f == found[0] for f in found[1:])
    # a reference_context not written by Giskard is one context; broken fields are one line each
    write(tmp_path / "own.jsonl", json.dumps({"question": "Wax?", "reference_answer": "Combs.", "reference_context": WAX}) + "\n")
    result = run("golden", "import", tmp_path / "own.jsonl", "--corpus-out", tmp_path / "own.c.jsonl", "-o", tmp_path / "own.g.jsonl")
    assert result.exit_code == 0, result.output
    assert [c["text"] for c in read_lines(tmp_path / "own.c.jsonl")] == [WAX]
    # a file that names gold chunk ids beside its contexts is no testset to detect: its ids are its gold (they were lost)
    write(tmp_path / "ids.jsonl", json.dumps({**GISKARD[0], "gold_chunk_ids": ["hive#0"]}) + "\n")
    result = run("golden", "import", tmp_path / "ids.jsonl", "-o", tmp_path / "ids.g.jsonl")
    assert result.exit_code == 0, result.output
    assert read_manifest(tmp_path / "ids.g.jsonl")["params"]["format"] == "jsonl"
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "ids.g.jsonl")] == [["hive#0"]]
    for field, value, message in [("reference_context", ["a"], "field 'reference_context' should be a text, found [\"a\"]"),
                                  ("metadata", "{'question_type': 'simple'", "field 'metadata' starts as a mapping but is not one"),
                                  ("conversation_history", {"role": "user"}, "field 'conversation_history' should be a list")]:
        write(tmp_path / "bad.jsonl", json.dumps(GISKARD[0]) + "\n" + json.dumps({**GISKARD[0], field: value}) + "\n")
        assert_one_error(run("golden", "import", tmp_path / "bad.jsonl", "--corpus-out", tmp_path / "bad.c.jsonl",
                             "-o", tmp_path / "bad.g.jsonl"), f"bad.jsonl:2: {message}")


def test_testset_fields_past_the_first_4096_bytes_are_found(tmp_path):
    """The format is told from a file's head; a long first record (a long context before the answer) and pandas'
    column-wise JSON (each column's values before the next column's name) put the fields that tell it further on."""
    long_context = "Bees keep honey in the upper combs. " * 150  # 5,400 characters
    rows = [{"question": f"Where is honey {n}?", "reference_context": f"Document {n}: {long_context}{n}", "reference_answer": "Up."}
            for n in range(3)]
    write(tmp_path / "long.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    write(tmp_path / "columns.json", json.dumps({k: {str(n): row[k] for n, row in enumerate(rows)} for k in rows[0]}))
    for name in ("long.jsonl", "columns.json"):
        result = run("golden", "import", tmp_path / name, "--corpus-out", tmp_path / f"{name}.c.jsonl", "-o", tmp_path / f"{name}.g.jsonl")
        assert result.exit_code == 0, result.output
        assert read_manifest(tmp_path / f"{name}.g.jsonl")["params"]["format"] == "giskard"
        assert len(read_lines(tmp_path / f"{name}.c.jsonl")) == 3
    write(tmp_path / "other.json", json.dumps({"notes": {"0": "x" * 5000}, "more": 1}))
    assert_one_error(run("golden", "import", tmp_path / "other.json", "-o", tmp_path / "o.jsonl"), "other.json: cannot tell the format")


def test_llamaindex_question_context_pairs_hold_their_corpus(tmp_path):
    """generate_question_context_pairs' file (EmbeddingQAFinetuneDataset.save_json): its nodes are the chunks, each
    query's relevant_docs its gold; the questions have no answers, so every query is marked no_answer."""
    pairs = {"queries": {"q 1": "Where is honey?", "q2": "Drones?"}, "corpus": {"n-1": HONEY, "n 2": DRONES},
             "relevant_docs": {"q 1": ["n-1"], "q2": ["n 2", "n-1"], "q9": ["n-1"]}, "mode": "text"}  # q9: no query
    source = write(tmp_path / "qa_pairs.json", json.dumps(pairs, indent=2))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert read_manifest(tmp_path / "g.jsonl")["params"]["format"] == "llamaindex-pairs"
    assert [(c["_id"], c["text"]) for c in read_lines(tmp_path / "c.jsonl")] == [("n-1", HONEY), ("n_2", DRONES)]
    assert [(i["query_id"], i["reference_answer"], i["gold_chunk_ids"], i["meta"]) for i in read_lines(tmp_path / "g.jsonl")] == [
        ("q_1", [], ["n-1"], {"no_answer": True}), ("q2", [], ["n_2", "n-1"], {"no_answer": True})]
    assert "queries without an answer (LlamaIndex's question-context pairs hold none): 2" in result.stderr
    assert "relevant_docs entries of queries that 'queries' lacks (left out): 1" in result.stderr  # dropped unsaid
    pairs["relevant_docs"]["q2"] = ["n-9"]
    write(source, json.dumps(pairs))
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c2.jsonl", "-o", tmp_path / "g2.jsonl"),
                     "qa_pairs.json: relevant_docs['q2'] names 'n-9', which 'corpus' does not hold")
    assert not (tmp_path / "g2.jsonl").exists()
    for nodes in ({"": HONEY}, {"n 2": HONEY, "n_2": DRONES}):  # no id, or two made one: said here, not at writing the corpus
        write(source, json.dumps({"queries": {"q1": "Where?"}, "corpus": nodes, "relevant_docs": {}}))
        assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c3.jsonl", "-o", tmp_path / "g3.jsonl"),
                         "qa_pairs.json: 'corpus' holds a node id", "that is empty or, spaces made '_', another's")


def test_ragas_errors_name_the_line_and_what_to_do(tmp_path):
    def fails(content: str, *expected: str, name: str = "t.csv") -> None:
        write(tmp_path / name, content)
        assert_one_error(run("golden", "import", tmp_path / name, "--format", "ragas", "--corpus-out", tmp_path / "c.jsonl",
                             "-o", tmp_path / "g.jsonl"), *expected)
        assert not (tmp_path / "g.jsonl").exists() and not (tmp_path / "c.jsonl").exists()

    # an evaluation file: v0.1's `contexts` beside the system's `answer` were retrieved, not what the question came from
    fails("question,answer,contexts,ground_truth\nWhere?,Lower,['x'],Upper\n", "t.csv: a ragas evaluation file",
          "retrieved for its 'answer'", "--format csv with --answer-col ground_truth")
    fails("question,ground_truth\nWhere?,Upper\n", "t.csv: no reference contexts (looked for reference_contexts, contexts",
          "--format csv or --format jsonl")
    fails("question,contexts,ground_truth\nWhere?,['x'],Upper\nWhy?,\"['x', 'y\",No\n", "t.csv:3: field 'contexts' starts as a list "
          "but is not one")
    fails('[{"question": "Where?", "contexts": ["x", 3], "ground_truth": "Up"}]', "t.json record 1: field 'contexts' should be a "
          "list of texts, found [\"x\", 3]", name="t.json")
    fails('{"user_input": "Where?", "reference_contexts": ["x"], "reference": ["Up"]}\n', "t.jsonl:1: field 'reference' (the "
          "reference answer) should be a text", name="t.jsonl")
    # which of CSV, JSON or JSONL a testset is comes from its suffix: stdin was read as JSON ("invalid JSON" for a CSV)
    assert_one_error(run("golden", "import", "-", "--format", "ragas", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl",
                         input="user_input,reference_contexts,reference\nWhere?,['x'],Up\n"), "read from a file", "not from stdin", code=2)
    # a context that only looks like a list at its first character is text
    write(tmp_path / "ok.csv", "question,contexts,ground_truth\nWhere?,[1] Upper combs,Upper\n")
    assert run("golden", "import", tmp_path / "ok.csv", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl").exit_code == 0
    assert [c["text"] for c in read_lines(tmp_path / "c.jsonl")] == ["[1] Upper combs"]


def reference_match(chunks: list[Chunk], context: str, threshold: float) -> tuple[list[str], str, float, int]:
    """What the matcher did when it indexed every chunk and looked each context up: the definition the streaming
    matcher, which indexes the contexts and reads each chunk once, must agree with."""
    texts = [_squash(c.text) for c in chunks]
    tokens = [_tokens(c.text) for c in chunks]
    chunk_words, chunk_pairs = [set(t) for t in tokens], [_pairs(t) for t in tokens]
    squashed, context_tokens = _squash(context), _tokens(context)
    words, pairs = set(context_tokens), _pairs(context_tokens)
    shared_pairs = Counter(i for pair in pairs for i, p in enumerate(chunk_pairs) if pair in p)
    exact = {i for i in shared_pairs if squashed and (squashed in texts[i] or texts[i] and texts[i] in squashed)}
    covered = {i for i, n in shared_pairs.items() if n >= COVER * len(chunk_pairs[i]) or n >= COVER * len(pairs)}
    marked = sorted(exact | covered)
    if marked:
        held = any(squashed in texts[i] for i in exact)
        union = set().union(*(chunk_pairs[i] for i in marked)) & pairs
        score = 1.0 if held else len(union) / max(1, len(pairs))
        return [chunks[i].id for i in marked], "exact" if covered <= exact else "covered", score, len(context_tokens)
    shared = Counter(i for word in words for i, w in enumerate(chunk_words) if word in w)
    scored = [(n / max(1, min(len(words), len(chunk_words[i]))), -i) for i, n in shared.items()]
    if not scored:
        return [], "none", 0.0, len(context_tokens)
    score, neg_index = max(scored)
    return ([chunks[-neg_index].id], "overlap", score, len(context_tokens)) if score >= threshold else \
        ([], "none", score, len(context_tokens))


@pytest.mark.parametrize("seed", range(30))
def test_contexts_match_the_chunks_they_did_when_every_chunk_was_indexed(seed):
    """The matcher reads the corpus a chunk at a time; on random chunks and contexts of a small vocabulary (so that
    exact, covered, overlap, none and ties all occur) it marks what indexing every chunk marked, with the same scores."""
    rng = random.Random(seed)
    vocabulary = ["bees", "Forage", "wax", "comb", "hive", "queen", "drone", "honey"][: rng.randint(2, 8)]

    def text(most: int) -> str:
        return rng.choice([" ", "\n", "  ", ", "]).join(rng.choice(vocabulary) for _ in range(rng.randint(0, most)))

    chunks = [Chunk(f"c{i}", text(12), "d", 0, 0) for i in range(rng.randint(1, 25))]
    contexts = [text(20) for _ in range(8)] + [rng.choice(chunks).text[2:30] for _ in range(4)] + \
        [" ".join(c.text for c in rng.sample(chunks, min(2, len(chunks)))) for _ in range(2)]
    contexts += rng.sample(contexts, 3)  # a context given twice
    threshold = rng.choice([0.0, 0.3, 0.5, 0.8, 1.0])
    matcher = ContextMatcher(contexts, threshold)
    for chunk in chunks:
        matcher.add(chunk)
    for context in contexts:
        found = matcher.match(context)
        assert (found.ids, found.how, found.score, found.words) == reference_match(chunks, context, threshold), context


def test_csv_with_default_and_named_columns(tmp_path):
    corpus = corpus_file(tmp_path)
    source = write(tmp_path / "g.csv", 'question,answer,gold\n"What holds wax?","The hive.","a#0; a#1"\nQueens?,,b#0\n')
    result = run("golden", "import", source, "--corpus", corpus, "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    items = read_lines(tmp_path / "g.jsonl")
    assert [(i["query_id"], i["query"], i["reference_answer"], i["gold_chunk_ids"]) for i in items] == [
        ("q1", "What holds wax?", "The hive.", ["a#0", "a#1"]), ("q2", "Queens?", [], ["b#0"]),
    ]
    assert items[1]["meta"] == {"line": 3, "no_answer": True}
    named = write(tmp_path / "n.tsv", "key\tQ\tA\tids\nk 1\tWhy?\tBecause.\t[\"b#0\"]\n")
    result = run("golden", "import", named, "--id-col", "key", "--query-col", "Q", "--answer-col", "A",
                 "--chunk-ids-col", "ids", "-o", tmp_path / "n.jsonl")
    assert result.exit_code == 0, result.output
    assert read_lines(tmp_path / "n.jsonl")[0]["query_id"] == "k_1"
    assert read_lines(tmp_path / "n.jsonl")[0]["gold_chunk_ids"] == ["b#0"]


def test_a_csv_with_semicolons_as_excel_writes_it_where_a_comma_is_the_decimal_mark_imports_as_with_commas(tmp_path):
    """'no query column (columns: question;answer)' before: the header was read as one column."""
    corpus = corpus_file(tmp_path)
    commas = write(tmp_path / "c.csv", 'question,answer,gold\n"What holds wax; and why?","The hive, 2,5 kg.",a#0\nQueens?,One.,b#0\n')
    semis = write(tmp_path / "s.csv", 'question;answer;gold\n"What holds wax; and why?";The hive, 2,5 kg.;a#0\nQueens?;One.;b#0\n')
    for source in (commas, semis):
        result = run("golden", "import", source, "--corpus", corpus, "-o", tmp_path / f"{source.stem}.jsonl")
        assert result.exit_code == 0, result.output
    assert (tmp_path / "s.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()
    assert read_lines(tmp_path / "s.jsonl")[0]["reference_answer"] == "The hive, 2,5 kg."
    ragas = write(tmp_path / "r.csv", "user_input;reference_contexts;reference\nWhy?;['Bees make wax.'];So.\n")
    assert run("golden", "import", ragas, "--corpus-out", tmp_path / "rc.jsonl", "-o", tmp_path / "r.jsonl").exit_code == 0
    assert read_lines(tmp_path / "r.jsonl")[0]["reference_answer"] == "So."


def test_blank_lines_before_a_csv_header_are_skipped_as_after_it(tmp_path):
    """'no query column (columns: none)' before: the empty first line was taken for the header (and a semicolon
    header after it for a comma one, a ragas testset for a plain table)."""
    corpus = corpus_file(tmp_path)
    semis = write(tmp_path / "s.csv", '\n  \nquestion;answer;gold\nQueens?;One.;b#0\n')
    assert run("golden", "import", semis, "--corpus", corpus, "-o", tmp_path / "s.jsonl").exit_code == 0
    assert read_lines(tmp_path / "s.jsonl") == [{"query_id": "q1", "query": "Queens?", "reference_answer": "One.",
                                                 "gold_chunk_ids": ["b#0"], "meta": {"line": 4}}]
    ragas = write(tmp_path / "r.csv", "\nuser_input,reference_contexts,reference\nWhy?,['Bees make wax.'],So.\n")
    assert run("golden", "import", ragas, "--corpus-out", tmp_path / "rc.jsonl", "-o", tmp_path / "r.jsonl").exit_code == 0
    assert read_lines(tmp_path / "r.jsonl")[0]["reference_answer"] == "So."
    twice = run("golden", "import", write(tmp_path / "t.csv", "\n\nquery,query\nx,y\n"), "-o", tmp_path / "t.jsonl")
    assert twice.exit_code == 1 and "t.csv:3: the header names column 'query' twice" in twice.output


def test_qrels_beside_a_golden_set_on_stdout_name_the_import_s_sources(tmp_path):
    """Their manifest named '-' as the input, which a manifest reads as stdin: the golden set had gone to stdout."""
    source = write(tmp_path / "g.csv", "query,answer,gold\nWhat holds wax?,The hive.,a#0\n")
    result = run("golden", "import", source, "-o", "-", "--qrels-out", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith('{"query_id":"q1"')
    assert read_manifest(tmp_path / "q.txt")["inputs"] == [{"path": str(source), **file_digest(source)}]


def test_csv_and_jsonl_errors(tmp_path):
    no_query = write(tmp_path / "a.csv", "prompt,answer\nx,y\n")
    assert_one_error(run("golden", "import", no_query, "-o", tmp_path / "g.jsonl"), "a.csv", "no query column", "--query-col")
    named = write(tmp_path / "b.csv", "query,answer\nx,y\n")
    assert_one_error(run("golden", "import", named, "--answer-col", "reply", "-o", tmp_path / "g.jsonl"),
                     "b.csv", "no column 'reply'", "query, answer")
    extra = write(tmp_path / "c.csv", "query,answer\nx,y,z\n")
    assert_one_error(run("golden", "import", extra, "-o", tmp_path / "g.jsonl"), "c.csv:2", "more cells")
    unknown = write(tmp_path / "d.csv", "query,answer,gold_chunk_ids\nx,y,a#0 zz#9\n")
    assert_one_error(run("golden", "import", unknown, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "g.jsonl"),
                     "d.csv", "1 gold chunk id is not in the corpus", "'zz#9'")
    rows = write(tmp_path / "e.jsonl", '{"query": "x", "answer": "y"}\n{"query": "z"}\n')
    assert_one_error(run("golden", "import", rows, "-o", tmp_path / "g.jsonl"), "e.jsonl:2", "missing field 'answer'")
    twice = write(tmp_path / "t.csv", "id,query,answer\n7,x,y\n7,z,w\n")
    assert_one_error(run("golden", "import", twice, "-o", tmp_path / "g.jsonl"), "t.csv:3", "'7' occurs more than once (first on line 2)")
    blanks = write(tmp_path / "blanks.csv", "id,query,answer\nq 1,x,y\nq_1,z,w\n")  # named 'q_1' twice, as if line 2 had said so
    assert_one_error(run("golden", "import", blanks, "-o", tmp_path / "g.jsonl"), "blanks.csv:3",
                     "'q_1' occurs more than once (first on line 2)", "blanks in an id become '_': 'a b' and 'a_b' are one id")
    numbered = write(tmp_path / "numbered.csv", "id,query,answer\n,x,y\nq1,z,w\n")  # "'q1' occurs more than once (first on line 2)"
    assert_one_error(run("golden", "import", numbered, "-o", tmp_path / "g.jsonl"),
                     "numbered.csv:3: query id 'q1' is the one semrel gives line 2, which has none")
    assert_one_error(run("golden", "import", named, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "--corpus-out only applies", code=2)
    # a lone carriage return in the header: telling csv from a ragas testset by it raised csv.Error, a traceback
    carriage = write(tmp_path / "r.csv", "query\rx,answer\nq,a\n")
    assert_one_error(run("golden", "import", carriage, "-o", tmp_path / "g.jsonl"), "r.csv: no answer column")
    bad = write(tmp_path / "f.jsonl", '{"query": "x", "answer": "y"}\n{"query": \n')
    assert_one_error(run("golden", "import", bad, "-o", tmp_path / "g.jsonl"), "f.jsonl:2", "invalid JSON")
    assert not (tmp_path / "g.jsonl").exists()


def test_a_parquet_table_imports_as_its_rows(tmp_path, monkeypatch):
    """A table of questions as Hugging Face's hub serves it (Parquet): typed ids and lists as JSON Lines gives them, a
    null answer a query without one; rows are numbered as lines in errors. A file that is not Parquet, or whose
    uncompressed size passes SEMREL_MAX_DOCUMENT_MB, is one line."""
    source = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.table({"id": [5, 6], "question": ["Q?", "R?"], "answers": [["one", "two"], None],
                             "chunk_ids": [["a#1"], []]}), source)
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert read_lines(tmp_path / "out.jsonl") == [
        {"query_id": "5", "query": "Q?", "reference_answer": ["one", "two"], "gold_chunk_ids": ["a#1"], "meta": {"line": 1}},
        {"query_id": "6", "query": "R?", "reference_answer": [], "gold_chunk_ids": [], "meta": {"line": 2, "no_answer": True}}]
    assert read_manifest(tmp_path / "out.jsonl")["params"]["format"] == "parquet"
    pq.write_table(pa.table({"question": ["Q?", None], "answer": ["A.", "B."]}), tmp_path / "null.parquet")
    assert_one_error(run("golden", "import", tmp_path / "null.parquet", "-o", tmp_path / "g.jsonl"),
                     "null.parquet:2: the query should be a string, found NoneType")
    assert_one_error(run("golden", "import", write(tmp_path / "fake.parquet", "query,answer\nx,y\n"), "-o", tmp_path / "g.jsonl"),
                     "fake.parquet: not a Parquet file (")
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.0001")
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "g.jsonl"),
                     "test-00000-of-00001.parquet: the table, uncompressed, is longer than the limit of 0.0001 MB",
                     "SEMREL_MAX_DOCUMENT_MB")
    assert not (tmp_path / "g.jsonl").exists()


def test_the_shards_of_a_split_import_as_one_table(tmp_path):
    """The hub stores a large split as shards (train-00000-of-00003.parquet, ...): the folder, or any one shard, imports
    as the whole table (one shard alone was a third of the questions, in silence); the manifest names every shard with
    its sha256; an error names the shard and its own row, a duplicate id both shards."""
    rows = [{"id": f"q{n}", "question": f"Q{n}?", "answer": f"A{n}."} for n in range(7)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "whole.parquet")
    split = tmp_path / "data"
    split.mkdir()
    shards = [split / f"train-{k:05d}-of-00003.parquet" for k in range(3)]
    for shard, part in zip(shards, (rows[:3], rows[3:4], rows[4:])):
        pq.write_table(pa.Table.from_pylist(part), shard)
    assert run("golden", "import", tmp_path / "whole.parquet", "-o", tmp_path / "whole.jsonl").exit_code == 0
    for n, source in enumerate((split, shards[0], shards[1])):
        result = run("golden", "import", source, "-o", tmp_path / f"{n}.jsonl")
        assert result.exit_code == 0, result.output
        assert f"files of the split {split}/train-*-of-00003.parquet, read as one set: 3" in result.stderr
        assert (tmp_path / f"{n}.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    inputs = read_manifest(tmp_path / "0.jsonl")["inputs"]
    assert [(i["path"], i["sha256"]) for i in inputs] == [(str(s), file_digest(s)["sha256"]) for s in shards]
    pq.write_table(pa.Table.from_pylist([*rows[4:6], {**rows[6], "question": None}]), shards[2])
    assert_one_error(run("golden", "import", split, "-o", tmp_path / "g.jsonl"),
                     f"{shards[2]}:3: the query should be a string, found NoneType")
    pq.write_table(pa.Table.from_pylist([rows[5], rows[1]]), shards[2])
    assert_one_error(run("golden", "import", shards[2], "-o", tmp_path / "g.jsonl"),
                     f"{shards[2]}:2: query id 'q1' occurs more than once (first at {shards[0]}:2)")


def test_each_shard_is_read_once_and_the_next_numbered_on_from_its_lines(tmp_path, monkeypatch):
    """split_records numbered a shard's rows on from the one before by counting that one's lines (or rows) again: a
    second full read of every JSON Lines shard but the last. Blank lines count, as the errors' line numbers need."""
    import semrel.formats.files as files
    from semrel.formats.shards import shard_at, split_records

    for kind in ("jsonl", "parquet"):
        shards = [str(tmp_path / f"{kind}-{k:05d}-of-00003.{kind}") for k in range(3)]
        parts = ([{"q": "a"}, {"q": "b"}], [{"q": "c"}], [{"q": "d"}, {"q": "e"}])
        for shard, part in zip(shards, parts):
            if kind == "parquet":
                pq.write_table(pa.Table.from_pylist(part), shard)
            else:
                write(Path(shard), "\n\n".join(json.dumps(row) for row in part) + "\n\n")  # a blank line after each row
        opened: Counter[str] = Counter()
        monkeypatch.setattr(files, "_open_binary", lambda name, open_binary=files._open_binary, seen=opened: seen.update([name])
                            or open_binary(name))
        numbered = [(line, row["q"]) for line, row in split_records(shards)]
        assert opened == Counter(shards), kind
        monkeypatch.undo()
        assert numbered == ([(1, "a"), (3, "b"), (5, "c"), (7, "d"), (9, "e")] if kind == "jsonl" else
                            [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")])
        assert shard_at(shards, numbered[-1][0]) == (shards[2], 3 if kind == "jsonl" else 2)


def test_a_shard_without_the_others_of_its_split_is_refused(tmp_path):
    """A shard alone, or a folder missing one, would import part of a split as if it were all of it."""
    for k in (0, 2):
        write(tmp_path / f"test-{k:05d}-of-00003.jsonl", '{"query": "Q?", "answer": "A."}\n')
    for source in (tmp_path, tmp_path / "test-00000-of-00003.jsonl"):
        assert_one_error(run("golden", "import", source, "-o", tmp_path / "g.jsonl"),
                         "test-00000-of-00003.jsonl: is shard 1 of the 3 files of one split, and test-00001-of-00003.jsonl is "
                         "not beside it, so the set would lack its queries (download every shard into this folder")
    assert not (tmp_path / "g.jsonl").exists()


def test_a_folder_of_several_splits_shards_imports_the_split_given(tmp_path):
    """A hub download holds every split's shards in one data/ folder: --split NAME reads that split's, the same set as
    one of its shards gives, and the manifest names them and the split; without --split (or with one it does not hold)
    the folder is refused with its splits listed, none picked in silence. --split on a shard file is refused, as it
    was before: the file names its split."""
    rows = squad_rows(squad(34, title="Bee keeping"))
    data = tmp_path / "data"
    data.mkdir()
    parts = {"train-00000-of-00002": rows[:2], "train-00001-of-00002": rows[2:], "test-00000-of-00001": rows[1:],
             "validation-00000-of-00001": rows[:1]}
    for name, part in parts.items():
        pq.write_table(pa.Table.from_pylist(part), data / f"{name}.parquet")
    listed = "test (1 file, 2 rows), train (2 files, 3 rows), validation (1 file, 1 row)"
    assert_one_error(run("golden", "import", data, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     f"{data}: holds the shards of 3 splits, {listed} (give --split NAME, the one to import)")
    assert_one_error(run("golden", "import", data, "--split", "dev", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     f"{data}: holds no split 'dev', only {listed} (give --split NAME, one of them)")
    assert not (tmp_path / "g.jsonl").exists()
    for split, shard in (("train", "train-00001-of-00002"), ("test", "test-00000-of-00001")):
        made = []
        for n, source in enumerate((["--split", split, data], [data / f"{shard}.parquet"])):
            corpus, golden = tmp_path / f"{split}{n}.corpus.jsonl", tmp_path / f"{split}{n}.jsonl"
            result = run("golden", "import", *source, "--corpus-out", corpus, "-o", golden)
            assert result.exit_code == 0, result.output
            made.append((corpus.read_bytes(), golden.read_bytes(), read_manifest(golden)))
        assert made[0][:2] == made[1][:2] and made[0][1].count(b"\n") == {"train": 3, "test": 2}[split]
        shards = sorted(data.glob(f"{split}-*"))
        assert [i["path"] for i in made[0][2]["inputs"]] == [str(s) for s in shards]
        assert made[0][2]["params"]["split"] == made[1][2]["params"]["split"] == split
    items = semrel.import_golden(data, split="validation", corpus_out=tmp_path / "v.corpus.jsonl", warn=lambda message: None)
    assert [i.query_id for i in items] == ["q_1"]
    assert_one_error(run("golden", "import", data / "test-00000-of-00001.parquet", "--split", "test", "--corpus-out", tmp_path / "c.jsonl",
                         "-o", tmp_path / "g.jsonl"), "--split names a BEIR folder's qrels split", code=2)
    for shard in data.glob("t*"):
        shard.unlink()
    assert_one_error(run("golden", "import", data, "--split", "test", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     f"{data}: holds no split 'test', only validation (1 file, 1 row)")


def test_jsonl_keeps_several_answers_and_list_ids(tmp_path):
    source = write(tmp_path / "g.jsonl", '{"id": 5, "question": "Q?", "answers": ["one", "two"], "chunk_ids": ["a#1"]}\n')
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert read_lines(tmp_path / "out.jsonl")[0] == {
        "query_id": "5", "query": "Q?", "reference_answer": ["one", "two"], "gold_chunk_ids": ["a#1"], "meta": {"line": 1},
    }


def test_a_column_left_unread_where_no_column_holds_gold_is_named(tmp_path):
    """A CSV naming each answer's source file in a column semrel does not read ('source') imported with no gold and
    no word why; the warning names the column and where gold is read from. A file with no other column, or with a
    gold column, says nothing of it."""
    source = write(tmp_path / "g.csv", "\ufeffquestion,answer,source\nWhere is oil applied?,On the rollers.,chain-care.md\n")
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("semrel: warning")] == [
        "semrel: warning: queries without gold chunks, as column 'source' is not read (gold is read from a column "
        "gold_chunk_ids, chunk_ids or gold, or the one --chunk-ids-col names: chunk ids, or document ids or file names with "
        "--doc-qrels): 1"]
    lines = write(tmp_path / "g.jsonl", '{"question": "Q?", "answer": "A.", "doc": "a", "page": 2}\n')
    with pytest.warns(UserWarning, match="columns 'doc', 'page' are not read .* chunk_ids_col= names"):
        semrel.import_golden(lines)
    for text in ("question,answer\nQ?,A.\n", "question,answer,gold,source\nQ?,A.,a#1,a.md\n"):
        result = run("golden", "import", write(tmp_path / "h.csv", text), "--corpus", corpus_file(tmp_path), "-o",
                     tmp_path / "h.jsonl")
        assert result.exit_code == 0 and "not read" not in result.stderr, result.output


def test_beir_folder_keeps_grades_and_marks_missing_answers(tmp_path):
    write(tmp_path / "beir" / "corpus.jsonl", '{"_id": "d1", "text": "x"}\n')
    write(tmp_path / "beir" / "queries.jsonl",
          '{"_id": "1", "text": "first?", "metadata": {"answer": "yes"}}\n{"_id": "2", "text": "second?"}\n'
          '{"_id": "3", "text": "third?", "answer": "top", "metadata": {"answer": "nested"}}\n')  # a top-level answer wins
    write(tmp_path / "beir" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t2\n1\td2\t0\n2\td1\t1\n9\td1\t1\n3\td1\t1\n")
    result = run("golden", "import", tmp_path / "beir", "-o", tmp_path / "g.jsonl", "--qrels-out", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    items = read_lines(tmp_path / "g.jsonl")
    assert items[0]["gold_chunk_ids"] == ["d1"] and items[0]["reference_answer"] == "yes"
    assert items[0]["meta"] == {"grades": {"d1": 2, "d2": 0}}
    assert items[1]["meta"] == {"grades": {"d1": 1}, "no_answer": True}
    assert items[2]["reference_answer"] == "top"
    assert (tmp_path / "q.txt").read_text() == "1 0 d1 2\n1 0 d2 0\n2 0 d1 1\n3 0 d1 1\n"
    assert "queries without an answer (BEIR sets rarely have one; judging needs one): 1" in result.stderr
    assert "not in queries.jsonl (ignored): 1" in result.stderr
    assert_one_error(run("golden", "import", tmp_path / "beir", "--split", "dev", "-o", tmp_path / "g.jsonl"),
                     "qrels/dev.tsv is missing")
    write(tmp_path / "beir" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t0\n1\td1\t2\n")  # the last grade was kept
    assert_one_error(run("golden", "import", tmp_path / "beir", "-o", tmp_path / "g.jsonl"),
                     "test.tsv:3: duplicate judgment for query '1' and doc 'd1'")


def test_beir_folder_as_the_hub_serves_it_gives_the_files_its_json_lines_give(tmp_path):
    """Hugging Face's BeIR repositories held corpus.jsonl.gz and queries.jsonl.gz, and since their conversion Parquet
    shards in corpus/ and queries/; the qrels (the -qrels repository's test.tsv) go in qrels/ as in BEIR's zips."""
    corpus = [{"_id": "d1", "title": "Chains", "text": "Oil the chain weekly."}, {"_id": "d2", "title": "", "text": "Tyres at 60 psi."},
              {"_id": "d3", "title": "Brakes", "text": "Pads wear out."}]
    queries = [{"_id": "1", "text": "how often to oil?", "metadata": {"answer": "weekly"}}, {"_id": "2", "text": "tyre pressure?",
                                                                                            "metadata": {"answer": None}},
               {"_id": "7", "text": "another split's", "metadata": {"answer": "x"}}]
    qrels = "query-id\tcorpus-id\tscore\n1\td1\t2\n2\td2\t1\n2\td3\t0\n"
    lines = {name: "".join(json.dumps(r) + "\n" for r in rows) for name, rows in (("corpus", corpus), ("queries", queries))}
    for layout in ("jsonl", "gz", "hub"):
        folder = tmp_path / layout
        write(folder / "qrels" / "test.tsv", qrels)
        for name, rows in (("corpus", corpus), ("queries", queries)):
            if layout == "jsonl":
                write(folder / f"{name}.jsonl", lines[name])
            elif layout == "gz":
                (folder / f"{name}.jsonl.gz").write_bytes(gzip.compress(lines[name].encode()))
            else:
                (folder / name).mkdir()
                shards = [rows[:2], rows[2:]] if name == "corpus" else [rows]
                for i, shard in enumerate(shards):
                    pq.write_table(pa.Table.from_pylist(shard), folder / name / f"bike-{name}-{i:05d}-of-{len(shards):05d}.parquet")
        out = tmp_path / f"out-{layout}"
        chunked = run("corpus", "chunk", folder, "--whole", "-o", out / "corpus.jsonl")
        assert chunked.exit_code == 0, chunked.output
        imported = run("golden", "import", folder, "--corpus", out / "corpus.jsonl", "-o", out / "golden.jsonl")
        assert imported.exit_code == 0, imported.output
        named = {"jsonl": "queries.jsonl", "gz": "queries.jsonl.gz", "hub": "queries/"}[layout]
        assert f"queries of {named} that qrels/test.tsv does not judge (other splits'; left out): 1" in imported.stderr
    for name in ("corpus.jsonl", "golden.jsonl"):
        assert (tmp_path / "out-gz" / name).read_bytes() == (tmp_path / "out-jsonl" / name).read_bytes()
        assert (tmp_path / "out-hub" / name).read_bytes() == (tmp_path / "out-jsonl" / name).read_bytes()
    assert read_lines(tmp_path / "out-hub" / "golden.jsonl")[0]["gold_chunk_ids"] == ["d1"]
    assert "read 3 documents: 3 BEIR corpus (2 files)" in chunked.stderr
    hub = tmp_path / "hub"
    again = [{"_id": "d1", "title": "", "text": "again"}]
    pq.write_table(pa.Table.from_pylist(again), hub / "corpus" / "bike-corpus-00001-of-00002.parquet")
    assert_one_error(run("corpus", "chunk", hub, "--whole", "-o", tmp_path / "c.jsonl"),
                     "hub/corpus/bike-corpus-00001-of-00002.parquet:1: document id 'd1' is already used on ",
                     "hub/corpus/bike-corpus-00000-of-00002.parquet line 1")
    unnamed = [{"_id": "1", "text": "q"}, {"id": "2", "text": "q"}]
    pq.write_table(pa.Table.from_pylist(unnamed), hub / "queries" / "bike-queries-00000-of-00001.parquet")
    assert_one_error(run("golden", "import", hub, "-o", tmp_path / "g.jsonl"),
                     "hub/queries/bike-queries-00000-of-00001.parquet:2: a query needs '_id' (a string) and 'text' (a string)")
    for shard in (hub / "corpus").iterdir():
        shard.unlink()
    assert_one_error(run("golden", "import", hub, "-o", tmp_path / "g.jsonl"),
                     "hub: not a BEIR folder, it has no corpus (corpus.jsonl, corpus.jsonl.gz, corpus.parquet or corpus/ holding "
                     "Parquet files)")


def test_a_folder_downloaded_from_the_hub_is_refused_with_its_files_named(tmp_path):
    """`huggingface-cli download squad --local-dir` gives a folder of splits; in the hub's cache it sits under a hidden
    folder (~/.cache/huggingface), which does not hide its files. Where they are a folder of shards, that folder (and
    --split) is what to give: a shard given alone reads only its own split."""
    folder = tmp_path / ".cache" / "squad"
    for name in ("plain_text/validation-00000-of-00001.parquet", "plain_text/train-00000-of-00001.parquet", ".git/x.json",
                 "README.md"):
        write(folder / name, "")
    assert_one_error(run("golden", "import", folder, "-o", tmp_path / "g.jsonl"),
                     "folder is neither a BEIR folder", f"(give its folder of shards {folder.as_posix()}/plain_text with --split NAME "
                     "(train, validation))")
    (folder / "plain_text" / "validation-00000-of-00001.parquet").unlink()
    assert_one_error(run("golden", "import", folder, "-o", tmp_path / "g.jsonl"),
                     f"(give its folder of shards {folder.as_posix()}/plain_text)")
    other = tmp_path / "other"
    for n in range(5):
        write(other / f"data/part-{n}.jsonl", "")
    assert_one_error(run("golden", "import", other, "-o", tmp_path / "g.jsonl"),
                     "(give one of its files: data/part-0.jsonl, data/part-1.jsonl, data/part-2.jsonl (2 more))")


def test_pubmedqa_contexts_become_chunks_of_their_pmid(tmp_path):
    data = {"123": {"QUESTION": "Does it work?", "CONTEXTS": ["First part.", "Second\u2028part."], "LABELS": ["A", "B"],
                    "LONG_ANSWER": "It works.", "final_decision": "yes"},
            "456": {"QUESTION": "Is it safe?", "CONTEXTS": ["Only part."], "LONG_ANSWER": "", "final_decision": "maybe"}}
    source = write(tmp_path / "ori_pqal.json", json.dumps(data))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    chunks = read_lines(tmp_path / "c.jsonl")
    assert [(c["_id"], c["doc_id"], c["start"], c["end"]) for c in chunks] == [
        ("123#0", "123", 0, 11), ("123#1", "123", 13, 25), ("456#0", "456", 0, 10),
    ]
    items = read_lines(tmp_path / "g.jsonl")
    assert items[0]["gold_chunk_ids"] == ["123#0", "123#1"] and items[0]["reference_answer"] == "It works."
    assert items[1]["meta"]["no_answer"] is True and items[1]["meta"]["final_decision"] == "maybe"
    twice = write(tmp_path / "twice.json", '{"123": {"QUESTION": "a?", "CONTEXTS": ["x"]},\n "123": {"QUESTION": "b?", '
                                           '"CONTEXTS": ["y"]}}\n')  # JSON keeps the last record: one was lost unsaid
    assert_one_error(run("golden", "import", twice, "--format", "pubmedqa", "--corpus-out", tmp_path / "c2.jsonl",
                         "-o", tmp_path / "g2.jsonl"), "twice.json:2: the key '123' is given twice in one object")
    hashed = write(tmp_path / "hashed.json", '{"#9": {"QUESTION": "a?", "CONTEXTS": ["x"]}}\n')  # named neither file nor record
    assert_one_error(run("golden", "import", hashed, "--format", "pubmedqa", "--corpus-out", tmp_path / "c2.jsonl",
                         "-o", tmp_path / "g2.jsonl"), "hashed.json: record '#9': query id '#9' starts with '#'")


def test_pubmedqa_blank_contexts_are_no_chunks_nor_gold_and_are_counted_once(tmp_path):
    """A blank context was a chunk of empty text and gold that no retriever or judge could match; the others keep
    their index in CONTEXTS (and LABELS) and their offsets, and a PMID with only blank contexts has no gold."""
    data = {"123": {"QUESTION": "Does it work?", "CONTEXTS": ["First part.", "  ", "Third part."], "LABELS": ["A", "B", "C"],
                    "LONG_ANSWER": "It works.", "final_decision": "yes"},
            "456": {"QUESTION": "Is it safe?", "CONTEXTS": ["", "\n"], "LONG_ANSWER": "Yes.", "final_decision": "maybe"}}
    source = write(tmp_path / "ori_pqal.json", json.dumps(data))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert [(c["_id"], c["text"], c["start"], c["end"]) for c in read_lines(tmp_path / "c.jsonl")] == [
        ("123#0", "First part.", 0, 11), ("123#2", "Third part.", 17, 28)]
    items = read_lines(tmp_path / "g.jsonl")
    assert [(i["query_id"], i["gold_chunk_ids"]) for i in items] == [("123", ["123#0", "123#2"]), ("456", [])]
    assert [line for line in result.stderr.splitlines() if line.startswith("semrel: warning")] == [
        "semrel: warning: blank contexts (empty or only spaces; not made chunks or gold): 3",
        "semrel: warning: queries whose contexts are all blank (no gold): 1"]
    assert "2 queries, 1 with gold chunks" in result.stderr


@pytest.mark.parametrize(("name", "queries", "passages", "selected", "with_gold", "unanswered"), [
    ("ifn647_sample.json", 50, 413, 52, 48, 2),  # the official v1.1 layout: a list of passage objects
    ("rag-robustness_ms_marco_sample.json", 200, 1629, 211, 189, 7),  # Hugging Face's: parallel lists
])
@needs_shared("msmarco_qna_v11")
def test_msmarco_passages_become_chunks_and_is_selected_their_gold(tmp_path, name, queries, passages, selected, with_gold,
                                                                     unanswered):
    """The counts are SOURCE.md's (its check.py) for the shared samples; the format is told from the file."""
    source = SHARED_DATA / "msmarco_qna_v11" / name
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    chunks, items = read_lines(tmp_path / "c.jsonl"), read_lines(tmp_path / "g.jsonl")
    assert (len(items), len(chunks), sum(len(i["gold_chunk_ids"]) for i in items)) == (queries, passages, selected)
    assert sum(bool(i["gold_chunk_ids"]) for i in items) == with_gold
    assert sum(bool(i["meta"].get("no_answer")) for i in items) == unanswered
    assert f"queries without an answer: {unanswered}" in result.stderr
    assert f"queries with no passage marked is_selected (no gold): {queries - with_gold}" in result.stderr
    assert read_manifest(tmp_path / "g.jsonl")["params"]["format"] == "msmarco"
    if name == "ifn647_sample.json":
        reagan = next(i for i in items if i["query_id"] == "19700")
        assert (reagan["query"], reagan["reference_answer"], reagan["gold_chunk_ids"]) == (
            "was ronald reagan a democrat", "Yes", ["19700p1"])
        first = chunks[0]
        assert (first["_id"], first["doc_id"], first["meta"]["url"]) == (
            "19699p0", "19699p0", "https://en.wikipedia.org/wiki/Reserve_Bank_of_Australia")


@needs_shared("pubmedqa_pqal/ori_pqal.json", "msmarco_qna_v11/rag-robustness_ms_marco_sample.json",
              "covid_qa_deepset/200423_covidQA.json")
def test_pubmedqa_msmarco_and_covidqa_rows_from_hugging_face_import_as_their_json_does(tmp_path):
    """PubMedQA (qiaojin/PubMedQA: pubid, question, context {contexts, labels, meshes}, long_answer, final_decision),
    MS MARCO QnA (microsoft/ms_marco: a record a row) and COVID-QA (deepset/covid_qa_deepset: SQuAD's rows, with
    document_id) as Hugging Face's hub holds them, in Parquet or JSON Lines, give the corpus and golden set their JSON
    gives, byte for byte: 60 questions of the shared PubMedQA and MS MARCO files, COVID-QA's first 3 articles (27)."""
    pqal = json.loads((SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json").read_text())
    pubmed = dict(list(pqal.items())[:60])
    pubmed_rows = [{"pubid": int(pmid), "question": r["QUESTION"], "context": {"contexts": r["CONTEXTS"], "labels": r["LABELS"],
                    "meshes": r.get("MESHES", [])}, "long_answer": r["LONG_ANSWER"], "final_decision": r["final_decision"]}
                   for pmid, r in pubmed.items()]
    marco = json.loads((SHARED_DATA / "msmarco_qna_v11" / "rag-robustness_ms_marco_sample.json").read_text())[:60]
    covid = {"data": json.loads((SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json").read_text())["data"][:3]}
    for name, whole, rows, fmt, questions in (("pubmed", pubmed, pubmed_rows, "pubmedqa", 60), ("marco", marco, marco, "msmarco", 60),
                                              ("covid", covid, squad_rows(json.dumps(covid)), "squad", 27)):
        sources = [write(tmp_path / f"{name}.json", json.dumps(whole)), tmp_path / f"{name}.parquet",
                   write(tmp_path / f"{name}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))]
        pq.write_table(pa.Table.from_pylist(rows), sources[1])
        made = []
        for source in sources:
            result = run("golden", "import", source, "--corpus-out", f"{source}.corpus", "-o", f"{source}.golden")
            assert result.exit_code == 0, result.output
            assert read_manifest(f"{source}.golden")["params"]["format"] == fmt
            made.append((Path(f"{source}.corpus").read_bytes(), Path(f"{source}.golden").read_bytes()))
        assert made[0] == made[1] == made[2] and made[0][1].count(b"\n") == questions
    pq.write_table(pa.Table.from_pylist([{**pubmed_rows[0], "context": None}]), tmp_path / "bad.parquet")
    assert_one_error(run("golden", "import", tmp_path / "bad.parquet", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "bad.parquet:1: 'context' should hold 'contexts' and 'labels', found null")


@needs_shared("covid_qa_deepset/200423_covidQA.json")
def test_covidqa_rows_in_three_shards_import_as_the_unsplit_rows(tmp_path):
    """COVID-QA's 1,380 rows as the hub would shard them, cut inside an article's questions (row 901): the folder gives the
    corpus and golden set of the one file, byte for byte."""
    rows = squad_rows((SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json").read_text())
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "whole.parquet")
    (tmp_path / "split").mkdir()
    for k, (start, end) in enumerate(((0, 500), (500, 901), (901, len(rows)))):
        pq.write_table(pa.Table.from_pylist(rows[start:end]), tmp_path / "split" / f"train-{k:05d}-of-00003.parquet")
    made = []
    for source in (tmp_path / "whole.parquet", tmp_path / "split"):
        corpus, golden = tmp_path / f"{source.stem}.corpus", tmp_path / f"{source.stem}.golden"
        result = run("golden", "import", source, "--corpus-out", corpus, "-o", golden)
        assert result.exit_code == 0, result.output
        made.append((corpus.read_bytes(), golden.read_bytes()))
    assert made[0] == made[1] and made[0][1].count(b"\n") == len(rows) == 1380


def test_msmarco_v21_columns_and_its_no_answer_text(tmp_path):
    """The official v2.1 file is columns keyed by row; "No Answer Present." and wellFormedAnswers "[]" are no answer."""
    data = {"query_id": {"0": 7, "1": 8}, "query": {"0": "what is rba", "1": "is it safe"}, "query_type": {"0": "x", "1": "y"},
            "answers": {"0": ["Reserve Bank of Australia"], "1": ["No Answer Present."]},
            "wellFormedAnswers": {"0": ["RBA is the Reserve Bank of Australia."], "1": "[]"},
            "passages": {"0": [{"is_selected": 0, "passage_text": "Bees.", "url": "u"},
                               {"is_selected": 1, "passage_text": "The RBA is a bank.", "url": "v"}],
                         "1": [{"is_selected": 0, "passage_text": "Maybe."}]}}
    source = write(tmp_path / "dev_v2.1.json", json.dumps(data))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl", "--size", "5")
    assert result.exit_code == 0, result.output
    assert "--size does not apply to msmarco: each passage is one chunk" in result.stderr
    items = read_lines(tmp_path / "g.jsonl")
    assert items[0]["reference_answer"] == ["Reserve Bank of Australia", "RBA is the Reserve Bank of Australia."]
    assert items[0]["gold_chunk_ids"] == ["7p1"]
    assert items[1]["reference_answer"] == [] and items[1]["meta"]["no_answer"] is True
    assert [c["_id"] for c in read_lines(tmp_path / "c.jsonl")] == ["7p0", "7p1", "8p0"]
    data["passages"]["1"][0]["is_selected"] = 2
    write(source, json.dumps(data))
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "row 1.passages[0].is_selected should be 0 or 1, found 2")


def test_msmarco_parallel_lists_of_unequal_length_are_refused(tmp_path):
    """Hugging Face's layout (passage_text and is_selected as parallel lists): zip() cut the longer one without a word,
    dropping passages or their flags."""
    data = [{"query_id": 7, "query": "what is rba", "answers": ["A bank."],
             "passages": {"passage_text": ["Bees.", "The RBA is a bank."], "is_selected": [0]}}]
    source = write(tmp_path / "msmarco.json", json.dumps(data))
    assert_one_error(run("golden", "import", source, "--format", "msmarco", "--corpus-out", tmp_path / "c.jsonl",
                         "-o", tmp_path / "g.jsonl"), "msmarco.json: record 0.passages: 2 passage_text but 1 is_selected")


def test_msmarco_blank_passages_are_no_chunks_nor_gold_and_are_counted(tmp_path):
    """A blank passage was a chunk of empty text, and gold when selected, that nothing could match; the others keep
    their index, and a query whose only selected passage is blank has no gold."""
    data = [{"query_id": 7, "query": "what is rba", "answers": ["A bank."],
             "passages": [{"is_selected": 0, "passage_text": " "}, {"is_selected": 1, "passage_text": "The RBA is a bank."}]},
            {"query_id": 8, "query": "is it safe", "answers": ["Yes."], "passages": [{"is_selected": 1, "passage_text": ""}]}]
    source = write(tmp_path / "msmarco.json", json.dumps(data))
    result = run("golden", "import", source, "--format", "msmarco", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert [c["_id"] for c in read_lines(tmp_path / "c.jsonl")] == ["7p1"]
    assert [(i["query_id"], i["gold_chunk_ids"]) for i in read_lines(tmp_path / "g.jsonl")] == [("7", ["7p1"]), ("8", [])]
    assert "semrel: warning: blank passages (empty or only spaces; not made chunks or gold): 2" in result.stderr
    assert "queries with no passage marked is_selected (no gold): 1" in result.stderr


def test_cranfield_numbers_queries_by_position_and_maps_grades(tmp_path, monkeypatch):
    folder = tmp_path / "cran"
    write(folder / "cran.all.1400", (".I 1\r\n.T\r\nwing flow .\r\n.A\r\nsmith\r\n.W\r\nwing flow .\r\n  lift rises .\r\n"
                                     ".I 2\r\n.T\r\nshock waves\r\n.W\r\n.I 3\r\n.T\r\n.W\r\n"))
    write(folder / "cran.qry", ".I 001\r\n.W\r\nwhat about lift .\r\n.I 004\r\n.W\r\nshock\r\nwaves ?\r\n")
    write(folder / "cranqrel", "1 1 1 \r\n1 2 -1 \r\n2 2 4 \r\n2 3 2 \r\n2 1 3")
    result = run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl",
                 "--qrels-out", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    chunks = read_lines(tmp_path / "c.jsonl")
    assert [(c["_id"], c["title"], c["text"]) for c in chunks] == [
        ("1#0", "wing flow .", "wing flow .\n  lift rises ."), ("2#0", "shock waves", "shock waves"),
    ]
    items = read_lines(tmp_path / "g.jsonl")
    assert [(i["query_id"], i["query"], i["meta"]["cran_id"]) for i in items] == [
        ("1", "what about lift .", "001"), ("2", "shock waves ?", "004"),
    ]
    assert items[0]["gold_chunk_ids"] == ["1#0"] and items[0]["meta"]["grades"] == {"1#0": 4, "2#0": 0}
    assert (tmp_path / "q.txt").read_text() == "1 0 1#0 4\n1 0 2#0 0\n2 0 2#0 1\n2 0 1#0 2\n"
    assert "judgments dropped (document missing or empty in cran.all.1400): 1" in result.stderr
    write(folder / "cranqrel", "1 1 7\n")
    assert_one_error(run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "cranqrel:1", "code in")
    write(folder / "cranqrel", "1 1 1\n1 1 4\n")  # the last code was kept without a word
    assert_one_error(run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "cranqrel:2", "query 1 judges document 1 twice (first on line 1)")
    write(folder / "cranqrel", "2 1 3\n" + "".join(f"1 {d} -1\n" for d in range(100, 3_100)))
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.01")  # read a line at a time: over the whole-file limit, lines short
    many = run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert many.exit_code == 0 and "judgments dropped (document missing or empty in cran.all.1400): 3000" in many.stderr
    monkeypatch.delenv("SEMREL_MAX_DOCUMENT_MB")
    write(folder / "cranqrel", "1 1 1\n3 1 1\n")  # cran.qry holds 2 queries: the third's judgment is counted, not the first's
    beyond = run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert beyond.exit_code == 0 and "semrel: warning: cranqrel query numbers beyond cran.qry (ignored): 1\n" in beyond.stderr
    write(folder / "cran.qry", "what about lift .\n.I 001\n.W\nlift\n")
    assert_one_error(run("golden", "import", folder, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "cran.qry:1: text outside a .I record")


def test_the_sample_golden_set_matches_the_demo_chunking(tmp_path):
    root = Path(__file__).resolve().parents[2] / "data"
    corpus = tmp_path / "corpus.jsonl"
    assert run("corpus", "chunk", root / "docs", "-o", corpus, "--size", "120", "--overlap", "20").exit_code == 0
    result = run("golden", "import", root / "golden.csv", "--corpus", corpus, "-o", tmp_path / "golden.jsonl")
    assert result.exit_code == 0, result.output
    chunks = {c["_id"]: c["text"] for c in read_lines(corpus)}
    items = read_lines(tmp_path / "golden.jsonl")
    assert 12 <= len(items) <= 20 and all(i["gold_chunk_ids"] and i["reference_answer"] for i in items)
    assert "one drop of chain oil to each roller" in chunks[items[0]["gold_chunk_ids"][0]]


def test_llamaindex_context_spanning_chunks_marks_every_chunk_it_covers(tmp_path):
    words = [f"w{n}" for n in range(60)]
    write(tmp_path / "docs" / "doc.txt", " ".join(words) + "\n")
    assert run("corpus", "chunk", tmp_path / "docs", "--size", "20", "-o", tmp_path / "c.jsonl").exit_code == 0
    # words 12..51: 8 of chunk 0's 20 words (not enough), all of chunk 1, 12 of chunk 2's; line breaks and a changed word
    context = " ".join(words[12:30]) + "\n" + " ".join(words[30:45]).replace("w33", "W-33") + "\n\n" + " ".join(words[45:52])
    short = " ".join(words[17:24])  # straddles chunks 0 and 1, more of it in 1
    dataset = {"examples": [{"query": "long?", "reference_contexts": [context], "reference_answer": "a"},
                            {"query": "short?", "reference_contexts": [short], "reference_answer": "b"}]}
    source = write(tmp_path / "rag_dataset.json", json.dumps(dataset))
    result = run("golden", "import", source, "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    long, short_item = read_lines(tmp_path / "g.jsonl")
    assert long["gold_chunk_ids"] == ["doc#1", "doc#2"]
    assert long["meta"]["context_matches"] == [{"how": "covered", "score": 0.7, "chunks": 2}]
    assert short_item["gold_chunk_ids"] == ["doc#1"] and short_item["meta"]["context_matches"][0]["how"] == "covered"
    assert "1 of 2 reference contexts are longer than the median chunk (20 words); 1 span several chunks (up to 2)" \
        in result.stderr
    manifest = json.loads((tmp_path / "g.jsonl.manifest.json").read_text())
    assert manifest["params"]["contexts_spanning_chunks"] == {"2": 1}


def test_an_import_interrupted_while_writing_its_qrels_keeps_the_old_corpus_and_golden_set(tmp_path, monkeypatch):
    """Corpus, golden set and qrels were written one after another: Ctrl-C during the qrels left a new
    corpus and golden set beside the old qrels. Now the import replaces all of them or none."""
    from semrel.golden import curate

    source = write(tmp_path / "in" / "squad.json", squad(answer_start=34))
    out = tmp_path / "out"
    args = ["golden", "import", source, "--corpus-out", out / "corpus.jsonl", "-o", out / "golden.jsonl",
            "--qrels-out", out / "gold.qrels"]
    assert run(*args, "--size", "6").exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(curate, "write_qrels", interrupted)
    assert run(*args, "--size", "4").exit_code != 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    monkeypatch.undo()
    assert run(*args, "--size", "4").exit_code == 0
    assert len(read_lines(out / "corpus.jsonl")) == 5 and (out / "gold.qrels").read_text() == "q_1 0 7#1 1\nq2 0 7#3 1\n"
    qrels_manifest = json.loads((out / "gold.qrels.manifest.json").read_text())
    assert qrels_manifest["inputs"][0]["path"] == str(out / "golden.jsonl")
    assert qrels_manifest["inputs"][0]["sha256"] == file_digest(out / "golden.jsonl")["sha256"]
    assert all(read_manifest(out / name) is not None for name in ("corpus.jsonl", "golden.jsonl", "gold.qrels"))


def test_default_columns_are_found_in_any_case(tmp_path):
    """A spreadsheet's 'Question' and 'Answer' were refused as no query column; a column as written still wins."""
    result = run("golden", "import", write(tmp_path / "g.csv", "ID,Question,Answer,Gold\nx1,Q?,A.,d#1\n"), "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert read_lines(tmp_path / "g.jsonl") == [{"query_id": "x1", "query": "Q?", "reference_answer": "A.", "gold_chunk_ids": ["d#1"],
                                                 "meta": {"line": 2}}]
    run("golden", "import", write(tmp_path / "h.csv", "Query,query,answer\nupper?,lower?,A.\n"), "-o", tmp_path / "h.jsonl")
    assert read_lines(tmp_path / "h.jsonl")[0]["query"] == "lower?"


@pytest.mark.parametrize("options, message", [
    (["--split", "dev"], "--split names a BEIR folder's qrels split, or the split to read of a folder of a Hugging Face set's "
                         "shards; it does not apply to this csv source"),
    (["--threshold", "0.7"], "--threshold matches the reference contexts of llamaindex, ragas, deepeval, giskard testsets to --corpus "
                             "chunks; it does not apply to this csv source"),
])
def test_options_of_other_source_formats_are_refused(tmp_path, monkeypatch, options, message):
    """Both were ignored in silence; from the environment they stay defaults for the sources they apply to."""
    golden = write(tmp_path / "g.csv", "query,answer\nWhy?,Because.\n")
    refused = run("golden", "import", golden, *options, "-o", tmp_path / "out.jsonl")
    assert refused.exit_code == 2 and refused.stderr == f"semrel: error: {message}\n"
    assert not (tmp_path / "out.jsonl").exists()
    monkeypatch.setenv("SEMREL_GOLDEN_IMPORT_SPLIT", "dev")
    monkeypatch.setenv("SEMREL_GOLDEN_IMPORT_THRESHOLD", "0.7")
    done = run("golden", "import", golden, "-o", tmp_path / "out.jsonl")
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("option", [["--size", "50"], ["--whole"]])
def test_chunking_options_of_an_import_that_cuts_nothing_are_warned_about(tmp_path, option):
    """A CSV import (and a testset matched to --corpus) writes no corpus, so --size and --whole did nothing, in silence,
    where every other option the source does not use is refused or warned about."""
    golden = write(tmp_path / "g.csv", "query,answer\nWhy?,Because.\n")
    result = run("golden", "import", golden, *option, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert f"semrel: warning: {option[0]} does not apply to csv: this import writes no corpus, so it cuts no documents " \
           "(`semrel corpus chunk` does)\n" in result.stderr
    corpus = write(tmp_path / "c.jsonl", json.dumps({"_id": "d#0", "title": "", "text": "Because."}) + "\n")
    testset = write(tmp_path / "t.jsonl", json.dumps({"user_input": "Why?", "reference": "Because.",
                                                       "reference_contexts": ["Because."]}) + "\n")
    matched = run("golden", "import", testset, "--corpus", corpus, *option, "-o", tmp_path / "t.golden.jsonl")
    assert matched.exit_code == 0, matched.output
    # not 'each reference context is one chunk': the contexts were matched to the corpus's chunks
    assert f"{option[0]} does not apply to ragas: this import writes no corpus" in matched.stderr


def test_a_folder_of_shards_is_listed_once_per_import(tmp_path, monkeypatch):
    """An import of a folder of shards listed it 3 times (5 with --split): to detect the format, to find the split's
    shards, to name them in the manifest, and twice more to check --split; it is listed once and the shards passed down."""
    import os

    rows = [{"id": f"q{n}", "question": f"Q{n}?", "answer": f"A{n}."} for n in range(5)]
    split = tmp_path / "data"
    split.mkdir()
    for k, part in enumerate((rows[:2], rows[2:3], rows[3:])):
        pq.write_table(pa.Table.from_pylist(part), split / f"train-{k:05d}-of-00003.parquet")
    listed: Counter[str] = Counter()
    for name in ("listdir", "scandir"):
        monkeypatch.setattr(os, name, lambda path=".", real=getattr(os, name), seen=listed: seen.update([str(path)]) or real(path))
    for n, given in enumerate(([], ["--split", "train"])):
        result = run("golden", "import", split, *given, "-o", tmp_path / f"g{n}.jsonl")
        assert result.exit_code == 0, result.output
        assert listed[str(split)] == 1 and read_lines(tmp_path / f"g{n}.jsonl")[-1]["query"] == "Q4?", given
        listed.clear()
