PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.stamp-run
STAMP_DEV := $(VENV)/.stamp-dev

.PHONY: demo test check lint bench screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/tuiperf

test: $(STAMP_DEV)
	$(BIN)/python -m pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check tuiperf tests bench
	$(BIN)/ruff format --check tuiperf tests bench

check: lint test
	$(BIN)/mypy tuiperf

bench: $(STAMP_DEV)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info
