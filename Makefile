# The two commands of the README.  Each creates .venv and installs what it needs: make run
# the platform alone (SQLite, no extras), make test the platform with its tests' tools.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Each install's mark: pip runs again when pyproject.toml is newer.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# The browser the web tests drive (tests/web/conftest.py); make test installs Debian's.
CHROMIUM ?= $(or $(MERKNERA_CHROMIUM),/usr/bin/chromium)
# Installs what pip cannot (Debian packages) when it is missing, or stops naming the command.
SYSTEM := PYTHON='$(PYTHON)' CHROMIUM='$(CHROMIUM)' bash scripts/system-packages

.PHONY: run test test-packages lint bench clean

$(PY):
	@$(SYSTEM) venv
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Merknera needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

## make run: the platform on ./merknera.db with reference bots playing; Ctrl-C stops it
run: $(RUN_STAMP)
	$(PY) -m merknera demo

## make test: the whole test suite, then ruff and mypy --strict
test: test-packages $(DEV_STAMP)
	MERKNERA_CHROMIUM='$(CHROMIUM)' $(PY) -m pytest -q -n auto --dist loadgroup
	$(PY) -m ruff check .
	$(PY) -m mypy

# Before .venv is built, so that a missing package stops make test at once.
test-packages:
	@$(SYSTEM) venv chromium openssl postgresql nginx node go

lint: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: $(DEV_STAMP)
	$(PY) bench/referee.py
	$(PY) bench/scrabble.py
	$(PY) bench/scrabble_bot.py
	$(PY) bench/games.py
	$(PY) bench/kalaha_bot.py
	$(PY) bench/ladder.py
	$(PY) bench/siege.py
	$(PY) bench/costly_requests.py
	$(PY) bench/replay_load.py
	$(PY) bench/hexagons_observers.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info build dist
