"""Small but complete report inputs, hostile text included, shared by the report tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

HOSTILE = "<script>alert(1)</script>"
QUERIES = [HOSTILE, "q2", "q3", "q4", "q5", "q6", "q7", "q8"]
WARNING_BOX = re.compile(r'<p class="warning"><strong>Warning:</strong> ([^<]*)</p>')


def ignore(message: str) -> None:
    """A warn callback for the tests of something else."""


def warning_boxes(page: str) -> list[str]:
    """The text of each warning box after its "Warning:" label; a box without the label is not found."""
    return WARNING_BOX.findall(page)


def top_warnings(page: str) -> list[str]:
    """The warnings between the signature and the first section."""
    start = page.index("</section>")
    return warning_boxes(page[start:page.index("<section", start)])


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
        # the gold chunks: the same as the derived labels but for queries 5 and 6, whose relevant chunk is x
        "gold": put("gold.qrels", "".join(f"{q} 0 {'x' if i in (5, 6) else 'c'}{i} 1\n" for i, q in enumerate(QUERIES))),
    }
    # as `semrel agree gold.qrels qrels.txt bm25.run '<i>rr.run' --unlisted-as-zero -f json` writes it
    files["agreement"] = put("agreement.json", json.dumps({
        "ref": files["gold"], "test": files["qrels"], "unlisted_as_zero": True,
        "labels": {"n": 10, "percent_agreement": 60.0, "kappa": 0.2, "kappa_low": -0.35, "kappa_high": 0.7, "weights": "none",
                   "labels": [0, 1], "confusion": [[0, 2], [2, 6]]},
        "rankings": [{"measure": "RR", "tau": -1.0, "ref": {"bm25": 0.5, "<i>rr": 0.4375}, "test": {"bm25": 0.5, "<i>rr": 0.9375},
                      "swapped": [["bm25", "<i>rr"]]}],
    }))
    (folder / "judgments.jsonl.manifest.json").write_text(json.dumps({"params": {
        "model": "all-MiniLM-L6-v2", "layer": 4, "rescale": "corpus", "baseline": {"source": "corpus", "P": 0.1},
        "note": HOSTILE}}), encoding="utf-8")
    (folder / "qrels.txt.manifest.json").write_text(json.dumps({"params": {"on": "F", "thresholds": [0.6]}}),
                                                    encoding="utf-8")
    (folder / "gold.qrels.manifest.json").write_text(json.dumps({"params": {"from": "golden set"}}), encoding="utf-8")
    return files


def report_args(files: dict[str, str]) -> list[str]:
    return [files["qrels"], files["base"], files["reranked"], "--gold-qrels", files["gold"], "--golden", files["golden"],
            "--corpus", files["corpus"],
            "--judgments", files["judgments"], "--base", files["base"], "--reranked", files["reranked"],
            "--sensitivity", files["sensitivity"], "--agreement", files["agreement"], "-m", "RR,P@1",
            "--permutations", "200", "--bootstrap", "200"]


def realistic_files(folder: Path, cli) -> list[str]:
    """Report inputs shaped like a real pipeline's (no model: judge scores are drawn, the rest is made by
    `semrel label`, `golden qrels`, `sensitivity` and `agree`); returns the `semrel report` arguments."""
    import numpy as np

    rng = np.random.default_rng(7)
    queries = [f"q{n}" for n in range(40)]
    chunks = [f"doc{d}#{c}" for d in range(50) for c in range(4)]
    gold = {q: chunks[(n * 7) % len(chunks)] for n, q in enumerate(queries)}
    quality = {"bm25": 0.55, "dense": 0.4, "hybrid": 0.6}

    def put(name: str, text: str) -> str:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return str(path)

    put("corpus.jsonl", "".join(json.dumps({"_id": c, "title": "", "text": f"text of {c}", "doc_id": c.split("#")[0]}) + "\n"
                                for c in chunks))
    golden = put("golden.jsonl", "".join(json.dumps({"query_id": q, "query": f"question {q}?", "reference_answer": "an answer",
                                                     "gold_chunk_ids": [gold[q]]}) + "\n" for q in queries))
    runs, pooled, first = [], set(), {}
    for name, p in [*quality.items(), ("bm25+dense", 0.0)]:
        lines = []
        for q in queries:
            if name == "bm25+dense":  # bm25's 20 chunks reordered: the gold chunk moves a little
                ranking = [c for c in first[q] if c != gold[q]]
                at = first[q].index(gold[q]) if gold[q] in first[q] else None
                if at is not None:
                    ranking.insert(max(0, min(19, at + int(rng.integers(-3, 3)))), gold[q])
            else:
                others = [c for c in rng.permutation(chunks)[:21].tolist() if c != gold[q]][:19]
                rank = int(rng.geometric(p)) - 1
                ranking = others[:rank] + [gold[q]] + others[rank:] if rank < 20 else others + [chunks[0]]
            ranking = ranking[:20]
            first.setdefault(q, ranking)
            lines += [f"{q} Q0 {c} {r + 1} {20 - r} {name}\n" for r, c in enumerate(ranking)]
            pooled |= {(q, c) for c in ranking[:10]}
        runs.append(put(f"runs/{name}.run", "".join(lines)))
    judged = sorted(pooled | {(q, gold[q]) for q in queries})
    put("judgments.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": s - 0.05, "R": s, "F": s - 0.02, "source": "pool"})
                                   + "\n" for q, c in judged
                                   for s in [float(np.clip(rng.normal(0.77 if c == gold[q] else 0.6, 0.06), 0, 1))]))

    def ok(*args):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        return result

    ok("label", str(folder / "judgments.jsonl"), "--threshold", "0.7", "-o", str(folder / "derived.qrels"))
    ok("golden", "qrels", golden, "-o", str(folder / "gold.qrels"))
    ok("sensitivity", str(folder / "judgments.jsonl"), *runs, "-m", "nDCG@10", "--step", "0.02", "--permutations", "200",
       "--bootstrap", "200", "--curves", str(folder / "sensitivity.csv"))
    agree = ok("agree", str(folder / "gold.qrels"), str(folder / "derived.qrels"), *runs, "--unlisted-as-zero", "-f", "json")
    put("agreement.json", agree.stdout)
    return [str(folder / "derived.qrels"), *runs, "--gold-qrels", str(folder / "gold.qrels"), "--golden", golden,
            "--corpus", str(folder / "corpus.jsonl"), "--judgments", str(folder / "judgments.jsonl"),
            "--base", runs[0], "--reranked", runs[3], "--sensitivity", str(folder / "sensitivity.csv"),
            "--agreement", str(folder / "agreement.json"), "-m", "nDCG@10,AP,RR,P@10", "--permutations", "500",
            "--bootstrap", "500", "--title", "semrel report (drawn data)"]
