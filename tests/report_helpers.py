"""Small but complete report inputs, hostile text included, shared by the report tests."""

from __future__ import annotations

import json
from pathlib import Path

HOSTILE = "<script>alert(1)</script>"
QUERIES = [HOSTILE, "q2", "q3", "q4", "q5", "q6", "q7", "q8"]


def report_files(folder: Path) -> dict[str, str]:
    """Write qrels, two runs (the second reranks the first), golden, corpus, judgments with a
    manifest, sensitivity rows and agreement figures; return their paths by name."""
    def put(name: str, text: str) -> str:
        path = folder / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    files = {
        "qrels": put("qrels.txt", "".join(f"{q} 0 c{i} 1\n" for i, q in enumerate(QUERIES))),
        # base: the relevant chunk second; reranked: first for all but the last query
        "base": put("bm25.run", "".join(f"{q} Q0 x{i} 1 2 bm25\n{q} Q0 c{i} 2 1 bm25\n" for i, q in enumerate(QUERIES))),
        "reranked": put("<i>rr.run", "".join(
            f"{q} Q0 c{i} 1 {2 if i < 7 else 1} rr\n{q} Q0 x{i} 2 {1 if i < 7 else 2} rr\n" for i, q in enumerate(QUERIES))),
        "corpus": put("corpus.jsonl", "".join(
            json.dumps({"_id": f"{p}{i}", "title": "", "text": f"{HOSTILE} text {p}{i}"}) + "\n"
            for i in range(len(QUERIES)) for p in "cx")),
        "golden": put("golden.jsonl", "".join(
            json.dumps({"query_id": q, "query": f"what is {HOSTILE}?", "reference_answer": HOSTILE,
                        "gold_chunk_ids": [f"c{i}"]}) + "\n" for i, q in enumerate(QUERIES))),
        "judgments": put("judgments.jsonl", "".join(
            json.dumps({"query_id": q, "chunk_id": f"{p}{i}", "P": s - 0.1, "R": s, "F": s - 0.05, "source": "bm25"}) + "\n"
            for i, q in enumerate(QUERIES) for p, s in (("c", 0.7 + i / 100), ("x", 0.4 + i / 50)))),
        "sensitivity": put("sensitivity.tsv", "threshold\trun\tmeasure\tvalue\n" + "".join(
            f"{t}\t{run}\t{m}\t{v - t / 4}\n" for t in (0.5, 0.6, 0.7) for run, v in (("bm25", 0.6), (HOSTILE, 0.7))
            for m in ("RR", "P@1"))),
        "agreement": put("agreement.json", json.dumps({"kappa": 0.61234, HOSTILE: {"linear": 0.7}, "pairs": 40})),
    }
    (folder / "judgments.jsonl.manifest.json").write_text(json.dumps({"params": {
        "model": "all-MiniLM-L6-v2", "layer": 4, "rescale": "corpus", "baseline": {"source": "corpus", "P": 0.1},
        "note": HOSTILE}}), encoding="utf-8")
    (folder / "qrels.txt.manifest.json").write_text(json.dumps({"params": {"on": "F", "thresholds": [0.6]}}),
                                                    encoding="utf-8")
    return files


def report_args(files: dict[str, str]) -> list[str]:
    return [files["qrels"], files["base"], files["reranked"], "--golden", files["golden"], "--corpus", files["corpus"],
            "--judgments", files["judgments"], "--base", files["base"], "--reranked", files["reranked"],
            "--sensitivity", files["sensitivity"], "--agreement", files["agreement"], "-m", "RR,P@1",
            "--permutations", "200", "--bootstrap", "200"]
