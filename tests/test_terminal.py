"""Text made safe for a terminal: controls and bidi overrides shown as visible escapes, long messages cut in the middle."""

from __future__ import annotations

import io

import click
import pytest

from semrel.terminal import SafeStream, agreeing, brief, is_printable_name, quantity, safe, safe_offsets, unfiltered


def test_every_control_and_bidi_override_is_shown_escaped_and_the_rest_kept():
    assert safe("a\r\nb\tc\nd") == "a\nb\tc\nd"  # a Windows line end is the newline alone; tabs and newlines stay
    assert safe("\x00\x08\x0b\x0c\r\x1b\x1f\x7f\x80\x9b\x9f") == r"\x00\x08\x0b\x0c\x0d\x1b\x1f\x7f\x80\x9b\x9f"
    assert safe("\u202a\u202d\u202e\u2066\u2069") == r"\u202a\u202d\u202e\u2066\u2069"
    kept = "é ü \xa0 ÿ \u200e\u200f\u061c שלום \u2029 \u206a"  # the bidi marks cannot reorder a run
    assert safe(kept) == kept


def test_a_long_message_keeps_its_start_and_end():
    exact = "x" * 2000
    assert brief(exact) == exact
    text = "".join(f"{i:05d}" for i in range(700))  # 3500 characters: 1333 kept at the start, 666 at the end
    assert brief(text) == text[:1333] + " [... 1,501 characters left out ...] " + text[-666:]


def test_offsets_into_the_safe_text_follow_every_escape():
    shown, offsets = safe_offsets("a\r\nb\x1bc")
    assert shown == "a\nb\\x1bc"
    assert offsets == [0, 1, 1, 2, 3, 7, 8]  # both characters of \r\n are its newline; the end maps to the end
    assert safe_offsets("ab") == ("ab", [0, 1, 2])


def test_a_name_to_show_is_printable_and_not_empty():
    assert is_printable_name("Ann Lee") and is_printable_name("שלום")
    assert not any(is_printable_name(name) for name in ("", "a\x1bb", "a\u202eb", "a\nb"))


class Recorded(io.StringIO):
    def __init__(self):
        super().__init__()
        self.flushed = ""

    def flush(self):
        self.flushed = self.getvalue()


def test_the_safe_stream_writes_safe_text_and_counts_what_it_was_given():
    out = Recorded()
    stream = SafeStream(SafeStream(out))
    assert stream.write("a\x1b[2J") == 5 and out.getvalue() == "a\\x1b[2J"
    stream.writelines(["b\n", "\u202e"])
    stream.flush()
    assert out.flushed == "a\\x1b[2Jb\n\\u202e"
    assert unfiltered(stream) is out and unfiltered(out) is out
    with pytest.raises(TypeError, match="must be str, not bytes"):
        stream.write(b"")


def test_under_an_ascii_locale_click_writes_through_the_filter_in_utf8(monkeypatch):
    """LC_ALL=C: click took a stream whose encoding is ASCII for a misconfigured one and wrote to its buffer, past the
    filter: a file name's escape sequence reached the terminal. Text the stream cannot encode goes out as UTF-8."""
    raw = io.BytesIO()
    ascii_stdout = io.TextIOWrapper(raw, encoding="ascii", errors="surrogateescape", write_through=True)
    monkeypatch.setattr("sys.stdout", SafeStream(ascii_stdout))
    click.echo("x\x1b]0;pwn\x07.jsonl: as recorded")
    click.echo("données/\udcff: input missing")
    assert raw.getvalue() == b"x\\x1b]0;pwn\\x07.jsonl: as recorded\ndonn\xc3\xa9es/\\udcff: input missing\n"


def test_under_an_ascii_locale_a_name_is_shown_alike_on_stdout_and_stderr():
    """LC_ALL=C: Python holds a name's 'é' as two surrogates; stdout (surrogateescape) wrote its bytes, stderr
    (backslashreplace) escaped them as '\\udcc3\\udca9' and a real 'é' as '\\xe9'. Both write the UTF-8 now, and an
    undecodable byte as a visible escape."""
    for errors in ("surrogateescape", "backslashreplace"):
        raw = io.BytesIO()
        stream = SafeStream(io.TextIOWrapper(raw, encoding="ascii", errors=errors, write_through=True))
        stream.write("donn\udcc3\udca9es/\udcff: no file; é\n")
        assert raw.getvalue() == b"donn\xc3\xa9es/\\udcff: no file; \xc3\xa9\n", errors


@pytest.mark.parametrize("n, noun, verb, said", [
    (1, "query", None, "1 query"), (0, "query", None, "0 queries"), (2, "day", None, "2 days"), (1_204, "pair", None, "1,204 pairs"),
    (3, "match", None, "3 matches"), (2, "box", None, "2 boxes"), (1, "pair", "have", "1 pair has"), (2, "pair", "have", "2 pairs have"),
    (1, "query", "are", "1 query is"), (1, "answer", "were", "1 answer was"), (1, "chunk", "hold", "1 chunk holds"),
    (5, "chunk", "hold", "5 chunks hold"), (1, "judged pair", "lie", "1 judged pair lies"),
])
def test_a_count_agrees_with_its_noun_and_verb(n, noun, verb, said):
    """Messages count things that are often 1 on small inputs: "1 queries" read as a bug."""
    assert quantity(n, noun, verb) == said


def test_a_verb_agrees_with_a_count_given_apart_from_it():
    assert [agreeing(n, "have") for n in (0, 1, 2)] == ["have", "has", "have"]
    assert [agreeing(1, verb) for verb in ("are", "do", "count", "read")] == ["is", "does", "counts", "reads"]
