"""How far derived labels agree with the gold as the reference answers get shorter (docs/judge.md, "Short answers").

    python bench/answer_length.py [--work out/bench-answer-length]

Both MS MARCO QnA samples of ../shared/data (250 queries; human answers, is_selected over each query's passages) and
300 COVID-QA questions (150-word chunks, seed 0) are imported, BM25's top 20 pooled with the gold chunks, judged and
labelled at the shipped default (`semrel golden import`, `retrieve`, `pool`, `judge`, `label`), and Cohen's kappa of
the labels against the gold printed per family and length of the query's longest answer in words. MS MARCO writes
many answers as one word ("Yes", a name, a number), which is what the judge's short-answer warning is about; COVID-QA's
short answers are spans of their chunk. is_selected marks the passage an annotator used, not every relevant one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

from measured import SEMREL
from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parent.parent
SETS = {  # name: the import's source and options
    "msmarco-ifn647": (("msmarco_qna_v11", "ifn647_sample.json"), ()),
    "msmarco-rag-robustness": (("msmarco_qna_v11", "rag-robustness_ms_marco_sample.json"), ()),
    "covid150": (("covid_qa_deepset", "200423_covidQA.json"), ("--size", 150, "--sample", 300)),
}
FAMILIES = {"MS MARCO": ("msmarco-ifn647", "msmarco-rag-robustness"), "COVID-QA": ("covid150",)}
BUCKETS = ((1, "1"), (2, "2"), (5, "3-5"), (10**9, "6 or more"))


def semrel(*args: object) -> None:
    subprocess.run([*SEMREL, *map(str, args)], check=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def qrels(path: Path) -> dict[str, dict[str, int]]:
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        query, _, doc, grade = line.split()
        grades[query][doc] = int(grade)
    return grades


def labelled(work: Path, name: str) -> Path:
    """The set's folder with golden.jsonl, gold.qrels and labels.qrels (made unless there)."""
    folder = work / name
    if (folder / "labels.qrels").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    (data, file), options = SETS[name]
    semrel("golden", "import", SHARED_DATA / data / file, *options, "--corpus-out", folder / "corpus.jsonl",
           "-o", folder / "golden.jsonl")
    semrel("golden", "qrels", folder / "golden.jsonl", "-o", folder / "gold.qrels")
    semrel("retrieve", "--corpus", folder / "corpus.jsonl", "--golden", folder / "golden.jsonl", "--method", "bm25", "-k", 20,
           "-o", folder / "bm25.run")
    semrel("pool", folder / "bm25.run", "--golden", folder / "golden.jsonl", "-o", folder / "pool.tsv")
    semrel("judge", "--corpus", folder / "corpus.jsonl", "--golden", folder / "golden.jsonl", "--pool", folder / "pool.tsv",
           "-o", folder / "judgments.jsonl")
    semrel("label", folder / "judgments.jsonl", "-o", folder / "labels.qrels")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-answer-length")
    args = parser.parse_args()
    print(f"{'set':>9}  {'answer words':>12}  {'queries':>7}  {'pairs':>6}  {'kappa':>6}")
    for family, names in FAMILIES.items():
        gold: dict[str, list[int]] = defaultdict(list)
        derived: dict[str, list[int]] = defaultdict(list)
        queries: dict[str, int] = defaultdict(int)
        for name in names:
            folder = labelled(args.work, name)
            items = [json.loads(line) for line in (folder / "golden.jsonl").read_text().splitlines() if line.strip()]
            truth, labels = qrels(folder / "gold.qrels"), qrels(folder / "labels.qrels")
            for item in items:
                answers = item["reference_answer"] if isinstance(item["reference_answer"], list) else [item["reference_answer"]]
                if not answers:  # no answer (MS MARCO's "No Answer Present."): not judged
                    continue
                bucket = next(bucket for most, bucket in BUCKETS if max(len(answer.split()) for answer in answers) <= most)
                queries[bucket] += 1
                for doc, grade in labels.get(item["query_id"], {}).items():
                    gold[bucket].append(int(truth[item["query_id"]].get(doc, 0) > 0))
                    derived[bucket].append(int(grade > 0))
        for _, bucket in BUCKETS:
            if gold[bucket]:
                kappa = cohen_kappa_score(gold[bucket], derived[bucket])
                print(f"{family:>9}  {bucket:>12}  {queries[bucket]:7,}  {len(gold[bucket]):6,}  {kappa:6.3f}")


if __name__ == "__main__":
    main()
