"""A catalogue of bad inputs across the CLI: each gives one clear line on stderr, exit code 1 or
2, no traceback, and leaves no output file behind (nor a temp file)."""

from __future__ import annotations

import os

import pytest

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\n"
CORPUS = '{"_id": "a#0", "text": "chain oil", "doc_id": "a", "start": 0, "end": 9}\n'
GOLDEN = '{"query_id": "q1", "query": "oil?", "reference_answer": "chain oil", "gold_chunk_ids": ["a#0"]}\n'
JUDGMENTS = '{"query_id": "q1", "chunk_id": "a#0", "P": 0.5, "R": 0.8, "F": 0.6, "source": "gold"}\n'

# (name, files to write {name: content}, command line with {tmp} for the folder, expected text)
CASES = [
    ("empty qrels file", {"q": "", "r.run": RUN}, "eval {tmp}/q {tmp}/r.run", "no judgments"),
    ("wrong columns in a run", {"q": QRELS, "r.run": "q1 Q0 d1 1\n"}, "eval {tmp}/q {tmp}/r.run", "r.run:1: expected 6 columns"),
    ("non-UTF-8 qrels", {"q": b"q1 0 d\xe9 1\n", "r.run": RUN}, "eval {tmp}/q {tmp}/r.run", "q:1: not valid UTF-8"),
    ("duplicate doc in a run", {"q": QRELS, "r.run": RUN + "q1 Q0 d1 3 0.1 r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:3: duplicate document"),
    ("infinite score", {"q": QRELS, "r.run": "q1 Q0 d1 1 inf r\n"}, "eval {tmp}/q {tmp}/r.run", "not a finite number"),
    ("unknown measure", {"q": QRELS, "r.run": RUN}, "eval {tmp}/q {tmp}/r.run -m nDCG@ten", "unknown measure"),
    ("negative pool depth", {"g.jsonl": GOLDEN, "r.run": RUN}, "pool --golden {tmp}/g.jsonl --run {tmp}/r.run --depth -3 -o {tmp}/out.tsv",
     "depth"),
    ("thresholds out of order", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl --grades 0.8,0.6 -o {tmp}/out.qrels", "increasing"),
    ("judgment score not a number", {"j.jsonl": JUDGMENTS.replace("0.8", '"high"')}, "label {tmp}/j.jsonl -o {tmp}/out.qrels",
     "j.jsonl:1"),
    ("golden chunk not in the corpus", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN.replace("a#0", "zz#9")},
     "golden validate {tmp}/g.jsonl --corpus {tmp}/c.jsonl", "zz#9"),
    ("bad JSON in a golden set", {"g.jsonl": GOLDEN + "{oops\n"}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:2"),
    ("duplicate query id", {"g.jsonl": GOLDEN + GOLDEN}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:2"),
    ("id with a space", {"g.jsonl": GOLDEN.replace('"q1"', '"q 1"')}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "q 1"),
    ("CSV without a query column", {"g.csv": "question_text,answer\nx,y\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "column"),
    ("missing run file", {"q": QRELS}, "eval {tmp}/q {tmp}/nowhere.run", "no such file"),
]


@pytest.mark.parametrize("name,files,command,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line(tmp_path, cli, name, files, command, expected):
    for file, content in files.items():
        (tmp_path / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    before = set(os.listdir(tmp_path))
    result = cli(*command.format(tmp=tmp_path).split())
    assert result.exit_code in (1, 2), result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert expected in lines[0] + result.stdout, lines[0]  # validate lists its problems on stdout
    assert set(os.listdir(tmp_path)) == before  # nothing written, not even a temp file
