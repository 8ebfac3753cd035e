"""Which of semrel's files a file is, from its first line: a file given in another's place (judgments for qrels,
a CSV for a golden set, a run for a pool) fails on that line, and the error then says what the file looks like
and how the file wanted there is made, instead of only "invalid JSON" or "missing field 'query'"."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from ..errors import FormatError, ValidationError
from .columns import is_float
from .files import STDIO, display_name, read_head

HEAD = 65536
"""Bytes read to find the first line: a corpus line may be long, and its keys come first."""


@dataclass(frozen=True)
class Kind:
    name: str
    """As a sentence names it: "a TREC run"."""
    made_by: str
    """How a user gets one."""
    test: Callable[[str, str], bool]
    """(first line, head of the file) -> whether the file is of this kind."""


def _keys(*keys: str) -> Callable[[str, str], bool]:
    patterns = [re.compile(rf'^\s*{{.*"{re.escape(k)}"\s*:') for k in keys]
    return lambda line, head: all(p.search(line) for p in patterns)


def _columns(count: int, *numbers: int, more: bool = False) -> Callable[[str, str], bool]:
    """`count` whitespace-separated fields (or `more`), those at `numbers` numbers."""
    def test(line: str, head: str) -> bool:
        fields = line.split()
        return (len(fields) == count or more and len(fields) > count) and all(is_float(fields[i]) for i in numbers)
    return test


def _json_document(line: str, head: str) -> bool:
    return line.strip() in ("{", "[")


def _csv(line: str, head: str) -> bool:
    return "," in line and "\t" not in line and not line.lstrip().startswith(("{", "["))


JUDGMENTS = Kind("judgments", "`semrel judge` writes them", _keys("query_id", "chunk_id", "R"))
GOLDEN = Kind("a golden set", "`semrel golden import` makes one from a CSV, JSON or testset file",
              _keys("query_id", "query"))
CORPUS = Kind("a corpus", "`semrel corpus chunk` makes one from documents", _keys("_id", "text"))
POOL = Kind("a pool", "`semrel pool` makes one from runs",
            lambda line, head: line.startswith("query_id\tchunk_id\t"))
BEIR_QRELS = Kind("BEIR qrels", "", lambda line, head: line.startswith("query-id\t"))
QRELS = Kind("TREC qrels", "`semrel label` makes them from judgments, `semrel golden qrels` from a golden "
             "set; commands that take runs too take the qrels first", _columns(4, 3))
RUN = Kind("a TREC run", "`semrel retrieve` writes one", _columns(6, 3, 4, more=True))  # trec_eval ignores fields past the tag
CALIBRATION = Kind("a calibration", "`semrel calibrate -o` writes one",
                   lambda line, head: _json_document(line, head) and '"rule"' in head[:200])
RANX_JSON = Kind("ranx's JSON qrels or run ({query_id: {doc_id: value}}, read as such from a file named .json)", "",
                 lambda line, head: re.match(r'\s*\{\s*"[^"]*"\s*:\s*\{\s*"[^"]*"\s*:\s*-?[0-9.]', line) is not None)
JSON_DOCUMENT = Kind("one JSON document over several lines", "", _json_document)
CSV = Kind("a CSV file", "", _csv)
REVIEW_DATABASE = Kind("a review database", "`semrel review start` or `semrel review simulate` makes one",
                       lambda line, head: head.startswith("SQLite format 3"))
KINDS = (REVIEW_DATABASE, JUDGMENTS, GOLDEN, CORPUS, POOL, BEIR_QRELS, QRELS, RUN, CALIBRATION, RANX_JSON, JSON_DOCUMENT, CSV)
"""In the order they are tried: the first that fits names the file."""


def kind_of(path: str | os.PathLike) -> tuple[int, Kind] | None:
    """(the number of the file's first line that is neither blank nor a comment, the kind of file it starts) where
    one of KINDS fits; None for stdin, which cannot be read again."""
    if str(path) == STDIO:
        return None
    try:
        head = codecs.getincrementaldecoder("utf-8")("replace").decode(read_head(path, HEAD))  # a character cut at HEAD: left out
    except (OSError, FormatError):
        return None
    lines = ((n, line) for n, line in enumerate(head.split("\n"), start=1) if line.strip() and not line.startswith("#"))
    number, line = next(lines, (0, ""))
    text = "\x00" not in line and "\ufffd" not in line  # else binary: only the database can fit
    return next(((number, kind) for kind in KINDS if (text or kind is REVIEW_DATABASE) and kind.test(line, head)), None)


class MisplacedFile(FormatError):
    """An error reading a file, saying which other kind of file this one looks like."""

    bare: str
    """The error's own message, without what this one adds."""

    def __init__(self, path: str | os.PathLike, error: FormatError | ValidationError, found: Kind, wanted: Kind):
        if isinstance(error, FormatError):
            self.bare, line = error.bare if isinstance(error, MisplacedFile) else error.message, error.line
        else:
            self.bare, line = str(error).removeprefix(f"{display_name(path)}: "), None
        super().__init__(display_name(path), f"{self.bare}: {misplaced(found, wanted)}", line)


def misplaced(found: Kind, wanted: Kind) -> str:
    return f"this file looks like {found.name}, not {wanted.name}: {wanted.made_by}"


@contextlib.contextmanager
def expecting(path: str | os.PathLike, wanted: Kind, *also: Kind, any_line: bool = False) -> Iterator[None]:
    """Read `path` as a `wanted` file (or one of `also`); a FormatError on its first line that another kind of file
    explains is raised again saying so. `any_line`: any FormatError or ValidationError, for the reader of one JSON
    document, which a JSON Lines file fails on its second line, or of one line, past parsing. An inner reader's such
    error is said again for the outer reader's kind (eval's qrels, read through the golden-set reader)."""
    try:
        yield
    except (FormatError, ValidationError) as error:
        found = kind_of(path)
        first = isinstance(error, FormatError) and found is not None and found[0] == error.line
        if found is None or found[1] in (wanted, *also) or not (any_line or first):
            raise
        raise MisplacedFile(path, error, found[1], wanted) from None
