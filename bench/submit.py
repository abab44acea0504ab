"""Benchmark bulk submission: the real `frontier import` CLI against PostgreSQL's own COPY.

Run ``python -m bench.submit [--quick] [--rounds 3]``. A deterministic file of 1,000,000
URLs over 100,000 hosts (100,000 over 10,000 with ``--quick``) is written once: dated
article paths on uniformly chosen hosts, about 3% carrying ``utm_*`` parameters, 1% exact
repeats of an earlier line and 1% earlier lines with tracking parameters added (duplicates
once normalised; the result reports how many lines are duplicates).

Each round, on one throwaway embedded server (see `bench.server`):

1. a fresh database at the newest schema; ``python -m frontier import FILE --json`` runs as
   a child process with only ``FRONTIER_DATABASE_URL`` set; its wall time (interpreter
   start-up and schema check included) gives lines per second, and the number of rows in
   ``url_frontier`` is checked afterwards;
2. at once, a COPY of the same rows (with host, source and origin) straight into the
   url_frontier of another fresh database: what the table itself, with all its indexes,
   checks, foreign key and triggers, lets in (``copy_frontier_rows_per_s``), the figure
   the import is held against;
3. the database's own ingest limit on the same URLs: their normalised form and SHA-256 are
   computed beforehand (not timed) and the COPY text is built in memory, then a COPY of
   ``(url_hash char(64), url text)`` into a fresh table with a UNIQUE index on url_hash, and
   into one with no index at all, is timed up to its commit.

Before the rounds, importing a file with no URLs (median of three) gives the CLI's fixed
cost, ``cli_overhead_s``, which every import time above includes.

With ``--table-costs``, each round also times the COPY into url_frontier once per index,
constraint and trigger of the table, with that one dropped (on a scratch database): what
each costs the table's own ingest (``table_costs``: rows/s without it, median over rounds).

The last line printed is one JSON object with the medians over rounds:
``{"urls": N, "hosts": H, "import_urls_per_s": ..., "copy_indexed_rows_per_s": ...,
"copy_unindexed_rows_per_s": ..., "copy_frontier_rows_per_s": ...,
"ratio_vs_frontier_copy": ..., "rounds": [...]}``. Issue 15's target is
``ratio_vs_frontier_copy >= 0.8``: the import against the COPY into url_frontier, each
round's import against the COPY timed right after it, the median over rounds (a machine
whose speed drifts between rounds moves both figures of a round alike; the ratio of the
medians, which pairs runs of different rounds, is ``ratio_of_medians_vs_frontier_copy``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import psycopg

from bench.server import (
    BenchServer,
    emit_result,
    log,
    median,
    peak_rss_mib,
    run_measured,
    running_server,
)
from frontier.urls import InvalidURL, normalize_url, url_hash, url_host

SEED = 20261122
COPY_CHUNK_BYTES = 1 << 20
_WORDS = (
    "council",
    "budget",
    "vote",
    "river",
    "bridge",
    "storm",
    "school",
    "police",
    "court",
    "festival",
    "museum",
    "market",
    "energy",
    "climate",
    "water",
    "housing",
    "transport",
    "rail",
    "airport",
    "election",
    "garden",
    "library",
    "report",
    "review",
    "season",
    "match",
    "final",
    "league",
    "coach",
    "player",
    "record",
    "weather",
    "flood",
    "fire",
    "health",
)
_TRACKING = (
    "utm_source=rss&utm_medium=feed",
    "utm_source=twitter&utm_campaign=share",
    "utm_medium=email&utm_source=newsletter",
)
_PARAMS = ("page=2", "ref=home", "id=48213", "lang=en")


def build_urls(count: int, hosts: int, seed: int = SEED) -> list[str]:
    """`count` article URLs over `hosts` hosts, the same for a given seed."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(count):
        roll = rng.random()
        if out and roll < 0.01:  # the same line again
            out.append(out[rng.randrange(len(out))])
            continue
        if out and roll < 0.02:  # an earlier URL with tracking parameters: same once normalised
            earlier = out[rng.randrange(len(out))]
            joiner = "&" if "?" in earlier else "?"
            out.append(f"{earlier}{joiner}{rng.choice(_TRACKING)}")
            continue
        host = rng.randrange(hosts)
        slug = "-".join(rng.choices(_WORDS, k=rng.randint(3, 6)))
        url = (
            f"https://www.host{host}.example/2026/{rng.randint(1, 12):02d}/"
            f"{rng.randint(1, 28):02d}/{slug}-{i}"
        )
        roll = rng.random()
        if roll < 0.03:
            url += "?" + rng.choice(_TRACKING)
        elif roll < 0.05:
            url += "?" + rng.choice(_PARAMS)
        out.append(url)
    return out


def normalised_rows(urls: Sequence[str]) -> list[tuple[str, str, str]]:
    """(url_hash, normalised url, host) of each distinct URL, in first-seen order."""
    rows: dict[str, tuple[str, str, str]] = {}
    for url in urls:
        try:
            normal = normalize_url(url)
        except InvalidURL:
            continue
        hash_ = url_hash(normal)
        if hash_ not in rows:
            rows[hash_] = (hash_, normal, url_host(normal))
    return list(rows.values())


def copy_chunks(records: Iterable[Sequence[str]]) -> list[bytes]:
    """COPY text of `records`, in chunks of about COPY_CHUNK_BYTES."""
    chunks, lines, size = [], [], 0
    for record in records:
        line = "\t".join(value.replace("\\", "\\\\") for value in record) + "\n"
        lines.append(line)
        size += len(line)
        if size >= COPY_CHUNK_BYTES:
            chunks.append("".join(lines).encode())
            lines, size = [], 0
    if lines:
        chunks.append("".join(lines).encode())
    return chunks


def time_import(dsn: str, path: Path, workdir: Path) -> tuple[float, dict[str, Any], float]:
    """Run the real CLI; returns (wall seconds, its JSON summary, its peak RSS in MiB)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("FRONTIER_")}
    env["FRONTIER_DATABASE_URL"] = dsn
    command = [sys.executable, "-m", "frontier", "import", str(path), "--json"]
    done = run_measured(command, env=env, cwd=workdir)  # cwd: no stray .env is read
    if done.returncode not in (0, 1):  # 1: some lines rejected, which the summary reports
        raise RuntimeError(f"frontier import exited {done.returncode}:\n{done.stderr}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return done.wall_s, summary, done.peak_rss_mib


def _timed_copy(conn: psycopg.Connection[Any], statement: str, chunks: Sequence[bytes]) -> float:
    conn.execute("CHECKPOINT")
    conn.commit()
    start = time.perf_counter()
    with conn.cursor() as cursor, cursor.copy(statement) as copy:
        for chunk in chunks:
            copy.write(chunk)
    conn.commit()
    return time.perf_counter() - start


def time_copy(dsn: str, chunks: Sequence[bytes], *, indexed: bool) -> float:
    """Seconds to COPY (url_hash, url) `chunks` into a fresh table, commit included."""
    with psycopg.connect(dsn) as conn:
        conn.execute("DROP TABLE IF EXISTS copy_target")
        conn.execute("CREATE TABLE copy_target (url_hash char(64) NOT NULL, url text NOT NULL)")
        if indexed:
            conn.execute("CREATE UNIQUE INDEX copy_target_url_hash ON copy_target (url_hash)")
        conn.commit()
        elapsed = _timed_copy(conn, "COPY copy_target (url_hash, url) FROM STDIN", chunks)
        conn.execute("DROP TABLE copy_target")
        conn.commit()
    return elapsed


# What the table's own ingest pays for, one at a time: (name, the DDL that drops it).
TABLE_PARTS: tuple[tuple[str, str], ...] = (
    ("url_frontier_due_idx (claim)", "DROP INDEX url_frontier_due_idx"),
    ("url_frontier_source_status_idx", "DROP INDEX url_frontier_source_status_idx"),
    ("url_frontier_lease_idx (partial, fetching)", "DROP INDEX url_frontier_lease_idx"),
    (
        "source_id foreign key",
        "ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_source_id_fkey",
    ),
    (
        "url_hash CHECK (hex, length)",
        "ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_url_hash_check",
    ),
    ("generated id column", "ALTER TABLE url_frontier DROP COLUMN id"),
    (
        "frontier_counts insert trigger",
        "ALTER TABLE url_frontier DISABLE TRIGGER url_frontier_count_inserted",
    ),
)


def time_copy_frontier(
    dsn: str, rows: Sequence[tuple[str, str, str]], drop: str | None = None
) -> float:
    """Seconds to COPY the rows straight into an empty url_frontier (all its indexes, checks,
    foreign key and triggers; no host_state): what the table itself lets in. `drop`: DDL run
    first on this scratch database, to time the table without one of its parts."""
    with psycopg.connect(dsn) as conn:
        if drop:
            conn.execute(drop)
            conn.commit()
        found = conn.execute("SELECT id::text FROM sources WHERE name = 'manual'").fetchone()
        assert found is not None
        source = found[0]
        chunks = copy_chunks((h, url, host, source, "manual", "5") for h, url, host in rows)
        return _timed_copy(
            conn,
            "COPY url_frontier (url_hash, url, host, source_id, origin, priority) FROM STDIN",
            chunks,
        )


def table_costs(
    server: BenchServer, number: int, rows: Sequence[tuple[str, str, str]]
) -> dict[str, int]:
    """Rows/s of the COPY into url_frontier with each of TABLE_PARTS dropped in turn."""
    name = f"bench_submit_parts_{number}"
    costs = {}
    for part, drop in TABLE_PARTS:
        try:
            elapsed = time_copy_frontier(server.migrated_database(name), rows, drop)
        finally:
            server.drop_database(name)
        costs[part] = round(len(rows) / elapsed)
        log(f"round {number}: COPY into url_frontier without {part}: {costs[part]:,} rows/s")
    return costs


def run_round(
    server: BenchServer,
    number: int,
    path: Path,
    workdir: Path,
    lines: int,
    rows: Sequence[tuple[str, str, str]],
    chunks: Sequence[bytes],
    *,
    parts: bool = False,
) -> dict[str, Any]:
    name = f"bench_submit_{number}"
    dsn = server.migrated_database(name)
    try:
        server.checkpoint()
        log(f"round {number}: frontier import of {lines:,} lines")
        wall, summary, rss = time_import(dsn, path, workdir)
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM url_frontier").fetchone()
        stored = row[0] if row else 0
        if stored != len(rows) or summary["accepted"] != len(rows):
            raise RuntimeError(
                f"expected {len(rows):,} rows, url_frontier holds {stored:,}; summary {summary}"
            )
        log(
            f"round {number}: import {wall:.2f}s = {lines / wall:,.0f} lines/s "
            f"(accepted {summary['accepted']:,}, duplicate {summary['duplicate']:,}, "
            f"rejected {summary['rejected']:,}; peak RSS {rss:.0f} MiB)"
        )
    finally:
        server.drop_database(name)  # ends autovacuum on it too, which would slow the COPY
    # The COPY the import is held against, at once: this machine's speed drifts by a fifth
    # within minutes, and the round's ratio compares two runs side by side.
    copy = f"{name}_copy"
    try:
        dsn = server.migrated_database(copy)
        frontier = time_copy_frontier(dsn, rows)
        indexed = time_copy(dsn, chunks, indexed=True)
        unindexed = time_copy(dsn, chunks, indexed=False)
    finally:
        server.drop_database(copy)
    log(
        f"round {number}: COPY of {len(rows):,} rows: indexed {len(rows) / indexed:,.0f} rows/s, "
        f"unindexed {len(rows) / unindexed:,.0f} rows/s, "
        f"into url_frontier {len(rows) / frontier:,.0f} rows/s"
    )
    result: dict[str, Any] = {
        "import_s": round(wall, 3),
        "import_urls_per_s": round(lines / wall),
        "import_peak_rss_mib": round(rss, 1),
        "copy_indexed_rows_per_s": round(len(rows) / indexed),
        "copy_unindexed_rows_per_s": round(len(rows) / unindexed),
        "copy_frontier_rows_per_s": round(len(rows) / frontier),
        "ratio_vs_indexed_copy": round(indexed * lines / (wall * len(rows)), 3),
        "ratio_vs_frontier_copy": round(frontier * lines / (wall * len(rows)), 3),
    }
    if parts:
        result["table_costs"] = table_costs(server, number, rows)
    return result


def cli_overhead(server: BenchServer, workdir: Path) -> float:
    """Wall seconds of importing an empty file: interpreter start-up, imports, schema check,
    connecting; part of every import's measured time."""
    empty = workdir / "empty.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    dsn = server.migrated_database("bench_submit_empty")
    try:
        wall = median([time_import(dsn, empty, workdir)[0] for _ in range(3)])
    finally:
        server.drop_database("bench_submit_empty")
    log(f"frontier import of an empty file: {wall:.2f}s (start-up, included below)")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="100,000 URLs over 10,000 hosts instead of 1,000,000 over 100,000",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--table-costs",
        action="store_true",
        help="also time the COPY into url_frontier without each index, constraint, trigger",
    )
    args = parser.parse_args(argv)
    count, hosts = (100_000, 10_000) if args.quick else (1_000_000, 100_000)

    started = time.perf_counter()
    log(f"generating {count:,} URLs over {hosts:,} hosts")
    urls = build_urls(count, hosts)
    rows = normalised_rows(urls)
    chunks = copy_chunks((hash_, url) for hash_, url, _ in rows)
    hosts_used = len({host for _, _, host in rows})
    log(
        f"{len(rows):,} distinct normalised URLs on {hosts_used:,} hosts "
        f"({count - len(rows):,} duplicate lines)"
    )

    results = []
    with tempfile.TemporaryDirectory(prefix="frontier-bench-submit-") as workdir:
        path = Path(workdir) / "urls.txt"
        path.write_text("\n".join(urls) + "\n", encoding="utf-8")
        del urls
        with running_server() as server:
            overhead = cli_overhead(server, Path(workdir))
            for number in range(1, args.rounds + 1):
                results.append(
                    run_round(
                        server,
                        number,
                        path,
                        Path(workdir),
                        count,
                        rows,
                        chunks,
                        parts=args.table_costs,
                    )
                )

    def mid(key: str) -> float:
        return median([result[key] for result in results])

    result = {
        "urls": count,
        "hosts": hosts,
        "import_urls_per_s": round(mid("import_urls_per_s")),
        "copy_indexed_rows_per_s": round(mid("copy_indexed_rows_per_s")),
        "copy_unindexed_rows_per_s": round(mid("copy_unindexed_rows_per_s")),
        "copy_frontier_rows_per_s": round(mid("copy_frontier_rows_per_s")),
        "ratio_vs_indexed_copy": mid("ratio_vs_indexed_copy"),
        "ratio_vs_frontier_copy": mid("ratio_vs_frontier_copy"),
        "ratio_of_medians_vs_frontier_copy": round(
            mid("import_urls_per_s") / mid("copy_frontier_rows_per_s"), 3
        ),
        "distinct_urls": len(rows),
        "duplicate_lines": count - len(rows),
        "hosts_used": hosts_used,
        "cli_overhead_s": round(overhead, 3),
        "import_peak_rss_mib": mid("import_peak_rss_mib"),
        "bench_peak_rss_mib": round(peak_rss_mib(), 1),
        "rounds": results,
    }
    if args.table_costs:
        result["table_costs"] = {
            part: round(median([r["table_costs"][part] for r in results]))
            for part, _ in TABLE_PARTS
        }
    log(f"done in {time.perf_counter() - started:.0f}s")
    emit_result(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
