"""Write data/trec/ (a small TREC test collection) from the bicycle notes in data/docs/.

Each `##` section of a note becomes one <DOC> (DOCNO BIKE-<note>-<n>, HEADLINE "<note title>: <section>"),
the topics are hand-written in the classic <top> layout (title, desc, narr) and the qrels are
hand-judged grades (2 answers the topic, 1 partly, 0 judged not relevant). Run from the repo root:
`python scripts/make-trec-sample.py`; the output is committed, so the README's commands need no script.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPICS = [
    # number, title, desc, narr, {docno: grade}
    ("401", "chain lubrication", "Where should chain oil be applied?",
     "A relevant document says where and how to oil a chain. How to clean a chain is not relevant.",
     {"BIKE-chain-care-2": 2, "BIKE-chain-care-1": 0, "BIKE-cleaning-storage-1": 0}),
    ("402", "chain wear replacement", "When should a chain be replaced?",
     "Relevant: how chain wear is measured and when a worn chain must go. Fitting a chain is partly relevant.",
     {"BIKE-chain-care-3": 2, "BIKE-chain-care-4": 1, "BIKE-gears-3": 0}),
    ("403", "spongy hydraulic brake lever", "What does a soft or spongy hydraulic brake lever mean?",
     "Relevant: the cause of a spongy lever on hydraulic disc brakes. Rim brake pads are not relevant.",
     {"BIKE-brakes-2": 2, "BIKE-brakes-1": 0}),
    ("404", "pinch flat", "What causes a pinch flat?",
     "Relevant: how a pinch flat happens and how pressure prevents it. Repairing punctures is partly relevant.",
     {"BIKE-tyres-1": 2, "BIKE-tyres-3": 1, "BIKE-tyres-4": 0}),
    ("405", "tubeless sealant", "How often should tubeless sealant be topped up?",
     "Relevant: tubeless tyres and the care of their sealant.",
     {"BIKE-tyres-4": 2, "BIKE-tyres-2": 0}),
    ("406", "derailleur hanger", "Why is the derailleur hanger made of soft metal?",
     "Relevant: what the hanger is for and why it bends. Limit screws are partly relevant.",
     {"BIKE-gears-3": 2, "BIKE-gears-2": 1, "BIKE-gears-1": 0}),
    ("407", "winter salt", "How should I look after my bike on salted winter roads?",
     "Relevant: care of a bike used on salted roads; washing in general is partly relevant.",
     {"BIKE-cleaning-storage-3": 2, "BIKE-cleaning-storage-1": 1, "BIKE-cleaning-storage-4": 0}),
    ("408", "truing a wheel", "How do you true a wheel that bulges to the left?",
     "Relevant: truing with a spoke key; checking a wheel for wobble is partly relevant.",
     {"BIKE-wheels-2": 2, "BIKE-wheels-1": 1, "BIKE-wheels-3": 0}),
]


def sections(note: Path) -> list[tuple[str, str]]:
    """(section heading, text) of each `##` section of a note."""
    text = note.read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return [(parts[i].strip(), parts[i + 1].strip()) for i in range(1, len(parts), 2)]


def main() -> None:
    out = ROOT / "data" / "trec"
    out.mkdir(exist_ok=True)
    docs = []
    for note in sorted((ROOT / "data" / "docs").glob("*.md")):
        title = note.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        for n, (heading, body) in enumerate(sections(note), start=1):
            body = body.replace("&", "&amp;").replace("<", "&lt;")
            docs.append(f"<DOC>\n<DOCNO> BIKE-{note.stem}-{n} </DOCNO>\n<HEADLINE> {title}: {heading} </HEADLINE>\n"
                        f"<TEXT>\n{body}\n</TEXT>\n</DOC>\n")
    (out / "bikes.trec").write_text("".join(docs), encoding="utf-8")
    (out / "topics.txt").write_text("".join(
        f"<top>\n<num> Number: {num}\n<title> {title}\n\n<desc> Description:\n{desc}\n\n<narr> Narrative:\n{narr}\n\n</top>\n\n"
        for num, title, desc, narr, _ in TOPICS), encoding="utf-8")
    (out / "qrels.txt").write_text("".join(f"{num} 0 {doc} {grade}\n" for num, *_, judged in TOPICS
                                           for doc, grade in judged.items()), encoding="utf-8")
    print(f"{len(docs)} documents, {len(TOPICS)} topics -> {out}")


if __name__ == "__main__":
    main()
