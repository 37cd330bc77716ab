# Quick start: `make run` starts the REPL, `make test` runs the tests. Both set up .venv on first use:
# `run` installs what mini-claude needs to run, `test` (and the other targets) the test tools too.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --disable-pip-version-check
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test faults bench lint fmt clean

# pip's output goes to a log (one line says where): the first `make run` prints one line a step.
INSTALL_LOG := $(VENV)/install.log
QUIET = >>$(INSTALL_LOG) 2>&1 || { tail -n 15 $(INSTALL_LOG) >&2; \
	echo "mini-claude: the install failed: pip's whole output is in $(INSTALL_LOG)" >&2; exit 1; }

$(BIN)/python:
	@echo "mini-claude: creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "mini-claude: installing what it needs to run (about 20 s the first time; pip's output: $(INSTALL_LOG))"
	@$(PIP) -e . $(QUIET)
	@touch $@
	@echo "mini-claude: installed"

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	@echo "mini-claude: installing it with the test tools (about 40 s the first time; pip's output: $(INSTALL_LOG))"
	@$(PIP) -e '.[dev]' $(QUIET)
	@touch $@ $(RUN_STAMP)
	@echo "mini-claude: installed"

# The agent works on the folder it starts in: DIR picks your project (default: this repository).
# A leading ~ is expanded here: dash and zsh leave the one in `make run DIR=~/code/x` to make.
# DIR reaches the shell through the environment, so no quote or $ in it can break the line.
run: export MINI_CLAUDE_RUN_DIR = $(DIR)
run: $(RUN_STAMP)
	@dir="$${MINI_CLAUDE_RUN_DIR:-.}"; \
	case "$$dir" in "~" | "~/"*) dir="$$HOME$${dir#"~"}" ;; esac; \
	cd "$$dir" 2>/dev/null || { echo "mini-claude: DIR=$$dir is not a folder you can open" >&2; exit 2; }; \
	"$(CURDIR)/$(BIN)/mini-claude" $(ARGS)

# Three workers (pytest-xdist) on two CPUs, for the moments a test waits on a terminal or a timer
# (a fourth costs more CPU than those moments leave); a worker that runs out takes queued tests
# from the others (worksteal), so none finishes alone.
# Bytecode cached even where the shell says not to: every worker and cold start imports the same.
test: lint
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n 3 --dist worksteal $(PYTEST_ARGS)

# The adversarial suite (hostile paths and files, crashes, server faults, secrets) and its table.
faults: $(DEV_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q tests/adversarial --faults-table $(PYTEST_ARGS)

# What users feel (start-up, recall, memory at scale, streaming), each against a baseline of the
# same run; exits 1 when a target is missed. A few minutes; not part of `make test`.
bench: $(DEV_STAMP)
	$(BIN)/python -m tests.bench $(BENCH_ARGS)

# Ruff (lint and format) and mypy, strict on mini_claude/ (pyproject.toml); `make test` runs it first.
lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

fmt: $(DEV_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache .mypy_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
