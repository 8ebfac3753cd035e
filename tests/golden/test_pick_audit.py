"""Defects an audit found in `golden pick`, each pinned by a test that failed before its fix: a resume wrote
the journal's gold chunks over a later hand edit of the golden set, and re-encoded the whole corpus every time."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import semrel.encoding.vectors
import semrel.retrieval.retrieve
from helpers import assert_one_error, ok, read_lines, run
from semrel.formats.corpus import read_golden
from semrel.golden.pick import open_pick_session
from small_corpus import write_corpus, write_golden

DATA = Path(__file__).resolve().parents[2] / "data"


def gold(path) -> dict[str, tuple[str, ...]]:
    return {i.query_id: i.gold_chunk_ids for i in read_golden(path)}


def hand_edit(path: Path, query_id: str, chunk_ids: list[str]) -> None:
    """A person's correction: one query's gold chunks changed in an editor, every other line left as it was."""
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if json.loads(line)["query_id"] == query_id)
    lines[at] = json.dumps({**json.loads(lines[at]), "gold_chunk_ids": chunk_ids}) + "\n"
    path.write_text("".join(lines))


# ---------------------------------------------------------------- a hand edit after picking is kept, and said

@pytest.fixture
def demo(tmp_path):
    """The audit's reproduction: the demo docs chunked, and the demo golden set without chain-oil's and chain-wear's gold."""
    corpus, golden_csv, golden = tmp_path / "corpus.jsonl", tmp_path / "golden.csv", tmp_path / "golden.jsonl"
    ok("corpus", "chunk", DATA / "docs", "--size", "120", "--overlap", "20", "-o", corpus)
    with open(DATA / "golden.csv", newline="", encoding="utf-8") as source:
        rows = list(csv.DictReader(source))
    for row in rows:
        if row["query_id"] in ("chain-oil", "chain-wear"):
            row["gold_chunk_ids"] = ""
    with open(golden_csv, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ok("golden", "import", golden_csv, "--corpus", corpus, "-o", golden)
    return corpus, golden


def pick(corpus, golden, keys, *extra, candidates=1):
    return ok("golden", "pick", "--golden", golden, "--corpus", corpus, "--candidates", candidates, *extra, input=keys)


def test_a_hand_edit_after_picking_is_kept_on_resume_and_the_pick_stays_undoable(demo):
    corpus, golden = demo
    pick(corpus, golden, "1n")
    assert gold(golden)["chain-oil"] == ("chain-care#2",)
    hand_edit(golden, "chain-oil", ["chain-care#1"])
    edited = golden.read_bytes()

    resumed = pick(corpus, golden, "q")
    assert gold(golden)["chain-oil"] == ("chain-care#1",) and golden.read_bytes() == edited
    assert "no changes; " in resumed.stdout and "1 done, 0 skipped, 1 open" in resumed.stdout
    assert (f"semrel: warning: query 'chain-oil': {golden} was edited since pick wrote it; kept its gold chunks "
            "chain-care#1 over the journal's chain-care#2 (u brings those back)") in resumed.stderr

    pick(corpus, golden, "n")  # the next action journals the edit before itself
    assert (gold(golden)["chain-oil"], gold(golden)["chain-wear"]) == (("chain-care#1",), ())
    actions = [(e["action"], e["query_id"]) for e in read_lines(f"{golden}.pick.jsonl")]
    assert actions[2:] == [("edit", "chain-oil"), ("next", "chain-wear")]
    assert "warning" not in pick(corpus, golden, "q").stderr  # in step with its journal now

    session = open_pick_session(str(golden), str(corpus), per_method=1)  # no query is open: undo from Python
    assert session.undo().action == "next" and session.undo().action == "edit"
    assert gold(golden)["chain-oil"] == ("chain-care#2",)  # the pick was kept in the journal all along


GOLDEN = [
    ("q1", "why does sourdough bread rise slowly", "wild yeast ferments the dough", []),
    ("q2", "which chess piece is the most powerful", "the queen", []),
]


@pytest.fixture
def small(tmp_path):
    return write_corpus(tmp_path / "corpus.jsonl"), write_golden(tmp_path / "golden.jsonl", GOLDEN)


def test_a_crash_before_the_rewrite_is_still_made_up_from_the_journal(small, tmp_path):
    corpus, golden = small
    pick(corpus, golden, "1", candidates=2)
    kept = {p: p.read_bytes() for p in (golden, tmp_path / "golden.jsonl.manifest.json")}
    pick(corpus, golden, "2", candidates=2)
    assert gold(golden)["q1"] == ("bread#0", "rain#0")
    for path, data in kept.items():  # the golden set and its manifest as they were before the second key's rewrite
        path.write_bytes(data)
    assert gold(golden)["q1"] == ("bread#0",)
    resumed = pick(corpus, golden, "q", candidates=2)
    assert gold(golden)["q1"] == ("bread#0", "rain#0") and "warning" not in resumed.stderr


def test_a_hand_edit_of_another_output_is_kept_and_its_chunks_checked(small, tmp_path):
    corpus, golden = small
    out = tmp_path / "picked.jsonl"
    pick(corpus, golden, "1n", "-o", out)
    hand_edit(out, "q1", ["rain#0"])
    resumed = pick(corpus, golden, "q", "-o", out)
    assert "kept its gold chunks rain#0 over the journal's bread#0" in resumed.stderr and gold(out)["q1"] == ("rain#0",)
    hand_edit(out, "q1", ["nowhere#3"])
    result = run("golden", "pick", "--golden", golden, "--corpus", corpus, "-o", out, input="q")
    assert_one_error(result, "picked.jsonl: 1 gold chunk ids are not in the corpus", "'nowhere#3'")


# ---------------------------------------------------------------- a resume takes the chunk vectors from the store

@pytest.fixture
def encoded(monkeypatch):
    """The number of texts the encoder is given, chunks and queries alike, wherever it is called from."""
    counted: list[int] = []
    for module in (semrel.encoding.vectors, semrel.retrieval.retrieve):
        real = module.sentence_embeddings

        def counting(texts, *args, real=real, **kwargs):
            counted.append(len(texts))
            return real(texts, *args, **kwargs)

        monkeypatch.setattr(module, "sentence_embeddings", counting)
    return counted


@pytest.mark.parametrize("options", [(), ("--cache", "{tmp}/cache")])
def test_a_resume_encodes_no_chunk(small, tmp_path, encoded, options):
    corpus, golden = small
    options = tuple(o.format(tmp=tmp_path) for o in options)
    pick(corpus, golden, "1n", *options)
    encoded.clear()
    pick(corpus, golden, "q", *options)
    assert sum(encoded) == 1  # the one query shown; its six candidate chunks' vectors come from the store
    if options:
        assert [p.name for p in (tmp_path / "cache" / "vectors").iterdir()]


def test_no_cache_encodes_in_memory_and_writes_no_store(small, tmp_path, encoded):
    corpus, golden = small
    pick(corpus, golden, "q", "--cache", tmp_path / "cache", "--no-cache")
    assert sum(encoded) == 6 + 1 and not (tmp_path / "cache").exists()
