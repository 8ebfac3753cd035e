"""A six-chunk corpus with one obvious answer per query, written as real files by the retrieval tests."""

from __future__ import annotations

import json
from pathlib import Path

TEXTS = {
    "cats#0": "Domestic cats purr when they are content and sleep most of the day.",
    "ships#0": "Container ships carry steel boxes across the ocean between large ports.",
    "bread#0": "Sourdough bread rises slowly because wild yeast ferments the dough.",
    "volcano#0": "A volcano erupts when molten rock and gas escape from the magma chamber.",
    "chess#0": "In chess the queen is the most powerful piece on the board.",
    "rain#0": "Rain forms when water vapour condenses into droplets heavy enough to fall.",
}


def write_corpus(path: Path, texts: dict[str, str] = TEXTS) -> Path:
    path.write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in texts.items()))
    return path


def write_golden(path: Path, rows: list[tuple[str, str, str, list[str]]]) -> Path:
    """Rows of (query id, query, reference answer, gold chunk ids)."""
    path.write_text("".join(
        json.dumps({"query_id": q, "query": t, "reference_answer": a, "gold_chunk_ids": g}) + "\n" for q, t, a, g in rows
    ))
    return path
