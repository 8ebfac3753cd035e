"""Small documents written by the tests: a PDF by hand (no PDF library writes text), an HTML page, a .docx."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: Sequence[Sequence[str]], title: str = "", differences: str = "") -> bytes:
    """A valid PDF: one page per item, each line of it drawn in Helvetica (pypdf extracts them as lines). `differences`
    gives codes other glyphs ('128 /fi': byte 0x80 draws the fi ligature, as typeset PDFs do)."""
    objects: list[bytes] = []
    n_pages = len(pages)
    # 1 catalog, 2 pages, 3 font, 4 info, then (page, content) pairs
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    encoding = f"<< /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [{differences}] >>" if differences else "/WinAnsiEncoding"
    objects.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding {encoding} >>".encode())
    objects.append(f"<< /Title ({_escape(title)}) >>".encode("latin-1"))
    for i, lines in enumerate(pages):
        stream = "BT /F1 11 Tf 14 TL 72 760 Td " + " ".join(f"({_escape(line)}) Tj T*" for line in lines) + " ET"
        data = stream.encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       f"/Contents {6 + 2 * i} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


PAGE_ONE = ["Chain care for city bicycles.", "Clean the chain every 300 km with a degreaser.",
            "Wipe it dry before you oil it."]
PAGE_TWO = ["Brake pads wear faster in rain.", "Replace them when the grooves are gone.",
            "Check the rim for grit after every wet ride."]

HTML_PAGE = """<!DOCTYPE html>
<html><head><title>Bicycle care</title><style>p { color: red }</style><script>var tracking = 1;</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/shop">Shop</a></nav>
<header><p>Site banner: free shipping</p></header>
<main>
  <h1>Chain care</h1>
  <p>Clean the chain every 300 km<br>with a degreaser and a rag.</p>
  <h2>Lubrication</h2>
  <p>Apply one drop of oil per roller, then wipe the excess.</p>
  <ul><li>Wet lube for rain.</li><li>Dry lube for dust.</li></ul>
  <div hidden>Hidden coupon text.</div>
  <h2>Wear &amp; replacement</h2>
  <table><tr><th>stretch</th><th>action</th></tr><tr><td>0.5%</td><td>replace the chain</td></tr></table>
  <h3>Cassette</h3>
  <p>A worn chain wears the cassette too.</p>
</main>
<footer>Copyright 2024. Cookie settings.</footer>
</body></html>
"""


def docx_file(path: Path) -> Path:
    """A .docx with a title, two headed sections and a table (python-docx writes it)."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Workshop notes"
    document.add_heading("Wheels", level=1)
    document.add_paragraph("True the wheel when the rim rubs the brake pad.")
    document.add_heading("Spokes", level=2)
    document.add_paragraph("Tighten spokes a quarter turn at a time.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "tool", "use"
    table.cell(1, 0).text, table.cell(1, 1).text = "spoke key", "tension"
    document.add_heading("Tyres", level=1)
    document.add_paragraph("Pump road tyres to the pressure printed on the sidewall.")
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path
