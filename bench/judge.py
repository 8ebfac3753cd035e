"""Speed, memory, start-up and agreement of `semrel judge` against bert_score, per encoder precision.

    python bench/judge.py [--pairs 2000] [--modes exact,int8] [--no-agreement]

Builds N unique (chunk, answer) pairs from COVID-QA (../shared/data): chunks are 150-word windows of
the articles every 100 words, answers the real expert answers of 10-40 words from the same article
(a pair is gold when the chunk holds its answer verbatim). Then runs, each in its own subprocess so
that each peak RSS and each process time is its own:

  bert_score    bert_score.score(cands, refs, model_type=<all-MiniLM-L6-v2>, num_layers=6), defaults otherwise
  semrel        semrel.judge on the same pairs with an empty embedding cache (cold), --precision exact,
                --null-sample 0: P, R and F only, the work bert_score does
  semrel warm   the same again, the cache now filled
  semrel int8   (and each other mode of --modes) cold, at that precision
  semrel+p      the default judge, with the probability p (cold, then warm): one pair per query here, so
                its null sample adds 25 pairs per pair, the most it can (--no-p skips these two)
  ceiling       the bare encoder forward pass over the same unique texts in length-sorted batches
                (model loading and tokenizing not timed: a stricter ceiling than the others get; --no-ceiling skips it)

and prints, per run, in wall and CPU seconds (CPU: steadier on a shared machine): the scoring call's
seconds and pairs/s (model loading included, interpreter start and imports not), the whole process's
seconds (interpreter start, imports, model load, scoring, exit: what a user waits for), time to the
first scored pair, and peak RSS; the largest score differences (to bert_score, and of each mode to
exact). Agreement (unless --no-agreement): kappa of the default label (R >= 0.70) and the best kappa
over thresholds, against gold, per mode, on these COVID-QA pairs and on the MS MARCO sample (250
queries, each answer against its ~8 Bing passages, gold = is_selected).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from measured import measured
from shared_data import SHARED_DATA

STARTED = time.perf_counter()  # as early as this process can tell: the interpreter is already up
CPU_STARTED = time.process_time()
ROOT = Path(__file__).resolve().parent.parent
SHARED = SHARED_DATA
DATA = SHARED / "covid_qa_deepset" / "200423_covidQA.json"
MSMARCO = [SHARED / "msmarco_qna_v11" / name for name in ("rag-robustness_ms_marco_sample.json", "ifn647_sample.json")]
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


def msmarco_pairs() -> tuple[list[str], list[str], list[int]]:
    """(passage, answer, is_selected) for every passage of every MS MARCO sample query with an answer."""
    cands, refs, gold = [], [], []
    for path in MSMARCO:
        for row in json.loads(path.read_text(encoding="utf-8")):
            answers = [a for a in row.get("answers") or [] if a.strip() and a.strip() != "No Answer Present."]
            passages = row["passages"]
            if isinstance(passages, dict):  # Hugging Face layout
                texts, selected = passages["passage_text"], passages["is_selected"]
            else:  # the official v1.1 layout
                texts, selected = [p["passage_text"] for p in passages], [p["is_selected"] for p in passages]
            if answers:
                for text, chosen in zip(texts, selected):
                    cands.append(text)
                    refs.append(answers[0])
                    gold.append(int(chosen))
    return cands, refs, gold


def write_inputs(folder: Path, cands: list[str], refs: list[str]) -> None:
    """corpus.jsonl, golden.jsonl (one query per pair) and pool.tsv for semrel."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as corpus, open(folder / "golden.jsonl", "w", encoding="utf-8") as golden:
        for i, (c, r) in enumerate(zip(cands, refs)):
            corpus.write(json.dumps({"_id": f"c{i}", "text": c}) + "\n")
            golden.write(json.dumps({"query_id": f"q{i}", "query": "?", "reference_answer": r}) + "\n")
    (folder / "pool.tsv").write_text("query_id\tchunk_id\tsources\n" + "".join(f"q{i}\tc{i}\tbench\n" for i in range(len(cands))))
    (folder / "pairs.json").write_text(json.dumps({"cands": cands, "refs": refs}))


def child(name: str, folder: Path) -> None:
    """One measured run; writes <name>.json (seconds, peak RSS, ...) and <name>.npy (P, R, F per pair)."""
    sys.path.insert(0, str(ROOT / "src"))
    main_started = time.perf_counter()
    pairs = json.loads((folder / "pairs.json").read_text())
    cands, refs = pairs["cands"], pairs["refs"]
    scores, extra = None, {}
    if name == "bert_score":
        import bert_score

        from semrel.encoding.models import resolve_model

        imported, cpu = time.perf_counter(), time.process_time()
        P, R, F = bert_score.score(cands, refs, model_type=resolve_model(), num_layers=6)
        seconds, cpu = time.perf_counter() - imported, time.process_time() - cpu
        scores = np.stack([P.numpy(), R.numpy(), F.numpy()], axis=1)
        extra = {"import_seconds": imported - main_started}
    elif name.startswith("semrel"):
        kind, _, precision = name.partition("_")
        precision = precision or "exact"
        if precision != "warm":  # imported untimed, as bert_score's are; a warm run never imports them
            import torch  # noqa: F401
            import transformers  # noqa: F401
        from semrel.encoding.engines import make_engine
        from semrel.judging.judge import judge

        imported, cpu = time.perf_counter(), time.process_time()
        first: list[float] = []

        def steps(label, total):
            import contextlib

            @contextlib.contextmanager
            def manager():
                yield lambda n: first.append(time.perf_counter()) if not first else None
            return manager()

        engine = make_engine("local", device="cpu", precision="exact" if precision == "warm" else precision)
        options = {} if kind == "semrel+p" else {"null_sample": 0}
        result = judge(folder / "corpus.jsonl", folder / "golden.jsonl", folder / "pool.tsv", cache=folder / f"cache-{kind}",
                       engine=engine, steps=steps, **options)
        seconds, cpu = time.perf_counter() - imported, time.process_time() - cpu
        scores = np.array([[j.P, j.R, j.F] for j in result.judgments])
        extra = {"encoded": result.encoded, "cached": result.cached, "windowed": result.windowed, "null_pairs": result.null_pairs,
                 "import_seconds": imported - main_started, "first_pair_seconds": (first[0] if first else time.perf_counter()) - STARTED}
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
        cpu = time.process_time() - CPU_STARTED
        extra = {"texts": len(texts), "load_and_tokenize_seconds": loaded - start}
    if scores is not None:
        np.save(folder / f"{name}.npy", scores)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    (folder / f"{name}.json").write_text(json.dumps({"seconds": seconds, "cpu": cpu, "peak_rss": peak,
                                                     "main_seconds": time.perf_counter() - STARTED, **extra}))


def measure(name: str, folder: Path) -> dict:
    load = os.getloadavg()[0]
    child = measured([sys.executable, __file__, "--child", name, "--folder", str(folder)])
    return {**json.loads((folder / f"{name}.json").read_text()), "process_seconds": child.seconds, "process_cpu": child.cpu_seconds,
            "load": load}


def kappas(scores: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """(kappa of the default label, best kappa over thresholds, that threshold) of R against gold."""
    sys.path.insert(0, str(ROOT / "src"))
    from semrel.analysis.agreement import cohen_kappa
    from semrel.analysis.calibrate import best_thresholds
    from semrel.judging import labels

    r = scores[:, labels.COMPONENTS.index(labels.DEFAULT_COMPONENT)]
    best = best_thresholds(r, gold, 1, "none")[0]
    return (cohen_kappa(gold, labels.reached(r, [labels.DEFAULT_THRESHOLD])), cohen_kappa(gold, labels.reached(r, [best])), best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--modes", default="exact,int8", help="encoder precisions judged (exact always)")
    parser.add_argument("--no-agreement", action="store_true", help="skip the MS MARCO judging runs")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the bare forward pass")
    parser.add_argument("--no-p", action="store_true", help="skip the default judge's runs (with the probability p)")
    parser.add_argument("--out", type=Path, default=None, help="JSON file for the figures")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.folder)
    modes = ["exact"] + [m for m in args.modes.split(",") if m and m != "exact"]
    cands, refs = build_pairs(args.pairs)
    covid_gold = np.array([int(" ".join(r.split()) in c) for c, r in zip(cands, refs)])
    with tempfile.TemporaryDirectory(prefix="semrel-bench-judge-") as tmp:
        folder = Path(tmp)
        write_inputs(folder, cands, refs)
        print(f"{len(cands)} pairs: {len(set(cands))} unique chunks (~{CHUNK_WORDS} words), "
              f"{len(set(refs))} unique answers (mean {np.mean([len(r.split()) for r in refs]):.1f} words), "
              f"{int(covid_gold.sum())} gold (the chunk holds the answer)", flush=True)
        names = (["ceiling"] * (not args.no_ceiling) + ["bert_score", "semrel", "semrel_warm"] + [f"semrel_{m}" for m in modes[1:]]
                 + ["semrel+p", "semrel+p_warm"] * (not args.no_p))
        runs = {name: measure(name, folder) for name in names}
        scores = {name: np.load(folder / f"{name}.npy") for name in runs if name != "ceiling"}
        marco: dict[str, np.ndarray] = {}
        marco_runs: dict[str, dict] = {}
        if not args.no_agreement:
            m_cands, m_refs, m_gold = msmarco_pairs()
            marco_folder = folder / "msmarco"
            write_inputs(marco_folder, m_cands, m_refs)
            for mode in modes:
                name = "semrel" if mode == "exact" else f"semrel_{mode}"
                marco_runs[mode] = measure(name, marco_folder)
                marco[mode] = np.load(marco_folder / f"{name}.npy")
    n = len(cands)
    print("\nwall seconds, and CPU seconds (user + system, all threads: steadier than wall time on a shared machine)")
    print(f"{'run':<12} {'call s':>7} {'call CPU':>8} {'pairs/CPU-s':>11} {'process s':>9} {'process CPU':>11} {'1st pair s':>10} "
          f"{'peak RSS':>9} {'load':>5}")
    for name, run in runs.items():
        first = f"{run['first_pair_seconds']:.1f}" if "first_pair_seconds" in run else "-"
        print(f"{name:<12} {run['seconds']:7.1f} {run['cpu']:8.1f} {n / run['cpu']:11.2f} {run['process_seconds']:9.1f} "
              f"{run['process_cpu']:11.1f} {first:>10} {run['peak_rss'] / 2**20:7.0f}MB {run['load']:5.1f}")
    theirs, ours, warm = scores["bert_score"], scores["semrel"], scores["semrel_warm"]
    diff = np.abs(ours - theirs)
    bs, sr = runs["bert_score"], runs["semrel"]
    print(f"\nsemrel / bert_score, scoring call:                {bs['seconds'] / sr['seconds']:.2f}x wall, "
          f"{bs['cpu'] / sr['cpu']:.2f}x CPU")
    print(f"semrel / bert_score, whole process (start incl.): {bs['process_seconds'] / sr['process_seconds']:.2f}x wall, "
          f"{bs['process_cpu'] / sr['process_cpu']:.2f}x CPU (target >= 1.6x)")
    if "ceiling" in runs:
        print(f"semrel / ceiling pairs/s:      {runs['ceiling']['seconds'] / sr['seconds']:.1%}")
    print(f"semrel / bert_score peak RSS:  {sr['peak_rss'] / bs['peak_rss']:.1%}")
    print(f"start-up, semrel: interpreter + imports {sr['process_seconds'] - sr['main_seconds'] + sr['import_seconds']:.1f} s, "
          f"first pair scored {sr['first_pair_seconds']:.1f} s after start; bert_score imports {bs['import_seconds']:.1f} s")
    print(f"warm cache speed-up:           {sr['seconds'] / runs['semrel_warm']['seconds']:.1f}x call, "
          f"{sr['process_seconds'] / runs['semrel_warm']['process_seconds']:.1f}x process")
    print(f"max |semrel - bert_score|:     P {diff[:, 0].max():.2e}  R {diff[:, 1].max():.2e}  F {diff[:, 2].max():.2e}; "
          f"warm == cold scores: {bool(np.array_equal(warm, ours))}; "
          f"texts encoded cold/warm: {sr['encoded']}/{runs['semrel_warm']['encoded']}")
    if "semrel+p" in runs:
        cold, warm_p = runs["semrel+p"], runs["semrel+p_warm"]
        print(f"the default judge (with p) over --null-sample 0: cold {cold['cpu'] / sr['cpu']:.2f}x CPU, "
              f"warm {warm_p['cpu'] / runs['semrel_warm']['cpu']:.2f}x CPU; peak RSS {cold['peak_rss'] / 2**20:.0f} / "
              f"{warm_p['peak_rss'] / 2**20:.0f} MB; bert_score / default, whole process: "
              f"{bs['process_cpu'] / cold['process_cpu']:.2f}x CPU; p's null pairs: {cold['null_pairs']:,} "
              f"({cold['null_pairs'] / n:.0f} per pair)")
    figures: dict = {"pairs": n, "runs": runs, "modes": {}}
    print(f"\n{'mode':<6} {'pairs/CPU-s':>11} {'vs exact':>8} {'vs bert_score':>13} {'process vs bs':>13} {'peak RSS':>9} "
          f"{'max|d| COVID':>12} {'max|d| MARCO':>12}  kappa R>=0.70 (best) COVID-QA | MS MARCO  (speed ratios in CPU time)")
    for mode in modes:
        run = runs["semrel" if mode == "exact" else f"semrel_{mode}"]
        mine = scores["semrel" if mode == "exact" else f"semrel_{mode}"]
        d_covid = float(np.abs(mine - ours).max())
        d_marco = float(np.abs(marco[mode] - marco["exact"]).max()) if marco else float("nan")
        k_covid = kappas(mine, covid_gold)
        k_marco = kappas(marco[mode], np.array(m_gold)) if marco else (float("nan"),) * 3
        base_covid = kappas(ours, covid_gold)
        base_marco = kappas(marco["exact"], np.array(m_gold)) if marco else (float("nan"),) * 3
        figures["modes"][mode] = {"pairs_s": n / run["seconds"], "pairs_cpu_s": n / run["cpu"], "peak_mb": run["peak_rss"] / 2**20,
                                  "max_diff_covid": d_covid,
                                  "max_diff_msmarco": d_marco, "kappa_covid": k_covid, "kappa_msmarco": k_marco,
                                  "msmarco_pairs_cpu_s": len(marco[mode]) / marco_runs[mode]["cpu"] if marco else None}
        print(f"{mode:<6} {n / run['cpu']:11.2f} {sr['cpu'] / run['cpu']:7.2f}x {bs['cpu'] / run['cpu']:12.2f}x "
              f"{bs['process_cpu'] / run['process_cpu']:12.2f}x {run['peak_rss'] / 2**20:7.0f}MB {d_covid:12.2e} {d_marco:12.2e}  "
              f"{k_covid[0]:.3f} ({k_covid[1]:.3f} at {k_covid[2]:.3f}), change {k_covid[0] - base_covid[0]:+.3f} | "
              f"{k_marco[0]:.3f} ({k_marco[1]:.3f} at {k_marco[2]:.3f}), change {k_marco[0] - base_marco[0]:+.3f}")
    if marco:
        print(f"MS MARCO: {len(marco['exact'])} pairs, {int(np.sum(m_gold))} gold; "
              + ", ".join(f"{m} {len(marco[m]) / marco_runs[m]['cpu']:.2f} pairs/CPU-s" for m in modes))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1, default=float))


if __name__ == "__main__":
    main()
