# `make demo` and `make test` work on a fresh clone: they create .venv, install torch
# first (the CPU build by default; override with `make TORCH=...`), then semrel.
PYTHON ?= python3
TORCH ?= torch==2.13.0
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.semrel-installed

.PHONY: install demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[test,bench]"
	touch $@

install: $(STAMP)

DEMO ?= out/demo

demo: install
	$(BIN)/semrel corpus chunk data/docs --size 120 --overlap 20 -o $(DEMO)/corpus.jsonl
	$(BIN)/semrel golden import data/golden.csv --corpus $(DEMO)/corpus.jsonl -o $(DEMO)/golden.jsonl
	$(BIN)/semrel retrieve --corpus $(DEMO)/corpus.jsonl --golden $(DEMO)/golden.jsonl --method bm25 -k 20 -o $(DEMO)/runs/bm25.run
	$(BIN)/semrel retrieve --corpus $(DEMO)/corpus.jsonl --golden $(DEMO)/golden.jsonl --method dense -k 20 -o $(DEMO)/runs/dense.run
	$(BIN)/semrel eval $(DEMO)/golden.jsonl $(DEMO)/runs/bm25.run $(DEMO)/runs/dense.run
	$(BIN)/semrel compare $(DEMO)/golden.jsonl $(DEMO)/runs/bm25.run $(DEMO)/runs/dense.run
	$(BIN)/semrel report $(DEMO)/golden.jsonl $(DEMO)/runs/bm25.run $(DEMO)/runs/dense.run \
		--golden $(DEMO)/golden.jsonl --corpus $(DEMO)/corpus.jsonl -o $(DEMO)/report.html

test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python bench/metrics.py
	$(BIN)/python bench/judge.py
	$(BIN)/python bench/labels.py
	$(BIN)/python bench/covid_review.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis
