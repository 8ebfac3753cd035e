"""A catalogue of bad inputs across the CLI: each gives one clear line on stderr, exit code 1 or
2, no traceback, and leaves no output file behind (nor a temp file) and every input as it was.

The table (CASES) runs in this process; the classes that could hurt the machine (devices, FIFOs,
decompression bombs, a full disk, running out of memory) run in a fenced subprocess
(tests/catalogue.py). Counts of the whole catalogue are printed at the end of the test run."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile

import pytest

from catalogue import TALLY
from helpers import run
from semrel.review.store import SCHEMA_VERSION

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\n"
CORPUS = '{"_id": "a#0", "text": "chain oil", "doc_id": "a", "start": 0, "end": 9}\n'
GOLDEN = '{"query_id": "q1", "query": "oil?", "reference_answer": "chain oil", "gold_chunk_ids": ["a#0"]}\n'
JUDGMENTS = '{"query_id": "q1", "chunk_id": "a#0", "P": 0.5, "R": 0.8, "F": 0.6, "source": "gold"}\n'
LABELS = "q1 0 a#0 1\n"
GOLDEN_CSV_TEXT = "query_id,query,answer,gold_chunk_ids\nq1,oil?,chain oil,a#0\nq2,brakes?,pads,\n"


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


def foreign_sqlite() -> bytes:
    """Another program's SQLite file (no user_version, a table of its own)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "other.db")
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE bookmarks (url TEXT)")
            conn.execute("INSERT INTO bookmarks VALUES ('https://example.org')")
        conn.close()
        with open(path, "rb") as handle:
            return handle.read()


def review_db() -> bytes:
    """The bytes of a review database with a queue of one pair (built as `review start` builds it)."""
    with tempfile.TemporaryDirectory() as folder:
        for name, text in (("j.jsonl", JUDGMENTS), ("l.qrels", LABELS), ("c.jsonl", CORPUS), ("g.jsonl", GOLDEN)):
            with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
                out.write(text)
        db = os.path.join(folder, "r.db")
        result = run("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--thresholds", "0.7",
                     *[a for o, f in (("--judgments", "j.jsonl"), ("--labels", "l.qrels"), ("--corpus", "c.jsonl"),
                                      ("--golden", "g.jsonl")) for a in (o, os.path.join(folder, f))], input="q")
        assert result.exit_code == 0, result.output
        with open(db, "rb") as handle:
            return handle.read()


FOREIGN_DB = foreign_sqlite()
REVIEW_DB = review_db()
DEEP = "[" * 30000
DOCS = '{"id": "a", "text": "Chain oil keeps the chain quiet. Brakes need pads."}\n'
SQUAD = json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "chain oil", "qas": [
    {"id": "q1", "question": "oil?", "answers": [{"text": "chain oil", "answer_start": 0}]}]}]}]})
CONFIG_OVER_ITS_GOLDEN = 'out = "."\n[corpus]\nfile = "c.jsonl"\n[golden]\nfile = "golden.jsonl"\n[judge]\nenabled = false\n'
REVIEW_FILES = {"r.db": REVIEW_DB, "j.jsonl": JUDGMENTS, "l.qrels": LABELS, "c.jsonl": CORPUS, "g.jsonl": GOLDEN}
QUEUE = "--judgments {tmp}/j.jsonl --labels {tmp}/l.qrels --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --thresholds 0.7"
NEVER = "semrel never writes over its inputs"

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
    # ---- an output that is one of the command's inputs, for every command that writes
    ("review export over its database", {"r.db": REVIEW_DB, "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/r.db", "would overwrite the review database"),
    ("review export over its labels", {"r.db": REVIEW_DB, "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/l.qrels", NEVER),
    ("review export over the database's WAL", {"r.db": REVIEW_DB, "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/r.db-wal", "a file of the review database"),
    ("review export whose sidecar is an input", {"r.db": REVIEW_DB, "l.qrels.sources.jsonl": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels.sources.jsonl -o {tmp}/l.qrels", "l.qrels.sources.jsonl"),
    ("review start with an input as its database", dict(REVIEW_FILES),
     "review start --db {tmp}/j.jsonl --reviewer ann " + QUEUE, "are the same file"),
    ("label over its judgments", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl -o {tmp}/j.jsonl", NEVER),
    ("corpus chunk over its documents", {"docs.jsonl": DOCS}, "corpus chunk {tmp}/docs.jsonl -o {tmp}/docs.jsonl", NEVER),
    ("golden import over its CSV", {"g.csv": GOLDEN_CSV_TEXT}, "golden import {tmp}/g.csv -o {tmp}/g.csv", NEVER),
    ("golden import over its corpus", {"g.csv": GOLDEN_CSV_TEXT, "c.jsonl": CORPUS},
     "golden import {tmp}/g.csv --corpus {tmp}/c.jsonl -o {tmp}/c.jsonl", NEVER),
    ("golden import corpus over its source", {"s.json": SQUAD},
     "golden import {tmp}/s.json --corpus-out {tmp}/s.json -o {tmp}/out.jsonl", NEVER),
    ("golden import qrels over its source", {"g.csv": GOLDEN_CSV_TEXT},
     "golden import {tmp}/g.csv --qrels-out {tmp}/g.csv -o {tmp}/out.jsonl", NEVER),
    ("golden import: two outputs, one file", {"g.csv": GOLDEN_CSV_TEXT},
     "golden import {tmp}/g.csv --qrels-out {tmp}/out.jsonl -o {tmp}/out.jsonl", "name the same file"),
    ("golden qrels over its golden set", {"g.jsonl": GOLDEN}, "golden qrels {tmp}/g.jsonl -o {tmp}/g.jsonl", NEVER),
    ("golden split over its golden set", {"g.jsonl": GOLDEN + GOLDEN.replace("q1", "q2")},
     "golden split {tmp}/g.jsonl -o {tmp} --names g,rest", "is an input of this command"),
    ("golden dedup report over its golden set", {"g.jsonl": GOLDEN}, "golden dedup {tmp}/g.jsonl --report {tmp}/g.jsonl", NEVER),
    ("golden dedup over its golden set", {"g.jsonl": GOLDEN}, "golden dedup {tmp}/g.jsonl --apply -o {tmp}/g.jsonl", NEVER),
    ("golden pick over its corpus", {"g.jsonl": GOLDEN, "c.jsonl": CORPUS},
     "golden pick --golden {tmp}/g.jsonl --corpus {tmp}/c.jsonl -o {tmp}/c.jsonl", NEVER),
    ("retrieve over its golden set", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN},
     "retrieve --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl -o {tmp}/g.jsonl", NEVER),
    ("pool over its run", {"g.jsonl": GOLDEN, "r.run": RUN}, "pool {tmp}/r.run --golden {tmp}/g.jsonl -o {tmp}/r.run", NEVER),
    ("judge over its corpus", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --no-cache -o {tmp}/c.jsonl", NEVER),
    ("judge whose checkpoint is an input", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN, "p.partial": "query_id\tchunk_id\tsources\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.partial --no-cache -o {tmp}/p", "p.partial"),
    ("calibrate over its human labels", {"j.jsonl": JUDGMENTS, "h.qrels": LABELS},
     "calibrate {tmp}/j.jsonl {tmp}/h.qrels -o {tmp}/h.qrels", NEVER),
    ("sensitivity curves over a run", {"j.jsonl": JUDGMENTS, "r.run": RUN},
     "sensitivity {tmp}/j.jsonl {tmp}/r.run --curves {tmp}/r.run", NEVER),
    ("report over its qrels", {"q": QRELS, "r.run": RUN}, "report {tmp}/q {tmp}/r.run -o {tmp}/q", NEVER),
    ("run whose step would write over the golden set", {"c.jsonl": CORPUS, "golden.jsonl": GOLDEN, "s.toml": CONFIG_OVER_ITS_GOLDEN},
     "run {tmp}/s.toml", "would write"),
    ("output is a folder", {"j.jsonl": JUDGMENTS, "folder/keep": ""}, "label {tmp}/j.jsonl -o {tmp}/folder", "is a folder"),
    ("output inside a file", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl -o {tmp}/j.jsonl/out.qrels", "j.jsonl"),
    # ---- review databases that are not: never created, converted or filled by a reader
    ("review export from an empty file", {"r.db": "", "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/out.qrels", "not a review database"),
    ("review stats on an empty file", {"r.db": ""}, "review stats --db {tmp}/r.db", "not a review database"),
    ("review stats on another SQLite file", {"r.db": FOREIGN_DB}, "review stats --db {tmp}/r.db", "not a review database"),
    ("review export from another SQLite file", {"r.db": FOREIGN_DB, "l.qrels": LABELS},
     "review export --db {tmp}/r.db --labels {tmp}/l.qrels -o {tmp}/out.qrels", "not a review database"),
    ("review start on another SQLite file", {**REVIEW_FILES, "r.db": FOREIGN_DB},
     "review start --db {tmp}/r.db --reviewer ann " + QUEUE, "not a review database"),
    ("eval --reviewed with an empty file", {"q": QRELS, "r.run": RUN, "r.db": ""},
     "eval {tmp}/q {tmp}/r.run --reviewed {tmp}/r.db", "not a review database"),
    ("review start with a name holding an escape", dict(REVIEW_FILES),
     "review start --db {tmp}/r.db --reviewer \x1b[2Jann", "printable"),
    # ---- nesting: refused before a parser recurses into it
    ("nested JSON in a golden set to import", {"g.jsonl": DEEP}, "golden import {tmp}/g.jsonl -o {tmp}/out.jsonl", "nested more than"),
    ("nested JSON in a SQuAD file", {"s.json": '{"data": ' + DEEP},
     "golden import {tmp}/s.json --format squad --corpus-out {tmp}/c.jsonl -o {tmp}/out.jsonl", "nested more than"),
    ("nested JSON in the golden set of pool", {"g.jsonl": DEEP, "r.run": RUN}, "pool {tmp}/r.run --golden {tmp}/g.jsonl -o {tmp}/p.tsv",
     "nested more than"),
    ("nested JSON in judgments", {"j.jsonl": DEEP}, "label {tmp}/j.jsonl -o {tmp}/out.qrels", "nested more than"),
    ("nested JSON in the corpus to judge", {"c.jsonl": DEEP, "g.jsonl": GOLDEN},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --no-cache -o {tmp}/out.jsonl", "nested more than"),
    ("nested JSON in a CSV cell", {"g.csv": "query,answer,gold\nx,y," + DEEP + "\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "nested more than"),
    ("nested JSON in agreement figures", {"q": QRELS, "r.run": RUN, "a.json": DEEP},
     "report {tmp}/q {tmp}/r.run --agreement {tmp}/a.json -o {tmp}/out.html", "nested more than"),
    ("nested JSON in a thresholds file", {**REVIEW_FILES, "t.json": DEEP},
     "review start --db {tmp}/new.db --reviewer ann --judgments {tmp}/j.jsonl --labels {tmp}/l.qrels --corpus {tmp}/c.jsonl "
     "--golden {tmp}/g.jsonl --thresholds {tmp}/t.json", "nested more than"),
    ("nested TOML in a run config", {"s.toml": 'out = "o"\n[golden]\nfile = "g"\nx = ' + DEEP + "\n"}, "run {tmp}/s.toml",
     "nested more than"),
    ("nested inline tables in a run config", {"s.toml": "x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n"}, "run {tmp}/s.toml",
     "nested more than"),
    # ---- CSV read strictly
    ("CSV with an unclosed quote", {"g.csv": 'query,answer\n"unclosed,a\nq2,b\nq3,c\n'}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv:2: not valid CSV"),
    ("CSV quote closed rows later", {"g.csv": 'query,answer\n"unclosed,a\nq2,b\nq3,"c"\n'},
     "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "g.csv:2: not valid CSV"),
    ("CSV row with fewer cells than the header", {"g.csv": "query,answer,gold_chunk_ids\nx,y\n"},
     "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "g.csv:2: 2 cells, but the header has 3 columns"),
    # ---- limits named with their variable
    ("a JSONL line over SEMREL_MAX_LINE_MB", {"j.jsonl": '{"x": "' + "y" * (2 << 20) + '"}\n'}, "label {tmp}/j.jsonl -o {tmp}/o.qrels",
     "SEMREL_MAX_LINE_MB"),
    ("a document over SEMREL_MAX_DOCUMENT_MB", {"d.txt": "word " * (1 << 20)}, "corpus chunk {tmp}/d.txt -o {tmp}/o.jsonl",
     "SEMREL_MAX_DOCUMENT_MB"),
]
SMALL_LIMITS = {"a JSONL line over SEMREL_MAX_LINE_MB": {"SEMREL_MAX_LINE_MB": "1"},
                "a document over SEMREL_MAX_DOCUMENT_MB": {"SEMREL_MAX_DOCUMENT_MB": "1"}}


@pytest.mark.parametrize("name,files,command,expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line(tmp_path, cli, monkeypatch, name, files, command, expected):
    for file, content in files.items():
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    for variable, value in SMALL_LIMITS.get(name, {}).items():
        monkeypatch.setenv(variable, value)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    result = cli(*[a.replace("\\x1b", "\x1b") for a in command.format(tmp=tmp_path).split()])
    lines = result.stderr.strip().splitlines()
    changed = [f for f, c in files.items() if (tmp_path / f).read_bytes() != (c if isinstance(c, bytes) else c.encode())]
    TALLY.record(name, refused=True, traceback="Traceback" in result.output, modified=bool(changed))
    assert result.exit_code in (1, 2), result.output
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert expected in lines[0] + result.stdout, lines[0]  # validate lists its problems on stdout
    assert "\x1b" not in result.stderr + result.stdout  # an escape in the input is shown, not sent to the terminal
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before  # nothing written, not even a temp file
    assert not changed  # and no input touched (a newer review database stays as it was)


GOLDEN_CSV = GOLDEN_CSV_TEXT
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
    TALLY.record(f"{name} accepted", refused=False)
    assert odd == plain
    assert json.loads(plain[0]) == {"r": {"all": {"nDCG@10": 1.0, "RR": 1.0, "P@1": 1.0}}}
    golden = [json.loads(line) for line in plain[1].splitlines()]
    assert [(g["query_id"], g["query"], g["reference_answer"], g["gold_chunk_ids"]) for g in golden] == [
        ("q1", "oil?", "chain oil", ["a#0"]), ("q2", "brakes?", "pads", [])]
    assert plain[2] == "q1 0 a#0 1\n"
