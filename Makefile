# Every target creates .venv and installs the project first if needed, so each works on a
# fresh clone. `make run` and `make test` are the README's two set-up commands.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test lint bench clean chromium

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Everything in one process on the embedded PostgreSQL (Ctrl-C stops it cleanly).
run: $(STAMP)
	$(VENV)/bin/frontier up

# The offline showcase: demo sites on loopback, crawled end to end; dashboard on :8000.
.PHONY: demo
demo: $(STAMP)
	$(VENV)/bin/frontier up --demo

test: $(STAMP) chromium
	$(PY) -m pytest

# The dashboard's browser test drives Debian's chromium (headless, via Playwright).
chromium:
	command -v chromium || (apt-get update && apt-get install -y --no-install-recommends chromium)

lint: $(STAMP)
	$(VENV)/bin/ruff check frontier poller fetcher spider migrations bench tests
	$(VENV)/bin/ruff format --check frontier poller fetcher spider migrations bench tests
	$(VENV)/bin/mypy frontier poller fetcher spider

bench: $(STAMP)
	$(PY) -m pytest -m bench -q  # every benchmark's --quick run (tests/bench)

clean:
	rm -rf $(VENV) .frontier *.egg-info
