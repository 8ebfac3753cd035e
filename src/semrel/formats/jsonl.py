"""JSON Lines: one object per line, read with line numbers for errors, written atomically; and JSON output
that stays valid JSON."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterable, Sequence

import jsonlines

from ..errors import FormatError
from .files import UTF8_BOM, atomic_writer, content_ends, display_name, read_lines, read_text

MAX_DEPTH = 100  # nesting of JSON and TOML inputs: semrel's files need a handful of levels
# a string left open runs to the end of the text: were its closing quote required, each quote after an
# escaped one would start another scan to the end (quadratic: 64 KiB of \" took 12 s); a TOML one runs to its line's end
_JSON_SKIP = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"?')
_TOML_SKIP = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|\'[^\'\n]*\'|#[^\n]*')
_BRACKETS = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def finite(value: Any) -> Any:
    """`value` with NaN and infinities (an undefined kappa, interval or z-score) as null: JSON has no NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def json_text(value: Any, indent: int | None = 2) -> str:
    return json.dumps(finite(value), indent=indent, allow_nan=False)


def too_deep(text: str, toml: bool = False, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects (tables) in JSON (or TOML) text nest deeper than `limit`, found
    without parsing: strings and comments are left out, then brackets counted (text with fewer
    brackets than `limit` is not scanned at all)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKETS.finditer((_TOML_SKIP if toml else _JSON_SKIP).sub('""', text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > limit:
            return True
    return False


def check_nesting(text: str, path: str | os.PathLike, line: int | None = None, toml: bool = False) -> None:
    """Refuse, before parsing, JSON or TOML nested deeper than MAX_DEPTH (a parser would recurse
    into it until Python's stack gives out)."""
    if too_deep(text, toml):
        raise FormatError(display_name(path), f"nested more than {MAX_DEPTH} levels deep; semrel's inputs need only a few",
                          line=line)


def loads(text: str, path: str | os.PathLike, line: int | None = None,
          object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """json.loads with one FormatError (naming the file and line) for bad syntax or deep nesting; `object_pairs_hook` as
    json.loads takes it (one that raises FormatError has it passed on)."""
    check_nesting(text, path, line)
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
        if _SURROGATE_ESCAPE.search(text):  # a pair escaped as two (an emoji) is one character; one alone is no text
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except FormatError:
        raise
    except UnicodeEncodeError:
        raise FormatError(display_name(path), "holds a lone surrogate escape (\\ud800 to \\udfff without its pair), which is "
                          "not a character: write the character itself or drop the escape", line=line) from None
    except json.JSONDecodeError as exc:
        raise FormatError(display_name(path), f"invalid JSON ({exc.msg})", line=exc.lineno if line is None else line,
                          hint=_ended_early(text, line is not None)) from None
    except ValueError:  # Python reads no integer of more digits (reading one costs time quadratic in its length)
        raise FormatError(display_name(path), f"holds a number of more than {sys.get_int_max_str_digits():,} digits, which no "
                          "semrel field takes", line=line) from None
    except RecursionError:
        raise FormatError(display_name(path), "nested too deeply to read", line=line) from None


def _ended_early(text: str, one_line: bool) -> str | None:
    """What to do where the text stops inside its JSON (a string, object or list left open at its end): the last line of
    a file cut short (a copy or write that stopped) said only "Expecting ',' delimiter". Read on the error's path only."""
    depth, quoted, escaped = 0, False, False
    for char in text:
        if quoted:
            escaped, quoted = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    if not (quoted or depth > 0):
        return None
    if one_line:
        return ("the line ends with an object, list or string left open: a file cut short by a copy or write that stopped, "
                "or a record spread over several lines, where JSON Lines holds one a line?")
    return "the text ends with an object, list or string left open: a file cut short by a copy or write that stopped?"


def load_json(path: str | os.PathLike) -> Any:
    """A whole JSON document; a syntax error names its line, and so does a key given twice in one object (JSON keeps
    the last: PubMedQA's records, keyed by PMID, lost one without a word)."""
    text = read_text(path)
    return loads(text, path, object_pairs_hook=lambda pairs: _unique_keys(pairs, path, text))


def _unique_keys(pairs: list[tuple[str, Any]], path: str | os.PathLike, text: str) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):  # a key given twice: which one (counted, not each key against those before it)
        twice = next(key for key, times in Counter(key for key, _ in pairs).items() if times > 1)
        quoted = json.dumps(twice)
        at = text.find(quoted, text.find(quoted) + 1)  # its second place, as near as text search tells
        line = text.count("\n", 0, at) + 1 if at >= 0 else None
        raise FormatError(display_name(path), f"the key {twice!r} is given twice in one object, and JSON keeps only the last: "
                          "give each record its own key", line=line)
    return value


def read_jsonl(path: str | os.PathLike) -> Generator[tuple[int, dict[str, Any]], None, int]:
    """(line number, object) for each non-empty line; anything but a JSON object is an error. Returns the file's lines,
    blank ones too (what the next shard of a split is numbered on from: see shards.split_records)."""
    # Only "\n" ends a line: JSON strings may hold U+2028 and other characters splitlines() breaks at.
    number = 0
    for number, line in read_lines(path):
        if line.strip():
            yield number, json_object(line, path, number)
    return number


def json_object(line: str, path: str | os.PathLike, number: int) -> dict[str, Any]:
    """One line of a JSON Lines file, which must hold a JSON object; errors name the file and line
    (invalid JSON and nesting too deep included: see loads)."""
    value = loads(line, path, number)
    if not isinstance(value, dict):
        raise FormatError(display_name(path), f"expected a JSON object, found {type(value).__name__}", line=number)
    return value


def require(obj: dict[str, Any], key: str, path: str | os.PathLike, line: int, kind: type | tuple = str) -> Any:
    """obj[key], which must exist and be of `kind`; otherwise a FormatError naming the line."""
    if key not in obj:  # the fields it has show the shape it came in (LangChain's page_content where text is read)
        has = ", ".join(list(obj)[:8]) + (f" and {len(obj) - 8} more" if len(obj) > 8 else "") if obj else "none"
        raise FormatError(display_name(path), f"missing field {key!r} (the line has: {has})", line=line)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FormatError(display_name(path), f"field {key!r} should be {names}, found {type(value).__name__}", line=line)
    return value


def optional_text(obj: dict[str, Any], key: str, path: str | os.PathLike, line: int) -> str:
    """obj[key] as text ("" when absent or null); a number is its digits, anything else (an object, a list, true)
    a FormatError naming the line, not Python's rendering of it ("{'x': 1}") taken as text."""
    value = obj.get(key)
    return "" if value is None else str(require(obj, key, path, line, (str, int, float)))


_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]*")


def _past_blank(line: str, at: int) -> int:
    found = _BLANK.match(line, at)  # always matches (perhaps nothing)
    return found.end() if found else at


def with_field(line: str, key: str, value: Any) -> str:
    """`line` (one JSON object, as json_object read it) with its top-level `key` set to `value` and every other byte as
    it was: a rewrite that changes one field leaves the rest of the line alone (1.50, 1E5, "\\u00e9" and a number of more
    digits than a float holds were written back as 1.5, 100000.0, "é" and a rounded value). A key given twice has its
    last value (the one json keeps) replaced; a key not there is added at the end."""
    compact = '": ' not in line
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None)
    at = _past_blank(line, line.index("{") + 1)
    span, first = None, True
    while line[at] != "}":
        name, at = _DECODER.raw_decode(line, at)
        start = _past_blank(line, _past_blank(line, at) + 1)  # past the ':'
        at = _DECODER.raw_decode(line, start)[1]
        span = (start, at) if name == key else span
        at = _past_blank(line, at)
        at = _past_blank(line, at + 1) if line[at] == "," else at
        first = False
    if span is None:
        entry = json.dumps(key, ensure_ascii=False) + (":" if compact else ": ") + text
        return line[:at] + ("" if first else "," if compact else ", ") + entry + line[at:]
    return line[: span[0]] + text + line[span[1] :]


@dataclass(frozen=True)
class JsonlText:
    """A JSON Lines file's text as read, to write back with its object lines changed and every other byte as it was:
    blank lines (spaces only too), a UTF-8 byte-order mark, a last line without its newline (a CRLF line keeps its CR, as
    read_lines gives it). `golden pick` rewrote its golden set from the object lines alone, and lost the rest."""

    lines: tuple[str, ...]  # every line as read_lines gives it, blank ones included
    bom: bool = False
    newline_at_end: bool = True

    @classmethod
    def read(cls, path: str | os.PathLike) -> JsonlText:
        """The file's lines, each that is not blank checked to hold a JSON object (json_object)."""
        lines = tuple(line for number, line in read_lines(path) if not line.strip() or json_object(line, path, number) is not None)
        return cls(lines, *content_ends(path))

    def objects(self) -> list[str]:
        """The object lines, in order (read_jsonl's)."""
        return [line for line in self.lines if line.strip()]

    def text(self, objects: Sequence[str]) -> str:
        """The file's text with its object lines, in order, replaced by `objects`."""
        if len(objects) != len(self.objects()):
            raise ValueError(f"{len(objects)} object lines given for {len(self.objects())}")
        given = iter(objects)
        body = "\n".join(next(given) if line.strip() else line for line in self.lines)
        return (UTF8_BOM.decode() if self.bom else "") + body + ("\n" if self.newline_at_end and self.lines else "")


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | os.PathLike, first: str | os.PathLike | None = None) -> int:
    """Write rows atomically, after the lines of the file `first` as they are (one read line at a time: a fill extends
    judgments of a million rows so without holding them); returns how many rows were written."""
    count = 0
    with atomic_writer(path) as out:
        if first is not None:
            out.writelines(f"{line}\n" for _, line in read_lines(first))
        with jsonlines.Writer(out, compact=True, sort_keys=False) as writer:
            for row in rows:
                writer.write(row)
                count += 1
    return count
