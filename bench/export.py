"""Benchmark `frontier export` (issue 33 item 4): rows per second and peak memory of the
export process for each format (jsonl, csv, parquet), with the article's text
(`--with-body`), at two table sizes, to show memory flat whatever the count.

Run ``python -m bench.export [--quick]`` (full: 100,000 and 1,000,000 documents; --quick:
10,000 and 50,000). On one throwaway embedded server (`bench.server`):

1. the documents are built in the database with generate_series (no Python loop): 200
   hosts, 20 sources, a 100-word body (about 700 characters) with its two paragraphs,
   tags, dates, the WARC pointer; the second size adds rows to the first;
2. each format is exported 3 times by `python -m frontier export` as a child process into
   a temporary directory (rotated files of 1,000,000 rows); the rows/s is the command's
   own (the export's time, start-up excluded; the median of the 3), the peak RSS the
   child's maximum resident set (`wait4`), its largest of the 3.

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from bench.server import emit_result, log, median, running_server

FORMATS = ("jsonl", "csv", "parquet")
RUNS = 3
RATE = re.compile(r"exported ([\d,]+) documents in ([\d.]+) s \(([\d,]+) rows/s\)")

LOAD = """
SET LOCAL session_replication_role = replica;
INSERT INTO sources (name, feed_url)
SELECT 'source-' || s, 'https://feeds.example/' || s FROM generate_series(1, 20) s
ON CONFLICT DO NOTHING;
CREATE TEMP TABLE bench_sources AS
    SELECT row_number() OVER (ORDER BY name) - 1 AS k, id, name
    FROM sources WHERE name LIKE 'source-%';
INSERT INTO raw_content (url_hash, url, final_url, source_id, source_name, host, origin,
                         title, body, summary, author, published_at, image_url, language,
                         content_hash, word_count, extractor, http_status, fetched_at,
                         paywalled, warc_file, warc_offset, warc_length, warc_record_id,
                         detected_language, language_confidence, modified_at, section, tags,
                         paragraphs, markdown, minhash, near_duplicate_of)
SELECT encode(sha256(convert_to(d.url, 'UTF8')), 'hex'), d.url, NULL, s.id, s.name, d.host,
       'feed', 'Story ' || d.i || ' of the day', d.body, left(d.body, 200), 'Desk',
       d.at - interval '1 hour', NULL, 'en', md5(d.body) || md5(d.url), 100, 'generic', 200,
       d.at, false, 'frontier-1.warc.gz', d.i::bigint * 4096, 4000, NULL, 'en', 0.98, NULL, 'News',
       ARRAY['news', 'host' || (d.i % 200)], ARRAY[left(d.body, 350), substr(d.body, 351)],
       NULL, NULL, NULL
FROM (
    SELECT i, 'https://host' || (i % 200) || '.example/story/' || i AS url,
           'host' || (i % 200) || '.example' AS host,
           now() - make_interval(secs => ({last} - i)) AS at,
           repeat('word' || (i % 97) || ' and the news of the day ', 16) AS body
    FROM generate_series({first}, {last}) i
) d
JOIN bench_sources s ON s.k = d.i % 20;
"""


def load(dsn: str, first: int, last: int) -> float:
    started = time.monotonic()
    with psycopg.connect(dsn) as conn:
        conn.execute(LOAD.format(first=first, last=last))  # type: ignore[arg-type]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE raw_content")
    return time.monotonic() - started


def export_once(dsn: str, fmt: str, out: Path) -> tuple[int, float, int]:
    """(rows, rows/s as the command reports it, peak RSS in bytes) of one export."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env |= {"FRONTIER_DATABASE_URL": dsn, "FRONTIER_HOME": str(out.parent / "home")}
    process = subprocess.Popen(
        [sys.executable, "-m", "frontier", "export", "--format", fmt, "--with-body",
         "--output", f"{out}/"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    err = process.stderr.read().decode()
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"export failed ({process.returncode}): {err[-2000:]}")
    match = RATE.search(err)
    assert match, err
    rows, rate = int(match[1].replace(",", "")), float(match[3].replace(",", ""))
    return rows, rate, usage.ru_maxrss * 1024


def measure(dsn: str, size: int, work: Path, runs: int, formats: tuple[str, ...]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for fmt in formats:
        rates, peaks = [], []
        for run in range(runs):
            out = work / f"{fmt}-{run}"
            rows, rate, peak = export_once(dsn, fmt, out)
            assert rows == size, (rows, size)
            written = sum(p.stat().st_size for p in out.iterdir())
            shutil.rmtree(out)
            rates.append(rate)
            peaks.append(peak)
        figures[fmt] = {
            "rows_per_s": round(median(rates)),
            "peak_rss_mib": round(max(peaks) / 2**20, 1),
            "mib_written": round(written / 2**20, 1),
        }
        log(f"{size:,} documents, {fmt}: {figures[fmt]}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 and 50,000 documents")
    parser.add_argument(
        "--sizes", type=lambda v: tuple(int(n) for n in v.split(",")), help="e.g. 100000,1000000"
    )
    parser.add_argument("--runs", type=int, default=RUNS, help="runs of each export (3)")
    parser.add_argument(
        "--formats", type=lambda v: tuple(v.split(",")), default=FORMATS, help="jsonl,csv,parquet"
    )
    args = parser.parse_args()
    sizes = args.sizes or ((10_000, 50_000) if args.quick else (100_000, 1_000_000))
    result: dict[str, Any] = {"sizes": list(sizes), "runs": args.runs}
    work = Path(tempfile.mkdtemp(prefix="frontier-export-bench-"))
    try:
        with running_server() as server:
            dsn = server.migrated_database("export_bench")
            loaded = 0
            for size in sizes:
                seconds = load(dsn, loaded + 1, size)
                log(f"loaded {size - loaded:,} documents in {seconds:.0f} s")
                loaded = size
                result[str(size)] = measure(dsn, size, work, args.runs, args.formats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit_result(result)


if __name__ == "__main__":
    main()
