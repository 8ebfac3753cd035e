"""Write Cranfield (SMART files) as a TREC collection: SGML documents, <top> topics and TREC qrels.

    python bench/cranfield_trec.py OUT_DIR [--cranfield DIR]

OUT_DIR gets docs.trec (<DOC><DOCNO>n</DOCNO><TITLE>.T</TITLE><TEXT>.W</TEXT></DOC>), topics.txt
(<top><num> Number: position <title> .W text </top>, numbered by position in cran.qry as cranqrel
numbers them) and qrels.txt (`qid 0 docno gain`, gain = 5 - code for Cleverdon's codes 1..4, 0 for
-1, as `golden import --format cranfield` maps them). It exercises `golden import --format trec` on a
classic collection; the numbers it gave are in docs/golden.md.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from semrel.golden.converters import CRANFIELD_GAIN, read_cranfield_qrels, smart_records  # noqa: E402
from shared_data import SHARED_DATA  # noqa: E402

DEFAULT = SHARED_DATA / "cranfield"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", metavar="OUT_DIR", type=Path, help="the folder to write")
    parser.add_argument("--cranfield", metavar="DIR", type=Path, default=DEFAULT, help=f"the SMART files (default {DEFAULT})")
    args = parser.parse_args(argv)
    source, out = args.cranfield, args.out
    out.mkdir(parents=True, exist_ok=True)
    docs = smart_records(source / "cran.all.1400")
    with open(out / "docs.trec", "w", encoding="utf-8") as handle:
        for record in docs:
            title, text = (html.escape(" ".join(record.get(k, "").split()), quote=False) for k in ("T", "W"))
            handle.write(f"<DOC>\n<DOCNO> {record['I'].strip()} </DOCNO>\n<TITLE> {title} </TITLE>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n")
    queries = smart_records(source / "cran.qry")
    with open(out / "topics.txt", "w", encoding="utf-8") as handle:
        for position, record in enumerate(queries, start=1):
            text = html.escape(" ".join(record.get("W", "").split()), quote=False)
            handle.write(f"<top>\n<num> Number: {position}\n<title> {text}\n</top>\n\n")
    judged = read_cranfield_qrels(source / "cranqrel")
    with open(out / "qrels.txt", "w", encoding="utf-8") as handle:
        for position in sorted(judged):
            for doc, gain in judged[position].items():
                handle.write(f"{position} 0 {doc} {gain}\n")
    print(f"{len(docs)} documents, {len(queries)} topics, {sum(map(len, judged.values()))} judgments "
          f"(gain {CRANFIELD_GAIN}) -> {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
