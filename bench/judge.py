"""Speed, memory and agreement of `semrel judge` against bert_score on real text.

    python bench/judge.py [--pairs 2000]

Builds N unique (chunk, answer) pairs from COVID-QA (../shared/data): chunks are 150-word
windows of the articles every 100 words, answers the real expert answers of 10-40 words from the same
article. Then runs, each in its own subprocess so that each peak RSS is its own:

  bert_score   bert_score.score(cands, refs, model_type=<all-MiniLM-L6-v2>, num_layers=6), defaults otherwise
  semrel       semrel.judge on the same pairs with an empty embedding cache (cold)
  semrel warm  the same again, the cache now filled
  ceiling      the bare encoder forward pass over the same unique texts in length-sorted batches
               (model loading and tokenizing not timed: a stricter ceiling than the others get)

and prints pairs/s, ratios, peak RSS and the largest score difference. Timings cover the scoring
call (model loading included, interpreter start and imports not); peak RSS is the whole process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SEMREL_DATA", ROOT.parent / "shared" / "data")) / "covid_qa_deepset" / "200423_covidQA.json"
CHUNK_WORDS = 150
CHUNK_STRIDE = 100  # windows overlap by 50 words: distinct texts, enough of them for 2,000 pairs


def build_pairs(count: int) -> tuple[list[str], list[str]]:
    """`count` unique (150-word chunk, 10-40-word answer) pairs, taken round-robin over the articles."""
    per_article = []
    for article in json.loads(DATA.read_text(encoding="utf-8"))["data"]:
        paragraph = article["paragraphs"][0]
        words = paragraph["context"].split()
        chunks = [" ".join(words[k : k + CHUNK_WORDS]) for k in range(0, len(words) - CHUNK_WORDS + 1, CHUNK_STRIDE)]
        answers = [a["text"].strip() for qa in paragraph["qas"] for a in qa["answers"][:1] if 10 <= len(a["text"].split()) <= 40]
        if chunks and answers:
            per_article.append([(c, answers[i % len(answers)]) for i, c in enumerate(chunks)])
    pairs: list[tuple[str, str]] = []
    for depth in range(max(len(p) for p in per_article)):
        pairs += [p[depth] for p in per_article if depth < len(p)]
    if len(pairs) < count:
        raise SystemExit(f"only {len(pairs)} pairs available")
    return [c for c, _ in pairs[:count]], [a for _, a in pairs[:count]]


def write_inputs(folder: Path, cands: list[str], refs: list[str]) -> None:
    """corpus.jsonl, golden.jsonl (one query per pair) and pool.tsv for semrel."""
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as corpus, open(folder / "golden.jsonl", "w", encoding="utf-8") as golden:
        for i, (c, r) in enumerate(zip(cands, refs)):
            corpus.write(json.dumps({"_id": f"c{i}", "text": c}) + "\n")
            golden.write(json.dumps({"query_id": f"q{i}", "query": "?", "reference_answer": r}) + "\n")
    (folder / "pool.tsv").write_text("query_id\tchunk_id\tsources\n" + "".join(f"q{i}\tc{i}\tbench\n" for i in range(len(cands))))


def child(name: str, folder: Path) -> None:
    """One measured run; writes <name>.json (seconds, peak RSS) and <name>.npy (P, R, F per pair)."""
    sys.path.insert(0, str(ROOT / "src"))
    from semrel.encoding.models import resolve_model

    pairs = json.loads((folder / "pairs.json").read_text())
    cands, refs = pairs["cands"], pairs["refs"]
    scores, extra = None, {}
    if name == "bert_score":
        import bert_score

        start = time.perf_counter()
        P, R, F = bert_score.score(cands, refs, model_type=resolve_model(), num_layers=6)
        seconds = time.perf_counter() - start
        scores = np.stack([P.numpy(), R.numpy(), F.numpy()], axis=1)
    elif name.startswith("semrel"):
        if name == "semrel":  # imported untimed, as bert_score's are; a warm run never imports them
            import torch  # noqa: F401
            import transformers  # noqa: F401
        from semrel.judging.judge import judge

        start = time.perf_counter()
        result = judge(folder / "corpus.jsonl", folder / "golden.jsonl", folder / "pool.tsv", cache=folder / "cache")
        seconds = time.perf_counter() - start
        scores = np.array([[j.P, j.R, j.F] for j in result.judgments])
        extra = {"encoded": result.encoded, "cached": result.cached, "windowed": result.windowed}
    else:
        from semrel.encoding.encode import forward_batches
        from semrel.encoding.models import load_encoder
        from semrel.judging.judge import JudgeOptions

        texts = sorted(set(cands) | set(refs))
        start = time.perf_counter()
        tokenizer, _ = load_encoder(None)
        ids = tokenizer(texts, truncation=True, max_length=512)["input_ids"]
        loaded = time.perf_counter()
        for _ in forward_batches(ids, max_tokens=JudgeOptions.max_tokens):  # semrel's batch size
            pass
        seconds = time.perf_counter() - loaded  # the forward pass alone
        extra = {"texts": len(texts), "load_and_tokenize_seconds": loaded - start}
    if scores is not None:
        np.save(folder / f"{name}.npy", scores)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    (folder / f"{name}.json").write_text(json.dumps({"seconds": seconds, "peak_rss": peak, **extra}))


def measure(name: str, folder: Path) -> dict:
    started = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", name, "--folder", str(folder)], check=True)
    return {**json.loads((folder / f"{name}.json").read_text()), "process_seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.folder)
    cands, refs = build_pairs(args.pairs)
    with tempfile.TemporaryDirectory(prefix="semrel-bench-judge-") as tmp:
        folder = Path(tmp)
        (folder / "pairs.json").write_text(json.dumps({"cands": cands, "refs": refs}))
        write_inputs(folder, cands, refs)
        print(f"{len(cands)} pairs: {len(set(cands))} unique chunks (~{CHUNK_WORDS} words), "
              f"{len(set(refs))} unique answers (mean {np.mean([len(r.split()) for r in refs]):.1f} words)", flush=True)
        runs = {name: measure(name, folder) for name in ("ceiling", "bert_score", "semrel", "semrel_warm")}
        theirs, ours = np.load(folder / "bert_score.npy"), np.load(folder / "semrel.npy")
        warm = np.load(folder / "semrel_warm.npy")
    n = len(cands)
    print(f"\n{'run':<12} {'seconds':>8} {'pairs/s':>8} {'peak RSS':>9}")
    for name, run in runs.items():
        print(f"{name:<12} {run['seconds']:8.2f} {n / run['seconds']:8.1f} {run['peak_rss'] / 2**20:7.0f}MB")
    diff = np.abs(ours - theirs)
    print(f"\nsemrel / bert_score pairs/s:   {runs['bert_score']['seconds'] / runs['semrel']['seconds']:.2f}x (target >= 2x)")
    print(f"semrel / ceiling pairs/s:      {runs['ceiling']['seconds'] / runs['semrel']['seconds']:.1%} (target >= 90%)")
    print(f"semrel / bert_score peak RSS:  {runs['semrel']['peak_rss'] / runs['bert_score']['peak_rss']:.1%} (target <= 50%)")
    print(f"warm cache speed-up:           {runs['semrel']['seconds'] / runs['semrel_warm']['seconds']:.1f}x call, "
          f"{runs['semrel']['process_seconds'] / runs['semrel_warm']['process_seconds']:.1f}x process (target >= 20x)")
    print(f"max |semrel - bert_score|:     P {diff[:, 0].max():.2e}  R {diff[:, 1].max():.2e}  F {diff[:, 2].max():.2e}; "
          f"{int((diff.max(axis=1) > 1e-5).sum())} pairs over 1e-5 (bert_score leaves the longest pair of each "
          "64-pair batch unpadded, so only there a negative best cosine is not counted as 0)")
    print(f"warm == cold scores:           {bool(np.array_equal(warm, ours))}; "
          f"chunks windowed: {runs['semrel']['windowed']}; texts encoded cold/warm: "
          f"{runs['semrel']['encoded']}/{runs['semrel_warm']['encoded']}")


if __name__ == "__main__":
    main()
