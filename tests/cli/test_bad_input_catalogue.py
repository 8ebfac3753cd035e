"""A catalogue of bad inputs across the CLI: each gives one clear line on stderr, exit code 1 or
2, no traceback, and leaves no output file behind (nor a temp file) and every input as it was.

The table (CASES) runs in this process; the classes that could hurt the machine (devices, FIFOs,
decompression bombs, a full disk, running out of memory) run in a fenced subprocess
(tests/catalogue.py). Counts of the whole catalogue are printed at the end of the test run."""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from catalogue import TALLY, digests, fenced, refused_cleanly
from helpers import assert_one_error, run
from semrel.review.store import SCHEMA_VERSION

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

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
        with sqlite3.connect(db) as conn:  # everything in the one file (semrel switches it back to WAL when it writes)
            conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
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
    ("run and qrels swapped", {"q": QRELS, "r.run": RUN}, "eval {tmp}/r.run {tmp}/q",
     "r.run:1: expected 4 columns (qid 0 docid rel), found 6: this file looks like a TREC run, not TREC qrels"),
    ("qrels given for a run", {"q": QRELS}, "eval {tmp}/q {tmp}/q", "q:1: expected 6 columns (qid Q0 docid rank score tag; any after "
     "them are ignored), found 4: this file looks like TREC qrels, not a TREC run: `semrel retrieve` writes one"),
    ("judgments given for qrels", {"j.jsonl": JUDGMENTS, "r.run": RUN}, "eval {tmp}/j.jsonl {tmp}/r.run",
     "j.jsonl:1: missing field 'query' (the line has: query_id, chunk_id, P, R, F, source): this file looks like judgments, not "
     "TREC qrels: `semrel label` makes them from judgments"),
    ("a CSV given for a golden set", {"g.csv": GOLDEN_CSV_TEXT}, "golden stats {tmp}/g.csv",
     "g.csv:1: invalid JSON (Expecting value): this file looks like a CSV file, not a golden set: `semrel golden import` makes one"),
    ("non-UTF-8 qrels", {"q": b"q1 0 d\xe9 1\n", "r.run": RUN}, "eval {tmp}/q {tmp}/r.run", "q:1: not valid UTF-8"),
    ("duplicate doc in a run", {"q": QRELS, "r.run": RUN + "q1 Q0 d1 3 0.1 r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:3: duplicate document"),
    ("infinite score", {"q": QRELS, "r.run": "q1 Q0 d1 1 inf r\n"}, "eval {tmp}/q {tmp}/r.run", "not a finite number"),
    ("unknown measure", {"q": QRELS, "r.run": RUN}, "eval {tmp}/q {tmp}/r.run -m nDCG@ten", "unknown measure"),
    ("an empty host", {"r.db": REVIEW_DB}, "review serve --db {tmp}/r.db --host= --port 0", "--host is empty"),  # "cannot listen on:0"
    ("a no-break space between columns", {"q": QRELS, "r.run": RUN + "q1\u00a0Q0 d9 3 0.1 r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:3: expected 6 columns (qid Q0 docid rank score tag; any after them are ignored), found 5: it holds NO-BREAK SPACE"),
    ("a doc id of a megabyte, twice", {"q": QRELS, "r.run": RUN + f"q1 Q0 {'x' * (1 << 20)} 3 0.1 r\n" * 2},
     "eval {tmp}/q {tmp}/r.run", "characters left out"),  # the error line was a megabyte long
    ("two runs of one name", {"q": QRELS, "r.run": RUN, "r.trec": RUN}, "eval {tmp}/q {tmp}/r.run {tmp}/r.trec -f json",
     "r.run and "),  # json kept one of them
    ("negative pool depth", {"g.jsonl": GOLDEN, "r.run": RUN}, "pool {tmp}/r.run --golden {tmp}/g.jsonl --depth -3 -o {tmp}/out.tsv",
     "depth"),
    ("thresholds out of order", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl --grades 0.8,0.6 -o {tmp}/out.qrels", "increasing"),
    ("judgment score not a number", {"j.jsonl": JUDGMENTS.replace("0.8", '"high"')}, "label {tmp}/j.jsonl -o {tmp}/out.qrels",
     "j.jsonl:1"),
    ("judgment score past 1", {"j.jsonl": JUDGMENTS.replace("0.8", "1e300", 1)}, "label {tmp}/j.jsonl -o {tmp}/out.qrels",
     "BERTScores, at most 1"),  # labelled without a word
    ("golden chunk not in the corpus", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN.replace("a#0", "zz#9")},
     "golden validate {tmp}/g.jsonl --corpus {tmp}/c.jsonl", "zz#9"),
    ("bad JSON in a golden set", {"g.jsonl": GOLDEN + "{oops\n"}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:2"),
    ("a number of 5,000 digits in a golden set", {"g.jsonl": GOLDEN.replace("}\n", ', "meta": {"n": ' + "9" * 5000 + "}}\n")},
     "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:1: holds a number of more than 4,300 digits"),  # Python's ValueError
    ("a number of 5,000 digits in a config", {"c.toml": 'out = "o"\nx = ' + "9" * 5000 + "\n"}, "run {tmp}/c.toml",
     "c.toml: holds a number of more than 4,300 digits"),
    ("agreement figures of the wrong shape", {"q": QRELS, "r.run": RUN, "a.json": '{"labels": {"confusion": [[1, "x"]]}}'},
     "report {tmp}/q {tmp}/r.run --agreement {tmp}/a.json -o {tmp}/out.html", "a.json: labels.confusion must be a square table"),
    ("agreement figures with a count in words", {"q": QRELS, "r.run": RUN,
                                                 "a.json": '{"labels": {"confusion": [[1, 0], [0, 1]], "n": "many"}}'},
     "report {tmp}/q {tmp}/r.run --agreement {tmp}/a.json -o {tmp}/out.html", "a.json: labels.n must be a number"),
    ("a lone surrogate escape in a corpus", {"c.jsonl": CORPUS.replace("chain oil", "chain \\ud800 oil"), "g.jsonl": GOLDEN},
     "golden validate {tmp}/g.jsonl --corpus {tmp}/c.jsonl", "c.jsonl:1: holds a lone surrogate escape"),
    ("duplicate query id", {"g.jsonl": GOLDEN + GOLDEN}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:2"),
    ("id with a space", {"g.jsonl": GOLDEN.replace('"q1"', '"q 1"')}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "q 1"),
    ("query id opening with #", {"g.jsonl": GOLDEN.replace('"q1"', '"#q1"')}, "golden validate {tmp}/g.jsonl",
     "g.jsonl:1: error: query id '#q1' starts with '#'"),
    ("query id opening with # in a CSV", {"g.csv": GOLDEN_CSV_TEXT.replace("q1,", "#q1,")}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "'#q1' starts with '#'"),
    ("grade that is not a number", {"g.jsonl": GOLDEN.replace("}\n", ', "meta": {"grades": {"a#0": "high"}}}\n')},
     "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl:1: meta.grades should map chunk ids to whole-number grades"),
    ("grade that is a fraction", {"g.jsonl": GOLDEN.replace("}\n", ', "meta": {"grades": {"a#0": 1.5}}}\n'), "q.qrels": QRELS,
                                  "r.run": RUN, "s.run": RUN}, "agree {tmp}/q.qrels {tmp}/g.jsonl {tmp}/r.run {tmp}/s.run",
     "g.jsonl:1: meta.grades"),
    ("CSV without a query column", {"g.csv": "question_text,answer\nx,y\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "column"),
    ("CSV with two query columns", {"g.csv": "query,query,answer\nx,y,z\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv:1: the header names column 'query' twice"),  # the second was taken, without a word
    ("missing run file", {"q": QRELS}, "eval {tmp}/q {tmp}/nowhere.run", "no such file"),
    ("empty golden set", {"g.jsonl": ""}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels", "g.jsonl: no queries"),
    ("empty golden set to validate", {"g.jsonl": ""}, "golden validate {tmp}/g.jsonl", "g.jsonl: no queries"),
    ("empty judgments to label", {"j.jsonl": ""}, "label {tmp}/j.jsonl -o {tmp}/out.qrels", "j.jsonl: no judgments (the file is empty)"),
    ("empty judgments to sweep", {"j.jsonl": "", "r.run": RUN}, "sensitivity {tmp}/j.jsonl {tmp}/r.run",
     "j.jsonl: no judgments (the file is empty); judge a pool first"),  # was a usage error naming no file
    ("empty judgments to calibrate", {"j.jsonl": "", "h.qrels": LABELS}, "calibrate {tmp}/j.jsonl {tmp}/h.qrels -o {tmp}/cal.json",
     "j.jsonl: no judgments (the file is empty)"),  # was "none of its labelled pairs is judged (... the judgments hold e.g. None)"
    # a NUL byte sat in an id that matched nothing: the fast reader (plain spacing) and the line-by-line one (tabs)
    ("NUL byte in a run", {"q": QRELS, "r.run": RUN + "q1 Q0 d\x003 3 0.1 r\n"}, "eval {tmp}/q {tmp}/r.run",
     "r.run:3: holds a NUL byte"),
    ("NUL byte in tab-separated qrels", {"q": QRELS.replace(" ", "\t") + "q1\t0\td\x003\t1\n", "r.run": RUN},
     "eval {tmp}/q {tmp}/r.run", "q:3: holds a NUL byte"),
    ("grade past 64 bits", {"q.qrels": QRELS + "q1 0 d3 99999999999999999999\n", "r.run": RUN}, "eval {tmp}/q.qrels {tmp}/r.run",
     "q.qrels:3: column 4 is '99999999999999999999'"),
    ("grade with a plus sign", {"q.qrels": QRELS + "q1 0 d3 +2\n", "r.run": RUN}, "eval {tmp}/q.qrels {tmp}/r.run", "q.qrels:3: column 4"),
    ("score in Arabic-Indic digits", {"q.qrels": QRELS, "r.run": RUN + "q1 Q0 d3 3 \u0661 r\n"}, "eval {tmp}/q.qrels {tmp}/r.run",
     "r.run:3: column 5"),
    ("nothing to judge", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN.replace('"a#0"', ""), "p.tsv": "query_id\tchunk_id\tsources\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.tsv --no-cache -o {tmp}/out.jsonl", "nothing to judge"),
    ("a pool query the golden set lacks", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN, "p.tsv": "query_id\tchunk_id\tsources\n\nq9\ta#0\tbm25\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.tsv --no-cache -o {tmp}/out.jsonl",
     "p.tsv:3: query 'q9' is not in"),  # the line named, a blank line counted
    ("a pool chunk the corpus lacks", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN, "p.tsv": "query_id\tchunk_id\tsources\nq1\tz#0\tbm25\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.tsv --no-cache -o {tmp}/out.jsonl",
     "p.tsv:2: chunk 'z#0' (query 'q1', pooled from run 'bm25') is not in"),  # which run: a user's own in `semrel run`
    ("a gold and pooled chunk the corpus lacks",
     {"c.jsonl": CORPUS, "g.jsonl": GOLDEN, "p.tsv": "query_id\tchunk_id\tsources\nq1\tz#0\tbm25,gold\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.tsv --no-cache -o {tmp}/out.jsonl",
     "p.tsv:2: chunk 'z#0' (query 'q1', pooled from run 'bm25') is not in"),  # one run: gold is not a run ("runs 'bm25'" before)
    ("no document with text", {"e.txt": " \n"}, "corpus chunk {tmp}/e.txt -o {tmp}/out.jsonl", "no document with text to chunk"),
    ("document id twice in a JSONL file", {"d.jsonl": '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n'},
     "corpus chunk {tmp}/d.jsonl -o {tmp}/out.jsonl", "d.jsonl:2: document id 'a' is already used on line 1"),
    ("a document title that is an object", {"d.jsonl": '{"id": "a", "title": {"x": 1}, "text": "x"}\n'},  # was "{'x': 1}"
     "corpus chunk {tmp}/d.jsonl -o {tmp}/out.jsonl", "d.jsonl:1: field 'title' should be str or int or float, found dict"),
    ("a chunk title that is a list", {"c.jsonl": '{"_id": "a", "title": ["x"], "text": "x"}\n', "g.jsonl": GOLDEN},
     "retrieve --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl -o {tmp}/out.run", "c.jsonl:1: field 'title' should be str or int"),
    ("one document id from two files of a folder", {"d/notes.md": "Chain oil.\n", "d/notes.txt": "Brake pads.\n"},
     "corpus chunk {tmp}/d -o {tmp}/out.jsonl", "document id 'notes' occurs in "),
    ("SQuAD JSON without questions", {"s.json": '{"data": []}'},
     "golden import {tmp}/s.json --corpus-out {tmp}/c.jsonl -o {tmp}/out.jsonl", "s.json: no queries in this squad source"),
    ("CSV of a header alone", {"g.csv": "query_id,query,answer,gold_chunk_ids\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv: no queries in this csv source"),
    ("golden set and qrels both to stdout", {"g.csv": GOLDEN_CSV_TEXT}, "golden import {tmp}/g.csv -o - --qrels-out -",
     "--output and --qrels-out both write '-' (stdout)"),
    ("dedup's golden set to stdout beside its report there", {"g.jsonl": GOLDEN}, "golden dedup {tmp}/g.jsonl --apply -o -",
     "--report and --output both write '-' (stdout)"),
    ("judged query id with a space", {"j.jsonl": JUDGMENTS.replace('"q1"', '"q 1"')}, "label {tmp}/j.jsonl -o {tmp}/out.qrels",
     "j.jsonl:1: query id 'q 1'"),
    ("qrels and run both from stdin", {}, "eval - -", "QRELS and RUNS both read '-' (stdin)"),
    ("two runs from stdin", {"q.qrels": QRELS}, "compare {tmp}/q.qrels - -", "RUNS name '-' (stdin) twice"),
    ("a cut of p above 1", {"j.jsonl": JUDGMENTS, "r.run": RUN, "s.run": RUN},
     "sensitivity {tmp}/j.jsonl {tmp}/r.run {tmp}/s.run --on p --at 5", "thresholds and --at must lie in 0..1, and these reach 5"),
    ("report corpus without its golden set or runs", {"q.qrels": QRELS, "c.jsonl": CORPUS},
     "report {tmp}/q.qrels --corpus {tmp}/c.jsonl -o {tmp}/out.html", "give --golden or runs"),
    ("report of a corpus that is not there", {"q.qrels": QRELS, "r.run": RUN},  # said before the runs' progress line
     "report {tmp}/q.qrels {tmp}/r.run --corpus {tmp}/missing.jsonl -o {tmp}/out.html", "missing.jsonl: no such file"),
    ("gold chunk id with a space", {"g.jsonl": GOLDEN.replace('"a#0"', '"a 0"')}, "golden qrels {tmp}/g.jsonl -o {tmp}/out.qrels",
     "g.jsonl:1: gold chunk id 'a 0'"),
    ("CSV with an empty query", {"g.csv": GOLDEN_CSV_TEXT.replace("q1,oil?,", "q1,,")}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv:2: the query of 'q1' is empty"),
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
     "golden import {tmp}/g.csv -o {tmp}/out.jsonl", "g.csv:3: query id 'q1' occurs more than once (first on line 2)"),
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
    ("review thresholds that are not numbers", dict(REVIEW_FILES),
     "review start --db {tmp}/new.db --reviewer ann " + QUEUE.replace("0.7", "0.5,nan"), "thresholds must be finite numbers"),
    ("label over its judgments", {"j.jsonl": JUDGMENTS}, "label {tmp}/j.jsonl -o {tmp}/j.jsonl", NEVER),
    ("label over its judgments' manifest", {"j.jsonl": JUDGMENTS, "j.jsonl.manifest.json": "{}"},
     "label {tmp}/j.jsonl -o {tmp}/j.jsonl.manifest.json", "JUDGMENTS's manifest"),
    ("corpus chunk over its documents", {"docs.jsonl": DOCS}, "corpus chunk {tmp}/docs.jsonl -o {tmp}/docs.jsonl", NEVER),
    ("golden import over its CSV", {"g.csv": GOLDEN_CSV_TEXT}, "golden import {tmp}/g.csv -o {tmp}/g.csv", NEVER),
    ("SQuAD whose contexts are all empty", {"s.json": SQUAD.replace('"context": "chain oil"', '"context": ""')},
     "golden import {tmp}/s.json --corpus-out {tmp}/c.jsonl -o {tmp}/g.jsonl",
     "s.json: no context of this squad source holds text, so the corpus would be empty"),  # a 0-byte corpus, exit 0
    ("golden import over its corpus", {"g.csv": GOLDEN_CSV_TEXT, "c.jsonl": CORPUS},
     "golden import {tmp}/g.csv --corpus {tmp}/c.jsonl -o {tmp}/c.jsonl", NEVER),
    ("golden import corpus over its source", {"s.json": SQUAD},
     "golden import {tmp}/s.json --corpus-out {tmp}/s.json -o {tmp}/out.jsonl", NEVER),
    ("golden import qrels over its source", {"g.csv": GOLDEN_CSV_TEXT},
     "golden import {tmp}/g.csv --qrels-out {tmp}/g.csv -o {tmp}/out.jsonl", NEVER),
    ("golden import: two outputs, one file", {"g.csv": GOLDEN_CSV_TEXT},
     "golden import {tmp}/g.csv --qrels-out {tmp}/out.jsonl -o {tmp}/out.jsonl", "name the same file"),
    ("golden import: two outputs apart only in case, one file on macOS and Windows", {"g.csv": GOLDEN_CSV_TEXT},
     "golden import {tmp}/g.csv --qrels-out {tmp}/Out.jsonl -o {tmp}/out.jsonl", "name the same file"),
    ("golden qrels over its golden set", {"g.jsonl": GOLDEN}, "golden qrels {tmp}/g.jsonl -o {tmp}/g.jsonl", NEVER),
    ("golden import over a BEIR folder's corpus", {"b/corpus.jsonl": '{"_id": "d1", "text": "chain oil"}\n',
                                                   "b/queries.jsonl": '{"_id": "q1", "text": "oil?"}\n',
                                                   "b/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n"},
     "golden import {tmp}/b -o {tmp}/b/corpus.jsonl", "is an input of this command"),  # the import reads only the others
    ("corpus chunk into its documents folder", {"d/a.txt": "Chain oil keeps the chain quiet."},
     "corpus chunk {tmp}/d -o {tmp}/d/corpus.jsonl", "inside the documents folder"),  # its next run chunked the corpus in place
    ("an output over an input through a folder not made yet", {"g.jsonl": GOLDEN},
     "golden qrels {tmp}/g.jsonl -o {tmp}/new/../g.jsonl", "is an input of this command"),
    ("golden split over its golden set", {"g.jsonl": GOLDEN + GOLDEN.replace("q1", "q2")},
     "golden split {tmp}/g.jsonl -o {tmp} --names g,rest", "is an input of this command"),
    ("golden dedup report over its golden set", {"g.jsonl": GOLDEN}, "golden dedup {tmp}/g.jsonl --report {tmp}/g.jsonl", NEVER),
    ("golden dedup over its golden set", {"g.jsonl": GOLDEN}, "golden dedup {tmp}/g.jsonl --apply -o {tmp}/g.jsonl", NEVER),
    ("golden pick over its corpus", {"g.jsonl": GOLDEN, "c.jsonl": CORPUS},
     "golden pick --golden {tmp}/g.jsonl --corpus {tmp}/c.jsonl -o {tmp}/c.jsonl", NEVER),
    ("a rerank of a run of other queries", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN, "r.run": "q9 Q0 a#0 1 1.0 r\n"},
     "retrieve --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --run {tmp}/r.run --rerank dense --no-cache -o {tmp}/o.run",
     "run r: nothing to rerank: its queries (e.g. 'q9') are none of the golden set's"),  # wrote 0 rows, exit 0
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
    ("CSV row of one cell", {"g.csv": "query,answer\nx\n"}, "golden import {tmp}/g.csv -o {tmp}/out.jsonl",
     "g.csv:2: 1 cell, but the header has 2 columns"),
    # ---- limits named with their variable
    ("a JSONL line over SEMREL_MAX_LINE_MB", {"j.jsonl": '{"x": "' + "y" * (2 << 20) + '"}\n'}, "label {tmp}/j.jsonl -o {tmp}/o.qrels",
     "SEMREL_MAX_LINE_MB"),
    ("a pool line over SEMREL_MAX_LINE_MB", {"c.jsonl": CORPUS, "g.jsonl": GOLDEN,
                                             "p.tsv": "query_id\tchunk_id\tsources\nq1\t" + "y" * (2 << 20) + "\tbm25\n"},
     "judge --corpus {tmp}/c.jsonl --golden {tmp}/g.jsonl --pool {tmp}/p.tsv --no-cache -o {tmp}/o.jsonl", "SEMREL_MAX_LINE_MB"),
    ("a document over SEMREL_MAX_DOCUMENT_MB", {"d.txt": "word " * (1 << 20)}, "corpus chunk {tmp}/d.txt -o {tmp}/o.jsonl",
     "SEMREL_MAX_DOCUMENT_MB"),
]
SMALL_LIMITS = {"a JSONL line over SEMREL_MAX_LINE_MB": {"SEMREL_MAX_LINE_MB": "1"},
                "a pool line over SEMREL_MAX_LINE_MB": {"SEMREL_MAX_LINE_MB": "1"},
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
    assert len(lines[0]) < 2100, lines[0][:300]
    assert expected in lines[0] + result.stdout, lines[0]  # validate lists its problems on stdout
    assert "\x1b" not in result.stderr + result.stdout  # an escape in the input is shown, not sent to the terminal
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before  # nothing written, not even a temp file
    assert not changed  # and no input touched (a newer review database stays as it was)


def test_docs_safety_shows_the_line_a_misplaced_file_gives(tmp_path, monkeypatch):
    """docs/safety.md quotes the error for judgments given where qrels go; it had lost the line's fields."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judgments.jsonl").write_text(JUDGMENTS.replace('"source": "gold"', '"source": "gold", "p": 0.9, "features": {}'))
    (tmp_path / "r.run").write_text(RUN)
    line = assert_one_error(run("eval", "judgments.jsonl", "r.run"), "this file looks like judgments")
    assert line in (Path(__file__).resolve().parents[2] / "docs" / "safety.md").read_text(encoding="utf-8")


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


# ---------------------------------------------------------------- fenced: devices, FIFOs, bombs, full disks, terminals
# Each runs `semrel` in a subprocess under an address-space limit (3 GB unless said), a timeout,
# and where it matters a file-size limit (tests/catalogue.py).

BASE = {"q": QRELS, "r.run": RUN, "g.jsonl": GOLDEN, "c.jsonl": CORPUS, "j.jsonl": JUDGMENTS, "l.qrels": LABELS,
        "g.csv": GOLDEN_CSV_TEXT}
# (what, the special file's name, the command line)
SPECIAL_INPUTS = [
    ("eval: the run", "x.run", ["eval", "q", "x.run"]),
    ("eval: the qrels", "x.qrels", ["eval", "x.qrels", "r.run"]),
    ("pool: a run", "x.run", ["pool", "x.run", "--golden", "g.jsonl", "-o", "p.tsv"]),
    ("golden import --format csv", "x.csv", ["golden", "import", "x.csv", "--format", "csv", "-o", "o.jsonl"]),
    ("golden import: a JSONL golden set", "x.jsonl", ["golden", "import", "x.jsonl", "-o", "o.jsonl"]),
    ("label: the judgments", "x.jsonl", ["label", "x.jsonl", "-o", "o.qrels"]),
    ("corpus chunk: a document", "x.txt", ["corpus", "chunk", "x.txt", "-o", "o.jsonl"]),
    ("judge: the pool", "x.tsv", ["judge", "--corpus", "c.jsonl", "--golden", "g.jsonl", "--pool", "x.tsv", "--no-cache", "-o", "o.jsonl"]),
    ("review stats: the database", "x.db", ["review", "stats", "--db", "x.db"]),
    ("run: the config", "x.toml", ["run", "x.toml"]),
]


def prepare(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())


@pytest.mark.parametrize("kind", ["a link to /dev/zero", "a FIFO"])
@pytest.mark.parametrize("what,name,args", SPECIAL_INPUTS, ids=[c[0] for c in SPECIAL_INPUTS])
def test_devices_and_fifos_are_refused_before_they_are_read(tmp_path, kind, what, name, args):
    prepare(tmp_path, BASE)
    if kind == "a FIFO":
        os.mkfifo(tmp_path / name)  # opening it for reading would block until a writer comes: never, here
    else:
        os.symlink("/dev/zero", tmp_path / name)  # read, it never ends: past 6 GB before the fix
    before = digests(tmp_path)
    outcome = fenced(args, tmp_path, timeout=60)
    line = refused_cleanly(f"{what} is {kind}", outcome, before, digests(tmp_path), name)
    assert ("FIFO" if kind == "a FIFO" else "character device") in line
    assert outcome.rss_mb < 400


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    """gzip files that expand to 1 GB: of zeros (4.7 MB at level 1, the size reported) and of newlines."""
    folder = tmp_path_factory.mktemp("bombs")
    made = {}
    for name, byte, level in (("zeros", b"\0", 1), ("newlines", b"\n", 9)):
        path = made[name] = folder / f"{name}.gz"
        block = byte * (1 << 20)
        with gzip.open(path, "wb", compresslevel=level) as out:
            for _ in range(1024):
                out.write(block)
    return made


BOMB_INPUTS = [
    ("eval: gzip qrels", "b.qrels.gz", ["eval", "b.qrels.gz", "r.run"]),
    ("eval: a gzip run", "b.run.gz", ["eval", "q", "b.run.gz"]),
    ("label: gzip judgments", "b.jsonl.gz", ["label", "b.jsonl.gz", "-o", "o.qrels"]),
    ("golden import: a gzip CSV", "b.csv.gz", ["golden", "import", "b.csv.gz", "-o", "o.jsonl"]),
    ("pool: a gzip golden set", "b.jsonl.gz", ["pool", "r.run", "--golden", "b.jsonl.gz", "-o", "p.tsv"]),
    ("corpus chunk: gzip JSONL documents", "b.jsonl.gz", ["corpus", "chunk", "b.jsonl.gz", "-o", "o.jsonl"]),
]
BOMB_PEAKS: dict[str, float] = {}


@pytest.mark.slow
@pytest.mark.parametrize("bomb", ["zeros", "newlines"])
@pytest.mark.parametrize("what,name,args", BOMB_INPUTS, ids=[c[0] for c in BOMB_INPUTS])
def test_decompression_bombs_are_refused_within_memory(tmp_path, bombs, bomb, what, name, args):
    prepare(tmp_path, BASE)
    shutil.copy(bombs[bomb], tmp_path / name)
    before = digests(tmp_path)
    outcome = fenced(args, tmp_path, memory_gb=3, timeout=120)
    refused_cleanly(f"{what}: a 1 GB gzip bomb of {bomb}", outcome, before, digests(tmp_path), name, "SEMREL_MAX_GZIP_RATIO")
    BOMB_PEAKS[f"{what} ({bomb})"] = outcome.rss_mb
    print(f"{what}, 1 GB of {bomb} in {os.path.getsize(tmp_path / name) / 2**20:.1f} MB of gzip: peak RSS {outcome.rss_mb:.0f} MB")
    assert outcome.rss_mb < 400  # was 2.2 GB for eval before the fix


def test_a_gzip_that_expands_a_lot_but_is_small_is_read(tmp_path):
    """The ratio limit starts at 4 MB: a small, very regular file (ratio ~ 300) is fine."""
    prepare(tmp_path, BASE)
    with gzip.open(tmp_path / "j.jsonl.gz", "wt") as out:
        for i in range(20_000):
            out.write(JUDGMENTS.replace('"q1"', f'"q{i}"'))
    outcome = fenced(["label", "j.jsonl.gz", "-o", "o.qrels"], tmp_path)
    TALLY.record("a small, very compressible gzip", refused=False, traceback="Traceback" in outcome.stderr)
    assert outcome.code == 0, outcome.stderr
    assert (tmp_path / "o.qrels").read_text().count("\n") == 20_000


MANY_JUDGMENTS = "".join(JUDGMENTS.replace('"q1"', f'"q{i}"') for i in range(20_000))
MANY_QUERIES = "query,answer\n" + "".join(f"question {i},answer {i}\n" for i in range(20_000))
MANY_DOCS = "".join(json.dumps({"id": f"d{i}", "text": "Chain oil keeps the chain quiet. " * 20}) + "\n" for i in range(500))
FULL_DISK = [
    ("label", {"j.jsonl": MANY_JUDGMENTS}, ["label", "j.jsonl", "-o", "out"]),
    ("golden import", {"g.csv": MANY_QUERIES}, ["golden", "import", "g.csv", "-o", "out"]),
    ("corpus chunk", {"d.jsonl": MANY_DOCS}, ["corpus", "chunk", "d.jsonl", "--size", "20", "-o", "out"]),
    ("eval to a file through stdout", {}, ["label", "j.jsonl", "-o", "out"]),
]


@pytest.mark.parametrize("what,files,args", FULL_DISK[:3], ids=[c[0] for c in FULL_DISK[:3]])
@pytest.mark.parametrize("existing", [False, True], ids=["new output", "output already there"])
def test_a_full_disk_is_one_line_and_keeps_the_old_output(tmp_path, what, files, args, existing):
    """A disk that fills up mid-write, as a file-size limit (RLIMIT_FSIZE: 64 KB) makes it: the
    error is one line, the temp file is gone, an earlier output is kept as it was."""
    prepare(tmp_path, {**BASE, **files})
    if existing:
        (tmp_path / "out").write_text("the previous output\n")
    before = digests(tmp_path)
    outcome = fenced(args, tmp_path, file_bytes=64 * 1024)
    refused_cleanly(f"{what}: disk full ({'replacing' if existing else 'new'})", outcome, before, digests(tmp_path),
                    "out: cannot write", "the old file is kept" if existing else "no file was made")


def test_read_only_file_systems_and_failed_writes_are_one_line(tmp_path, cli, monkeypatch):
    """Failures a test cannot make for real here (it runs as root, with no read-only mount):
    the operating system's errors, injected where they occur."""
    import semrel.formats.files as files

    (tmp_path / "j.jsonl").write_text(JUDGMENTS)
    injected = [
        ("read-only file system", "tempfile.mkstemp", OSError(errno.EROFS, os.strerror(errno.EROFS)), "read-only file system"),
        ("disk full at fsync", "os.fsync", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "no space left on device"),
        ("quota exceeded", "os.replace", OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)), "disk quota exceeded"),
        ("I/O error", "os.fsync", OSError(errno.EIO, os.strerror(errno.EIO)), "Input/output error"),
    ]
    for name, target, error, expected in injected:
        def fail(*args, error=error, **kwargs):
            raise error

        with monkeypatch.context() as patch:
            patch.setattr(target.replace("tempfile.", "semrel.formats.files.tempfile.").replace("os.", "semrel.formats.files.os."),
                          fail)
            before = digests(tmp_path)
            result = cli("label", f"{tmp_path}/j.jsonl", "-o", f"{tmp_path}/out.qrels")
        TALLY.record(name, refused=True, traceback="Traceback" in result.output, modified=digests(tmp_path) != before)
        assert_one_error(result, "out.qrels: cannot write", expected)
        assert digests(tmp_path) == before, name
    assert files.WRITE_ERRNOS >= {errno.EROFS, errno.ENOSPC}


@pytest.mark.parametrize("args", [["eval", "q", "r.run", "-m", "AP"], ["label", "j.jsonl", "-o", "-"],
                                  ["golden", "qrels", "g.jsonl", "-o", "-"]],
                         ids=["eval", "label -o -", "golden qrels -o -"])
def test_stdout_on_a_full_device_is_one_line(tmp_path, args):
    prepare(tmp_path, BASE)
    before = digests(tmp_path)
    with open("/dev/full", "wb") as full:
        outcome = fenced(args, tmp_path, stdout=full.fileno())
    refused_cleanly(f"{args[0]}: stdout is /dev/full", outcome, before, digests(tmp_path), "No space left on device")


@pytest.mark.parametrize("locale", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}],
                         ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
def test_data_on_stdout_is_utf8_whatever_the_locale(tmp_path, locale):
    """`-o -` writes the bytes the file would hold: under an ASCII locale an id outside ASCII was a UnicodeEncodeError traceback."""
    prepare(tmp_path, {"g.jsonl": GOLDEN.replace("q1", "brémse-ü").replace("a#0", "wörter#0")})
    outcome = fenced(["golden", "qrels", "g.jsonl", "-o", "-"], tmp_path, env=locale)
    assert (outcome.code, outcome.stdout, outcome.stderr) == (0, "brémse-ü 0 wörter#0 1\n", "1 judgment -> -")


@pytest.mark.parametrize("args", [["golden", "stats", "g.jsonl"], ["golden", "qrels", "g.jsonl", "-o", "-"]])
def test_a_closed_stdout_is_one_line_and_a_file_output_still_works(tmp_path, args):
    """`semrel ... >&-`: results dropped without a word, then an AttributeError traceback at the final flush."""
    prepare(tmp_path, BASE)
    command = [sys.executable, "-m", "semrel", *args]
    closed = subprocess.run(command, cwd=tmp_path, env=ENV, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: os.close(1))
    assert (closed.returncode, closed.stderr) == (1, "semrel: error: stdout: closed (the command was started with >&-), "
                                                     "so its results had nowhere to go\n")
    to_file = subprocess.run([sys.executable, "-m", "semrel", "golden", "qrels", "g.jsonl", "-o", "q.qrels"], cwd=tmp_path, env=ENV,
                             stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert (to_file.returncode, (tmp_path / "q.qrels").read_text()) == (0, "q1 0 a#0 1\n"), to_file.stderr


def test_runs_in_a_folder_named_outside_ascii_are_scored_under_an_ascii_locale(tmp_path):
    """LC_ALL=C: Python holds the name's other bytes as surrogates, and Arrow's reader (which takes a UTF-8 name) was a traceback."""
    folder = tmp_path / "dür"
    folder.mkdir()
    prepare(folder, BASE)
    outcome = fenced(["eval", "dür/q", "dür/r.run", "-m", "AP"], tmp_path, env={"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""})
    assert (outcome.code, outcome.stdout.split()) == (0, ["measure", "r", "-------", "------", "AP", "1.0000"]), outcome.stderr


def test_a_pdf_that_is_not_one_is_one_line(tmp_path):
    """pypdf logs its repair notes ('invalid pdf header', 'EOF marker not found'); in a process of its own
    (pytest captures logging in this one) they must not come before the error line."""
    prepare(tmp_path, {"bad.pdf": bytes(range(256)) * 8})
    before = digests(tmp_path)
    outcome = fenced(["corpus", "chunk", "bad.pdf", "-o", "out.jsonl"], tmp_path)
    refused_cleanly("a PDF that is not one", outcome, before, digests(tmp_path), "bad.pdf: not a readable PDF")
    assert outcome.stderr.count("\n") == 0, outcome.stderr


def test_a_closed_pipe_stops_quietly(tmp_path):
    """`semrel eval ... | head`: once the reader is gone, semrel stops without a word (exit 141,
    as a tool stopped by SIGPIPE), and without 'Exception ignored' noise at exit."""
    prepare(tmp_path, BASE)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        outcome = fenced(["eval", "q", "r.run", "-q", "-m", "AP"], tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    TALLY.record("stdout is a closed pipe", refused=True, traceback="Traceback" in outcome.stderr or "Exception" in outcome.stderr)
    assert outcome.code == 141 and outcome.stderr == "", outcome.stderr


@pytest.mark.slow
def test_a_closed_pipe_stops_the_terminal_review_as_any_command(tmp_path):
    """`semrel review start ... | head`: rich's console exits 1 on a broken pipe, which read as a failure; the
    review stops as every command does, exit 141 and not a word."""
    prepare(tmp_path, {"r.db": REVIEW_DB})
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        outcome = fenced(["review", "start", "--db", "r.db", "--reviewer", "bob", "--no-highlight"], tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    assert outcome.code == 141 and outcome.stderr == "", (outcome.code, outcome.stderr)


@pytest.mark.slow
def test_running_out_of_memory_is_one_line(tmp_path):
    """A document too large for the memory there is (a 600 MB address-space limit for a 150 MB document)."""
    line = "Chain oil keeps the chain quiet and the brakes need pads. " * 40 + "\n"
    with open(tmp_path / "big.txt", "w", encoding="ascii") as out:
        out.write(line * (150 * 2**20 // len(line)))
    before = digests(tmp_path)
    outcome = fenced(["corpus", "chunk", "big.txt", "-o", "c.jsonl"], tmp_path, memory_gb=0.5, timeout=300)
    refused_cleanly("a document larger than the memory", outcome, before, digests(tmp_path), "out of memory")


def test_a_host_to_serve_on_that_does_not_exist_is_one_line(tmp_path):
    prepare(tmp_path, {"r.db": REVIEW_DB})
    before = digests(tmp_path)
    outcome = fenced(["review", "serve", "--db", "r.db", "--host", "999.1.1.1", "--port", "0"], tmp_path, timeout=60)
    after = {k: v for k, v in digests(tmp_path).items() if not k.endswith(("-wal", "-shm"))}  # SQLite's own, opening it
    refused_cleanly("review serve --host 999.1.1.1", outcome, before, after, "cannot listen on 999.1.1.1")


ESCAPES = "\x1b]0;TITLE\x07\x1b[2J\x1b]52;c;aGk=\x07\x00"
RLO = "\u202e"


def shows_no_control(text: str) -> bool:
    return not any(c in text for c in ("\x1b", "\x07", "\x00", RLO))


def test_escape_sequences_in_the_data_never_reach_the_terminal(tmp_path):
    """A chunk, a query, a query id, a reviewer name and a file name holding escape sequences
    (window title, clear screen, clipboard write, NUL) and a right-to-left override: every one is
    shown as visible escapes by review start, review stats, eval -q and the error line."""
    corpus = json.dumps({"_id": "a#0", "text": f"chain {ESCAPES} oil photo{RLO}gnp.exe", "doc_id": "a", "start": 0, "end": 9})
    golden = json.dumps({"query_id": "q1", "query": f"oil{ESCAPES}?", "reference_answer": "chain oil", "gold_chunk_ids": ["a#0"]})
    prepare(tmp_path, {**BASE, "c.jsonl": corpus + "\n", "g.jsonl": golden + "\n",
                       "eq": f"q\x1b]0;T\x07{RLO}1 0 d1 1\n", "er.run": f"q\x1b]0;T\x07{RLO}1 Q0 d1 1 0.9 r\n"})
    queue = ["--judgments", "j.jsonl", "--labels", "l.qrels", "--corpus", "c.jsonl", "--golden", "g.jsonl", "--thresholds", "0.7",
             "--no-highlight"]
    keys = tmp_path / "keys"
    keys.write_text("q")
    with open(keys, "rb") as stdin:
        review = fenced(["review", "start", "--db", "r.db", "--reviewer", "ann", *queue], tmp_path, stdin=stdin.fileno())
    assert review.code == 0 and "chain \\x1b]0;TITLE\\x07\\x1b[2J" in review.stdout and "photo\\u202egnp.exe" in review.stdout
    with sqlite3.connect(tmp_path / "r.db") as conn:  # a name from before names were checked at login
        conn.execute("INSERT INTO reviewers (name, created) VALUES (?, 0)", (f"eve{ESCAPES}{RLO}",))
    conn.close()
    stats = fenced(["review", "stats", "--db", "r.db"], tmp_path)
    assert stats.code == 0 and "eve\\x1b]0;TITLE" in stats.stdout
    per_query = fenced(["eval", "eq", "er.run", "-q", "-m", "P@1"], tmp_path)
    assert per_query.code == 0 and "q\\x1b]0;T\\x07\\u202e1" in per_query.stdout
    missing = fenced(["eval", f"no{ESCAPES.rstrip(chr(0))}such", "r.run"], tmp_path)  # (a NUL cannot be in an argument)
    assert missing.code == 1 and "no\\x1b]0;TITLE" in missing.stderr
    for name, outcome in (("review start", review), ("review stats", stats), ("eval -q", per_query), ("error line", missing)):
        TALLY.record(f"escape sequences through {name}", refused=name == "error line", traceback="Traceback" in outcome.stderr)
        assert shows_no_control(outcome.stdout + outcome.stderr), name


@pytest.mark.parametrize("error, expected", [
    (PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/data/q"), "semrel: error: /data/q: Permission denied"),
    (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "semrel: error: stdout: No space left on device"),
    (OSError(errno.ENOMEM, os.strerror(errno.ENOMEM)), "semrel: error: Cannot allocate memory"),
], ids=["a file's", "stdout's", "no file's"])
def test_an_os_error_no_library_call_turned_into_a_message_is_one_line_and_exit_1(tmp_path, cli, monkeypatch, error, expected):
    """The group's last net: an OSError names its file (a full disk without one, stdout's), exit 1 as other bad data."""
    import semrel.cli.evaluate as evaluate

    def fail(*args, **kwargs):
        raise error

    prepare(tmp_path, BASE)
    monkeypatch.setattr(evaluate, "evaluate_files", fail)
    result = cli("eval", f"{tmp_path}/q", f"{tmp_path}/r.run")
    assert assert_one_error(result, code=1) == expected and result.stdout == ""


def test_a_bad_option_names_the_help_of_the_command_it_was_given_to(tmp_path, cli):
    prepare(tmp_path, BASE)
    result = cli("eval", f"{tmp_path}/q", f"{tmp_path}/r.run", "--places", "99")
    line = assert_one_error(result, code=2)
    assert line.startswith("semrel: error: Invalid value for '--places'") and line.endswith(" eval --help')"), line  # 'semrel eval'
    line = assert_one_error(cli("golden", "qrels", "--colour"), code=2)
    assert line.startswith("semrel: error: No such option") and "--colour" in line and line.endswith(" golden qrels --help')"), line


@pytest.mark.parametrize("error, expected", [
    (RecursionError(), "semrel: error: an input is nested too deeply to read"),
    (MemoryError(), "semrel: error: out of memory: the inputs need more memory than this machine has"),
], ids=["recursion", "memory"])
def test_an_input_too_deep_or_too_large_for_any_check_is_one_line_and_exit_1(tmp_path, cli, monkeypatch, error, expected):
    import semrel.cli.evaluate as evaluate

    def fail(*args, **kwargs):
        raise error

    prepare(tmp_path, BASE)
    monkeypatch.setattr(evaluate, "evaluate_files", fail)
    assert assert_one_error(cli("eval", f"{tmp_path}/q", f"{tmp_path}/r.run"), code=1).startswith(expected)


@pytest.mark.parametrize("args, expected", [
    (["eval", "q", "r.run", "-M", "0"], "Invalid value for '-M' / '--depth': 0 is not in the range x>=1"),
    (["review", "stats"], "Missing option '--db'"),
], ids=["eval -M 0", "review stats without --db"])
def test_usage_errors_are_one_line_and_exit_2(tmp_path, cli, monkeypatch, args, expected):
    prepare(tmp_path, BASE)
    monkeypatch.chdir(tmp_path)
    assert_one_error(cli(*args), expected, code=2)


@pytest.mark.parametrize("group", [[], ["golden"], ["review"], ["corpus"]], ids=["semrel", "golden", "review", "corpus"])
def test_a_group_without_its_command_shows_its_help_as_semrel_alone_does(cli, group):
    """`semrel golden` printed its help as an error ('semrel: error: Usage: ...', ending '(see ... --help)')."""
    result = cli(*group)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"Usage: {' '.join(['main', *group])} [OPTIONS] COMMAND [ARGS]...")
    assert "error" not in result.stderr and "--help')" not in result.stderr, result.stderr
