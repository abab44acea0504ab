"""Every benchmark's `--quick` run ends with one JSON line of figures. Marked `bench` and
kept out of the default run: `python -m pytest -m bench` (or `make bench`) runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# The benchmarks `make bench` runs; soak.py takes ten minutes and runs on its own.
BENCHES = [
    "normalize",
    "submit",
    "claim_scaling",
    "poll",
    "fetch",
    "spider",
    "api_import",
    "extract_quality",
    "api_reads",
    "url_actions",
    "host_holds",
    "warc_writer",
    "import_warc",
    "reextract",
    "robots_parse",
    "export",
    "render",
    "freshness",
]


@pytest.mark.parametrize("name", BENCHES)
def test_quick_benchmark_prints_its_figures_as_one_json_line(name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--quick"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(figures, dict) and figures, done.stdout[-2000:]
