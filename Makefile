# One place for the project's tasks: `make demo` (set up + the offline demo), `make check`
# (ruff + vulture + mypy + pytest), `make bench` (benchmarks). The virtualenv is .venv in this folder.

VENV ?= .venv
PY := $(VENV)/bin/python
# torch is installed first and pinned: a bare `torch` requirement can pull a multi-GB CUDA build.
TORCH ?= torch==2.13.0

export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Bytecode is cached, as Python does by default: some containers (this one, and so CI) set
# PYTHONDONTWRITEBYTECODE=1, and then every process compiles every module it imports from source:
# each pytest worker's collection took 11 CPU s instead of 5, and each judge the tests start paid
# it again. The caches are the ignored __pycache__ folders.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo check check-all lint deadcode typecheck test test-slow bench

# A line per stage with the time so far: the install takes minutes and pip --quiet says nothing
# (issue 24: a first `make demo` sat silent for about 8 minutes here).
$(VENV)/.installed: pyproject.toml
	@set -e; start=$$(date +%s); \
	say() { echo "setup: $$1 ($$(( $$(date +%s) - start )) s so far)"; }; \
	say "creating the virtualenv $(VENV)"; python3 -m venv $(VENV); \
	say "upgrading pip"; $(PY) -m pip install --quiet --upgrade pip; \
	say "installing $(TORCH) (the longest step: minutes)"; \
	$(PY) -m pip install --quiet "$(TORCH)"; \
	say "installing judgepool and its dependencies (streamlit, duckdb, litellm, ...)"; \
	$(PY) -m pip install --quiet -e ".[offline,test,bench]"; \
	touch $@; say "done"

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/judgepool demo

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

deadcode: setup
	$(VENV)/bin/vulture

typecheck: setup
	$(VENV)/bin/mypy

# The gate: every test not marked slow (a few minutes). The slow ones (browsers, killed
# processes, the demo, TREC DL end to end, property tests) run with `make test-slow`; CI runs both.
# Both end with the 20 slowest tests. The gate runs on two workers (pytest-xdist; CI has two
# cores): its tests keep the cores busy. The slow tests mostly wait on other processes, browsers,
# servers and paused judges (about half of each worker's time), so four workers overlap the waits.
test: export PYTEST_ADDOPTS += -n 2 --durations=20
test-slow: export PYTEST_ADDOPTS += -n 4 --durations=20

test: setup
	$(PY) -m pytest -m "not slow"

test-slow: setup
	$(PY) -m pytest -m slow

check: lint deadcode typecheck test

check-all: check test-slow

bench: setup
	$(PY) bench/run_all.py
