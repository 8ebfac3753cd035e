"""The pick session end to end through CliRunner keys, including quit, resume and undo across sessions."""

from __future__ import annotations

import json
import os
import signal

import pytest

from helpers import run
from semrel.encoding.models import describe_model, model_params
from semrel.formats.corpus import read_corpus, read_golden
from semrel.golden.pick import excerpt, open_pick_session
from semrel.retrieval import corpus as retrieval_corpus
from small_corpus import write_corpus, write_golden
from terminal_helpers import at_a_terminal

GOLDEN = [
    ("q1", "why does sourdough bread rise slowly", "wild yeast ferments the dough", []),
    ("q2", "which chess piece is the most powerful", "the queen", []),
    ("q4", "do cats purr", "when content", ["cats#0"]),
    ("q3", "how do volcanoes erupt", "molten rock and gas escape", []),
]


@pytest.fixture
def files(tmp_path):
    return write_corpus(tmp_path / "corpus.jsonl"), write_golden(tmp_path / "golden.jsonl", GOLDEN)


def pick(files, keys, *extra):
    corpus, golden = files
    result = run(*["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), "--candidates", "2", *extra],
                                input=keys)
    assert result.exit_code == 0, result.output
    return result.output


def gold(path) -> dict[str, tuple[str, ...]]:
    return {i.query_id: i.gold_chunk_ids for i in read_golden(path)}


def test_quit_and_resume_with_undo_across_sessions(files):
    corpus, golden = files
    journal = golden.parent / "golden.jsonl.pick.jsonl"
    first = pick(files, "122n1q")
    assert "Q: why does sourdough bread rise slowly" in first and "A: wild yeast ferments the dough" in first
    assert " [1]  bread#0  (bm25 #1, dense #1)" in first
    assert "marked bread#0; gold: bread#0" in first and "unmarked" in first
    assert "marked chess#0; gold: chess#0" in first
    assert "1 done, 0 skipped, 2 open; run the same command to resume" in first
    assert gold(golden) == {"q1": ("bread#0",), "q2": ("chess#0",), "q4": ("cats#0",), "q3": ()}
    assert len(journal.read_text().splitlines()) == 5

    second = pick(files, "uu")  # input ends (like a crash of the terminal): everything is still saved
    assert second.index("Q: which chess piece") < second.index("undid toggle of query q2")
    assert " [1]* chess#0" in second
    assert "undid next of query q1" in second
    assert gold(golden)["q2"] == () and gold(golden)["q1"] == ("bread#0",)

    third = pick(files, "ns1n")
    assert third.count("Q: ") == 3 and " [1]* bread#0" in third
    assert "2 done, 1 skipped, 0 open" in third
    assert gold(golden) == {"q1": ("bread#0",), "q2": (), "q4": ("cats#0",), "q3": ("volcano#0",)}
    assert len(journal.read_text().splitlines()) == 11
    manifest = json.loads((golden.parent / "golden.jsonl.manifest.json").read_text())
    assert manifest["rows"] == 4  # the model by its files too, as judge, split and dedup record it: not by name alone
    assert manifest["params"] == {"candidates_per_method": 2, **model_params(None)}
    assert manifest["params"]["model_fingerprint"] == describe_model(None).fingerprint

    last = pick(files, "")
    assert "Q: " not in last and "2 done, 1 skipped, 0 open" in last


def test_the_last_querys_skip_or_next_can_be_undone_then_and_in_a_later_session(files):
    """A skip of the last open query said 'u undoes' and ended pick at once, its marks dropped; a resume with nothing
    open quit before reading a key: neither u was ever read."""
    corpus, golden = files
    first = pick(files, "nn1su")
    assert "skipped q3: left without gold, marks dropped: volcano#0 (u undoes)" in first
    assert "undid skip of query q3" in first and first.count("Q: how do volcanoes erupt") == 2
    assert gold(golden)["q3"] == ("volcano#0",) and "2 done, 0 skipped, 1 open" in first
    pick(files, "n")
    later = pick(files, "u")
    assert "no query is left open: u undoes the last action, any other key quits" in later
    assert "undid next of query q3" in later and "2 done, 0 skipped, 1 open" in later
    assert gold(golden)["q3"] == ("volcano#0",)
    # the undo's save, in a session that opened with nothing to pick, still names the model by its files
    assert json.loads((golden.parent / "golden.jsonl.manifest.json").read_text())["params"]["model_fingerprint"] \
        == describe_model(None).fingerprint


def test_output_elsewhere_keeps_the_input_and_help_and_bad_keys_answer(files):
    corpus, golden = files
    before = golden.read_text()
    out = golden.parent / "picked.jsonl"
    text = pick(files, "?x9\u00b2u1q", "-o", str(out))
    assert "n next query" in text and "unknown key 'x'" in text and "no candidate 9" in text and "nothing to undo" in text
    assert "unknown key '\u00b2'" in text  # a digit, but not a candidate's number
    assert golden.read_text() == before
    assert gold(out)["q1"] == ("bread#0",)
    assert (golden.parent / "picked.jsonl.pick.jsonl").exists()


def test_session_state_survives_without_a_clean_exit(files):
    corpus, golden = files
    session = open_pick_session(str(golden), str(corpus), per_method=1)
    assert session.toggle(1) == "bread#0" and session.next()
    assert session.skip() and session.current().item.query_id == "q3"
    resumed = open_pick_session(str(golden), str(corpus), per_method=1)
    assert resumed.current().item.query_id == "q3"
    assert resumed.counts() == {"open": 1, "done": 1, "skipped": 1}
    assert resumed.undo().action == "skip" and resumed.current().item.query_id == "q2"


@pytest.mark.parametrize("cut", [5, 1])  # mid-line; or only the newline lost
def test_a_journal_whose_last_line_a_crash_cut_short_resumes(files, cut):
    """Every later session failed on the cut line ("invalid JSON (Unterminated string ...)"): the crash the journal exists
    to recover from. The cut action is dropped (it saved nothing: the journal is written first); a line lacking only
    its newline is whole and kept; the next action is appended after the last whole line."""
    corpus, golden = files
    journal = golden.parent / "golden.jsonl.pick.jsonl"
    session = open_pick_session(str(golden), str(corpus), per_method=1)
    assert session.toggle(1) == "bread#0" and session.next()
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-cut])
    resumed = open_pick_session(str(golden), str(corpus), per_method=1)
    assert resumed.current().item.query_id == ("q1" if cut > 1 else "q2")
    resumed.skip()
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [e["action"] for e in lines] == (["toggle", "skip"] if cut > 1 else ["toggle", "next", "skip"])


def test_candidates_over_the_cache_equal_those_found_in_memory_and_are_read_in_one_pass(files, tmp_path, monkeypatch):
    corpus, golden = files
    passes = []
    reads = retrieval_corpus.iter_corpus
    monkeypatch.setattr(retrieval_corpus, "iter_corpus", lambda path: passes.append(path) or reads(path))
    open_pick_session(str(golden), str(corpus), per_method=2, cache=tmp_path / "cache").current()  # fills the store
    passes.clear()
    cached = open_pick_session(str(golden), str(corpus), per_method=2, cache=tmp_path / "cache")
    memory = open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False)
    cached_finder, memory_finder = cached.finder.retrieval, memory.finder.retrieval
    assert cached_finder.corpus.path == str(corpus) and memory_finder.corpus.path is None  # ids and keys; all the chunks
    queries = [item.query for _, item in zip(range(3), cached.remaining)]
    found = [[(c.chunk, c.found_by) for c in cached_finder(q)] for q in queries]
    assert len(passes) == 1  # the open queries' candidates, searched together, fetched in one pass
    assert found == [[(c.chunk, c.found_by) for c in memory_finder(q)] for q in queries]
    assert found[0][0] == (read_corpus(corpus)[2], (("bm25", 1), ("dense", 1)))  # bread#0, as the keys test shows


@pytest.mark.parametrize("setup, extra, message", [
    (lambda g: g.with_name("golden.jsonl.pick.jsonl").write_text(
        '{"action": "toggle", "query_id": "zz", "before": {"gold_chunk_ids": [], "status": "open"},'
        ' "after": {"gold_chunk_ids": [], "status": "open"}}\n'), [], "golden.jsonl.pick.jsonl:1: query 'zz' is not in"),
    (lambda g: g.write_text('{"query_id": "q1", "query": "x", "gold_chunk_ids": ["nowhere#1"]}\n'), [],
     "1 gold chunk id is not in the corpus"),
    (lambda g: None, ["--candidates", "6"], "--candidates must be between 1 and 5"),
    (lambda g: g.with_name("golden.jsonl.pick.jsonl").write_text(  # made over another chunking
        '{"action": "toggle", "query_id": "q1", "before": {"gold_chunk_ids": [], "status": "open"},'
        ' "after": {"gold_chunk_ids": ["bread#7"], "status": "open"}}\n'), [],
     "golden.jsonl.pick.jsonl:1: chunk 'bread#7' is not in the corpus"),
])
def test_bad_input_is_one_line(files, setup, extra, message):
    corpus, golden = files
    setup(golden)
    result = run(*["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), *extra], input="q")
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1 and message in result.output, result.output


def test_a_query_whose_golden_set_names_its_document_is_offered_that_documents_chunks_first(tmp_path):
    """A golden set may name the document an answer is in but no chunk (`--doc-qrels answer-chunk` found none, or the
    gold was cleared); pick offered only what retrieval over the whole corpus found for the question. The document's
    chunks come first now, the likeliest to hold the answer leading ('document #1'), with what retrieval found after."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text("Clean the chain every month with a rag.\n\nOil the rollers, then wipe "
                                                 "the excess off.\n\nPump the tyres to the pressure on the sidewall.\n")
    assert run("corpus", "chunk", str(tmp_path / "docs"), "--size", "8", "--overlap", "0", "-o",
               str(tmp_path / "c.jsonl")).exit_code == 0
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"query_id": "q1", "query": "What goes on the chain?", "reference_answer": "Oil the rollers of the chain",
                                  "gold_chunk_ids": [], "meta": {"gold_documents": ["manual"]}}) + "\n")
    shown = run("golden", "pick", "--golden", str(golden), "--corpus", str(tmp_path / "c.jsonl"), "--candidates", "2",
                "--no-cache", input="q").output
    offered = [line.split()[1] for line in shown.splitlines() if line.startswith(" [")]
    assert offered[:2] == ["manual#1", "manual#0"] and " [1]  manual#1  (document #1" in shown  # 2 and 1 of its 5 word pairs


def test_excerpt_shows_the_part_of_a_long_chunk_that_holds_the_answer():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau"
    assert excerpt(text, "Kappa and lambda", 25) == "… theta iota kappa lambda …"
    assert excerpt(text, "tau", 25) == "… omicron pi rho sigma tau"
    assert excerpt(text, "nothing in common", 25) == "alpha beta gamma delta …"
    assert excerpt("short\n  text", "x", 25) == "short text"


@pytest.mark.slow
def test_keys_read_together_at_a_terminal_are_not_one_candidate_number(files):
    """At a terminal one raw read returns every byte waiting (a paste, or two keys pressed as one), and '01' passed the
    digit check whole: int('01') marked candidate 1, '10' the tenth, for what were two keys. Several characters are
    no key; the person presses them again."""
    corpus, golden = files
    code, shown = at_a_terminal(["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), "--candidates", "2"],
                                [b"01", b"q"], [b"? help", b"\n"])
    assert code == 0, shown[-500:]
    assert "unknown key '01'" in shown and "marked" not in shown
    assert gold(golden)["q1"] == () and not (golden.parent / "golden.jsonl.pick.jsonl").exists()


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/bin/bash") or not hasattr(signal, "SIGTSTP"), reason="needs a shell with job control")
def test_ctrl_z_at_a_terminal_stops_pick_until_fg_and_shows_the_query_again(files):
    """Raw mode reads Ctrl-Z as the byte 0x1a, not SIGTSTP: pick answered 'unknown key' and could not be stopped."""
    corpus, golden = files
    code, shown = at_a_terminal(["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), "--candidates", "2"],
                                [b"1", b"\x1a", b"q"], [b"? help", b"gold:", b"? help"], job_control=True)
    assert code == 0, shown[-500:]
    assert "Stopped" in shown and "unknown key" not in shown
    assert shown.count("Q: why does sourdough bread rise slowly") == 2  # shown again after fg
    assert gold(golden)["q1"] == ("bread#0",)


@pytest.mark.slow
def test_sigterm_while_pick_waits_for_a_key_ends_it_as_interrupted_with_its_marks_saved(files):
    """`kill` is no one's quit: pick took SIGTERM, raised in its wait for a key, as q and exited 0."""
    corpus, golden = files
    code, shown = at_a_terminal(["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), "--candidates", "2"],
                                [b"1", lambda fd: os.killpg(os.tcgetpgrp(fd), signal.SIGTERM)], [b"? help", b"gold:"])
    assert code == 130, shown[-500:]
    assert "semrel: error: interrupted" in shown
    assert gold(golden)["q1"] == ("bread#0",)


@pytest.mark.slow
def test_pick_wraps_its_lines_at_a_narrow_terminals_width(files):
    """Excerpts and help were wrapped at 100 columns whatever the window: a narrower terminal wrapped them again, the
    candidates' indent lost and the help run over."""
    corpus, golden = files
    code, shown = at_a_terminal(["golden", "pick", "--golden", str(golden), "--corpus", str(corpus), "--candidates", "2"],
                                [b"?", b"q"], [b"q quit", b"u undo"], size=(24, 60))
    assert code == 0, shown[-500:]
    screen = shown[shown.index("── query"):shown.index("no changes;")].replace("\r\n", "\n").split("\n")
    assert "      Sourdough bread rises slowly because wild yeast" in screen
    assert "keys: 1-9 and 0 mark or unmark a candidate (0 = the tenth)" in screen
    assert max(len(line) for line in screen) <= 60, shown
