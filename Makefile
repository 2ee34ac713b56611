PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.stamp-run
STAMP_DEV := $(VENV)/.stamp-dev
TORCH_WHEELS ?= /opt/wheels

.PHONY: demo test check lint bench screenshots clean mutation

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	@# the dev extra needs torch (CPU is enough, for the torch.profiler tests): take the
	@# local CPU wheel first where the machine has one, so pip never fetches a CUDA build
	@if ! $(BIN)/python -c 'import torch' 2>/dev/null; then \
		wheel=$$(ls $(TORCH_WHEELS)/torch-*+cpu-*.whl 2>/dev/null | head -n 1); \
		if [ -n "$$wheel" ]; then $(BIN)/python -m pip install -q "$$wheel"; fi; fi
	$(BIN)/python -m pip install -q -e '.[dev]'
	@command -v tmux >/dev/null || (apt-get install -y -q tmux || (apt-get update -qq && apt-get install -y -q tmux)) >/dev/null 2>&1 || echo "note: tmux not installed; the end-to-end terminal test will be skipped (and fail in CI)"
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/tuiperf

# The older ncu_report readers tuiperf supports (PyPI ncu-report), each in a folder of its
# own beside the venv's newest (one C extension per process): tests/unit/
# test_ncu_reader_versions.py runs `tuiperf ncu` with each on PYTHONPATH against ncu's pages.
NCU_READERS ?= 2025.3.1 2026.2.0 2026.3.0
NCU_READERS_DIR := $(VENV)/ncu-readers
STAMP_NCU := $(NCU_READERS_DIR)/.stamp

$(STAMP_NCU): | $(BIN)/python
	@for v in $(NCU_READERS); do rm -rf $(NCU_READERS_DIR)/$$v; \
		$(BIN)/python -m pip install -q --no-deps --target $(NCU_READERS_DIR)/$$v "ncu-report==$$v" \
		|| exit 1; done
	touch $@

.PHONY: ncu-readers
ncu-readers: $(STAMP_NCU)

# the README's test command, and what CI runs (.ci/run): the fast checks first, then the tests
test: lint $(STAMP_DEV) $(STAMP_NCU)
	$(BIN)/mypy tuiperf
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check tuiperf tests bench scripts
	$(BIN)/ruff format --check tuiperf tests bench scripts

check: test

bench: $(STAMP_DEV)
	$(BIN)/python bench/run.py

# Mutation testing of the core modules (mutmut), each against its own tests in a scratch
# copy: run before a change to one of them lands (not in CI: up to 15 min a module).
# `make mutation MODULES="step_budget diff"` for some; bench/mutation.md reads the results.
MODULES ?=
mutation: $(STAMP_DEV)
	$(BIN)/python bench/mutation.py $(MODULES)

# A 20M-kernel report (vit_range tiled x8000, 3.7 GiB): first screen, convert, peak RSS.
.PHONY: bench-scale
bench-scale: $(STAMP_DEV)
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/ranks_scale.py

clean:
	rm -rf $(VENV) build *.egg-info

# Peers (nsys-tui, nsys-ai) from PyPI in their own environment; writes bench/peers.md.
PEERS_VENV ?= bench/.peers-venv

.PHONY: bench-peers
bench-peers: $(STAMP_RUN)
	command -v tmux >/dev/null || (apt-get update -qq && apt-get install -y -qq tmux)
	$(BIN)/python bench/peers.py --venv $(PEERS_VENV)

# The real app, headless, on the real fixtures: screenshots/*.svg (+ .png where rsvg-convert,
# cairosvg or inkscape is installed); then docs/viewer.md's keys from the binding registry.
.PHONY: readme
screenshots: $(STAMP_DEV)
	$(BIN)/python scripts/screenshots.py
	$(BIN)/python scripts/readme_keys.py

# docs/viewer.md's keys (the binding registry) and docs/commands.md's options (the parsers)
readme: $(STAMP_RUN)
	$(BIN)/python scripts/readme_keys.py
	$(BIN)/python scripts/docs_options.py
