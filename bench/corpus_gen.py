"""A large, realistic, deterministic corpus for scale benchmarks, built from real biomedical sentences.

Chunks recombine sentences of the COVID-QA articles and PubMedQA abstracts in ../shared/data:
a run of 2-4 consecutive sentences of one text (so chunks read like passages) plus 1-4 sentences
drawn from anywhere (so a million chunks are distinct), 3-8 sentences in all. Chunk i depends only
on (seed, i), so generated_corpus(n, seed) is a prefix of generated_corpus(m, seed) for m > n.

    python bench/corpus_gen.py 1000000 0 /tmp/gen/corpus.jsonl --queries 1000 --golden /tmp/gen/golden.jsonl
"""

from __future__ import annotations

import functools
import json
import re
from typing import Iterator

import numpy as np

from shared_data import SHARED_DATA

DATA = SHARED_DATA
BLOCK = 1000  # chunks per random stream: chunk i is rebuilt from block i // BLOCK alone
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


@functools.lru_cache(maxsize=1)
def source_texts() -> tuple[tuple[str, ...], ...]:
    """Sentences of each source text (COVID-QA contexts split on blank lines, PubMedQA abstracts)."""
    texts: list[tuple[str, ...]] = []
    covid = json.loads((DATA / "covid_qa_deepset" / "200423_covidQA.json").read_text(encoding="utf-8"))
    paragraphs = [p for article in covid["data"] for para in article["paragraphs"] for p in para["context"].split("\n\n")]
    pubmed = json.loads((DATA / "pubmedqa_pqal" / "ori_pqal.json").read_text(encoding="utf-8"))
    paragraphs += [" ".join(item["CONTEXTS"]) for item in pubmed.values()]
    for paragraph in paragraphs:
        sentences = tuple(s for s in (x.strip() for x in _SENTENCE_END.split(" ".join(paragraph.split()))) if 40 <= len(s) <= 600)
        if len(sentences) >= 4:
            texts.append(sentences)
    return tuple(texts)


@functools.lru_cache(maxsize=1)
def all_sentences() -> tuple[str, ...]:
    return tuple(s for t in source_texts() for s in t)


@functools.lru_cache(maxsize=64)
def _block_chunks(seed: int, block: int) -> list[list[str]]:
    """The sentences of the BLOCK chunks of one block."""
    texts = source_texts()
    everything = all_sentences()
    rng = np.random.default_rng([seed, block])
    chunks = []
    for _ in range(BLOCK):
        text = texts[rng.integers(len(texts))]
        run = int(rng.integers(2, 5))
        start = int(rng.integers(0, len(text) - run + 1))
        extra = rng.integers(len(everything), size=int(rng.integers(1, 5)))
        chunks.append(list(text[start : start + run]) + [everything[j] for j in extra])
    return chunks


def generated_corpus(n: int, seed: int = 0) -> Iterator[dict]:
    """`n` chunks as semrel corpus.jsonl rows {"_id": "g<i>", "text": ...}, streamed."""
    for block in range((n + BLOCK - 1) // BLOCK):
        for offset, sentences in enumerate(_block_chunks(seed, block)[: n - block * BLOCK]):
            yield {"_id": f"g{block * BLOCK + offset}", "text": " ".join(sentences)}


def generated_queries(n: int, seed: int = 0) -> Iterator[dict]:
    """`n` golden items {query_id, query, answer, chunk_id}: the answer is a real sentence of chunk
    `chunk_id` (one of the first `n` chunks, so it occurs in any generated_corpus(m >= n, seed)) and
    the query is about two thirds of its words, in order."""
    rng = np.random.default_rng([seed, 1 << 40])
    for q in range(n):
        i = int(rng.integers(n))
        sentences = _block_chunks(seed, i // BLOCK)[i % BLOCK]
        answer = sentences[int(rng.integers(len(sentences)))]
        words = answer.split()
        keep = np.sort(rng.choice(len(words), size=max(3, (2 * len(words)) // 3), replace=False))
        yield {"query_id": f"q{q}", "query": " ".join(words[j] for j in keep), "answer": answer, "chunk_id": f"g{i}"}


def generated_golden(n: int, seed: int = 0) -> Iterator[dict]:
    """generated_queries as semrel golden.jsonl rows (the answer's chunk is the gold chunk)."""
    for item in generated_queries(n, seed):
        yield {"query_id": item["query_id"], "query": item["query"], "reference_answer": item["answer"],
               "gold_chunk_ids": [item["chunk_id"]]}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chunks", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("corpus", help="corpus.jsonl to write")
    parser.add_argument("--queries", type=int, default=0)
    parser.add_argument("--golden", help="golden.jsonl to write (semrel's golden format)")
    args = parser.parse_args()
    with open(args.corpus, "w", encoding="utf-8") as out:
        for row in generated_corpus(args.chunks, args.seed):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.golden:
        with open(args.golden, "w", encoding="utf-8") as out:
            for golden in generated_golden(args.queries, args.seed):
                out.write(json.dumps(golden, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
