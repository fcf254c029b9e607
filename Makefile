# One command each for a newcomer: `make lab` (set up + open JupyterLab on the quickstart) and
# `make test` (set up + run the whole suite, as CI does).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8888

.PHONY: venv browser postgres lab seed test bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

venv: $(BIN)/.installed

# Debian's Chromium for the real-browser test. Outside CI a failure only means that test is skipped (with its reason);
# under CI (CI set) it is an error, so a missing browser can never pass silently.
browser: venv
	@scripts/install_browser.sh || { [ -z "$$CI" ] && echo "note: no Chromium, the real-browser test will be skipped"; }

# Debian's PostgreSQL server binaries for the PostgreSQL backend's tests (they start their own throwaway server).
# Outside CI a failure only means those tests are skipped (with their reason); under CI it is an error.
postgres: venv
	@scripts/install_postgres.sh || { [ -z "$$CI" ] && echo "note: no PostgreSQL server, the postgres tests will be skipped"; }

lab: venv
	$(BIN)/agentmem-nb lab --port $(PORT)

seed: venv
	$(BIN)/agentmem-nb seed

# mypy first (strict, configured in pyproject.toml): a type error fails the target before the suite runs.
test: venv browser postgres
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: venv
	$(BIN)/python benchmarks/bench_store.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache
