"""Progress lines on stderr: redrawn in place on a terminal, printed every 10 s or more in a log."""

from __future__ import annotations

import io

import semrel.progress as progress
from helpers import recorder


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

