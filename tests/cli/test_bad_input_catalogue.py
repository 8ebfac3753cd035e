"""A catalogue of bad inputs across the CLI: each gives one clear line on stderr, exit code 1 or
2, no traceback, and leaves no output file behind (nor a temp file)."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile

import pytest

from semrel.review.store import SCHEMA_VERSION

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\n"
CORPUS = '{"_id": "a#0", "text": "chain oil", "doc_id": "a", "start": 0, "end": 9}\n'
GOLDEN = '{"query_id": "q1", "query": "oil?", "reference_answer": "chain oil", "gold_chunk_ids": ["a#0"]}\n'
JUDGMENTS = '{"query_id": "q1", "chunk_id": "a#0", "P": 0.5, "R": 0.8, "F": 0.6, "source": "gold"}\n'
LABELS = "q1 0 a#0 1\n"


def newer_review_db() -> bytes:
    """The bytes of an SQLite file whose user_version is past what this semrel knows."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "review.db")
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE future (x)")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        conn.close()
        with open(path, "rb") as handle:
            return handle.read()


NEWER_DB = newer_review_db()

# (name, files to write {name: content}, command line with {tmp} for the folder, expected text)
CASES = [
    ("empty qrels file", {"q": "", "r.run": RUN}, "eval {tmp}/q {tmp}/r.run", "no judgments"),
    ("wrong columns in a run", {"q": QRELS, "r.run": "q1 Q0 d1 1\n"}, "eval {tmp}/q {tmp}/r.run", "r.run:1: expected 6 columns"),
    ("non-UTF-8 qrels", {"q": b"q1 0 d\xe9 1\n", "r.run": RUN}, "eval {tmp}/q {tmp}/r.run", "q:1: not valid UTF-8"),
    ("duplicate doc in a run", {"q": QRELS, "r.run": RUN + "q1 Q0 d1 3 0.1 r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:3: duplicate document"),
    ("infinite score", {"q": QRELS, "r.run": "q1 Q0 d1 1 inf r\n"}, "eval {tmp}/q {tmp}/r.run", "not a finite number"),
    ("unknown measure", {"q": QRELS, "r.run": RUN}, "eval {tmp}/q {tmp}/r.run -m nDCG@ten", "unknown measure"),
    ("negative pool depth", {"g.jsonl": GOLDEN, "r.run": RUN}, "pool {tmp}/r.run --golden {tmp}/g.jsonl --depth -3 -o {tmp}/out.tsv",
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
    ("empty golden set", {"g.jsonl": ""}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl: no queries"),
    ("empty corpus", {"c.jsonl": "", "g.jsonl": GOLDEN}, "retrieve --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl -o {tmp}/out.run",
     "c.jsonl: no chunks"),
    ("empty CSV", {"g.csv": ""}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "no query column"),
    ("non-UTF-8 golden set", {"g.jsonl": GOLDEN.encode().replace(b"oil?", b"\xe9")}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels",
     "g.jsonl:1: not valid UTF-8"),
    ("non-UTF-8 CSV", {"g.csv": b"query,answer\nx\xff,y\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "g.csv:2: not valid UTF-8"),
    ("NaN score in a run", {"q": QRELS, "r.run": "q1 Q0 d1 1 nan r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:1: score nan is not a finite number"),
    ("negative retrieve depth", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN},
     "retrieve --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl -k -1 -o {tmp}/out.run", "-k"),
    ("grades not increasing", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl --grades 0.6,0.6,0.8 -o {tmp}/out.qrels", "increasing"),
    ("judge a golden chunk not in the corpus", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN.replace("a#0", "zz#9")},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --no-cache -o {tmp}/out.jsonl", "zz#9"),
    ("import against a corpus lacking the gold chunk", {"c.jsonl": CORPUS, "g.csv": "query,answer,gold_chunk_ids\nx,y,zz#9\n"},
     "golden import {tmp}/g.csv --corpus {tmp}/c.jsonl -o {tmp}/out.jsonl", "zz#9"),
    ("CSV query column named but absent", {"g.csv": "query,answer\nx,y\n"},
     "golden import {tmp}/g.csv --query-col question_text -o {tmp}/out.jsonl", "no column 'question_text'"),
    ("CSV row with more cells than the header", {"g.csv": "query,answer\nx,y,z\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv:2: more cells"),
    ("duplicate chunk id in a corpus", {"c.jsonl": CORPUS + CORPUS, "g.jsonl": GOLDEN},
     "golden validate {tmp}/g.jsonl --corpus {tmp}/c.jsonl", "c.jsonl:2"),
    ("chunk id with a space", {"c.jsonl": CORPUS.replace('"a#0"', '"a 0"'), "g.jsonl": GOLDEN},
     "golden validate {tmp}/g.jsonl --corpus {tmp}/c.jsonl", "c.jsonl:1: chunk id 'a 0'"),
    ("duplicate query id in a CSV", {"g.csv": "query_id,query,answer\nq1,x,y\nq1,z,w\n"},
     "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "'q1' occurs more than once"),
    ("review stats on a newer database", {"r.db": NEWER_DB}, "review stats --db {tmp}/r.db", "upgrade semrel"),
    ("review export from a newer database", {"r.db": NEWER_DB, "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/out.qrels", "upgrade semrel"),
    ("review start on a newer database", {"r.db": NEWER_DB, "j.jsonl": JUDGMENTS, "l.qrels": LABELS, "c.jsonl": CORPUS, "g.jsonl": GOLDEN},
     "review start --db {tmp}/r.db --reviewer ann --judgments {tmp}/j.jsonl --labels {tmp}/l.qrels --corpus {tmp}/c.jsonl "
     "--golden {tmp}/g.jsonl --thresholds 0.7", "upgrade semrel"),
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
    for file, content in files.items():  # and no input touched (a newer review database stays as it was)
        assert (tmp_path / file).read_bytes() == (content if isinstance(content, bytes) else content.encode())


GOLDEN_CSV = "query_id,query,answer,gold_chunk_ids\nq1,oil?,chain oil,a#0\nq2,brakes?,pads,\n"
# Inputs that look odd but are fine: Windows line ends and a UTF-8 byte order mark are read as if absent.
ACCEPTED = [("CRLF", lambda text: text.replace("\n", "\r\n").encode()),
            ("BOM", lambda text: b"\xef\xbb\xbf" + text.encode()),
            ("BOM and CRLF", lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())]


@pytest.mark.parametrize("name,encode", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_crlf_and_bom_give_the_same_results(tmp_path, cli, name, encode):
    def outputs(folder, transform):
        folder.mkdir()
        for file, text in (("q", QRELS), ("r.run", RUN), ("g.csv", GOLDEN_CSV), ("c.jsonl", CORPUS), ("j.jsonl", JUDGMENTS)):
            (folder / file).write_bytes(transform(text))
        results = [cli("eval", f"{folder}/q", f"{folder}/r.run", "-m", "nDCG@10,RR,P@1", "-f", "json"),
                   cli("golden", "import", f"{folder}/g.csv", "--corpus", f"{folder}/c.jsonl", "-o", f"{folder}/g.jsonl"),
                   cli("label", f"{folder}/j.jsonl", "-o", f"{folder}/l.qrels")]
        assert all(r.exit_code == 0 for r in results), [r.output for r in results]
        return results[0].stdout, (folder / "g.jsonl").read_text(), (folder / "l.qrels").read_text()

    plain, odd = outputs(tmp_path / "plain", str.encode), outputs(tmp_path / "odd", encode)
    assert odd == plain
    assert json.loads(plain[0]) == {"r": {"all": {"nDCG@10": 1.0, "RR": 1.0, "P@1": 1.0}}}
    golden = [json.loads(line) for line in plain[1].splitlines()]
    assert [(g["query_id"], g["query"], g["reference_answer"], g["gold_chunk_ids"]) for g in golden] == [
        ("q1", "oil?", "chain oil", ["a#0"]), ("q2", "brakes?", "pads", [])]
    assert plain[2] == "q1 0 a#0 1\n"
