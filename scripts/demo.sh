#!/usr/bin/env bash
# `make demo`: the whole pipeline on the bundled data/, outputs in out/demo/ (README.md lists the
# same commands). Embeddings are cached in out/demo/cache, so a second run does not re-encode.
set -euo pipefail

semrel corpus chunk data/docs --size 120 --overlap 20 -o out/demo/corpus.jsonl
semrel golden import data/golden.csv --corpus out/demo/corpus.jsonl -o out/demo/golden.jsonl
semrel golden qrels out/demo/golden.jsonl -o out/demo/gold.qrels
for method in bm25 dense hybrid; do
    semrel retrieve --corpus out/demo/corpus.jsonl --golden out/demo/golden.jsonl --method $method -k 20 \
        -o out/demo/runs/$method.run
done
semrel pool --golden out/demo/golden.jsonl --run out/demo/runs/bm25.run --run out/demo/runs/dense.run \
    --run out/demo/runs/hybrid.run --depth 10 -o out/demo/pool.tsv
semrel judge --corpus out/demo/corpus.jsonl --golden out/demo/golden.jsonl --pool out/demo/pool.tsv \
    --cache out/demo/cache -o out/demo/judgments.jsonl
semrel label out/demo/judgments.jsonl -o out/demo/derived.qrels
semrel eval out/demo/derived.qrels out/demo/runs/bm25.run out/demo/runs/dense.run out/demo/runs/hybrid.run
semrel eval out/demo/gold.qrels out/demo/runs/bm25.run out/demo/runs/dense.run out/demo/runs/hybrid.run
semrel agree out/demo/gold.qrels out/demo/derived.qrels --unlisted-as-zero \
    --run out/demo/runs/bm25.run --run out/demo/runs/dense.run --run out/demo/runs/hybrid.run
semrel agree out/demo/gold.qrels out/demo/derived.qrels --unlisted-as-zero -f json \
    --run out/demo/runs/bm25.run --run out/demo/runs/dense.run --run out/demo/runs/hybrid.run > out/demo/agreement.json
semrel calibrate --judgments out/demo/judgments.jsonl --human out/demo/gold.qrels --unlisted-as-zero
semrel compare out/demo/derived.qrels out/demo/runs/bm25.run out/demo/runs/dense.run out/demo/runs/hybrid.run
semrel sensitivity --judgments out/demo/judgments.jsonl --run out/demo/runs/bm25.run --run out/demo/runs/dense.run \
    --run out/demo/runs/hybrid.run -m nDCG@10 --curves out/demo/sensitivity.csv
semrel report out/demo/derived.qrels out/demo/runs/bm25.run out/demo/runs/dense.run out/demo/runs/hybrid.run \
    --golden out/demo/golden.jsonl --corpus out/demo/corpus.jsonl --judgments out/demo/judgments.jsonl \
    --sensitivity out/demo/sensitivity.csv --agreement out/demo/agreement.json -o out/demo/report.html
