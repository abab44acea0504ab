"""What the test suite and the benchmarks share that the services never run: kept out of
the runtime packages (`frontier`, `frontier_cli`, `poller`, `fetcher`, `spider`,
`migrations`), so the wheel does not ship it (pyproject.toml's package list names only
those).

    citus    databases on a Citus cluster: made on every node, copied from a template
             (tests/conftest.py, bench/server.py)

tests/unit/test_layout.py holds the rule: nothing under the runtime packages is imported
only by tests/ or bench/.
"""
