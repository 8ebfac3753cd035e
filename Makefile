# `make demo` and `make test` work on a fresh clone: they create .venv, install torch
# first (torch==2.13.0: the CPU build where pip's index offers one, else CUDA's, as on plain PyPI
# for Linux; override with `make TORCH=...`, README.md), then semrel.
PYTHON ?= python3
TORCH ?= torch==2.13.0
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.semrel-installed

.PHONY: install demo test test-quick lint bench screenshots clean FORCE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The TORCH last installed, rewritten only when it differs, so that `make install TORCH=...` in a .venv that has
# another torch installs the one asked for (the stamp alone is newer than pyproject.toml: nothing was done).
$(VENV)/.semrel-torch: FORCE | $(BIN)/python
	@echo '$(TORCH)' | cmp -s - $@ || echo '$(TORCH)' > $@

$(STAMP): pyproject.toml $(VENV)/.semrel-torch | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[test,bench]"
	touch $@

install: $(STAMP)

# The whole pipeline on data/ from data/demo.toml (README.md lists its commands); ends with the report's path.
demo: install
	$(BIN)/semrel run data/demo.toml

# Two pytest workers, each taking whole files (module fixtures stay in one process): most tests use one
# core, so this halves the suite's time on two cores. `make test TEST_WORKERS=0` runs it in one process.
# Workers get one OpenMP/BLAS thread each (torch, numpy): a thread pool per core in each worker
# oversubscribed the cores (tests/judging + tests/encoding on two workers: 261 s -> 191 s).
TEST_WORKERS ?= 2
TEST_THREADS = $(if $(filter 0,$(TEST_WORKERS)),,OMP_NUM_THREADS=1)

test: install
	$(TEST_THREADS) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The quick loop while editing: everything but the tests marked slow (models, subprocesses, browsers).
test-quick: install
	$(BIN)/python -m pytest -q -m "not slow"

# docs/report.png and docs/review-web.png, made anew by the browser tests that check those pages.
screenshots: install
	SEMREL_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/report/test_report_browser.py tests/review/test_review_browser.py

# ruff (style, imports, likely bugs) on all Python; mypy on the library (settings in pyproject.toml).
lint: install
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy

bench: install
	$(BIN)/python bench/metrics.py
	$(BIN)/python bench/judge.py
	$(BIN)/python bench/labels.py
	$(BIN)/python bench/covid_review.py
	$(BIN)/python bench/ppi_coverage.py
	$(BIN)/python bench/ppi_coverage.py --folder out/bench-labels/sets/pubmed
	$(BIN)/python bench/judge_p_cost.py
	$(BIN)/python bench/question_as_reference.py
	$(BIN)/python bench/ray_load.py
	$(BIN)/python bench/scale.py --sizes 10000,100000 --queries 200 --ray-sizes 10000 --before-sizes 100000
	$(BIN)/python bench/bm25_edit.py
	$(BIN)/python bench/run_layouts.py
	$(BIN)/python bench/neardup_groups.py
	$(BIN)/python bench/fuse.py
	$(BIN)/python bench/label_memory.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis
