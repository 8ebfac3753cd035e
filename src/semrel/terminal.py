"""Text made safe for a terminal: what semrel prints never drives the terminal that shows it.

Chunks, queries, ids, file names and reviewer names come from files and people. Printed as they
are, an escape sequence in them can set the window title, clear the screen, write the clipboard
(OSC 52) or hide text; a right-to-left override shows "gnp.exe" as "exe.png". `safe(text)` turns
every such character into a visible escape (ESC becomes `\\x1b`, U+202E becomes `\\u202e`) and
leaves everything else, newlines and tabs included, as it is.

The CLI sends everything it prints through `SafeStream` (stdout and stderr, for the duration of
a command); the few writers that draw on the terminal on purpose (the progress line, the rich
review screen) write to `unfiltered(stream)` and pass their data through `safe` themselves.

`quantity` is how every message counts things ("1 query", "3 queries have").
"""

from __future__ import annotations

import re
from typing import Any, Iterable, TextIO

# C0 controls but tab and newline (a CR before a newline is part of a Windows line end, shown as
# the newline alone), DEL, C1 controls (0x9b is CSI on some terminals), and the Unicode bidi
# embeddings, overrides and isolates (the "Trojan Source" set; the bidi marks LRM, RLM and ALM,
# common in right-to-left text, cannot reorder a run and are left alone).
_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return "\n"
    code = ord(found)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def safe(text: str) -> str:
    """`text` with control characters, escape sequences and bidi controls shown as visible escapes."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


MESSAGE_CHARS = 2000


def brief(text: str) -> str:
    """A message cut in the middle past MESSAGE_CHARS, its start (file, line, what) and end (what to do) kept: an id or
    path of megabytes (a runaway line) made a line of megabytes on stderr."""
    if len(text) <= MESSAGE_CHARS:
        return text
    head, tail = MESSAGE_CHARS * 2 // 3, MESSAGE_CHARS // 3
    return f"{text[:head]} [... {len(text) - head - tail:,} characters left out ...] {text[-tail:]}"


_SINGULAR_VERBS = {"have": "has", "are": "is", "were": "was", "do": "does"}


def quantity(n: int, noun: str, verb: str | None = None) -> str:
    """'1 query', '0 queries', '1,204 pairs'; with a (plural) verb, the verb agreeing: '1 pair has', '3 pairs have'.
    Counts in messages are often 1 on small inputs, and "1 queries" reads as a bug."""
    words = [f"{n:,}", noun if n == 1 else _plural(noun)]
    return " ".join(words if verb is None else [*words, agreeing(n, verb)])


def agreeing(n: int, verb: str) -> str:
    """A plural verb ('have', 'lie') as it agrees with a count of n: 'has', 'lies' for 1."""
    return verb if n != 1 else _SINGULAR_VERBS.get(verb) or _plural(verb)


def _plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + "es" if word.endswith(("s", "x", "ch", "sh")) else word + "s"


def safe_offsets(text: str) -> tuple[str, list[int]]:
    """safe(text) and, for each offset 0..len(text) of `text`, its offset in the safe text (for
    styles laid over character ranges, such as the review's highlights)."""
    parts: list[str] = []
    offsets: list[int] = []
    done = shown = 0
    for match in _UNSAFE.finditer(text):
        offsets.extend(range(shown, shown + match.start() - done))
        shown += match.start() - done
        parts.append(text[done:match.start()])
        replacement = _escape(match)
        offsets.extend([shown] * len(match.group()))
        shown += len(replacement)
        parts.append(replacement)
        done = match.end()
    offsets.extend(range(shown, shown + len(text) - done + 1))
    parts.append(text[done:])
    return "".join(parts), offsets


def is_printable_name(name: str) -> bool:
    """A name fit to show anywhere: printable characters only (no controls, no bidi overrides)."""
    return bool(name) and name.isprintable()


class SafeStream:
    """A text stream that writes `safe(text)` to the stream it wraps (which stays reachable as
    `.unfiltered` for writers that draw on purpose, and as `.buffer` for binary data). Closing
    it, or dropping it, leaves the wrapped stream to its owner."""

    def __init__(self, stream: TextIO):
        self.unfiltered = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes streams with b"" to tell binary ones apart
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        shown = _spelled(safe(text))
        stream = self.unfiltered
        try:
            if not shown.isascii() and hasattr(stream, "buffer"):  # stderr escapes (backslashreplace) what stdout refuses
                shown.encode(getattr(stream, "encoding", None) or "utf-8")
            stream.write(shown)
        except UnicodeEncodeError:  # an ASCII locale (LC_ALL=C): UTF-8, a name's undecodable bytes as visible escapes
            stream.flush()
            stream.buffer.write(shown.encode("utf-8", "backslashreplace"))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.unfiltered.flush()

    def isatty(self) -> bool:
        return self.unfiltered.isatty()

    def fileno(self) -> int:
        return self.unfiltered.fileno()

    def writable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self.unfiltered.closed

    @property
    def encoding(self) -> str:
        """UTF-8 whatever the wrapped stream's: click wrote past this filter (escape sequences and all) straight to the
        buffer of a stream whose encoding is ASCII; write() writes UTF-8 where the wrapped stream cannot."""
        return "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self.unfiltered, "errors", None) or "strict"

    @property
    def buffer(self) -> Any:
        return self.unfiltered.buffer


_NAME_BYTES = re.compile("[\udc80-\udcff]+")


def _spelled(text: str) -> str:
    """`text` with the bytes Python holds as surrogates under an ASCII locale (a name's 'é' as two) read as UTF-8, as a
    UTF-8 locale shows them: stdout wrote the bytes, stderr escaped them, and an error line had 'donn??es'."""
    if _NAME_BYTES.search(text) is None:
        return text
    return _NAME_BYTES.sub(lambda m: bytes(ord(c) - 0xDC00 for c in m.group()).decode("utf-8", "surrogateescape"), text)


def unfiltered(stream: Any) -> Any:
    """The stream a SafeStream wraps (or `stream` itself): for writers that draw on purpose."""
    while isinstance(stream, SafeStream):
        stream = stream.unfiltered
    return stream
