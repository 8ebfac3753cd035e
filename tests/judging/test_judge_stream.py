"""The judge's corpus pass and checkpoint without the model: memory that does not grow with the
corpus, a baseline sample that depends on the seed only, and a checkpoint that keeps each row once."""

from __future__ import annotations

import gzip
import json
import os
import random
import tracemalloc

import numpy as np
import pytest

from semrel.errors import FormatError, SemrelError, UsageError
from semrel.formats.corpus import iter_corpus
from semrel.formats.files import MB, input_guard, note_input, read_lines, read_text
from semrel.judging.checkpoint import Checkpoint, pack, unpack
from semrel.judging.judge import baseline_sample, scan_corpus


def _corpus(path, size: int, order=None):
    rng = random.Random(1)
    words = "brake pad chain wheel tyre spoke gear cable rim hub valve lever".split()
    rows = [{"_id": f"c{i}", "text": " ".join(rng.choices(words, k=60))} for i in range(size)]
    rows = [rows[i] for i in order] if order else rows
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _peak(path, needed) -> int:
    tracemalloc.start()
    scan = scan_corpus(iter_corpus(path), needed, 50, 0, str(path), digest=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert set(scan.texts) == needed | {c for _, c in scan.candidates} and len(scan.candidates) == 50
    return peak


@pytest.mark.slow
def test_corpus_pass_keeps_only_what_the_work_needs(tmp_path):
    needed = {f"c{i}" for i in range(0, 300, 7)}
    small, large = _peak(_corpus(tmp_path / "small.jsonl", 3_000), needed), _peak(_corpus(tmp_path / "large.jsonl", 60_000), needed)
    assert large < 1.2 * small  # 20x the chunks, the same memory
    assert small < 2_000_000


def test_baseline_sample_depends_on_the_seed_not_the_corpus_order(tmp_path):
    forward = scan_corpus(iter_corpus(_corpus(tmp_path / "a.jsonl", 500)), set(), 40, 3, "a", False)
    backward = scan_corpus(iter_corpus(_corpus(tmp_path / "b.jsonl", 500, order=range(499, -1, -1))), set(), 40, 3, "b", False)
    other = scan_corpus(iter_corpus(tmp_path / "a.jsonl"), set(), 40, 4, "a", False)
    assert forward.candidates == backward.candidates != other.candidates
    queries = [f"q{k}" for k in range(5)]
    related = {(q, c) for q in queries for _, c in forward.candidates[:10]}
    sample = baseline_sample(forward.candidates, queries, related, 40, 3)
    assert sample == baseline_sample(backward.candidates, queries, related, 40, 3)
    assert len(sample) == len(set(sample)) == 40 and not set(sample) & related
    assert len({c for _, c in sample}) == 30  # one query each for the 30 unrelated candidates first
    small = baseline_sample(forward.candidates[:12], queries, related, 40, 3)  # 2 free chunks x 5 queries
    assert sorted(small) == sorted((q, c) for q in queries for _, c in forward.candidates[10:12])


def test_read_lines_streams_what_read_text_holds(tmp_path):
    text = 'first\r\n{"a": "x\u2028y"}\n\nlast'
    plain, packed = tmp_path / "p.txt", tmp_path / "p.txt.gz"
    plain.write_bytes(b"\xef\xbb\xbf" + text.encode())
    packed.write_bytes(gzip.compress(text.encode()))
    expected = list(enumerate(read_text(plain).split("\n"), start=1))
    assert list(read_lines(plain)) == list(read_lines(packed)) == expected and expected[0] == (1, "first\r")
    plain.write_bytes(b"ok\n\xff\n")
    with pytest.raises(FormatError, match=r":2: not valid UTF-8"):
        list(read_lines(plain))


def test_size_limits_take_an_input_exactly_at_the_limit_and_refuse_one_byte_more(tmp_path, monkeypatch):
    """SEMREL_MAX_LINE_MB and SEMREL_MAX_DOCUMENT_MB are the most that is read: a line or a file of exactly that many
    bytes is read whole (its newline not counted), one byte more is refused; 0 is no limit to set."""
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "1")
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "1")
    at, over = tmp_path / "at.txt", tmp_path / "over.txt"
    at.write_bytes(b"x" * MB + b"\n" + b"y" * MB)  # two lines at the line limit, the last without its newline
    assert [len(line) for _, line in read_lines(at)] == [MB, MB]
    over.write_bytes(b"x" * (MB + 1) + b"\n")
    with pytest.raises(FormatError, match=r"over.txt:1: the line is longer than the limit of 1 MB"):
        list(read_lines(over))
    at.write_bytes(b"x" * MB)
    assert len(read_text(at)) == MB
    over.write_bytes(b"x" * (MB + 1))
    with pytest.raises(FormatError, match=r"over.txt: the file is longer than the limit of 1 MB"):
        read_text(over)
    for bad in ("0", "-1", "inf", "many"):
        monkeypatch.setenv("SEMREL_MAX_LINE_MB", bad)
        with pytest.raises(UsageError, match=f"SEMREL_MAX_LINE_MB={bad!r}: expected a positive number"):
            list(read_lines(at))


def test_checkpoint_drops_a_torn_line_and_keeps_every_row_once(tmp_path):
    path = tmp_path / "run.partial"
    first = Checkpoint(path, "fp")
    first.append([{"i": 0}, {"i": 1}])
    first.close()
    with open(path, "a") as handle:
        handle.write('{"i": 2, "P"')  # killed mid-line
    again = Checkpoint(path, "fp")
    assert again.saved == 2 and list(again.rows()) == [{"i": 0}, {"i": 1}]
    again.append([{"i": 2}])
    again.close()
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"fingerprint": "fp"}, {"i": 0}, {"i": 1}, {"i": 2}]
    assert Checkpoint(path, "other").saved == 0 and list(Checkpoint(path, "other").rows()) == []


def test_a_last_row_whole_but_for_its_newline_is_not_counted_and_rows_after_it_stay_readable(tmp_path):
    """A kill between a row's closing brace and its newline leaves JSON that parses: counted as saved, the next row
    was appended onto its line, which no later resume could read, so every row after it was judged again."""
    path = tmp_path / "run.partial"
    first = Checkpoint(path, "fp")
    first.append([{"i": 0}])
    first.close()
    with open(path, "a") as handle:
        handle.write('{"i": 1}')
    again = Checkpoint(path, "fp")
    assert again.saved == 1 and list(again.rows()) == [{"i": 0}]
    again.append([{"i": 1}, {"i": 2}])
    again.close()
    assert Checkpoint(path, "fp").saved == 3
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"fingerprint": "fp"}, {"i": 0}, {"i": 1}, {"i": 2}]


def test_appended_rows_are_on_disk_before_the_checkpoint_is_closed(tmp_path):
    """A run killed before close() keeps every row it appended: each append is flushed, not left in Python's buffer."""
    path = tmp_path / "run.partial"
    checkpoint = Checkpoint(path, "fp")
    checkpoint.append([{"i": 0}, {"i": 1}])
    assert path.read_text() == '{"fingerprint": "fp"}\n{"i": 0}\n{"i": 1}\n'
    checkpoint.append([{"i": 2}])
    assert Checkpoint(path, "fp").saved == 3
    checkpoint.close()


def test_packed_scores_are_exact_and_damaged_text_is_refused():
    """pack keeps every bit of a float64; unpack refuses text that is not pack's base64 (a damaged row is scored again, never
    read as other numbers), so a character dropped into it is an error, not skipped."""
    values = np.array([0.1, 1 / 3, 2.0 ** -40])
    assert pack(values, "<f8") == "mpmZmZmZuT9VVVVVVVXVPwAAAAAAAHA9"
    assert np.array_equal(unpack(pack(values, "<f8"), "<f8"), values)
    with pytest.raises(ValueError):
        unpack("mpmZmZmZ*uT9VVVVVVVXVPwAAAAAAAHA9", "<f8")


@pytest.mark.parametrize("damaged", ["not json", "[1]", "3"])
def test_a_damaged_line_ends_the_saved_rows_and_goes_with_the_next_append(tmp_path, damaged):
    """A complete line that is not a JSON object (a damaged file) is where the reusable rows end: the rows after it are
    judged again, never read past it (rows() would have raised on it, and a list given to the judge as a row raised
    AttributeError) nor left in the file."""
    path = tmp_path / "run.partial"
    path.write_text(f'{{"fingerprint": "fp"}}\n{{"i": 0}}\n{damaged}\n{{"i": 2}}\n')
    again = Checkpoint(path, "fp")
    assert again.saved == 1 and list(again.rows()) == [{"i": 0}]
    again.append([{"i": 1}])
    again.close()
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"fingerprint": "fp"}, {"i": 0}, {"i": 1}]


def test_a_checkpoint_that_is_an_input_of_the_command_is_not_written(tmp_path):
    """A checkpoint of other settings is rewritten from its first byte: where the command read that file (a pool
    named like OUTPUT.partial), its first row would have destroyed the input."""
    path = tmp_path / "o.jsonl.partial"
    path.write_text("q1\tc1\tbm25\n")
    with input_guard():
        note_input(path)
        checkpoint = Checkpoint(path, "fp")
        with pytest.raises(SemrelError, match="o.jsonl.partial: is an input of this command; semrel never writes its checkpoint"):
            checkpoint.append([{"i": 0}])
    assert path.read_text() == "q1\tc1\tbm25\n"


@pytest.mark.parametrize("kind", ["FIFO", "link"])
def test_a_checkpoint_that_is_no_plain_file_is_refused_untouched(tmp_path, kind):
    """A FIFO hung the judge until killed; through a link, any file was rewritten as a checkpoint."""
    path, other = tmp_path / "o.jsonl.partial", tmp_path / "mine.jsonl"
    other.write_text("my data\n")
    if kind == "FIFO":
        os.mkfifo(path)
    else:
        path.symlink_to(other)
    with pytest.raises(SemrelError, match=f"o.jsonl.partial: the checkpoint of this output is a {kind}"):
        Checkpoint(path, "fp")
    assert other.read_text() == "my data\n"
