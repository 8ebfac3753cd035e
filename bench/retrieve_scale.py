"""Dense retrieval at scale: exact block search over a memory-mapped store, and MiniLM's encode rate.

    python bench/retrieve_scale.py search 1000000 --queries 1000 -k 20 --folder /tmp/semrel-scale
    python bench/retrieve_scale.py encode 512
    python bench/retrieve_scale.py warm CORPUS CACHE     # then: /usr/bin/time -v semrel retrieve --method dense --cache CACHE ...

`search` scans synthetic unit vectors (384 dims, written once to FOLDER/vectors.f32) exactly as
`semrel retrieve --method dense` scans its vector store; `encode` times all-MiniLM-L6-v2 on chunks
of bench/corpus_gen.py (real biomedical sentences); `warm` fills the vector store under CACHE with synthetic unit
vectors for every chunk of CORPUS, so a dense run over it measures a warm store without a day of encoding
(docs/retrieve.md's 1M-chunk dense rows). Peak RSS is read from /proc (anonymous memory
apart from the mapped file's cached pages, which the kernel can drop).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from semrel.encoding.vectors import VectorStore
from semrel.progress import no_progress
from semrel.retrieval.corpus import Corpus
from semrel.retrieval.retrieve import embed, search_vectors

DIM = 384


def memory() -> dict[str, str]:
    fields = ("VmHWM", "RssAnon", "RssFile")
    lines = Path("/proc/self/status").read_text().splitlines()
    return {line.split(":")[0]: line.split(":")[1].strip() for line in lines if line.split(":")[0] in fields}


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def search(n: int, queries: int, k: int, folder: Path) -> None:
    path = folder / f"vectors-{n}.f32"
    if not path.exists() or path.stat().st_size != n * DIM * 4:
        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(0)
        with open(path, "wb") as handle:
            for start in range(0, n, 65536):
                handle.write(unit_vectors(rng, min(65536, n - start)).tobytes())
    vectors = np.memmap(path, dtype="<f4", mode="r", shape=(n, DIM))
    query_vectors = unit_vectors(np.random.default_rng(1), queries)
    started, cpu = time.perf_counter(), time.process_time()
    hits = search_vectors(query_vectors, vectors, k)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"exact search: {n} x {DIM} vectors, {queries} queries, k={k}: {seconds:.1f} s wall, {cpu:.1f} s CPU; {memory()}; "
          f"{sum(len(p) for p, _ in hits)} hits")


def encode(n: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from corpus_gen import generated_corpus

    texts = [row["text"] for row in generated_corpus(n, seed=0)]
    embed(texts[:16], "", None, no_progress)  # load the model outside the timing
    started, cpu = time.perf_counter(), time.process_time()
    embed(texts, "", None, no_progress)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"MiniLM encode: {n} chunks (mean {words:.0f} words) in {seconds:.1f} s wall ({cpu:.1f} s CPU) = "
          f"{n / seconds:.1f} chunks/s; {memory()}")


def warm(corpus_path: Path, cache: Path) -> None:
    corpus, store = Corpus.read(corpus_path), VectorStore(cache)
    rng = np.random.default_rng(0)
    with store._locked():  # the store's own commit path: rows, keys and store.json as a real run writes them
        for start in range(0, len(corpus), 65536):
            keys = corpus.keys[start : start + 65536]
            store._append(keys, unit_vectors(rng, len(keys)))
    print(f"vector store {store.folder}: {store.rows} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("search")
    s.add_argument("n", type=int)
    s.add_argument("--queries", type=int, default=1000)
    s.add_argument("-k", type=int, default=20)
    s.add_argument("--folder", type=Path, default=Path("/tmp/semrel-scale"))
    e = sub.add_parser("encode")
    e.add_argument("n", type=int)
    w = sub.add_parser("warm")
    w.add_argument("corpus", type=Path)
    w.add_argument("cache", type=Path)
    args = parser.parse_args()
    if args.what == "search":
        search(args.n, args.queries, args.k, args.folder)
    elif args.what == "warm":
        warm(args.corpus, args.cache)
    else:
        encode(args.n)


if __name__ == "__main__":
    main()
