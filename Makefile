# The two commands of the README.  Each creates .venv and installs what it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Merknera needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## make run: the platform on ./merknera.db with four reference bots; Ctrl-C stops it
run: $(STAMP)
	$(PY) -m merknera demo

## make test: the whole test suite, then ruff and mypy --strict
test: $(STAMP)
	$(PY) -m pytest -q
	$(PY) -m ruff check .
	$(PY) -m mypy

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) bench/referee.py
	$(PY) bench/scrabble.py
	$(PY) bench/scrabble_bot.py
	$(PY) bench/games.py
	$(PY) bench/ladder.py
	$(PY) bench/siege.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info
