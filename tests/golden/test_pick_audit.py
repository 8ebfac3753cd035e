"""Defects an audit found in `golden pick`, each pinned by a test that failed before its fix: a resume wrote
the journal's gold chunks over a later hand edit of the golden set, and re-encoded the whole corpus every time.
A review of that fix found more: a golden set imported again was taken for a hand edit (every pick undone), so
was a key whose rewrite a crash cut short, a hand edit of `-o`'s file was written over for queries never picked
(or after the next open), and opening needed the model and a writable cache even when nothing was to pick."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import semrel.encoding.vectors
import semrel.retrieval.retrieve
from helpers import SecondWriter, assert_one_error, fifo_writer, ok, read_lines, run
from semrel.errors import SemrelError
from semrel.formats.corpus import read_golden
from semrel.formats.files import file_digest
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


def test_a_golden_set_imported_again_gets_the_journal_replayed_onto_it(demo, tmp_path):
    """`semrel run --force import` (or `golden import` again) writes the imported gold, without the picks, and a
    current manifest of its own: no hand edit, so the journal is replayed onto it and every pick is back."""
    corpus, golden = demo
    pick(corpus, golden, "1n")
    ok("golden", "import", tmp_path / "golden.csv", "--corpus", corpus, "-o", golden)
    assert gold(golden)["chain-oil"] == ()
    resumed = pick(corpus, golden, "q")
    assert "warning" not in resumed.stderr and f"saved {golden}: 1 done, 0 skipped, 1 open" in resumed.stdout
    assert gold(golden)["chain-oil"] == ("chain-care#2",)
    assert [e["action"] for e in read_lines(f"{golden}.pick.jsonl")] == ["toggle", "next"]


@pytest.mark.parametrize("earlier, key, picked", [("", "1", ("bread#0",)), ("1", "2", ("bread#0", "rain#0"))],
                         ids=["the first key: no manifest yet", "a later key: the new manifest, the old file"])
def test_a_key_whose_rewrite_a_crash_cut_short_is_made_up_not_taken_for_an_edit(small, tmp_path, earlier, key, picked):
    """The journal's line is fsynced, then the rewrite is cut short: the golden set holds the state before that
    key, beside the manifest it had (none before pick's first rewrite) or, after a hard kill between the two
    renames, the manifest of the rewrite. Either way the key is made up, with no warning."""
    corpus, golden = small
    if earlier:
        pick(corpus, golden, earlier, candidates=2)
    kept = golden.read_bytes()
    pick(corpus, golden, key, candidates=2)
    golden.write_bytes(kept)
    if not earlier:
        (tmp_path / "golden.jsonl.manifest.json").unlink()
    resumed = pick(corpus, golden, "q", candidates=2)
    assert "warning" not in resumed.stderr and "saved " in resumed.stdout and gold(golden)["q1"] == picked


def test_a_key_cut_short_after_a_kept_edit_is_made_up_and_the_edit_kept(small):
    """The key that journals a kept hand edit with itself: a crash before its rewrite loses only the key."""
    corpus, golden = small
    pick(corpus, golden, "1n")
    hand_edit(golden, "q1", ["rain#0"])
    kept = golden.read_bytes()
    pick(corpus, golden, "1")  # journals the edit of q1, then marks q2's first candidate
    assert gold(golden) == {"q1": ("rain#0",), "q2": ("chess#0",)}
    golden.write_bytes(kept)
    resumed = pick(corpus, golden, "q")
    assert "warning" not in resumed.stderr and gold(golden) == {"q1": ("rain#0",), "q2": ("chess#0",)}


@pytest.mark.parametrize("manifest", ["stale", "removed"])
def test_a_hand_edit_of_the_output_is_kept_for_every_query_and_nothing_written_before_it_is_journaled(
        small, tmp_path, manifest):
    """With -o the states come from --golden: a query never picked was written over on opening, with no word;
    and that rewrite named the journal, so the next opening took the kept edits for a lag and wrote over them."""
    corpus, golden = small
    out = tmp_path / "picked.jsonl"
    pick(corpus, golden, "1n", "-o", out)
    hand_edit(out, "q1", ["rain#0"])  # picked, then corrected
    hand_edit(out, "q2", ["chess#0"])  # never picked
    if manifest == "removed":
        (tmp_path / "picked.jsonl.manifest.json").unlink()
    files = {p: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("picked")}
    for _ in range(2):  # opening and quitting writes nothing, and says so each time
        resumed = pick(corpus, golden, "q", "-o", out)
        assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("picked")} == files
        assert "no changes; " in resumed.stdout
        warnings = [line for line in resumed.stderr.splitlines() if "warning" in line]
        assert warnings == [
            f"semrel: warning: query 'q1': {out} was edited since pick wrote it; kept its gold chunks rain#0 over "
            "the journal's bread#0 (u brings those back)",
            f"semrel: warning: query 'q2': {out} was edited since pick wrote it; kept its gold chunks chess#0 over "
            f"{golden}'s none (u brings those back)"]
    assert " [1]* chess#0" in resumed.stdout  # q2 is still open, the edit's chunk marked
    pick(corpus, golden, "n", "-o", out)  # journals both edits, then accepts q2
    assert gold(out) == {"q1": ("rain#0",), "q2": ("chess#0",)}
    assert "warning" not in pick(corpus, golden, "q", "-o", out).stderr
    session = open_pick_session(str(golden), str(corpus), str(out), per_method=1)
    assert [session.undo().action for _ in range(3)] == ["next", "edit", "edit"]
    assert gold(out) == {"q1": ("bread#0",), "q2": ()}


@pytest.mark.parametrize("option", [("--model", "{tmp}/no-model"), ("--cache", "{tmp}/corpus.jsonl/cache")])
def test_a_session_with_nothing_to_pick_opens_without_the_model_or_the_cache(small, tmp_path, option):
    """The vector store is opened with the indexes, when candidates are first needed: not to close a finished
    session, nor to make up a crash's lag."""
    corpus, golden = small
    option = tuple(o.format(tmp=tmp_path) for o in option)
    pick(corpus, golden, "1n1")
    kept = golden.read_bytes()
    pick(corpus, golden, "s")  # the last query skipped, its mark dropped: nothing left to pick
    assert "no changes; " in pick(corpus, golden, "q", *option).stdout
    golden.write_bytes(kept)  # and the skip's rewrite lost to a crash
    resumed = pick(corpus, golden, "q", *option)
    assert "saved " in resumed.stdout and gold(golden) == {"q1": ("bread#0",), "q2": ()}


def test_a_hand_edit_of_another_output_is_kept_and_its_chunks_checked(small, tmp_path):
    corpus, golden = small
    out = tmp_path / "picked.jsonl"
    pick(corpus, golden, "1n", "-o", out)
    hand_edit(out, "q1", ["rain#0"])
    resumed = pick(corpus, golden, "q", "-o", out)
    assert "kept its gold chunks rain#0 over the journal's bread#0" in resumed.stderr and gold(out)["q1"] == ("rain#0",)
    hand_edit(out, "q1", ["nowhere#3"])
    result = run("golden", "pick", "--golden", golden, "--corpus", corpus, "-o", out, input="q")
    assert_one_error(result, "picked.jsonl: 1 gold chunk id is not in the corpus", "'nowhere#3'")


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
    assert encoded == [1]  # the one query left open; its candidate chunks' vectors come from the store
    if options:
        assert [p.name for p in (tmp_path / "cache" / "vectors").iterdir()]


def test_no_cache_encodes_in_memory_and_writes_no_store(small, tmp_path, encoded, monkeypatch):
    """--no-cache beats a cache folder from the environment (--cache typed beside it is refused: it was ignored)."""
    corpus, golden = small
    monkeypatch.setenv("SEMREL_GOLDEN_PICK_CACHE_DIR", str(tmp_path / "cache"))
    refused = run("golden", "pick", "--golden", golden, "--corpus", corpus, "--cache", tmp_path / "cache", "--no-cache", input="q")
    assert refused.exit_code == 2 and refused.stderr == "semrel: error: give --cache or --no-cache, not both\n"
    pick(corpus, golden, "q", "--no-cache")
    assert encoded == [6, 2] and not (tmp_path / "cache").exists()  # the chunks, then the two open queries together


def test_a_hand_edit_of_another_fields_of_the_output_is_kept(small, tmp_path):
    """With -o every line was written back from --golden: a reference corrected in the output, or a field of
    the user's own added there, was lost at the next action."""
    corpus, golden = small
    out = tmp_path / "picked.jsonl"
    pick(corpus, golden, "1n", "-o", out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    lines[1] = {**lines[1], "reference_answer": "corrected by hand", "note": "mine"}
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    pick(corpus, golden, "1n", "-o", out)
    written = {row["query_id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert written["q2"]["reference_answer"] == "corrected by hand" and written["q2"]["note"] == "mine"
    assert written["q2"]["gold_chunk_ids"] and gold(out)["q1"] == ("bread#0",)


def test_a_resume_over_a_corpus_that_moved_a_picked_chunks_text_says_so(small):
    """Chunk ids are positions: rechunked after an edit, bread#0 held other text, and the journal replayed the pick onto it
    without a word. A toggle records its chunk's text key; a resume where a chunk still gold holds other text says so
    in one line. A journal from before the key replays as it did."""
    corpus, golden = small
    pick(corpus, golden, "1n")
    journal = Path(f"{golden}.pick.jsonl")
    toggle = read_lines(journal)[0]
    assert toggle["action"] == "toggle" and toggle["after"]["gold_chunk_ids"] == ["bread#0"] and len(toggle["text_key"]) == 32
    said = "other text in"
    assert said not in pick(corpus, golden, "q").stderr
    lines = corpus.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if json.loads(line)["_id"] == "bread#0")
    lines[at] = json.dumps({**json.loads(lines[at]), "text": "A note on ovens inserted above the bread."}) + "\n"
    corpus.write_text("".join(lines))
    moved = [line for line in pick(corpus, golden, "q").stderr.splitlines() if said in line]
    assert moved == [f"semrel: warning: 1 picked gold chunk holds other text in {corpus} than when picked (e.g. bread#0, gold for "
                     "query 'q1'): chunk ids are positions in their document, so an edited document moves text between them; check "
                     f"them and fix the ids in {golden} by hand (pick keeps a hand edit over its journal)"]
    journal.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "text_key"}) + "\n" for line in read_lines(journal)))
    old = pick(corpus, golden, "q")
    assert said not in old.stderr and gold(golden)["q1"] == ("bread#0",)


def test_a_chunk_picked_and_then_unpicked_is_not_said_to_hold_other_text(small):
    """Only chunks still gold are checked against the text they were picked with: one marked and unmarked again is no
    gold chunk of the query, and its text moving is nothing to warn of."""
    corpus, golden = small
    pick(corpus, golden, "11n")
    assert gold(golden)["q1"] == ()
    lines = corpus.read_text().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if json.loads(line)["_id"] == "bread#0")
    lines[at] = json.dumps({**json.loads(lines[at]), "text": "A note on ovens inserted above the bread."}) + "\n"
    corpus.write_text("".join(lines))
    assert "other text in" not in pick(corpus, golden, "q").stderr


def test_the_rewritten_golden_sets_manifest_names_the_journal_it_was_made_from(small):
    """The gold chunks of a picked golden set come from its journal as much as from --golden: the manifest names the
    journal, with the digest of the journal that holds them."""
    corpus, golden = small
    pick(corpus, golden, "1n")
    journal = Path(f"{golden}.pick.jsonl")
    inputs = {Path(i["path"]).name: i for i in json.loads(Path(f"{golden}.manifest.json").read_text())["inputs"]}
    assert inputs[journal.name]["sha256"] == file_digest(journal)["sha256"] and inputs[journal.name]["lines"] == 2


def test_an_output_that_cannot_be_read_is_left_as_it_is_when_a_session_opens(small, tmp_path):
    """-o's file broken since pick wrote it (an editor's half-saved line) may be a person's work: opening and quitting
    leaves it byte for byte, instead of writing the journal's golden set over it."""
    corpus, golden = small
    out = tmp_path / "picked.jsonl"
    pick(corpus, golden, "1n", "-o", out)
    out.write_text(out.read_text() + '{"query_id": "q3", "query": "half saved\n')
    broken = out.read_bytes()
    pick(corpus, golden, "q", "-o", out)
    assert out.read_bytes() == broken


def test_a_kept_hand_edit_is_journaled_once_with_the_next_action_not_with_every_action_after(small):
    """The edit is journaled with the first action after it; journaled again with each later one, a replay would hold
    it several times and `u` would have to be pressed as often to bring the pick back."""
    corpus, golden = small
    pick(corpus, golden, "1n")
    hand_edit(golden, "q1", ["rain#0"])
    pick(corpus, golden, "1n")
    actions = [(e["action"], e["query_id"]) for e in read_lines(f"{golden}.pick.jsonl")]
    assert actions == [("toggle", "q1"), ("next", "q1"), ("edit", "q1"), ("toggle", "q2"), ("next", "q2")]


def test_a_journal_that_is_a_fifo_is_refused_without_opening_it(small, tmp_path):
    """The journal's torn-tail check opened it with open(), which waits on a FIFO for a writer: the command hung before
    its first key. A writer polls here (never blocking), so the old code was served a line and went on to the same
    error; whether a reader ever opened the FIFO is what tells."""
    corpus, golden = small
    with fifo_writer(tmp_path / "golden.jsonl.pick.jsonl", b'{"action"') as opened:
        result = run("golden", "pick", "--golden", golden, "--corpus", corpus, "--no-cache", input="q")
    assert_one_error(result, f"{tmp_path / 'golden.jsonl.pick.jsonl'}: is a FIFO (named pipe), not a file")
    assert not opened


def test_a_pick_rewrites_only_the_picked_querys_gold_chunk_ids_every_other_byte_as_read(small):
    """The rewrite wrote every line through json: 1.50 and 1E5 came back as 1.5 and 100000.0, a number of more digits
    than a float holds rounded, an escape unescaped, and lines never picked spaced otherwise. Now the lines are written
    back as read, the picked query's gold_chunk_ids alone replaced in place."""
    corpus, golden = small
    lines = golden.read_text().splitlines()
    lines[0] = lines[0][:-1] + ', "w": 1.50, "e": 1E5, "p": 0.1000000000000000055511151231257827, "esc": "caf\\u00e9"}'
    lines[1] = '{"query_id":"q2", "query" : "which chess piece is the most powerful","gold_chunk_ids":[ ], "n":1.0}'
    golden.write_text("\n".join(lines) + "\n")
    pick(corpus, golden, "1n")
    picked = lines[0].replace('"gold_chunk_ids": []', '"gold_chunk_ids": ["bread#0"]')
    assert golden.read_text().splitlines() == [picked, *lines[1:]]


def test_a_second_pick_session_on_the_same_golden_set_is_refused_not_let_write_over_the_firsts_picks(small):
    """Two sessions on one golden set: the second, which read the file before the first picked, was shown the same query
    and its key wrote its own state over the first's pick (q1 ended with rain#0 alone; bread#0 lost without a word)."""
    corpus, golden = small
    first = open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False)
    second = open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False)
    assert first.toggle(1) == "bread#0" and first.next()
    with pytest.raises(SemrelError, match=r"golden.jsonl.pick.jsonl: changed since this pick session opened it"):
        second.toggle(2)
    assert gold(golden) == {"q1": ("bread#0",), "q2": ()}
    assert open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False).states["q1"].gold == ("bread#0",)


@pytest.mark.parametrize("bom, end", [(b"", b""), (b"\xef\xbb\xbf", b"\n\n")])
def test_a_pick_gives_back_blank_lines_crlf_lines_a_byte_order_mark_and_a_last_line_without_its_newline(small, bom, end):
    """The rewrite wrote the object lines alone, each with a newline: blank lines (first, between, of spaces, last) were
    dropped, a byte-order mark too, and a last line without its newline got one."""
    corpus, golden = small
    q1, q2 = golden.read_bytes().splitlines()
    golden.write_bytes(bom + b"\n" + q1 + b"\r\n\n   \n" + q2 + end)
    pick(corpus, golden, "1n")
    picked = q1.replace(b'"gold_chunk_ids": []', b'"gold_chunk_ids": ["bread#0"]')
    assert golden.read_bytes() == bom + b"\n" + picked + b"\r\n\n   \n" + q2 + end
    assert gold(golden) == {"q1": ("bread#0",), "q2": ()}


def test_two_pick_keys_in_the_same_instant_cannot_both_pass_the_check_the_second_waits_for_the_lock_and_is_refused(
        small, monkeypatch):
    """The journal check was no lock: a second session's key between the first's check and its rename passed the check
    too (the journal was not appended to yet), and the first's rewrite then dropped its pick from the golden set. Now the
    second waits for the first's lock (rewrite_lock) from check to rename, then sees the journal changed and is refused."""
    corpus, golden = small
    first = open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False)
    second = open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False)
    second.current()  # candidates found before the race: the thread only writes
    writer = SecondWriter(monkeypatch, lambda: second.toggle(2))
    check = first.check_alone

    def checked_then_the_other_key() -> None:
        check()
        writer.start()

    first.check_alone = checked_then_the_other_key  # type: ignore[method-assign]
    assert first.toggle(1) == "bread#0"
    refused = writer.outcome()
    assert isinstance(refused, SemrelError) and writer.waited
    assert "golden.jsonl.pick.jsonl: changed since this pick session opened it" in str(refused)
    assert gold(golden) == {"q1": ("bread#0",), "q2": ()}
    assert open_pick_session(str(golden), str(corpus), per_method=2, use_cache=False).states["q1"].gold == ("bread#0",)


def test_pick_into_a_folder_not_made_yet_makes_it(small, tmp_path):
    """`-o new/golden.jsonl`: the first key appended to the journal beside it before anything made the folder
    ('new/golden.jsonl.pick.jsonl: No such file or directory'); the lock taken first now makes it, as the write would."""
    corpus, golden = small
    output = tmp_path / "new" / "sub" / "golden.jsonl"
    pick(corpus, golden, "1n", "-o", output)
    assert gold(output) == {"q1": ("bread#0",), "q2": ()} and gold(golden) == {"q1": (), "q2": ()}


@pytest.mark.parametrize("content", [
    b"", b'{"a": 1}\n', b'{"a": 1}', b'{"a": 1}\n{"b"', b"x" * 70_000, b'{"a": 1}\n' * 9_000 + b'{"b": 2',
    b'{"a": 1}\n' * 3 + b"y" * 140_000, b"\n" * 65_536 + b"z",
])
def test_a_torn_journal_tail_is_found_from_the_end(tmp_path, content):
    """The journal is checked before every append; it was read whole each time. Read from its end, block by block, it
    must still find where the last complete line ends and how many lines end there, across 64 KiB blocks."""
    from semrel.golden.pick import _torn_tail

    (tmp_path / "j.jsonl").write_bytes(content)
    end = content.rfind(b"\n") + 1
    expected = None if not content or content.endswith(b"\n") else (end, content.count(b"\n"), content[end:])
    assert _torn_tail(str(tmp_path / "j.jsonl")) == expected
