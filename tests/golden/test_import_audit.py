"""`semrel golden import` and corpus reading on inputs an audit found mishandled: JSONL columns
chosen from the first line only, BEIR splits ignored for the queries, wrongly typed fields turned
into garbage ids and answers, a '#' query id refused without its line, and corpus offsets that
crashed every command reading the corpus."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error, read_lines, run, write
from semrel.records import Chunk

CORPUS = [
    {"_id": "a#0", "title": "", "text": "The hive holds wax combs built by young workers.", "doc_id": "a", "start": 0, "end": 48},
    {"_id": "b#0", "title": "", "text": "Queens mate in flight early in life.", "doc_id": "b", "start": 0, "end": 36},
]


def corpus_file(tmp_path):
    return write(tmp_path / "corpus.jsonl", "".join(json.dumps(c) + "\n" for c in CORPUS))


def lines(*rows: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


# ---------------------------------------------------------------- JSONL columns from every line


def test_jsonl_columns_come_from_every_line_not_the_first(tmp_path):
    source = write(tmp_path / "g.jsonl", lines(
        {"query": "Oil the chain?", "answer": "monthly"},
        {"query_id": "k2", "query": "Brakes?", "answer": "adjust", "gold_chunk_ids": ["a#0"]},
        {"query_id": "k3", "query": "Tyres?", "answer": "80 psi", "gold_chunk_ids": ["a#0", "b#0"]},
    ))
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    items = read_lines(tmp_path / "out.jsonl")
    assert [(i["query_id"], i["gold_chunk_ids"]) for i in items] == [("q1", []), ("k2", ["a#0"]), ("k3", ["a#0", "b#0"])]
    assert "2 with gold chunks" in result.stderr
    assert "lines without a 'query_id' field" in result.stderr and "lines without a 'gold_chunk_ids' field" in result.stderr
    manifest = json.loads((tmp_path / "out.jsonl.manifest.json").read_text())
    assert manifest["params"]["columns"] == {"id": "query_id", "query": "query", "answer": "answer", "chunk_ids": "gold_chunk_ids"}


def test_jsonl_line_naming_a_field_otherwise_is_refused_with_its_line(tmp_path):
    source = write(tmp_path / "g.jsonl", lines(
        {"query_id": "a", "query": "x", "answer": "y"},
        {"id": "b", "query": "z", "answer": "w"},
    ))
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "out.jsonl"),
                     "g.jsonl:2", "no 'query_id' field but 'id'", "--id-col")
    answers = write(tmp_path / "h.jsonl", lines({"query": "x", "answer": "y"}, {"query": "z", "answers": ["w"]}))
    assert_one_error(run("golden", "import", answers, "-o", tmp_path / "out.jsonl"), "h.jsonl:2", "no 'answer' field but 'answers'")
    assert not (tmp_path / "out.jsonl").exists()
    # a column the user named is taken as named: a line without it is numbered, not refused
    named = write(tmp_path / "n.jsonl", lines({"key": "a", "query": "x", "answer": "y"}, {"id": "b", "query": "z", "answer": "w"}))
    result = run("golden", "import", named, "--id-col", "key", "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert [i["query_id"] for i in read_lines(tmp_path / "out.jsonl")] == ["a", "q2"]


# ---------------------------------------------------------------- BEIR: the split's queries only


def beir(tmp_path):
    write(tmp_path / "beir" / "corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": "y"}\n')
    write(tmp_path / "beir" / "queries.jsonl",
          '{"_id": "1", "text": "train query"}\n{"_id": "2", "text": "test query"}\n{"_id": "3", "text": "dev query"}\n')
    write(tmp_path / "beir" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n2\td1\t1\n")
    write(tmp_path / "beir" / "qrels" / "train.tsv", "query-id\tcorpus-id\tscore\n1\td2\t1\n3\td2\t0\n")
    write(tmp_path / "beir" / "qrels" / "dev.tsv", "query-id\tcorpus-id\tscore\n7\td2\t1\n")
    return tmp_path / "beir"


def test_beir_keeps_only_the_queries_of_the_split(tmp_path):
    folder = beir(tmp_path)
    result = run("golden", "import", folder, "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert [i["query_id"] for i in read_lines(tmp_path / "g.jsonl")] == ["2"]
    assert "queries of queries.jsonl that qrels/test.tsv does not judge (other splits'; left out): 2" in result.stderr
    assert json.loads((tmp_path / "g.jsonl.manifest.json").read_text())["params"]["queries_left_out"] == 2
    result = run("golden", "import", folder, "--split", "train", "-o", tmp_path / "t.jsonl")
    assert result.exit_code == 0, result.output
    items = read_lines(tmp_path / "t.jsonl")  # a query judged only with grade 0 is the split's too (as in BEIR)
    assert [(i["query_id"], i["gold_chunk_ids"]) for i in items] == [("1", ["d2"]), ("3", [])]
    assert_one_error(run("golden", "import", folder, "--split", "dev", "-o", tmp_path / "d.jsonl"),
                     "dev.tsv", "judges none of the 3 queries of queries.jsonl", "--split")


def test_beir_query_repeated_in_queries_jsonl_is_refused_not_left_out(tmp_path):
    folder = beir(tmp_path)
    write(folder / "queries.jsonl", '{"_id": "2", "text": "test query"}\n{"_id": "2", "text": "again"}\n')
    assert_one_error(run("golden", "import", folder, "-o", tmp_path / "g.jsonl"), "'2' occurs more than once")


# ---------------------------------------------------------------- wrongly typed fields


@pytest.mark.parametrize(("row", "fragments"), [
    ({"query": "q", "answer": "a", "gold_chunk_ids": {"x": 1}}, ("'gold_chunk_ids'", "list of chunk ids", '{"x": 1}')),
    ({"query": "q", "answer": "a", "gold_chunk_ids": [["x"]]}, ("'gold_chunk_ids'", "list chunk ids", '["x"]')),
    ({"query": "q", "answer": "a", "gold_chunk_ids": ["a#0", None]}, ("'gold_chunk_ids'", "found null")),
    ({"query": "q", "answer": "a", "gold_chunk_ids": "[\"a#0\", 1.5]"}, ("'gold_chunk_ids'", "found 1.5")),
    ({"query": "q", "answer": "a", "gold_chunk_ids": ["a #0"]}, ("gold chunk id 'a #0'", "whitespace")),
    ({"query": "q", "answer": "a", "gold_chunk_ids": 1.5}, ("'gold_chunk_ids'", "found 1.5")),
    ({"query": "q", "answer": "a", "query_id": 1.5}, ("'query_id'", "string or a whole number", "found 1.5")),
    ({"query": "q", "answer": "a", "query_id": ["x"]}, ("'query_id'", '["x"]')),
    ({"query": "q", "answer": {"a": 1}}, ("'answer'", "string or a list of strings", '{"a": 1}')),
    ({"query": "q", "answer": ["a", ["b"]]}, ("'answer'", '["b"]')),
])
def test_jsonl_wrongly_typed_fields_are_refused_with_file_line_and_field(tmp_path, row, fragments):
    source = write(tmp_path / "g.jsonl", lines({"query": "ok", "answer": "fine"}, row))
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "out.jsonl"), "g.jsonl:2", *fragments)
    assert not (tmp_path / "out.jsonl").exists()


def test_a_query_id_of_zero_is_kept(tmp_path):
    source = write(tmp_path / "g.jsonl", lines({"id": 0, "query": "q", "answer": "a"}))
    assert run("golden", "import", source, "-o", tmp_path / "out.jsonl").exit_code == 0
    assert read_lines(tmp_path / "out.jsonl")[0]["query_id"] == "0"


@pytest.mark.parametrize(("example", "fragments"), [
    ({"query": "q", "reference_contexts": [None], "reference_answer": "x"}, ("examples[0].reference_contexts[0]", "str", "NoneType")),
    ({"query": "q", "reference_contexts": ["ok", {"a": 1}], "reference_answer": "x"}, ("examples[0].reference_contexts[1]", "dict")),
    ({"query": "q", "reference_contexts": ["ok"], "reference_answer": {"a": 1}}, ("examples[0].reference_answer", "str", "dict")),
    ({"query": "q", "reference_contexts": ["ok"], "reference_answer": []}, ("examples[0].reference_answer", "str", "list")),
    ({"query": "q", "reference_contexts": "", "reference_answer": "x"}, ("examples[0].reference_contexts", "list", "str")),
    ({"query": "q", "reference_contexts": ["ok"], "query_id": {"a": 1}}, ("examples[0].query_id", "string or a whole number")),
    ({"query": "q", "reference_contexts": ["ok"], "query_id": "#7"}, ("examples[0].query_id", "starts with '#'")),
])
def test_llamaindex_wrongly_typed_fields_are_refused(tmp_path, example, fragments):
    source = write(tmp_path / "rag.json", json.dumps({"examples": [example]}))
    assert_one_error(run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "g.jsonl"),
                     "rag.json", *fragments)
    assert not (tmp_path / "g.jsonl").exists()


def squad(paragraph: dict | None = None, qa: dict | None = None) -> str:
    question = {"id": "1", "question": "q?", "answers": [{"text": "abc", "answer_start": 0}], **(qa or {})}
    return json.dumps({"data": [{"title": "T", "paragraphs": [{"context": "abc def", "qas": [question], **(paragraph or {})}]}]})


@pytest.mark.parametrize(("text", "fragments"), [
    (squad(qa={"answers": "abc"}), ("question 0 of document 'T'", "'answers' should be a list", "str")),
    (squad(qa={"answers": ""}), ("'answers' should be a list", "str")),
    (squad(qa={"answers": ["abc"]}), ("answers[0] should be a dict", "str")),
    (squad(qa={"answers": [{"text": ["abc"], "answer_start": 0}]}), ("answers[0].text should be a string", '["abc"]')),
    (squad(qa={"id": {"a": 1}}), ("'id' should be a string or a whole number", '{"a": 1}')),
    (squad(qa={"id": "#1"}), ("'id'", "starts with '#'")),
    (squad(paragraph={"document_id": None}), ("data[0].paragraphs[0].document_id", "string or a whole number", "null")),
    (squad(paragraph={"document_id": [1]}), ("document_id", "[1]")),
    # an answer_start that is no whole number was handed to find_answer as it was
    (squad(qa={"answers": [{"text": "abc", "answer_start": "0"}]}), ("answer_start of question 0 of document 'T' should be a int",
                                                                    "found str")),
    (squad(qa={"answers": [{"text": "abc", "answer_start": True}]}), ("answer_start", "found bool")),
    # two contexts of one document id: their chunks would share ids
    (json.dumps({"data": [{"title": "T", "paragraphs": [{"context": "abc", "qas": [], "document_id": "d"},
                                                        {"context": "def", "qas": [], "document_id": "d"}]}]}),
     ("document id 'd' is used by two contexts",)),
])
def test_squad_wrongly_typed_fields_are_refused(tmp_path, text, fragments):
    source = write(tmp_path / "s.json", text)
    assert_one_error(run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "s.json", *fragments)
    assert not (tmp_path / "g.jsonl").exists()


def test_squad_without_answers_is_still_no_answer(tmp_path):
    source = write(tmp_path / "s.json", squad(qa={"answers": []}))
    result = run("golden", "import", source, "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert result.exit_code == 0, result.output
    assert read_lines(tmp_path / "g.jsonl")[0]["meta"]["no_answer"] is True


# ---------------------------------------------------------------- '#' query ids where they are read


def test_a_hash_query_id_is_refused_with_its_file_and_line(tmp_path):
    jsonl = write(tmp_path / "j.jsonl", lines({"query": "q", "answer": "a"}, {"query": "q", "answer": "a", "query_id": "#x"}))
    assert_one_error(run("golden", "import", jsonl, "-o", tmp_path / "o.jsonl"), "j.jsonl:2", "query id '#x' starts with '#'")
    table = write(tmp_path / "t.csv", "id,query,answer\n1,x,y\n#2,z,w\n")
    assert_one_error(run("golden", "import", table, "-o", tmp_path / "o.jsonl"), "t.csv:3", "query id '#2' starts with '#'")
    assert not (tmp_path / "o.jsonl").exists()


# ---------------------------------------------------------------- corpus offsets and doc ids


@pytest.mark.parametrize(("fields", "fragments"), [
    ('"start": "abc"', ("start should be a whole number", 'found "abc"')),
    ('"start": null', ("start should be a whole number", "found null")),
    ('"start": 1e400', ("start should be a whole number", "found Infinity")),
    ('"start": 2.5', ("start should be a whole number", "found 2.5")),
    ('"start": -1', ("start should be a whole number", "0 or more", "found -1")),
    ('"start": true', ("start should be a whole number", "found true")),
    ('"end": "7"', ("end should be a whole number", 'found "7"')),
    ('"doc_id": null', ("doc_id should be a string", "found null")),
    ('"doc_id": {"a": 1}', ("doc_id should be a string", '{"a": 1}')),
])
def test_corpus_offsets_and_doc_ids_of_the_wrong_type_are_refused_with_their_line(tmp_path, fields, fragments):
    corpus = write(tmp_path / "cs.jsonl", '{"_id": "a#0", "text": "abc"}\n{"_id": "a#1", "text": "x", ' + fields + "}\n")
    golden = write(tmp_path / "gq.jsonl", lines({"query_id": "q", "query": "x", "reference_answer": "y", "gold_chunk_ids": ["a#0"]}))
    assert_one_error(run("golden", "validate", golden, "--corpus", corpus), "cs.jsonl:2", *fragments)


def test_corpus_without_offsets_still_reads(tmp_path):
    corpus = write(tmp_path / "cs.jsonl", '{"_id": "a#0", "text": "abc"}\n{"_id": 7, "text": "x", "doc_id": 3, "start": 4, "end": 5}\n')
    golden = write(tmp_path / "gq.jsonl", lines({"query_id": "q", "query": "x", "reference_answer": "y", "gold_chunk_ids": ["a#0"]}))
    result = run("golden", "validate", golden, "--corpus", corpus)
    assert result.exit_code == 0, result.output



def test_a_golden_set_and_a_corpus_given_in_each_others_place_are_named_as_swapped(tmp_path):
    corpus = write(tmp_path / "cs.jsonl", '{"_id": "a#0", "text": "abc"}\n')
    golden = write(tmp_path / "gq.jsonl", lines({"query_id": "q", "query": "x", "reference_answer": "y", "gold_chunk_ids": ["a#0"]}))
    assert_one_error(run("golden", "validate", golden, "--corpus", golden), "gq.jsonl:1", "missing field '_id'",
                     "this file looks like a golden set, not a corpus: `semrel corpus chunk` makes one")
    assert_one_error(run("golden", "stats", corpus), "cs.jsonl:1", "missing field 'query_id'",
                     "this file looks like a corpus, not a golden set: `semrel golden import` makes one")
    other = write(tmp_path / "other.jsonl", '{"id": "a#0", "text": "abc"}\n')  # neither kind's id: the plain message
    assert_one_error(run("golden", "stats", other), "other.jsonl:1", "missing field 'query_id'")
    assert "looks like" not in run("golden", "stats", other).output


def test_a_giskard_context_not_opening_with_a_document_mark_is_one_context(tmp_path):
    """Only a text Giskard wrote ("Document <id>: ..." from its first character) is split at the marks; another
    text keeps what comes before a mark, which a split would drop."""
    from semrel.golden.importers import giskard_examples

    rows = [{"id": "g1", "question": "Swarm?", "reference_answer": "spring", "reference_context": "Intro.\n\nDocument 1: Bees swarm."},
            {"id": "g2", "question": "Hive?", "reference_answer": "wax", "reference_context": "Document 1: Wax.\n\nDocument 2: Combs."}]
    source = write(tmp_path / "t.jsonl", lines(*rows))
    assert [e.contexts for e in giskard_examples(str(source))] == [["Intro.\n\nDocument 1: Bees swarm."], ["Wax.", "Combs."]]


def test_a_deepeval_csv_cell_drops_blank_contexts_between_bars(tmp_path):
    """'|' joins a golden's contexts in DeepEval's CSV: an empty or blank piece is no context (it matches no chunk)."""
    from semrel.golden.importers import deepeval_examples

    source = write(tmp_path / "d.csv", "input,expected_output,context\nSwarm?,spring,Bees swarm.|| |Hives split.\n")
    assert [e.contexts for e in deepeval_examples(str(source))] == [["Bees swarm.", "Hives split."]]


def test_a_giskard_csv_with_empty_metadata_and_history_cells_reads_them_as_none(tmp_path):
    from semrel.golden.importers import giskard_examples

    source = write(tmp_path / "t.csv", "id,question,reference_answer,reference_context,conversation_history,metadata\n"
                                       "g1,Swarm?,spring,Document 1: Bees swarm.,,\n")
    [example] = giskard_examples(str(source))
    assert (example.query_id, example.query, example.contexts, example.meta) == ("g1", "Swarm?", ["Bees swarm."], {})


def test_gold_chunk_ids_may_be_separated_by_bars(tmp_path):
    source = write(tmp_path / "g.csv", "query_id,query,answer,gold_chunk_ids\nk1,Wax?,combs,a#0|b#0\n")
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "out.jsonl")] == [["a#0", "b#0"]]


def test_a_csv_error_after_a_quoted_cell_of_two_lines_names_the_line_it_is_on(tmp_path):
    source = write(tmp_path / "g.csv", 'query,answer\n"Wax\nor combs?",combs\nSwarm?,spring,extra\n')
    assert_one_error(run("golden", "import", source, "-o", tmp_path / "out.jsonl"), "g.csv:4", "more cells than the 2 columns")


# ---------------------------------------------------------------- gold document ids made chunk ids


def test_document_ids_map_to_chunks_with_empty_grades_meta_and_file_names_only_with_a_suffix(tmp_path):
    """An item whose meta records no grades ({}) has its gold ids at grade 1, as one without meta; 'a.pdf' names the
    document 'a' (the file semrel chunked), but an id without a file suffix is looked up as it is."""
    import semrel
    from semrel.errors import UsageError
    from semrel.golden.sources import named_document

    source = write(tmp_path / "g.jsonl", lines({"query_id": "q1", "query": "Wax?", "answer": "combs", "gold_chunk_ids": ["a"],
                                                "meta": {"grades": {}}}))
    items = semrel.import_golden(source, corpus=corpus_file(tmp_path), doc_qrels="all-chunks", warn=lambda message: None)
    assert items[0].gold_chunk_ids == ("a#0",)
    assert named_document("a.pdf", {"a"}) == "a" and named_document("a.2 notes", {"a"}) is None
    with pytest.raises(UsageError, match=r"^doc_qrels='bogus': choose one of all-chunks, first-chunk, answer-chunk$"):
        semrel.import_golden(source, corpus=corpus_file(tmp_path), doc_qrels="bogus")


# ---------------------------------------------------------------- locating answers and contexts


def test_an_answer_is_found_at_its_offset_or_nearest_it_with_any_spacing_and_never_before_the_text():
    from semrel.golden.locate import find_answer

    assert find_answer("abc abc", "abc", -3) == (0, 3)  # a negative offset read the text from its end: (-3, 0)
    assert find_answer("the big\n  dog sat", " big dog ", None) == (4, 13)  # line breaks inside the answer's span
    assert find_answer("a dog, a dog", "dog", 8) == (9, 12) and find_answer("a dog", "cat", 0) is None
    assert find_answer("abab", "ab", 1) == (2, 4)  # one character after the offset is tried before one before it


def test_a_span_beyond_every_chunk_is_held_by_none():
    """A span that only touches a chunk's end (no character of it inside) is in no chunk, not the nearest."""
    from semrel.golden.locate import chunks_holding

    chunks = [Chunk("d#0", "x" * 10, "d", 0, 10), Chunk("d#1", "y" * 10, "d", 10, 20)]
    assert chunks_holding(chunks, 20, 25) == [] and chunks_holding(chunks, 8, 14) == ["d#1"] and chunks_holding(chunks, 2, 9) == ["d#0"]


def test_a_one_word_context_matches_its_one_word_chunk_exactly():
    """A text of one word has that word as its one 'pair': without it the chunk shared no pair with the context and the
    match fell back to word overlap ('overlap', not 'exact')."""
    from semrel.golden.locate import ContextMatcher

    matcher = ContextMatcher(["Paris"], threshold=0.5)
    matcher.add(Chunk("c#0", "Paris", "c", 0, 5))
    found = matcher.match("Paris")
    assert (found.ids, found.how, found.score) == (["c#0"], "exact", 1.0)


def test_a_utf16_ragas_csv_is_told_a_ragas_testset_and_excel_tabs_split_its_cells(tmp_path):
    """Excel's "Unicode" CSV is UTF-16 (its header was read as UTF-8 garbage, so the file imported as a plain CSV and
    failed with 'no query column'), and its "Unicode Text" separates cells with tabs (read as one column)."""
    rows = ["user_input\treference_contexts\treference", "Who builds combs?\t['The hive holds wax combs built by young workers.']\tworkers"]
    source = tmp_path / "testset.csv"
    source.write_bytes("\r\n".join(rows).encode("utf-16"))
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    [item] = read_lines(tmp_path / "out.jsonl")
    assert (item["query"], item["reference_answer"], item["gold_chunk_ids"]) == ("Who builds combs?", "workers", ["a#0"])


def test_a_ragas_csv_of_numpy_array_cells_keeps_each_context_apart(tmp_path):
    """pandas writes a list column read from Parquet as numpy's repr, "['a'\\n 'b']": read as a Python literal the two
    adjacent strings were joined into one context, silently (and the second hop's marker kept inside it)."""
    cell = "['<1-hop>\\n\\nThe hive holds wax combs built by young workers.'\n '<2-hop>\\n\\nQueens mate in flight early in life.']"
    source = write(tmp_path / "testset.csv", f'user_input,reference_contexts,reference\nWho builds combs?,"{cell}",workers\n')
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    [item] = read_lines(tmp_path / "out.jsonl")
    assert item["gold_chunk_ids"] == ["a#0", "b#0"]
    assert [m["how"] for m in item["meta"]["context_matches"]] == ["exact", "exact"]


def test_a_golden_sets_own_meta_is_kept_by_an_import_of_it_grades_and_spans_included(tmp_path):
    """`semrel run` imports its `[golden] file`, a golden.jsonl too (one pick wrote, copied out as the run advises): the
    import dropped every line's meta, so graded qrels came out as rel 1 with their grade-0 judgments gone (Cranfield:
    1,836 judgments as 1,611), and answer spans, merged duplicates and a source's marks were lost. The import's own marks
    (line, no_answer) are made anew; a null, which a Parquet struct gives a row for every key of the others, is none."""
    source = write(tmp_path / "g.jsonl", lines(
        {"query_id": "q1", "query": "Who builds combs?", "reference_answer": "young workers", "gold_chunk_ids": ["a#0"],
         "meta": {"grades": {"a#0": 3, "b#0": 0, "c#0": None}, "doc_id": "a", "answer_spans": [[28, 41]], "line": 7,
                  "no_answer": True, "cran_id": None}},
        {"query_id": "q2", "query": "When do queens mate?", "reference_answer": "", "gold_chunk_ids": ["b#0"], "meta": {}},
    ))
    result = run("golden", "import", source, "--corpus", corpus_file(tmp_path), "-o", tmp_path / "out.jsonl",
                 "--qrels-out", tmp_path / "out.qrels")
    assert result.exit_code == 0, result.output
    assert [i["meta"] for i in read_lines(tmp_path / "out.jsonl")] == [
        {"grades": {"a#0": 3, "b#0": 0}, "doc_id": "a", "answer_spans": [[28, 41]], "line": 1}, {"line": 2, "no_answer": True}]
    assert (tmp_path / "out.qrels").read_text() == "q1 0 a#0 3\nq1 0 b#0 0\nq2 0 b#0 1\n"
    bad = write(tmp_path / "bad.jsonl", lines({"query_id": "q1", "query": "Who?", "reference_answer": "x", "gold_chunk_ids": ["a#0"],
                                                "meta": {"grades": {"a#0": 1.5}}}))
    assert_one_error(run("golden", "import", bad, "-o", tmp_path / "bad_out.jsonl"),
                     f"{bad}:1: meta.grades should map chunk ids to whole-number grades")
