"""Benchmark `frontier import-warc` (issue 30 item 5): pages per second from a WARC file of
news pages, laid out as CC-NEWS (warcinfo, then a request and a response per page, gzip
per record), through extraction, verdicts and dedup into the PostgreSQL sink.

Run ``python -m bench.import_warc [--quick]`` (``--quick``: 500 pages instead of 5,000). On
one throwaway embedded server (see `bench.server`): the file is written once with warcio
(bench.fetch's 6 KB news pages over 100 hosts); each of 3 rounds imports it into a new
database with the fetcher's default extraction pool (FRONTIER_EXTRACT_PROCESSES unset: one
process per core), timed from the first record to the summary, with the CPU time of the
import process and its extraction workers a page. The median round is reported, with every
round's figures.

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from bench.fetch import news_page_html
from bench.server import emit_result, log, running_server
from fetcher.warc_input import ImportCounts, ImportFilter, run_import
from frontier.db import Database
from frontier.settings import Settings

HOSTS = 100
ROUNDS = 3


def write_warc(path: Path, pages: int) -> None:
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True, warc_version="1.0")
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "bench"}))
        for i in range(pages):
            host, page = i % HOSTS, i // HOSTS
            url = f"https://news{host}.example/s/{page}"
            body = news_page_html(host, page).encode()
            request = writer.create_warc_record(
                url,
                "request",
                http_headers=StatusAndHeaders(
                    f"GET /s/{page} HTTP/1.1", [("Host", url.split("/")[2])], is_http_request=True
                ),
            )
            response = writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(body),
                http_headers=StatusAndHeaders(
                    "200 OK",
                    [
                        ("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Length", str(len(body))),
                    ],
                    protocol="HTTP/1.1",
                ),
            )
            writer.write_request_response_pair(request, response)


def cpu_s() -> float:
    """CPU seconds of this process and of its children that have exited (the extraction
    pool's workers, joined when the import ends; PostgreSQL's are not reaped until the end)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def one_round(dsn: str, home: Path, warc: Path) -> tuple[float, ImportCounts]:
    settings = Settings.load(database_url=dsn, home=home, _env_file=None)
    db = await Database.connect(dsn, max_size=8)
    try:
        started = time.monotonic()
        counts = await run_import(
            settings, db, [str(warc)], source="manual", accepts=ImportFilter()
        )
        return time.monotonic() - started, counts
    finally:
        await db.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 pages instead of 5,000")
    args = parser.parse_args(argv)
    pages = 500 if args.quick else 5_000
    with tempfile.TemporaryDirectory(prefix="frontier-bench-warc-") as folder:
        home = Path(folder)
        warc = home / "bench.warc.gz"
        write_warc(warc, pages)
        log(f"wrote {pages:,} pages, {warc.stat().st_size:,} bytes")
        rates: list[float] = []
        cpus: list[float] = []  # CPU ms a page: the import process and its extraction pool
        with running_server() as server:
            for n in range(ROUNDS):
                dsn = server.migrated_database(f"bench_import_warc_{n}")
                server.checkpoint()
                cpu = cpu_s()
                elapsed, counts = asyncio.run(one_round(dsn, home, warc))
                cpu = cpu_s() - cpu
                assert counts.imported == pages and not counts.errors, counts.as_json()
                rates.append(pages / elapsed)
                cpus.append(cpu * 1000 / pages)
                log(f"round {n + 1}: {pages / elapsed:.0f} pages/s, {cpus[-1]:.2f} CPU ms/page")
        figures: dict[str, Any] = {
            "pages": pages,
            "file_bytes": warc.stat().st_size,
            "pages_per_s": round(statistics.median(rates)),
            "rounds_pages_per_s": [round(r) for r in rates],
            "cpu_ms_per_page": round(statistics.median(cpus), 2),
            "rounds_cpu_ms_per_page": [round(c, 2) for c in cpus],
        }
    emit_result(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
