# Quick start: `make run` starts the REPL, `make test` runs the tests. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test faults bench lint fmt clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# The agent works on the folder it starts in: DIR picks your project (default: this repository).
run: $(STAMP)
	@cd "$(or $(DIR),.)" && "$(CURDIR)/$(BIN)/mini-claude" $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The adversarial suite (hostile paths and files, crashes, server faults, secrets) and its table.
faults: $(STAMP)
	$(BIN)/python -m pytest -q tests/adversarial --faults-table $(PYTEST_ARGS)

# What users feel (start-up, recall, memory at scale, streaming), each against a baseline of the
# same run; exits 1 when a target is missed. A few minutes; not part of `make test`.
bench: $(STAMP)
	$(BIN)/python -m tests.bench $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
