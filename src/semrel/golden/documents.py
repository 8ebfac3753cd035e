"""Reading documents to chunk: plain text, Markdown, PDF, HTML, .docx, TREC SGML, JSON Lines and Parquet tables.

Each reader gives Documents whose `text` is what was extracted and whose `sections` say where
each page (PDF) or headed section (HTML, .docx, Markdown) lies in that text, so a chunk can carry
its pages or headings along with character offsets into the extracted text.

- PDF: pypdf (pure Python), `page.extract_text()` page by page, pages joined by a blank line; ligature
  glyphs (fi, fl, ffi...) become their letters.
  AES needs the optional cryptography package; without it such a PDF is unreadable, and says so.
- HTML: selectolax (lexbor, a browser-grade HTML5 parser). The main text is the `<main>` element
  (else `role="main"`, else the page's only top-level `<article>`, else `<body>`) without
  navigation, asides, forms, scripts, styles and hidden elements, and without page headers and
  footers when the body is used. Headings, paragraphs, list items, table rows and preformatted
  blocks become blocks separated by a blank line (a nested table's rows after the row holding it).
  A rule, not a heuristic: the same page gives the same text, and no paragraph is dropped for being
  short (docs/golden.md says why not trafilatura).
- .docx: python-docx, paragraphs and table rows in document order, also inside content controls
  (`w:sdt`); `Heading N` and `Title` styles are headings.
- Markdown: the file as it is; ATX `#` headings outside front matter and code fences make the sections,
  the front matter's `title`, else the first `# ` heading, is the title.
- TREC SGML: `<DOC><DOCNO>id</DOCNO>...</DOC>`, several per file (see trec_documents); in a folder a
  record without a DOCNO is skipped on its own.
- JSON Lines and Parquet (formats/parquet.py): a document a line or row, `id` (or `_id`), `text` and `title`.

Folders are read recursively; what is not read is counted per reason (DocumentReport).
"""

from __future__ import annotations

import bisect
import codecs
import fnmatch
import html
import io
import itertools
import logging
import os
import re
import unicodedata
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import FormatError, SemrelError
from ..formats.beir import beir_part, beir_records, is_beir_folder
from ..formats.files import (
    DOCUMENT_LIMIT,
    display_name,
    id_form,
    limit_bytes,
    name_text,
    no_such_file,
    path_order,
    read_bytes,
    read_head,
    read_text,
    too_large,
)
from ..formats.jsonl import optional_text, require
from ..formats.parquet import is_parquet, read_records
from ..terminal import quantity

_WHITESPACE = re.compile(r"\s+")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
KINDS = {
    ".txt": "text", ".md": "markdown", ".markdown": "markdown", ".pdf": "pdf", ".html": "html", ".htm": "html",
    ".xhtml": "html", ".docx": "docx", ".trec": "trec", ".sgml": "trec", ".sgm": "trec",
}
"""File suffix (before a .gz) -> reader; a file of another suffix is read as TREC SGML when it starts with <DOC>."""
SHOWN = 3  # names listed per skip reason


# {id as the source gives it: id made} of the ids sanitise_id changed, while sanitised_ids() collects them
_SANITISED: ContextVar[dict[str, str] | None] = ContextVar("sanitised_ids", default=None)


def sanitise_id(value: str) -> str:
    """An id safe for whitespace-separated files: runs of whitespace become '_' (spaces around it are dropped)."""
    given = value.strip()
    made = _WHITESPACE.sub("_", given)
    changed = _SANITISED.get()
    if changed is not None and made != given:
        changed.setdefault(given, made)
    return made


@contextmanager
def sanitised_ids() -> Iterator[dict[str, str]]:
    """{id as the source gives it: id made} of every id that sanitise_id changes (blanks made '_') while open:
    what `golden import` warns of, once for all its importers, as its ids then differ from the source's."""
    changed: dict[str, str] = {}
    token = _SANITISED.set(changed)
    try:
        yield changed
    finally:
        _SANITISED.reset(token)


@dataclass(frozen=True)
class Section:
    """A stretch [start, end) of a document's text and what the source says about it:
    `{"page": 3}` or `{"headings": ("Chain care", "Lubrication")}`."""

    start: int
    end: int
    meta: Mapping[str, Any]


@dataclass(frozen=True)
class Document:
    """A whole document before chunking: its (extracted) text and where its pages or sections lie."""

    id: str
    text: str
    title: str = ""
    sections: tuple[Section, ...] = ()

    def meta_of(self, start: int, end: int) -> dict[str, Any]:
        """What a chunk [start, end) of this document carries: the pages it touches and the
        headings of the section it starts in."""
        meta: dict[str, Any] = {}
        pages = [s.meta["page"] for s in self.sections if "page" in s.meta and s.start < end and start < s.end]
        if pages:
            meta["pages"] = pages
        headed = [s for s in self.sections if "headings" in s.meta]
        at = bisect.bisect_right([s.start for s in headed], start) - 1
        if at >= 0 and headed[at].meta["headings"]:
            meta["headings"] = list(headed[at].meta["headings"])
        return meta


class UnreadableDocument(FormatError):
    """A file semrel cannot read for a reason worth its own line when a folder skips it
    ("encrypted PDF: save an unprotected copy"), not merged into "unreadable PDF"."""

    def __init__(self, path: str, message: str, reason: str, hint: str | None = None):
        super().__init__(path, message, hint=hint)
        self.reason = reason


class TextBuilder:
    """Blocks joined by a blank line, with the sections (pages, headings) they fall in."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.sections: list[Section] = []
        self.path: list[tuple[int, str]] = []  # (level, heading) of the open headings
        self.heading_start: int | None = None

    def add(self, text: str) -> tuple[int, int]:
        """Append one block; returns its (start, end) in the text."""
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        return start, self.length

    def page(self, number: int, text: str) -> None:
        start, end = self.add(text.strip())
        self.sections.append(Section(start, end, {"page": number}))

    def heading(self, level: int, text: str) -> None:
        """A heading starts a section that lasts until the next heading."""
        self._close_heading()
        start, _ = self.add(text)
        self.path = [(lv, t) for lv, t in self.path if lv < level] + [(level, text)]
        self.heading_start = start

    def _close_heading(self) -> None:
        if self.heading_start is not None:
            self.sections.append(Section(self.heading_start, self.length, {"headings": tuple(t for _, t in self.path)}))
            self.heading_start = None

    def document(self, doc_id: str, title: str = "") -> Document:
        self._close_heading()
        text = "".join(self.parts)
        return Document(doc_id, text, title, tuple(sorted(self.sections, key=lambda s: (s.start, s.end))))


# ---------------------------------------------------------------- plain text and Markdown

# An ATX heading: 1-6 '#', a space, the text; a closing run of '#' counts only after a space
# (CommonMark: `# C#` is "C#", `# Setup #` is "Setup").
# (`$` is before a \n only: the \r of a CRLF line end is allowed before it)
_MD_HEADING = re.compile(r"^(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*\r?$", re.MULTILINE)
_MD_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*\r?$", re.MULTILINE | re.DOTALL)
# Front matter (Jekyll, Hugo, MkDocs, Obsidian): YAML between `---` lines (closed by `...` too) or TOML between `+++`
# lines, at the very top. A YAML comment there (`# generated by hugo`) was read as a heading, and became the title.
_MD_FRONT_MATTER = re.compile(r"\A(?:---[ \t]*\r?\n(?:.*?\n)??(?:---|\.\.\.)|\+\+\+[ \t]*\r?\n(?:.*?\n)??\+\+\+)[ \t]*\r?$",
                              re.MULTILINE | re.DOTALL)
# its top-level `title: ...` (YAML) or `title = "..."` (TOML) line: one line is read, not the whole YAML, whose
# aliases and nesting an untrusted file could blow up
_MD_FRONT_TITLE = re.compile(r"""^title[ \t]*[:=][ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^\s#"'][^\r\n#]*))""", re.MULTILINE)


def _front_matter(text: str) -> tuple[int, str]:
    """Where a Markdown file's front matter ends (0: it has none), and the title it gives."""
    found = _MD_FRONT_MATTER.match(text)
    if found is None:
        return 0, ""
    title = _MD_FRONT_TITLE.search(found.group())
    return found.end(), next((g.strip() for g in title.groups() if g is not None), "") if title else ""


def _markdown_headings(text: str) -> list[tuple[int, str, int]]:
    """(level, text, offset) of each `#` heading outside front matter and code fences."""
    fenced = [(0, _front_matter(text)[0])] + [m.span() for m in _MD_FENCE.finditer(text)]
    return [(len(m.group(1)), (m.group(2) or "").strip(), m.start()) for m in _MD_HEADING.finditer(text)
            if (m.group(2) or "").strip() and not any(a <= m.start() < b for a, b in fenced)]


def markdown_sections(text: str) -> tuple[Section, ...]:
    """`#` headings (outside code fences) and the stretches they head."""
    found = _markdown_headings(text)
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    for n, (level, heading, start) in enumerate(found):
        path = [(lv, t) for lv, t in path if lv < level] + [(level, heading)]
        end = found[n + 1][2] if n + 1 < len(found) else len(text)
        sections.append(Section(start, end, {"headings": tuple(t for _, t in path)}))
    return tuple(sections)


def text_document(path: Path, doc_id: str) -> Document:
    """A .txt file as it is; a .md file with its `#` sections and, as title, its front matter's (as a page's
    `<title>`), else its first `# ` heading."""
    text = read_text(path)
    if KINDS.get(_suffix(path)) != "markdown":
        return Document(sanitise_id(doc_id), text)
    title = _front_matter(text)[1] or next((heading for level, heading, _ in _markdown_headings(text) if level == 1), "")
    return Document(sanitise_id(doc_id), text, title, markdown_sections(text))


# ---------------------------------------------------------------- PDF


_LIGATURES = {code: unicodedata.normalize("NFKC", chr(code)) for code in range(0xFB00, 0xFB07)}
"""Typeset PDFs draw ff, fi, fl, ffi, ffl, long st and st as one glyph, which pypdf gives as its presentation form
('\ufb01le'): the judge's tokenizer reads it as an unknown token and BM25 as another word than 'file'."""


def pdf_document(path: Path, doc_id: str) -> Document:
    """Each page's text (pypdf's extract_text), pages separated by a blank line; sections = pages from 1.
    A PDF pypdf cannot read (broken, encrypted, AES without the cryptography package, a filter pypdf
    does not implement) is a FormatError saying why."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its repair notes ("EOF marker not found") are noise on stderr
    content = io.BytesIO(read_bytes(path))  # a .pdf.gz too (pypdf reads the whole file into memory either way)
    try:
        reader = PdfReader(content)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument(str(path), "the PDF is encrypted", "encrypted PDF: save an unprotected copy",
                                     hint="save an unprotected copy")
        builder = TextBuilder()
        for number, page in enumerate(reader.pages, start=1):
            builder.page(number, (page.extract_text() or "").translate(_LIGATURES))
        title = str(reader.metadata.title or "").strip() if reader.metadata is not None else ""
    except SemrelError:
        raise
    except DependencyError as exc:  # pypdf reads AES only with the optional cryptography package
        if "AES" in str(exc):
            raise UnreadableDocument(str(path), "the PDF is encrypted with AES",
                                     "PDF encrypted with AES: pip install cryptography to read it",
                                     hint="pip install cryptography to read it") from None
        raise FormatError(str(path), f"not a readable PDF ({exc})") from None
    except NotImplementedError as exc:  # e.g. "Unsupported filter /JBIG2Decode"
        raise FormatError(str(path), f"not a readable PDF (pypdf cannot read it: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - a malformed PDF makes pypdf raise almost anything; it is one unreadable file
        raise FormatError(str(path), f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return builder.document(sanitise_id(doc_id), title)


# ---------------------------------------------------------------- HTML

_DROPPED = {"script", "style", "noscript", "template", "nav", "aside", "form", "button", "select", "svg", "iframe", "canvas",
            "dialog", "head", "object", "embed", "audio", "video"}
_CHROME = {"header", "footer"}
_CHROME_ROLES = {"banner", "contentinfo"}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = {"p", "li", "dt", "dd", "blockquote", "pre", "figcaption", "caption", "div", "section", "article", "main", "ul",
           "ol", "dl", "table", "thead", "tbody", "tfoot", "figure", "address", "details", "summary", "body", "hr",
           "header", "footer", "td", "th", "tr"}


def _squash(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def html_document(path: Path, doc_id: str) -> Document:
    """The page's main text as blocks, with the heading path of each section (see the module docstring). A page whose
    elements nest deeper than MAX_NESTING is refused: the parser's time grows with the square of the depth (divs nested
    50,000 deep took 4.9 s, bench/input_checks.py), and no page people write nests a thousandth as deep."""
    page = decode_html(read_bytes(path))
    depth = nesting(page) if page.count("<") > MAX_NESTING else 0
    if depth > MAX_NESTING:
        raise FormatError(str(path), f"elements nest {depth:,} deep (over {MAX_NESTING:,}), which would take the HTML parser "
                          "minutes; no written page nests so deep: is it a crafted one?")
    return html_text_document(page, sanitise_id(doc_id))


MAX_NESTING = 10_000
_HTML_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*?(/?)>")
_FLAT = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",  # void
         "p", "li", "dt", "dd", "option", "tr", "td", "th",  # closed by the next of their kind
         "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"}  # formatting: capped


def nesting(page: str) -> int:
    """How deep the page's elements nest, as far as its tags say (elements the parser closes or caps on its own, and
    void ones, left out): an upper bound of the parser's own depth, read in one pass."""
    depth = deepest = 0
    for match in _HTML_TAG.finditer(page):
        if match[2].lower() in _FLAT:
            continue
        if match[1]:
            depth = max(depth - 1, 0)
        elif not match[3]:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def decode_html(data: bytes) -> str:
    """UTF-16 where a byte-order mark says so (it wins over any declaration, as in browsers), else UTF-8,
    else the charset the page declares, else cp1252 (what browsers assume). A page that declares UTF-8 but holds
    not one UTF-8 sequence beyond ASCII is single-byte text saved under the wrong declaration: read as UTF-8, as
    browsers do, every 'é' would be U+FFFD, and the words holding it matched nothing."""
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):  # the "utf-16" codec reads the mark and drops it
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        declared = re.search(rb"""charset=["']?([A-Za-z0-9_.:-]+)""", data[:4096])
        for encoding in ([declared.group(1).decode("ascii")] if declared else []) + ["cp1252"]:
            try:
                text = data.decode(encoding, errors="replace")
            except LookupError:
                continue
            if codecs.lookup(encoding).name != "utf-8" or _BEYOND_ASCII.search(text):
                return text
        return data.decode("latin-1")


_BEYOND_ASCII = re.compile("[^\x00-\x7f\ufffd]")  # a character UTF-8 decoded, other than the replacement of bad bytes


def html_text_document(page: str, doc_id: str) -> Document:
    """A Document of an HTML page's main text (the rule in the module docstring)."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(page)
    title_node = tree.css_first("title")
    title = _squash(title_node.text()) if title_node is not None else ""
    root = tree.css_first("main")
    if root is None:
        root = tree.css_first('[role="main"]')
    if root is None:
        articles = [node for node in tree.css("article") if not _inside_article(node)]
        root = articles[0] if len(articles) == 1 else None  # several articles: the page is read from <body>
    whole_body = root is None
    root = root if root is not None else tree.body
    builder = TextBuilder()
    if root is not None:
        _walk(root, builder, whole_body)
        if not title:
            first = root.css_first("h1")
            title = _squash(first.text()) if first is not None else ""
    return builder.document(doc_id, title)


def _inside_article(node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == "article":
            return True
        parent = parent.parent
    return False


def _dropped(node, whole_body: bool) -> bool:
    """Elements that are not main text: scripts, navigation, forms, hidden ones; page headers and
    footers when the whole body is read."""
    tag = node.tag
    if tag in _DROPPED or whole_body and tag in _CHROME:
        return True
    attributes = node.attributes
    role = attributes.get("role")
    return ("hidden" in attributes or attributes.get("aria-hidden") == "true" or role == "navigation"
            or whole_body and role in _CHROME_ROLES or bool(_HIDDEN_STYLE.search(attributes.get("style") or "")))


@dataclass
class _Row:
    """An open table row: its cells so far, the rows of tables nested in it, and the text of the
    cell a nested row interrupted."""

    cells: list[str] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)
    before: str = ""


def _walk(root, builder: TextBuilder, whole_body: bool) -> None:
    """Depth-first over the elements, without recursion (pages nest deeply). Text gathers in the
    open block, which the start or end of a block element closes; inside a heading or a table row
    block elements do not split it (a row's cells are joined with ' | '). The rows of a table inside
    a cell come after the row that holds it."""
    pending: list[str] = []
    rows: list[_Row] = []  # the open table rows, innermost last
    held = 0  # open headings and table rows
    preformatted = 0

    def take() -> str:
        text = "".join(pending)
        pending.clear()
        return text

    def flush() -> None:
        raw = take()
        text = raw.strip("\n") if preformatted else _squash(raw)
        if text.strip():
            builder.add(text)

    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        tag = node.tag
        if leaving:
            if tag in _HEADINGS:
                held -= 1
                text = _squash(take())
                if text:
                    builder.heading(_HEADINGS[tag], text)
            elif tag == "tr" and rows:
                held -= 1
                row = rows.pop()
                cells = [c for c in row.cells + [_squash(take())] if c]
                blocks = ([" | ".join(cells)] if cells else []) + row.nested
                if rows:  # a nested table: its rows wait for the row that holds it, whose cell text goes on
                    rows[-1].nested.extend(blocks)
                    pending.append(rows[-1].before)
                else:
                    for block in blocks:
                        builder.add(block)
            elif tag in ("td", "th") and rows:
                rows[-1].cells.append(_squash(take()))
            elif tag == "pre" and not held:
                flush()
                preformatted -= 1
            elif tag in _BLOCKS and not held:
                flush()
            elif tag in _BLOCKS:
                pending.append(" ")  # inside a heading or a row: a space, not a break
            continue
        if tag == "-text":
            pending.append(node.text(deep=False) or "")
            continue
        if tag == "br":
            pending.append("\n")
            continue
        if not isinstance(tag, str) or tag.startswith(("-", "!")) or _dropped(node, whole_body):
            continue
        if tag in _HEADINGS:
            if not held:
                flush()
            held += 1
        elif tag == "tr":
            if not held:
                flush()
            elif rows:
                rows[-1].before = take()  # the text of the cell holding this table so far
            held += 1
            rows.append(_Row())
        elif tag in ("td", "th") and rows:
            stray = _squash(take())
            if stray:
                rows[-1].cells.append(stray)
        elif tag in _BLOCKS and not held:
            flush()
            if tag == "pre":
                preformatted += 1
        elif tag in _BLOCKS:
            pending.append(" ")
        stack.append((node, True))
        children = []
        child = node.child
        while child is not None:
            children.append(child)
            child = child.next
        stack.extend((c, False) for c in reversed(children))
    flush()


# ---------------------------------------------------------------- .docx


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_DOCX_WRAPPERS = (f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml")  # content controls (title pages, tables of contents)


def docx_document(path: Path, doc_id: str) -> Document:
    """Paragraphs and table rows in order, also inside content controls (tracked changes accepted);
    paragraphs styled `Title` or `Heading N` are headings. A table row's cells are joined with ' | '
    (a merged cell once), and the rows of a table inside a cell come after the row that holds it."""
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    content = io.BytesIO(read_bytes(path))  # a .docx.gz too
    try:
        # python-docx unpacks every part into memory: a few MB of zip can hold GBs of XML (zipfile reads no
        # more of a part than the size its directory records, so the sizes recorded bound what is read)
        with zipfile.ZipFile(content) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > limit_bytes(DOCUMENT_LIMIT):
            raise too_large(str(path), f"the .docx unpacked ({unpacked / 2**20:,.0f} MB)", DOCUMENT_LIMIT)
        document = docx.Document(content)
    # a broken document.xml raises lxml's XMLSyntaxError, a SyntaxError
    except (PackageNotFoundError, zipfile.BadZipFile, SyntaxError, KeyError, ValueError, OSError) as exc:
        raise FormatError(str(path), f"not a readable .docx file ({type(exc).__name__}: {exc})") from None
    builder = TextBuilder()
    headings: list[tuple[int, str]] = []
    for block in _docx_blocks(document.element.body, document):
        if isinstance(block, str):
            builder.add(block)
            continue
        text = _squash(_paragraph_text(block._p))
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        level = 0 if style == "Title" else int(style.split()[-1]) if re.fullmatch(r"Heading [1-9]", style) else None
        if level is not None:
            builder.heading(level, text)
            headings.append((level, text))
        else:
            builder.add(text)
    # Word leaves the document's Title property empty unless someone fills it in: then the first `Title` paragraph,
    # else the first `Heading 1`, is the title, as a page's first <h1> is where it has no <title>
    top = min(headings, key=lambda heading: heading[0], default=(0, ""))
    title = (document.core_properties.title or "").strip() or (top[1] if top[0] <= 1 else "")
    return builder.document(sanitise_id(doc_id), title)


_DOCX_TEXT = {f"{_W}t": None, f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n"}


def _paragraph_text(paragraph) -> str:
    """The paragraph's text as it reads with tracked changes accepted: every w:t, inside tracked
    insertions, inline content controls, fields and smart tags too (python-docx's Paragraph.text
    reads only its direct runs and hyperlinks, and left those out); deleted text is w:delText."""
    return "".join(element.text or "" if (mark := _DOCX_TEXT[element.tag]) is None else mark
                   for element in paragraph.iter(*_DOCX_TEXT))


def _docx_children(element) -> Iterator[Any]:
    """The paragraphs and tables of a body or cell element, looking into content controls."""
    for child in element.iterchildren():
        if child.tag in _DOCX_WRAPPERS:
            yield from _docx_children(child)
        elif child.tag in (f"{_W}p", f"{_W}tbl"):
            yield child


def _docx_blocks(element, parent) -> Iterator[Any]:
    """The paragraphs (python-docx Paragraphs) and table rows (text) of a body or a cell, in order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for child in _docx_children(element):
        if child.tag == f"{_W}p":
            yield Paragraph(child, parent)
            continue
        for row in Table(child, parent).rows:
            cells: list[str] = []
            nested: list[str] = []
            for cell in {c._tc: c for c in row.cells}.values():  # a merged cell repeats: once per row
                words = []
                for block in _docx_blocks(cell._tc, cell):
                    if isinstance(block, str):
                        nested.append(block)
                    else:
                        words.append(_paragraph_text(block._p))
                cells.append(_squash(" ".join(words)))
            if any(cells):
                yield " | ".join(c for c in cells if c)
            yield from nested


# ---------------------------------------------------------------- TREC SGML

# a <DOC> holds no <DOC>: one opened before the last closed is a record whose </DOC> is missing (_DOC_OPEN finds it).
# Unrolled, each turn starting at a '<', so a run of text splits one way only and a record left open fails in linear time
_DOC = re.compile(r"<DOC>([^<]*(?:<(?!DOC>)[^<]*)*?)</DOC>", re.IGNORECASE)
_DOC_OPEN = re.compile(r"<DOC>", re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
TREC_TITLE_TAGS = ("TITLE", "HEADLINE", "HEAD", "HL", "TTL", "H3")
TREC_TEXT_TAGS = ("TEXT", "LEADPARA", "LP", "BODY", "W")
TREC_SKIPPED_TAGS = ("DOCNO", "DOCID", "DOCOLDNO", "DOCHDR", "FILEID", "FIRST", "SECOND", "DATE", "DATE1", "BYLINE",
                     "PUB", "PAGE", "PROFILE", "CN", "IN", "G", "AU", "AUTHOR", "SO", "DATELINE")


def _field(body: str, tag: str) -> list[str]:
    return re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", body, re.IGNORECASE | re.DOTALL)


def _sgml_text(value: str) -> str:
    """Tags removed, entities decoded (SGML ones html does not know, such as &hyph;, are left as they are),
    paragraphs (blank lines) kept and other runs of spaces squashed."""
    value = html.unescape(_TAG.sub(" ", value))
    paragraphs = [_squash(p) for p in re.split(r"\r?\n[ \t]*\r?\n", value)]
    return "\n\n".join(p for p in paragraphs if p)


def trec_documents(path: str | os.PathLike, text: str | None = None,
                   skip: Callable[[FormatError], None] | None = None) -> Iterator[tuple[int, Document]]:
    """(line, Document) per `<DOC>` of a TREC SGML file. Id: DOCNO. Title: the first of TITLE,
    HEADLINE, HEAD, HL, TTL. Text: TEXT (with LEADPARA/LP/BODY) when the document has one, else
    everything but DOCNO and the bibliographic fields (dates, bylines, ids). Tags are removed and
    entities decoded. A `<DOC>` without a DOCNO, or without its `</DOC>` (before the next `<DOC>` or the
    end of the file), is a FormatError naming its line, or, given `skip`, is passed to it and the other
    documents are read."""
    text = read_text(path) if text is None else text
    found = False
    line, counted = 1, 0  # lines are counted on from the last <DOC>: from the start each time took minutes on 100 MB

    def refuse(message: str, position: int, hint: str | None = None) -> None:
        nonlocal line, counted, found
        found = True
        line += text.count("\n", counted, position)
        counted = position
        error = FormatError(display_name(path), message, line=line, hint=hint)
        if skip is None:
            raise error
        skip(error)

    after = 0
    for match in itertools.chain(_DOC.finditer(text), [None]):
        for opened in _DOC_OPEN.finditer(text, after, match.start() if match else len(text)):
            refuse("a <DOC> without its </DOC> before the next <DOC> or the end of the file", opened.start(),
                   hint="add its </DOC>")
        if match is None:
            break
        found, after = True, match.end()
        body = match.group(1)
        line += text.count("\n", counted, match.start())
        counted = match.start()
        number = _DOCNO.search(body)
        if not number or not sanitise_id(_TAG.sub("", number.group(1))):
            refuse("a <DOC> without a <DOCNO>", match.start())
            continue
        doc_id = sanitise_id(_TAG.sub("", number.group(1)))
        title = next((_squash(_sgml_text(v)) for tag in TREC_TITLE_TAGS for v in _field(body, tag) if v.strip()), "")
        parts = [v for tag in TREC_TEXT_TAGS for v in _field(body, tag)]
        if not parts:
            rest = body
            for tag in TREC_SKIPPED_TAGS + TREC_TITLE_TAGS:
                rest = re.sub(rf"<{tag}(?:\s[^>]*)?>.*?</{tag}>", " ", rest, flags=re.IGNORECASE | re.DOTALL)
            parts = [rest]
        yield line, Document(doc_id, "\n\n".join(p for p in (_sgml_text(v) for v in parts) if p), title)
    if not found and text.strip():
        raise FormatError(display_name(path), "no <DOC>...</DOC> in this file", line=1, hint="is it TREC SGML?")


def looks_like_trec(path: str | os.PathLike) -> bool:
    """Whether a file opens with `<DOC>`: TREC collections come without a suffix that says so (FT911-1, fbis3-10)."""
    try:
        head = read_head(path, 512)
    except (SemrelError, OSError):
        return False
    return head.lstrip()[:5].upper() == b"<DOC>"


# ---------------------------------------------------------------- Cranfield (SMART)

CRANFIELD_DOCUMENTS = "cran.all.1400"


def smart_records(path: Path) -> list[dict[str, str]]:
    """Records of a SMART file: `.I id` starts one; `.T`, `.A`, `.B`, `.W` start its fields."""
    text = read_text(path).replace("\r\n", "\n")
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    key = ""
    for number, line in enumerate(text.split("\n"), start=1):
        marker = re.match(r"^\.([A-Z])\b ?(.*)$", line)
        if marker and marker.group(1) == "I":
            current = {"I": marker.group(2).strip()}
            records.append(current)
            key = ""
        elif marker:
            if current is None:
                raise FormatError(str(path), f"field .{marker.group(1)} before the first .I", line=number)
            key = marker.group(1)
            current[key] = marker.group(2)
        elif current is not None and key:
            current[key] += "\n" + line
        elif line.strip():
            raise FormatError(str(path), "text outside a .I record", line=number)
    return records


def cranfield_documents(path: str | os.PathLike) -> list[Document]:
    """The documents of Cranfield's cran.all.1400: id `.I`, title `.T`, text `.W` (its title where `.W` is empty), as
    `golden import --format cranfield` cuts them, so a corpus chunked of them is the one its qrels name."""
    return [Document(sanitise_id(r["I"]), r.get("W", "").strip() or _squash(r.get("T", "")), _squash(r.get("T", "")))
            for r in smart_records(Path(path))]


# ---------------------------------------------------------------- JSON Lines


def record_file_documents(path: str | os.PathLike) -> Iterator[Document]:
    """A JSON Lines file's lines `{"id", "title", "text"}` (BEIR's `_id` is accepted for `id`), or a Parquet table's rows
    with those columns, numbered as lines (a corpus as Hugging Face's hub serves one). A repeated id names both lines."""
    return (doc for _, doc in record_documents((path, line, obj) for line, obj in read_records(path)))


def record_documents(records: Iterable[tuple[str | os.PathLike, int, dict[str, Any]]]) -> Iterator[tuple[str, Document]]:
    """(file, document) of (file, line, record) triples; a repeated id names where it came first (its file too where
    that is another: a corpus in shards)."""
    seen: dict[str, tuple[str, int]] = {}
    for path, line, obj in records:
        key = "id" if "id" in obj else "_id"
        doc_id = sanitise_id(str(require(obj, key, path, line, (str, int))))
        if not doc_id:
            raise FormatError(display_name(path), f"empty document id in field {key!r}", line=line)
        if doc_id in seen:
            first, first_line = seen[doc_id]
            where = f"line {first_line}" if first == str(path) else f"{display_name(first)} line {first_line}"
            raise FormatError(display_name(path), f"document id {doc_id!r} is already used on {where}", line=line)
        seen[doc_id] = (str(path), line)
        yield str(path), Document(doc_id, require(obj, "text", path, line), optional_text(obj, "title", path, line))


# ---------------------------------------------------------------- files and folders


def file_stem(path: Path) -> str:
    """A file's name without its suffix (and without .gz before it): the document id of a file, in Unicode's NFC."""
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    return id_form(os.path.splitext(name)[0] or name)


def file_document_id(relative: str) -> str:
    """The document id of the file at `relative` (a path inside the folder read, '/'-separated): its folders and stem,
    in NFC, whatever the locale (name_text). macOS names files in NFD ('e' and a combining accent), and a golden set typed
    on a keyboard names them in NFC: the same 'café.txt' to the eye was no document of the corpus."""
    path = Path(relative)
    return id_form(name_text(relative[: -len(path.name)] + file_stem(path) if path.name else relative))


def _suffix(path: Path) -> str:
    name = path.name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    return os.path.splitext(name)[1]


def kind_of(path: Path) -> str | None:
    """The reader for a file: by suffix, else 'trec' when it starts with <DOC>, else None."""
    if path.name == CRANFIELD_DOCUMENTS:  # no suffix says what it is
        return "cranfield"
    kind = KINDS.get(_suffix(path))
    if kind is None and looks_like_trec(path):
        return "trec"
    return kind


READERS: dict[str, Callable[[Path, str], Document]] = {
    "text": text_document, "markdown": text_document, "pdf": pdf_document, "html": html_document, "docx": docx_document,
}
KIND_NAMES = {"text": ".txt", "markdown": ".md", "pdf": "PDF", "html": "HTML", "docx": ".docx", "trec": "TREC SGML",
              "cranfield": "Cranfield", "jsonl": "JSON Lines", "parquet": "Parquet", "beir": "BEIR corpus"}


@dataclass
class DocumentReport:
    """What was read (files and documents per kind) and what was not, per reason (first names kept)."""

    files: Counter = field(default_factory=Counter)
    documents: Counter = field(default_factory=Counter)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    skipped_counts: Counter = field(default_factory=Counter)

    def skip(self, reason: str, name: str) -> None:
        self.skipped_counts[reason] += 1
        shown = self.skipped.setdefault(reason, [])
        if len(shown) < SHOWN:
            shown.append(name)

    def read_line(self) -> str:
        """'1,402 documents: 1,400 TREC SGML (1 file), 2 .md' (kinds in order of first appearance;
        files are named only for kinds that hold several documents a file)."""
        parts = []
        for kind, docs in self.documents.items():
            files = self.files[kind]
            several = kind in ("trec", "cranfield", "jsonl", "parquet", "beir")
            parts.append(f"{docs:,} {KIND_NAMES.get(kind, kind)}" + (f" ({quantity(files, 'file')})" if several else ""))
        return f"{quantity(sum(self.documents.values()), 'document')}: " + ", ".join(parts) if parts else "no documents"

    def skip_lines(self) -> list[str]:
        """One line per reason: its count and first names."""
        lines = []
        for reason, count in self.skipped_counts.most_common():
            names = ", ".join(self.skipped[reason]) + (f" and {count - len(self.skipped[reason]):,} more"
                                                       if count > len(self.skipped[reason]) else "")
            lines.append(f"skipped {count:,} ({reason}): {names}")
        return lines

    def params(self) -> dict[str, Any]:
        return {"read": dict(self.documents), "skipped": dict(self.skipped_counts)}


def _excluded(relative: str, patterns: Sequence[str]) -> bool:
    """Whether a pattern matches the file's name or path, or a folder's it is in (`--exclude drafts` or `drafts/`
    skips the folder's files, as .gitignore does; they were read, and nothing said the pattern matched nothing)."""
    parts = relative.split("/")
    names = parts + ["/".join(parts[:n]) for n in range(2, len(parts) + 1)]
    return any(fnmatch.fnmatch(name, p.rstrip("/") or p) for p in patterns for name in names)


def file_documents(path: Path, doc_id: str, kind: str,
                   skip: Callable[[FormatError], None] | None = None) -> Iterable[Document]:
    """The documents of one file of `kind` (a TREC file holds many, named by DOCNO; `skip` takes
    its unreadable records, else they are errors)."""
    if kind == "trec":
        return [doc for _, doc in trec_documents(path, skip=skip)]
    if kind == "cranfield":
        return cranfield_documents(path)
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system's encoding could not decode: no id can be written of them
        raise UnreadableDocument(str(path), "the file name is not valid UTF-8, and the document's id is made of it",
                                 "file name not valid UTF-8: rename the file", hint="rename the file") from None
    if not file_stem(path).strip():  # ' .txt' made the id '' and the chunk '#0', which no qrels line can name
        raise UnreadableDocument(str(path), "the file name is blank before its suffix, and the document's id is made of it",
                                 "file name blank before its suffix: rename the file", hint="rename the file")
    return [READERS[kind](path, doc_id)]


def _folder_documents(folder: Path, report: DocumentReport, exclude: Sequence[str]) -> Iterator[tuple[str, Document, str]]:
    """(kind, document, file) of every file of a folder that semrel reads; the others are counted in `report`."""
    corpus = beir_part(folder, "corpus")
    if corpus and (corpus[0].name == "corpus.jsonl" or is_beir_folder(folder)):  # a BEIR folder: its corpus alone
        report.files["beir"] += len(corpus)
        yield from (("beir", doc, path) for path, doc in record_documents(beir_records(corpus)))
        return
    if (folder / CRANFIELD_DOCUMENTS).is_file():  # a Cranfield folder: its documents alone (its README, cran.qry are none)
        report.files["cranfield"] += 1
        yield from (("cranfield", doc, str(folder / CRANFIELD_DOCUMENTS)) for doc in cranfield_documents(folder / CRANFIELD_DOCUMENTS))
        return
    found = 0
    inside = folder.resolve()
    for path in path_order(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_dir() and not path.is_symlink():  # its files come in turn
            continue
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            report.skip("hidden", relative)
            continue
        if not path.is_file():  # rglob does not go into a linked folder: its files were left out unsaid
            report.skip("a link to a folder, not followed: give the folder itself" if path.is_dir()
                        else "not a regular file (a FIFO, device or broken link)", relative)
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(inside):  # a shared folder must not read in ~/.ssh/id_rsa
            report.skip("a link to a file outside the folder, not followed: give the file itself", relative)
            continue
        if exclude and _excluded(relative, exclude):
            report.skip("--exclude", relative)
            continue
        if path.name.lower().endswith(JSONL_SUFFIXES):
            report.skip("JSON Lines in a folder: give the file itself", relative)
            continue
        if is_parquet(path):
            report.skip("Parquet in a folder: give the file itself", relative)
            continue
        kind = kind_of(path)
        if kind is None:
            report.skip(f"not a kind semrel reads: {_suffix(path) or 'no suffix'}", relative)
            continue
        found += 1
        doc_id = file_document_id(relative)

        def skip_record(error: FormatError, relative: str = relative) -> None:
            report.skip(f"TREC SGML record: {error.message}", f"{relative}:{error.line}")

        try:
            documents = list(file_documents(path, doc_id, kind, skip_record))
        except UnreadableDocument as exc:
            report.skip(exc.reason, relative)
            continue
        except FormatError as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            report.skip(f"unreadable {KIND_NAMES[kind]}", f"{relative} ({where}{exc.message}"
                        + (f"; {exc.hint})" if exc.hint else ")"))
            continue
        except SemrelError as exc:
            report.skip(f"unreadable {KIND_NAMES[kind]}", f"{relative} ({str(exc).removeprefix(str(path) + ': ')})")
            continue
        report.files[kind] += 1
        for doc in documents:
            yield kind, doc, str(path)
    if not found:
        kinds = ", ".join(sorted(KINDS))
        raise SemrelError(f"{folder}: no documents in this folder (read: {kinds}, TREC SGML files and a BEIR folder's corpus)"
                          + (f"; {'; '.join(report.skip_lines())}" if report.skipped else ""))


def _input_documents(inputs: Sequence[str | os.PathLike], report: DocumentReport,
                     exclude: Sequence[str]) -> Iterator[tuple[str, Document, str]]:
    """(kind, document, the file it came from) of every input, in order."""
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            yield from _folder_documents(path, report, exclude)
        elif str(name).lower().endswith(JSONL_SUFFIXES) or str(name) == "-" or is_parquet(name):
            layout = "parquet" if is_parquet(name) else "jsonl"
            report.files[layout] += 1
            yield from ((layout, doc, display_name(name)) for doc in record_file_documents(name))
        elif not path.exists():
            raise no_such_file(str(name), "file or folder")
        else:
            kind = kind_of(path)
            if kind is None:
                raise FormatError(str(name), "unknown kind of input",
                                  hint="give .txt, .md, .pdf, .html, .docx, TREC SGML, .jsonl or .parquet files, or folders")
            found = list(file_documents(path, file_stem(path), kind))
            report.files[kind] += 1
            yield from ((kind, doc, str(name)) for doc in found)


def _folder_advice(first: str, second: str) -> str:
    """Two files of one name in different folders (a/notes.md, b/notes.md, given as files or as two folders) are told
    apart by a folder holding both: inside it a document is named by its path ('a/notes')."""
    paths = [Path(first), Path(second)]
    if not all(p.is_file() for p in paths) or paths[0].parent == paths[1].parent:
        return ""
    common = Path(os.path.commonpath([p.resolve() for p in paths]))
    ids = [file_document_id(p.resolve().relative_to(common).as_posix()) for p in paths]
    return f", or chunk the folder holding both, {display_name(str(common))}, whose documents are named by their paths in it " \
           f"({ids[0]!r}, {ids[1]!r})"


def read_documents_report(inputs: Sequence[str | os.PathLike], exclude: Sequence[str] = ()) -> tuple[list[Document], DocumentReport]:
    """Documents from files, folders (recursively), JSONL files and BEIR folders, in input order,
    with what was read and skipped. A file's id is its name without suffix; inside a folder, its
    path relative to the folder (`sub/notes`); a TREC document's, its DOCNO. Documents with no text
    are counted as skipped (they would give no chunk)."""
    report = DocumentReport()
    return list(iter_documents(inputs, report, exclude)), report


def iter_documents(inputs: Sequence[str | os.PathLike], report: DocumentReport,
                   exclude: Sequence[str] = ()) -> Iterator[Document]:
    """The documents of read_documents_report one at a time, `report` filled as they come (a JSONL
    corpus is read line by line, so its documents are never all in memory)."""
    seen: dict[str, str] = {}  # id -> its file (a file's documents share one str)
    for kind, doc, source in _input_documents(inputs, report, exclude):
        if doc.id in seen:  # two files whose names differ only in suffix or spacing (notes.md, notes.pdf) make one id
            where = f"twice in {source}" if seen[doc.id] == source else f"in {seen[doc.id]} and in {source}"
            raise SemrelError(f"document id {doc.id!r} occurs {where}; rename one of the documents{_folder_advice(seen[doc.id], source)}")
        seen[doc.id] = source
        if doc.text.strip():
            report.documents[kind] += 1
            yield doc
        else:
            why = "" if kind != "pdf" else ", a scanned PDF needs OCR first" if doc.sections else ", the PDF has no pages"
            # a file named as the other skips name theirs; a record of a file of many (JSON Lines, TREC SGML) by its id there
            one_a_file = kind in READERS
            report.skip("no text: nothing to chunk" + why, display_name(source) if one_a_file else f"{doc.id} ({display_name(source)})")


def read_documents(inputs: Sequence[str | os.PathLike], exclude: Sequence[str] = ()) -> list[Document]:
    """The documents of read_documents_report, without the report."""
    return read_documents_report(inputs, exclude)[0]
