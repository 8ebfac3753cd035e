"""Progress lines on stderr: redrawn in place on a terminal, printed every 10 s or more in a log."""

from __future__ import annotations

import io

import semrel.progress as progress
from helpers import recorder
from semrel.terminal import SafeStream


def test_a_log_does_not_get_the_last_line_twice(monkeypatch):
    """A batch that took longer than the interval printed its line, and closing printed the same line again."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    log = io.StringIO()
    line = progress.ProgressLine("encoding chunks", 31, log)
    now[0] = 12.0
    line.add(31)
    line.close()
    assert log.getvalue().splitlines() == ["semrel: encoding chunks: 31/31, 2.6/s"]
    line.add(1)  # a count the log has not seen yet is printed on closing
    line.close()
    assert log.getvalue().splitlines()[-1] == "semrel: encoding chunks: 32/31, 2.7/s"


def test_counted_passes_every_item_on_and_counts_them_in_a_few_advances():
    seen: list = []
    assert list(progress.counted(range(2500), recorder(seen), "reading c.jsonl")) == list(range(2500))
    assert seen == [("reading c.jsonl", None, [1000, 1000, 500])]



def test_work_of_unknown_size_says_nothing_when_done_before_its_first_line(monkeypatch):
    """A corpus pass counted without a total (progress.counted) printed its count on closing, however quick: every
    import against a small corpus gained a line before its one-line error. It speaks once it has run a while."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    quick, slow = io.StringIO(), io.StringIO()
    line = progress.ProgressLine("reading c.jsonl", None, quick)
    line.add(3)
    line.close()
    assert quick.getvalue() == ""
    line = progress.ProgressLine("reading c.jsonl", None, slow)
    now[0] = 11.0
    line.add(1000)
    now[0] = 12.0
    line.add(500)
    line.close()
    assert slow.getvalue().splitlines() == ["semrel: reading c.jsonl: 1000, 90.9/s", "semrel: reading c.jsonl: 1500, 125.0/s"]


def test_the_time_left_is_reckoned_from_the_first_advance(monkeypatch):
    """The judge's first lines counted its model's loading as judging: 10 s to load, then 100 pairs a second, gave
    166 minutes left at the first pair. No time left is shown until the pace since the first advance is known."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    log = io.StringIO()
    line = progress.ProgressLine("judging pairs", 3000, log)
    for second in range(10, 31):
        now[0] = float(second)
        line.add(1 if second == 10 else 100)  # the first pair once the model has loaded, then 100 a second
    assert log.getvalue().splitlines() == ["semrel: judging pairs: 1/3000, 0.1/s",
                                           "semrel: judging pairs: 1001/3000, 50.0/s, ETA 20s",
                                           "semrel: judging pairs: 2001/3000, 66.7/s, ETA 10s"]


class Terminal(io.StringIO):
    """A stream that says it is a terminal; what it shows is what was flushed."""

    def __init__(self):
        super().__init__()
        self.shown = ""

    def isatty(self):
        return True

    def flush(self):
        self.shown = self.getvalue()


class Log(Terminal):
    def isatty(self):
        return False


def test_the_time_left_is_rounded_to_whole_seconds_in_minutes_and_not_shown_once_done(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    log = Log()
    line = progress.ProgressLine("judging pairs", 697, log)
    line.add(1)
    now[0] = 10.0  # 100 more in 10 s: 596 left at 10 a second is 59.6 s
    line.add(100)
    assert log.shown.splitlines() == ["semrel: judging pairs: 101/697, 10.1/s, ETA 1m00s"]  # printed at once, not left in a buffer
    now[0] = 20.0
    line.add(596)
    line.close()
    assert log.shown.splitlines()[1:] == ["semrel: judging pairs: 697/697, 34.9/s"]  # nothing left: no time left shown


def test_a_terminal_gets_its_line_redrawn_in_place_and_ended_on_closing(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    terminal = Terminal()
    line = progress.ProgressLine("encoding chunks", 4, terminal)
    now[0] = 1.0  # a second: time for a terminal's line (a log's waits 10)
    line.add(2)
    assert terminal.shown == "\r\033[Ksemrel: encoding chunks: 2/4, 2.0/s"
    now[0] = 2.0  # a second since the first advance: the pace is known
    line.add(1)
    assert terminal.shown.split("\r\033[K")[2:] == ["semrel: encoding chunks: 3/4, 1.5/s, ETA 1s"]
    line.close()  # the count already shown is drawn again, with the newline that ends it
    assert terminal.shown.split("\r\033[K")[3:] == ["semrel: encoding chunks: 3/4, 1.5/s, ETA 1s\n"]


def test_the_line_draws_on_the_terminal_under_the_safe_stream_and_makes_its_label_safe(monkeypatch):
    """The CLI wraps stderr in a SafeStream: the line's own escapes reach the terminal, a label's are shown escaped."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    terminal = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", SafeStream(SafeStream(terminal)))
    line = progress.ProgressLine("reading \x1b]0;owned\x07c.jsonl", 200)
    line.show()
    now[0] = 1.0
    line.add(1)
    assert terminal.shown.split("\r\033[K")[1:] == ["semrel: reading \\x1b]0;owned\\x07c.jsonl: 0/200",
                                                     "semrel: reading \\x1b]0;owned\\x07c.jsonl: 1/200, 1.0/s"]


def test_a_step_of_a_hundred_items_shows_its_line_at_once_and_a_step_of_none_only_its_name(monkeypatch, capsys):
    monkeypatch.setattr(progress.time, "monotonic", lambda: 0.0)
    for total in (100, 99, 0):
        with progress.stderr_steps(f"step of {total}", total):
            if total:
                assert capsys.readouterr().err == ("semrel: step of 100: 0/100\n" if total == 100 else "")
    assert capsys.readouterr().err == "semrel: step of 99: 0/99\nsemrel: step of 0\n"  # a log gets its count once
