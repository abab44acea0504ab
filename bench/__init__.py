"""Benchmarks, each runnable as `python -m bench.NAME [--quick]`; results go in
bench/RESULTS.md. Not part of the default test run."""
