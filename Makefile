# Engram: `make run` brings the whole service up; `make test` runs the suite.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
export ENGRAM_DATA_DIR ?= $(CURDIR)/.data

.PHONY: run test test-scale stack test-stack compose-check fuzz fault-suite lint format migrate venv clean-data stop-db bench compare-venv

CLIENT := clients/python

$(STAMP): requirements/base.txt requirements/local.txt requirements/constraints.txt pyproject.toml $(CLIENT)/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/local.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip install --quiet --no-deps -e ./$(CLIENT)
	touch $(STAMP)

venv: $(STAMP)

# mem0 for `manage.py mem0_compare` (docs/benchmarks/mem0.md), not a project dependency:
# every package pinned in requirements/compare.txt, --no-deps so nothing installed changes.
compare-venv: $(STAMP)
	$(BIN)/pip install --quiet --no-deps -r requirements/compare.txt

migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

run: $(STAMP)
	PORT=$(PORT) bash scripts/run.sh

test: $(STAMP)
	$(BIN)/pytest -n 2

test-scale: $(STAMP)
	$(BIN)/pytest -m scale

# The production topology (apps/core/local_stack.py) in the foreground; Ctrl-C stops it.
stack: $(STAMP)
	$(BIN)/python -m apps.core.local_stack --port $(PORT)

# Brings the stack up on free ports, runs tests/stack over HTTP against it, tears it down.
test-stack: $(STAMP)
	$(BIN)/pytest -p no:randomly -m stack tests/stack

# docker/compose.yaml mirrors `make stack`; its syntax and references are checked, not run.
compose-check:
	DJANGO_SECRET_KEY=check ENGRAM_ENCRYPTION_KEY=check docker-compose -f docker/compose.yaml config -q

# schemathesis over the whole schema against a live server (agent key, then user key).
fuzz: $(STAMP)
	bash scripts/fuzz_api.sh

# Fault injection against real processes (docs/operators.md §10): fails on any lost or
# duplicated write, stuck promotion job, unembedded memory or unexpected server error.
fault-suite: $(STAMP)
	$(BIN)/python manage.py fault_suite --json

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy apps lab config tests
	$(BIN)/mypy --config-file $(CLIENT)/pyproject.toml $(CLIENT)/src $(CLIENT)/examples
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir $(VENV)/client-wheel ./$(CLIENT)
	$(BIN)/lint-imports
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/python manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

stop-db: $(STAMP)
	$(BIN)/python manage.py embedded_postgres stop
