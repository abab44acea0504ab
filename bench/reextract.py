"""Benchmark `frontier reextract` (issue 30 item 3) against the fetch that archived the pages.

Run ``python -m bench.reextract [--quick] [--rounds N]``.

Each round, from a fresh database: one ``frontier fetch --until-idle`` (the default
extraction pool, the WARC archive on) over bench.fetch's standard page set (about 6 KB of
HTML a page; 20,000 pages over 200 loopback hosts, ``--quick`` 2,000 over 20), served by
nginx when installed, else by an aiohttp process; then two ``frontier reextract --all
--json`` over the documents it stored, each with the same default extraction pool:

- ``unchanged``: nothing changed since the fetch, so every page is read back from the
  archive, extracted and compared, and nothing is written;
- ``changed``: the source's extraction rule changed first (selectors for the body), so
  every document is rewritten and its earlier version kept.

pages/s is documents per second of the process's wall time (start-up included); CPU ms a
page is the process tree's (the figure other load on a shared machine hardly moves). The
fetch's own figures are the fetch pipeline's extraction rate to compare with: at this
size the fetch is bound by its extraction. The last stdout line is one JSON object with
every round and the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from bench.server import emit_result, log, median, run_measured, running_server

ROOT = Path(__file__).resolve().parents[1]
# The changed rule of the `changed` run: the body from the article's paragraphs only.
CHANGED_SELECTORS = '{"title": "h1", "body": "article p"}'


def measured(name: str, command: list[str], env: dict[str, str], pages: int) -> dict[str, Any]:
    run = run_measured(command, env=env, cwd=ROOT)
    if run.returncode:
        raise RuntimeError(f"{name} failed:\n{run.stderr[-3000:]}")
    result: dict[str, Any] = {
        "pages": pages,
        "wall_s": round(run.wall_s, 2),
        "pages_per_s": round(pages / run.wall_s, 1),
        "cpu_ms_per_page": round(1000 * run.cpu_s / max(pages, 1), 3),
        "tree_peak_rss_mib": round(run.tree_peak_rss_mib, 1),
        "steal_s": round(run.steal_s, 1),
    }
    if name != "fetch":
        result["summary"] = json.loads(run.stdout.strip().splitlines()[-1])
    log(f"{name}: {result}")
    return result


def one_round(server: Any, n: int, urls: list[str], concurrency: int) -> dict[str, Any]:
    from bench.fetch import fetch_env, fetched, submit_urls

    name = f"reextract_{n}"
    dsn = server.migrated_database(name)
    try:
        submit_urls(dsn, urls)
        server.checkpoint()
        with tempfile.TemporaryDirectory(prefix="bench-archive-") as directory:
            env = {**fetch_env(dsn, concurrency), "FRONTIER_ARCHIVE_DIR": directory}
            frontier = [sys.executable, "-m", "frontier"]
            fetch = measured("fetch", [*frontier, "fetch", "--until-idle"], env, len(urls))
            pages = fetched(dsn)
            if pages != len(urls):
                raise RuntimeError(f"fetched {pages} of {len(urls)}")
            again = [*frontier, "reextract", "--all", "--json"]
            unchanged = measured("unchanged", again, env, pages)
            if unchanged["summary"]["unchanged"] != pages:
                raise RuntimeError(f"unchanged run: {unchanged['summary']}")
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(
                    "UPDATE sources SET selectors = %s::jsonb WHERE name = 'manual'",
                    (CHANGED_SELECTORS,),
                )
            changed = measured("changed", again, env, pages)
            if changed["summary"]["changed"] != pages:
                raise RuntimeError(f"changed run: {changed['summary']}")
    finally:
        server.drop_database(name)
    return {"fetch": fetch, "unchanged": unchanged, "changed": changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    # A port of its own, so that a bench.fetch run beside it keeps 18080.
    os.environ.setdefault("BENCH_FETCH_PORT", "18091")
    from bench.fetch import NGINX_PATH, aiohttp_site, nginx_site, url_list

    hosts, pages = (20, 2_000) if args.quick else (200, 20_000)
    nginx = shutil.which("nginx", path=NGINX_PATH)
    serving = nginx_site(nginx, {"standard": (hosts, pages)}) if nginx else aiohttp_site(hosts)
    urls = url_list(hosts, pages, "standard")
    rounds = []
    with serving, running_server() as server:
        site = "nginx" if nginx else "aiohttp"
        log(f"site ({site}): {pages} pages over {hosts} loopback hosts, {args.rounds} rounds")
        for n in range(args.rounds):
            rounds.append(one_round(server, n, urls, args.concurrency))
    medians = {
        run: {
            figure: median([r[run][figure] for r in rounds])
            for figure in ("pages_per_s", "cpu_ms_per_page")
        }
        for run in ("fetch", "unchanged", "changed")
    }
    fetch_rate = medians["fetch"]["pages_per_s"]
    emit_result(
        {
            "pages": pages,
            "hosts": hosts,
            "quick": args.quick,
            "site": site,
            "usable_cores": len(os.sched_getaffinity(0)),
            "rounds": rounds,
            "median": medians,
            "changed_over_fetch_pages_per_s": round(
                medians["changed"]["pages_per_s"] / fetch_rate, 2
            ),
            "unchanged_over_fetch_pages_per_s": round(
                medians["unchanged"]["pages_per_s"] / fetch_rate, 2
            ),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )


if __name__ == "__main__":
    main()
