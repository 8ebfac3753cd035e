"""`semrel golden qrels|validate|stats|split|dedup`, and golden.jsonl as qrels for `semrel eval`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import SHARED_DATA, assert_one_error, needs_shared, read_lines, run, write
from semrel.golden.importers import import_golden
from semrel.golden.neardup import split_groups, split_targets
from semrel.golden.sources import ImportOptions
from semrel.golden.validate import Tally, distribution, lacks_answer

CORPUS = "".join(json.dumps({"_id": i, "title": "", "text": t, "doc_id": i[0]}) + "\n" for i, t in [
    ("a#0", "Bees forage widely."), ("a#1", "Honey is stored in the upper combs."), ("b#0", "Queens mate in flight."),
])


def item(qid, query, answer="An answer.", gold=("a#0",), meta=None):
    return json.dumps({"query_id": qid, "query": query, "reference_answer": answer, "gold_chunk_ids": list(gold),
                       "meta": meta or {}}) + "\n"


def test_qrels_use_rel_1_or_recorded_grades_and_eval_reads_golden(tmp_path):
    golden = write(tmp_path / "golden.jsonl", item("q1", "Where do bees go?", gold=("a#0", "a#1"))
                   + item("q2", "Who mates?", gold=("b#0",), meta={"grades": {"b#0": 3, "a#0": 0}})
                   + item("q3", "Unlabelled?", gold=()))
    result = run("golden", "qrels", golden, "-o", tmp_path / "gold.qrels")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gold.qrels").read_text() == "q1 0 a#0 1\nq1 0 a#1 1\nq2 0 b#0 3\nq2 0 a#0 0\n"
    assert json.loads((tmp_path / "gold.qrels.manifest.json").read_text())["rows"] == 4
    run_file = write(tmp_path / "bm25.run", "q1 Q0 a#1 1 2.0 bm25\nq1 Q0 b#0 2 1.0 bm25\nq2 Q0 a#0 1 5 bm25\nq2 Q0 b#0 2 4 bm25\n")
    result = run("eval", golden, run_file, "-m", "RR,P@2", "-f", "json")
    assert result.exit_code == 0, result.output
    # q1: a#1 relevant at rank 1; q2: a#0 has grade 0, b#0 (grade 3) at rank 2; q3 has no gold chunks
    assert json.loads(result.stdout) == {"bm25": {"all": {"RR": 0.75, "P@2": 0.5}}}


def test_qrels_keep_a_gold_chunk_that_the_recorded_grades_lack(tmp_path):
    # a TREC topic whose judged documents were all grade 0 has no gold; a chunk picked for it later (or added by hand)
    # is gold without a grade, and the qrels of the grades alone left it out: eval scored the pick as not relevant
    golden = write(tmp_path / "golden.jsonl", item("q1", "Who mates?", gold=("b#0",), meta={"grades": {"a#0": 0}})
                   + item("q2", "Where?", gold=("a#0", "a#1"), meta={"grades": {"a#0": 2, "a#1": 0}}))
    result = run("golden", "qrels", golden, "-o", tmp_path / "gold.qrels")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gold.qrels").read_text() == "q1 0 a#0 0\nq1 0 b#0 1\nq2 0 a#0 2\nq2 0 a#1 1\n"
    run_file = write(tmp_path / "bm25.run", "q1 Q0 b#0 1 2.0 bm25\nq2 Q0 a#1 1 2.0 bm25\n")
    result = run("eval", golden, run_file, "-m", "RR", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"bm25": {"all": {"RR": 1.0}}}


def test_qrels_of_a_golden_set_without_gold_are_written_empty_with_a_warning_but_not_under_semrel_run(tmp_path, capsys):
    """An empty gold.qrels came with exit 0 and '0 judgments' alone; `semrel run` reads the empty file as no gold (and
    says so itself), so it is still written, and only a command typed by hand warns."""
    from semrel.cli.pipeline import _invoke
    from semrel.cli.run_config import Step

    golden = write(tmp_path / "golden.jsonl", item("q1", "Where do bees go?", gold=()) + item("q2", "Who mates?", gold=()))
    result = run("golden", "qrels", golden, "-o", tmp_path / "gold.qrels")
    assert result.exit_code == 0 and (tmp_path / "gold.qrels").read_bytes() == b""
    assert result.stderr.splitlines() == [
        f"semrel: warning: {golden} lists no gold chunks, so {tmp_path / 'gold.qrels'} is empty: pick them with `semrel golden "
        "pick`, or derive labels from the reference answers with `semrel judge` and `semrel label`",
        f"0 judgments -> {tmp_path / 'gold.qrels'}"]
    capsys.readouterr()
    qrels = str(tmp_path / "run.qrels")  # the step as `semrel run` plans and calls it
    _invoke(Step("qrels", ("golden", "qrels"), [str(golden), "-o", qrels], [str(golden)], [qrels]))
    assert capsys.readouterr().err == f"0 judgments -> {qrels}\n" and (tmp_path / "run.qrels").read_bytes() == b""
    with_gold = run("golden", "qrels", write(tmp_path / "g.jsonl", item("q1", "Where?")), "-o", tmp_path / "g.qrels")
    assert with_gold.stderr == f"1 judgment -> {tmp_path / 'g.qrels'}\n"


def test_validate_reports_every_problem_with_its_line(tmp_path):
    corpus = write(tmp_path / "corpus.jsonl", CORPUS)
    golden = write(tmp_path / "golden.jsonl", item("q1", "Where do bees go?")
                   + item("q1", "Who mates?", gold=("b#0",))
                   + item("q3", "  ", gold=("zz#1", "a#1"))
                   + item("q4", "where do  BEES go?", answer="", gold=("a#0", "a#0"))
                   + item("q5", "Cranfield-like", answer="", gold=(), meta={"no_answer": True})
                   + '{"query_id": "q6", "query": "x", "gold_chunk_ids": "a#0"}\n'
                   + '{"query_id": "q7", "query": "y", "answers": ["z"], "gold_chunk_ids": ["a#0"]}\n')
    result = run("golden", "validate", golden, "--corpus", corpus)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{golden}:2: error: query id 'q1' already used on line 1",
        f"{golden}:3: error: query 'q3' is empty",
        f"{golden}:3: error: gold chunk 'zz#1' of query 'q3' is not in the corpus",
        f"{golden}:4: warning: query 'q4' has the same text as line 1",
        f"{golden}:4: error: query 'q4' has an empty reference answer",
        f"{golden}:4: warning: query 'q4' lists gold chunk 'a#0' twice",
        f"{golden}:5: warning: query 'q5' has no gold chunks",
        f"{golden}:6: error: gold_chunk_ids should be a list of chunk ids",
        # kept as the user's own key, 'answers' left the answer empty, with no word of where it was
        f"{golden}:7: error: query 'q7' has an empty reference answer (the line has 'answers': a golden line's answer is its "
        "'reference_answer' field, a string or a list)",
    ]
    assert "6 queries: 6 errors, 3 warnings" in result.stderr  # line 6 is no query: it was counted as one
    clean = write(tmp_path / "clean.jsonl", item("q1", "Where do bees go?") + item("q2", "Who mates?", gold=("b#0",)))
    result = run("golden", "validate", clean, "--corpus", corpus)
    assert result.exit_code == 0 and result.stdout == "" and "0 errors, 0 warnings" in result.stderr
    broken = write(tmp_path / "broken.jsonl", item("q1", "x") + "{oops\n")
    result = run("golden", "validate", broken)  # a malformed line is one more problem, listed like the others
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stdout.startswith(f"{broken}:2: error: invalid JSON") and len(result.stdout.splitlines()) == 1
    assert "1 query: 1 error, 0 warnings" in result.stderr


def test_validate_warns_of_reference_answers_that_say_their_context_lacks_the_answer(tmp_path):
    """Generated testsets hold them (ragas's stock phrase; 7 of LlamaIndex's 58 BlockchainSolana answers); none of the
    2,638 human answers of COVID-QA, PubMedQA and the MS MARCO samples matches (the next test)."""
    golden = write(tmp_path / "golden.jsonl", item("q1", "Where?", answer="The answer to given question is not present in context")
                   + item("q2", "Which?", answer="PoW uses energy. Its disadvantages are not provided in the given context information.")
                   + item("q3", "How long?", answer="The context window holds 512 tokens; the text does say so.")
                   + item("q4", "Why?", answer="The document doesn't mention why."))
    result = run("golden", "validate", golden)
    assert result.exit_code == 0, result.output
    said = ("says its context does not hold (all of) the answer; the judge scores chunks against those words: write the answer, "
            "or drop the query")
    assert result.stdout.splitlines() == [f"{golden}:{n}: warning: the reference answer of 'q{n}' {said}" for n in (1, 2, 4)]
    write(tmp_path / "testset.csv", "user_input,reference_contexts,reference\nWhere?,['Up there.'],Up there.\n"
          "Why?,['Bees.'],The answer to given question is not present in context\n")
    imported = run("golden", "import", tmp_path / "testset.csv", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert imported.exit_code == 0, imported.output
    assert ("semrel: warning: reference answers that say their context does not hold (all of) the answer (e.g. 'q2'; `semrel golden "
            "validate` lists them): 1") in imported.stderr
    first = run("golden", "import", tmp_path / "testset.csv", "--limit", "1", "--corpus-out", tmp_path / "c1.jsonl",
                "-o", tmp_path / "g1.jsonl")
    assert first.exit_code == 0 and "reference answers that say" not in first.stderr  # q2 is not imported: nothing to say of it


@needs_shared("covid_qa_deepset", "pubmedqa_pqal", "msmarco_qna_v11")
def test_no_human_reference_answer_of_the_shared_data_reads_as_lacking_an_answer():
    """The phrases lacks_answer looks for, against every reference answer people wrote in ../shared/data."""
    sources = [("covid_qa_deepset/200423_covidQA.json", "squad"), ("pubmedqa_pqal/ori_pqal.json", "pubmedqa"),
               ("msmarco_qna_v11/ifn647_sample.json", "msmarco"), ("msmarco_qna_v11/rag-robustness_ms_marco_sample.json", "msmarco")]
    items = [item for path, fmt in sources for item in import_golden(str(SHARED_DATA / path), fmt, ImportOptions()).items]
    assert sum(len(item.reference_answers) for item in items) == 2638
    assert [item.query_id for item in items if lacks_answer(item)] == []


def test_stats_counts_and_distributions(tmp_path):
    corpus = write(tmp_path / "corpus.jsonl", CORPUS)
    golden = write(tmp_path / "golden.jsonl", item("q1", "Where do bees go?", answer="Far.", gold=("a#0", "a#1"))
                   + item("q2", "Who mates?", answer=["The queen.", "Queens do."], gold=("b#0",))
                   + item("q3", "Open question", answer="", gold=(), meta={"no_answer": True}))
    result = run("golden", "stats", golden, "--corpus", corpus, "-f", "json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["counts"] == {"queries": 3, "queries with a reference answer": 2, "queries with gold chunks": 2,
                               "gold chunk ids": 3, "distinct gold chunks": 3, "corpus chunks": 3, "corpus documents": 2}
    assert stats["lengths"]["query words"] == {"count": 3, "min": 2.0, "p25": 2.0, "median": 2.0, "mean": 8 / 3,
                                               "p75": 3.0, "max": 4.0}
    assert stats["lengths"]["answer words"]["count"] == 3 and stats["lengths"]["answer words"]["max"] == 2.0
    assert stats["lengths"]["gold chunks per query"]["mean"] == 1.0
    assert stats["lengths"]["chunks per document"]["max"] == 2.0
    table = run("golden", "stats", golden).stdout
    assert "queries with gold chunks" in table and "corpus chunks" not in table
    assert [line.split()[-1] for line in table.splitlines() if line.startswith("query words")] == ["4.0"]


def test_stats_of_a_golden_set_without_answers_show_no_answer_lengths_not_zeros(tmp_path):
    """Cranfield (or any golden set whose queries lack answers) has no answer lengths: the quartiles are blank in
    the tables and null in JSON, not 0 (which reads as answers of 0 words)."""
    golden = write(tmp_path / "golden.jsonl", item("q1", "Where do bees go?", answer="", meta={"no_answer": True})
                   + item("q2", "Who mates?", answer="", gold=("b#0",), meta={"no_answer": True}))
    stats = json.loads(run("golden", "stats", golden, "-f", "json").stdout)
    assert stats["lengths"]["answer words"] == {"count": 0, "min": None, "p25": None, "median": None, "mean": None,
                                                "p75": None, "max": None}
    assert stats["lengths"]["query words"]["min"] == 2.0
    table = run("golden", "stats", golden).stdout
    assert [line.split() for line in table.splitlines() if line.startswith("answer words")] == [["answer", "words", "0"]]
    markdown = run("golden", "stats", golden, "-f", "markdown").stdout
    assert [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| answer words")] == [["answer words", "0", "", "", "", "", "", ""]]
    assert distribution([]) == stats["lengths"]["answer words"]


def test_length_distributions_equal_numpys_from_counts_alone():
    """The corpus's chunk lengths are kept as {length: chunks} (memory by distinct lengths, not chunks); the
    quartiles are numpy.percentile's to the last bit and the importer's median is sorted(lengths)[n // 2]."""
    rng = np.random.default_rng(7)
    for size in (1, 2, 3, 4, 7, 40, 999):
        values = rng.integers(0, rng.choice([3, 60, 3000]), size).tolist()
        got, tally = distribution(values), Tally(values)
        assert [got[k] for k in ("p25", "median", "p75")] == np.percentile(values, [25, 50, 75]).tolist()
        assert (got["min"], got["max"], got["count"]) == (min(values), max(values), size)
        assert got["mean"] == pytest.approx(np.mean(values), rel=1e-15) and distribution(tally) == got
        assert tally.at(size // 2) == sorted(values)[size // 2]


def test_split_targets_and_group_assignment_are_deterministic():
    assert split_targets(10, [0.8], None) == [8, 2]
    assert split_targets(10, [0.5, 0.3], None) == [5, 3, 2]
    assert split_targets(10, None, [3, 3]) == [3, 3]
    groups = [[0, 5], [1], [2], [3], [4, 6, 7], [8], [9]]
    keys = [f"q{i}" for i in range(10)]
    first = split_groups(groups, [7, 3], 4, keys)
    assert first == split_groups(groups, [7, 3], 4, keys)
    assert sorted(first[0] + first[1]) == list(range(10))
    for part in first:
        assert all(set(g) <= set(part) or not set(g) & set(part) for g in groups)
    assert any(split_groups(groups, [7, 3], s, keys) != first for s in range(5))
    assert sum(map(len, split_groups(groups, [2, 1], 0, keys))) <= 3


def test_a_split_follows_the_query_ids_not_the_files_order_and_a_query_added_moves_few():
    """Groups were shuffled in the order the file held them: the same queries reordered, or 10 added to 300,
    landed most queries in another part. Now a query's part follows a seeded hash of its id: a reordered set
    splits the same, and each query added moves at most about one other across the boundary."""
    def split(ids: list[str], seed: int = 0) -> dict[str, int]:
        parts = split_groups([[i] for i in range(len(ids))], split_targets(len(ids), [0.8], None), seed, ids)
        return {ids[i]: k for k, part in enumerate(parts) for i in part}

    ids = [f"q{i}" for i in range(300)]
    first = split(ids)
    assert sorted(first.values()).count(1) == 60
    assert split(ids[::-1]) == first
    grown = split(ids + [f"new{i}" for i in range(10)])
    assert sum(grown[q] != part for q, part in first.items()) <= 10
    assert sum(split(ids, seed=1)[q] != part for q, part in first.items()) > 60  # another seed, another split


NEAR = [
    ("q1", "How far do honey bees fly to find food?"),
    ("q2", "What distance do honey bees fly to find food?"),
    ("q3", "What temperature does a beehive keep in winter?"),
    ("q4", "Who lays the eggs in a colony?"),
    ("q5", "Why do beekeepers use smoke?"),
    ("q6", "WHY do beekeepers use  smoke?"),
]


def test_split_keeps_near_duplicates_together(tmp_path):
    golden = write(tmp_path / "golden.jsonl", "".join(item(q, t) for q, t in NEAR))
    parts = {}
    for seed in range(4):
        out = tmp_path / f"s{seed}"
        result = run("golden", "split", golden, "-o", out, "--ratio", "0.5", "--seed", seed)
        assert result.exit_code == 0, result.output
        train, test = [[i["query_id"] for i in read_lines(out / f"{n}.jsonl")] for n in ("train", "test")]
        assert sorted(train + test) == [q for q, _ in NEAR] and len(train) in (3, 4)  # 4 where the pairs come last
        for pair in (("q1", "q2"), ("q5", "q6")):
            assert set(pair) <= set(train) or set(pair) <= set(test)
        parts[seed] = train
    again = tmp_path / "again"
    run("golden", "split", golden, "-o", again, "--ratio", "0.5", "--seed", 0)
    assert (again / "train.jsonl").read_bytes() == (tmp_path / "s0" / "train.jsonl").read_bytes()
    assert len({tuple(p) for p in parts.values()}) > 1
    assert json.loads((again / "test.jsonl.manifest.json").read_text())["params"]["seed"] == 0
    assert_one_error(run("golden", "split", golden, "-o", again, "--sizes", "5,5"), "--sizes 5,5 ask for more than", code=2)
    assert_one_error(run("golden", "split", golden, "-o", again, "--sizes", "50"), "--sizes 50 asks for more than", code=2)


def test_split_together_keeps_queries_sharing_a_gold_chunk_or_its_document_in_one_part(tmp_path):
    """Split kept near-duplicates alone together: on COVID-QA every test query was on an article a train query was on, 199
    of 276 sharing a gold chunk with one, so a test part measured answers its train part had seen."""
    chunks = [("a#0", "a"), ("a#1", "a"), ("b#0", "b"), ("c#0", "c"), ("c#1", "c"), ("d#0", "d"), ("e#0", "e"), ("f#0", "f")]
    corpus = write(tmp_path / "corpus.jsonl", "".join(json.dumps({"_id": c, "title": "", "text": f"Text of {c}.", "doc_id": d}) + "\n"
                                                      for c, d in chunks))
    texts = ["Where do bees go in winter?", "How warm is the hive in January?", "Who mates with the queen?",
             "What is royal jelly made of?", "How far do foragers fly?", "Why do drones die after mating?",
             "When does a colony swarm?", "How many eggs does a queen lay?"]
    gold = ["a#0", "a#0", "a#1", "b#0", "c#0", "c#1", "d#0", "e#0"]
    golden = write(tmp_path / "golden.jsonl", "".join(item(f"q{k}", t, gold=(g,)) for k, (t, g) in enumerate(zip(texts, gold), 1)))

    def split(seed: int, *options) -> list[set[str]]:
        out = tmp_path / f"{seed}-{len(options)}"
        result = run("golden", "split", golden, "-o", out, "--ratio", "0.5", "--seed", seed, *options)
        assert result.exit_code == 0, result.output
        return [{i["query_id"] for i in read_lines(out / f"{n}.jsonl")} for n in ("train", "test")]

    def kept(parts: list[set[str]], queries: set[str]) -> bool:
        return any(queries <= part for part in parts)

    seeds = range(6)
    assert not all(kept(split(seed), {"q1", "q2"}) for seed in seeds)  # apart in some seed without --together
    assert all(kept(split(seed, "--together", "gold"), {"q1", "q2"}) for seed in seeds)
    by_document = [split(seed, "--together", "documents", "--corpus", corpus) for seed in seeds]
    assert all(kept(parts, {"q1", "q2", "q3"}) and kept(parts, {"q5", "q6"}) for parts in by_document)
    manifest = json.loads((tmp_path / "0-4" / "test.jsonl.manifest.json").read_text().replace(str(corpus), "C"))
    assert manifest["params"]["together"] == "documents" and [i["path"] for i in manifest["inputs"]][-1].endswith("C")
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "x", "--together", "documents"),
                     "--together documents reads the documents of the gold chunks from --corpus", code=2)
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "x", "--corpus", corpus), "give both, or neither", code=2)
    assert not (tmp_path / "x").exists()


def test_split_refuses_a_negative_seed_in_one_line(tmp_path):
    """numpy's generators refuse a negative seed: after embedding every query, split ended in its traceback."""
    golden = write(tmp_path / "golden.jsonl", "".join(item(q, t) for q, t in NEAR))
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "s", "--seed", "-1"), "--seed", "-1", code=2)
    assert not (tmp_path / "s").exists()


def test_split_sizes_leave_a_rest_part(tmp_path):
    golden = write(tmp_path / "golden.jsonl", "".join(item(q, t) for q, t in NEAR))
    result = run("golden", "split", golden, "-o", tmp_path / "s", "--sizes", "2", "--names", "sample,rest")
    assert result.exit_code == 0, result.output
    sample, rest = [[i["query_id"] for i in read_lines(tmp_path / "s" / f"{n}.jsonl")] for n in ("sample", "rest")]
    assert len(sample) == 2 and sorted(sample + rest) == [q for q, _ in NEAR] and "rest: 4 queries" in result.stderr
    assert run("golden", "split", golden, "-o", tmp_path / "t", "--sizes", "2", "--names", "sample").exit_code == 0
    assert len(read_lines(tmp_path / "t" / "rest.jsonl")) == 4  # the rest is named rest
    assert run("golden", "split", golden, "-o", tmp_path / "u", "--sizes", "2,1").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "u").glob("*.jsonl")) == ["part1.jsonl", "part2.jsonl", "rest.jsonl"]
    assert run("golden", "split", golden, "-o", tmp_path / "v", "--sizes", "4,2").exit_code == 0  # nothing left
    assert sorted(p.name for p in (tmp_path / "v").glob("*.jsonl")) == ["test.jsonl", "train.jsonl"]
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "w", "--sizes", "2", "--names", "a,b,c"),
                     "3 names for 2 parts (1 --sizes and the rest)", code=2)


def test_split_refuses_part_names_that_are_no_file_of_their_own_and_sizes_below_one(tmp_path, monkeypatch):
    golden = write(tmp_path / "golden.jsonl", "".join(item(q, t) for q, t in NEAR))
    for args, message in [
        (("--names", "a,a"), "--names gives two parts the name 'a': give each part its own name"),
        (("--sizes", "2", "--names", "rest"), "--names has no name for the queries --sizes leave over, and 'rest', "
                                              "their default, is taken: add a last name for them"),
        (("--names", "../escaped,b"), "part name '../escaped' in --names is not a plain file name"),
        (("--names", ",b"), "part name '' in --names is not a plain file name: give names that are not empty, "
                            "do not start with '.' and hold no '/'"),
        (("--names", ".a,b"), "part name '.a' in --names"),
        # refused on every system: on Windows fold:1.jsonl is a stream of the file 'fold', and con.jsonl the console
        (("--names", "fold:1,b"), "part name 'fold:1' in --names is no file name on Windows (it holds one of <>:\"\\|?* or "
                                  "a control character, ends in '.' or ' ', or is a device's name such as CON or NUL): give another"),
        (("--names", "a,Con"), "part name 'Con' in --names is no file name on Windows"),
        (("--names", "a,b."), "part name 'b.' in --names is no file name on Windows"),
        # written as train.jsonl.jsonl; and Train.jsonl and train.jsonl are one file on macOS and Windows, the later part
        # written over the earlier
        (("--names", "train.jsonl,test"), "part name 'train.jsonl' in --names ends in .jsonl, which the part's file name "
                                          "gets anyway (train.jsonl.jsonl): give 'train'"),
        (("--names", "Train,train"), "--names gives two parts the name 'train' (as 'Train': one file where case is not "
                                     "told apart, as on macOS and Windows): give each part its own name"),
        (("--sizes", "-1"), "--sizes -1: sizes must be positive query counts"),
        (("--sizes", "2,0"), "--sizes 2,0: sizes must be positive query counts"),
    ]:
        assert_one_error(run("golden", "split", golden, "-o", tmp_path / "parts", *args), message, code=2)
    monkeypatch.chdir(tmp_path)
    assert_one_error(run("golden", "split", golden, "-o", "-"), "'-' is not a folder (stdout cannot hold files)", code=2)
    assert_one_error(run("golden", "split", golden, "-o", ""), "the parts' folder path is empty: give a folder name (the current "
                     "one is '.')", code=2)  # the parts went to the current folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.jsonl"]  # nothing written, in -o or beside it (a folder '-' was)


def test_dedup_reports_and_deletes_only_with_apply(tmp_path):
    golden = write(tmp_path / "golden.jsonl", "".join(item(q, t) for q, t in NEAR))
    before = golden.read_bytes()
    result = run("golden", "dedup", golden, "--threshold", "0.95")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["keep"]["query_id"], [d["query_id"] for d in r["duplicates"]]) for r in rows] == [
        ("q1", ["q2"]), ("q5", ["q6"]),
    ]
    assert 0.95 <= rows[0]["duplicates"][0]["similarity"] < 0.99 and rows[1]["duplicates"][0]["similarity"] > 0.99
    assert "nothing removed" in result.stderr and golden.read_bytes() == before
    result = run("golden", "dedup", golden, "--apply", "-o", tmp_path / "dedup.jsonl", "--report", tmp_path / "r.jsonl")
    assert result.exit_code == 0, result.output
    kept = read_lines(tmp_path / "dedup.jsonl")
    assert [i["query_id"] for i in kept] == ["q1", "q3", "q4", "q5"]
    assert kept[0]["meta"] == {"duplicates_removed": ["q2"]}
    assert len(read_lines(tmp_path / "r.jsonl")) == 2 and (tmp_path / "dedup.jsonl.manifest.json").exists()
    assert_one_error(run("golden", "dedup", golden, "--apply"), "--apply and -o", code=2)
