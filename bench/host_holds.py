"""Benchmark what giving hosts back costs a fetcher's database work (issue 31).

Run ``python -m bench.host_holds [--quick] [--rounds 3] [--seconds S]``.

Under the hold rule a claim holds each host with a delay until its answer is in, and the
fetcher gives it back per answer (hosts.sql `release_slots`), where the claim used to move
the host's turn forward by itself. This measures that statement, on a throwaway embedded
PostgreSQL (`bench.server`), against the database work it adds to: one process loops
claim (a batch of 50 URLs, one per host) -> give the hosts back -> complete, for S seconds
(10; ``--quick``: 3), over 5,000 hosts with a 1 ms delay and 20 URLs each, in three modes:

- ``complete``: no release statement; the completion gives the holds back (queue.sql
  `complete` does for a hold still held), the least database work a batch can do;
- ``grouped``: the fetcher's way (`fetcher.politeness.BatchHolds`): each page gives its
  host back as its answer comes, and releases that come while one is being written go
  together in the next statement (the 50 answers of a batch come at once here: the
  worst case for the number of statements is `per_answer`);
- ``per_answer``: one statement per answer, each awaited in turn.

Reported per mode: URLs claimed, given back and completed per second (median of the
rounds), release statements per batch, and the cost of the release relative to
``complete`` (1 - claims/s of the mode over claims/s of ``complete``). The last stdout line
is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import psycopg

from bench.server import emit_result, log, median, running_server
from fetcher.politeness import BatchHolds
from frontier.db import Database
from frontier.hosts import HostRepository, KeyBusy
from frontier.queue import QueueRepository
from frontier.queue_values import Outcome, OutcomeKind, QueuePolicy

HOSTS = 5_000
PER_HOST = 20
BATCH = 50
MODES = ("complete", "grouped", "per_answer")
WORKER = "bench-worker"

LOAD = """
INSERT INTO host_state (host, min_delay_ms, pending_count, pending_priority, pending_due_at)
SELECT 'h' || h || '.example', 1, {per_host}, 5, now() - interval '1 hour'
FROM generate_series(1, {hosts}) h;
INSERT INTO url_frontier (url_hash, url, host, origin, priority, next_fetch_at)
SELECT encode(sha256(convert_to(u, 'UTF8')), 'hex'), u, host, 'manual', 5,
       now() - interval '1 hour'
FROM (SELECT 'h' || h || '.example' AS host,
             'http://h' || h || '.example/' || n AS u
      FROM generate_series(1, {hosts}) h, generate_series(1, {per_host}) n) s;
ANALYZE host_state;
ANALYZE url_frontier;
"""


async def run_mode(dsn: str, mode: str, seconds: float) -> dict[str, Any]:
    db = await Database.connect(dsn, min_size=1, max_size=2)
    try:
        queue = QueueRepository(db, QueuePolicy(default_delay_ms=1, lease_seconds=300))
        hosts = CountingHosts(db)
        claimed = statements = batches = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            claims = await queue.claim(WORKER, BATCH)
            if not claims:
                await asyncio.sleep(0.002)  # every host waits its 1 ms delay
                continue
            context = await hosts.context(sorted({c.host for c in claims}))
            holds = BatchHolds(hosts, WORKER, claims, context)
            before = hosts.statements
            if mode == "grouped":
                await asyncio.gather(*(holds.release(c.host) for c in claims))
            elif mode == "per_answer":
                for claim in claims:
                    await hosts.release_slots({claim.host: holds.held.pop(claim.host)})
            statements += hosts.statements - before
            await queue.complete(
                WORKER, [Outcome(c, OutcomeKind.FETCHED, http_status=200) for c in claims]
            )
            claimed += len(claims)
            batches += 1
        elapsed = time.perf_counter() - started
    finally:
        await db.close()
    return {
        "claims_per_s": round(claimed / elapsed, 1),
        "release_statements_per_batch": round(statements / max(batches, 1), 2),
    }


class CountingHosts(HostRepository):
    """The repository, counting the release statements it sends."""

    statements = 0

    async def release_slots(
        self,
        holds: Mapping[str, str],
        *,
        snoozed: Mapping[str, KeyBusy] | None = None,
        now: datetime | None = None,
    ) -> int:
        self.statements += 1
        return await super().release_slots(holds, snoozed=snoozed, now=now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float)
    args = parser.parse_args()
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    rounds: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    with running_server() as server:
        for number in range(args.rounds):
            for mode in MODES:  # alternating, so that drift touches every mode alike
                dsn = server.migrated_database(f"holds_{mode}_{number}")
                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute(LOAD.format(hosts=HOSTS, per_host=PER_HOST).encode())
                server.checkpoint()
                result = asyncio.run(run_mode(dsn, mode, seconds))
                log(f"round {number + 1} {mode}: {result}")
                rounds[mode].append(result)
                server.drop_database(f"holds_{mode}_{number}")
    summary: dict[str, Any] = {}
    for mode in MODES:
        summary[mode] = {
            "claims_per_s": median([r["claims_per_s"] for r in rounds[mode]]),
            "release_statements_per_batch": median(
                [r["release_statements_per_batch"] for r in rounds[mode]]
            ),
            "rounds": [r["claims_per_s"] for r in rounds[mode]],
        }
    base = summary["complete"]["claims_per_s"]
    for mode in ("grouped", "per_answer"):
        summary[mode]["cost_vs_complete"] = round(1 - summary[mode]["claims_per_s"] / base, 3)
    emit_result(
        {
            "hosts": HOSTS,
            "batch": BATCH,
            "seconds": seconds,
            "quick": args.quick,
            **summary,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )


if __name__ == "__main__":
    main()
