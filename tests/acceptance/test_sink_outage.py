"""The content sink down for 60 s under a real `frontier fetch` process using the
Elasticsearch sink (the in-repo stand-in, served on loopback): claimed URLs go back to
`pending` with backoff and no attempt counted, nothing stays `fetching` past its lease, the
process keeps running, and once the sink is back every URL is indexed, exactly once.

The outage has two phases of 30 s: the stand-in stopped (connections refused), then up but
answering 503 to everything. The URLs are submitted once the fetcher has created the index
and the stand-in is down, so every one of them is claimed during the outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import Any

from frontier.db import Database
from tests.conditions import wait_until
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import article, submit
from tests.frontier_checks import assert_counters_agree
from tests.local_site import LocalSite
from tests.processes import frontier_process

DEADLINE_S = 90.0
PHASE_S = 30.0  # each of the two outage phases; 60 s in all
SITES, PAGES = 4, 30
INDEX = "raw_content"
ENV = {
    "FRONTIER_SINK_RETRY_S": "2",  # first wait; doubled per outage round, capped:
    "FRONTIER_SINK_RETRY_MAX_S": "8",  # so recovery is seen within seconds
    "FRONTIER_ELASTICSEARCH_FLUSH_MS": "50",
}


async def deferred_by_sink(db: Database, like: str) -> int:
    """URLs put back to pending by a sink failure whose message matches `like`, still
    waiting (next_fetch_at in the future) and with no attempt counted."""
    count: int = await db.fetchval(
        "SELECT count(*) FROM url_frontier WHERE status = 'pending' AND retry_count = 0 "
        "AND next_fetch_at > now() AND last_error LIKE 'sink unavailable: %' "
        "AND last_error LIKE $1",
        like,
    )
    return count


async def statuses(db: Database) -> dict[str, int]:
    rows = await db.fetch("SELECT status, count(*) AS n FROM url_frontier GROUP BY 1")
    return {r["status"]: r["n"] for r in rows}


async def outage_phase(
    db: Database, fetcher: asyncio.subprocess.Process, like: str, what: str
) -> None:
    """One phase of the outage, PHASE_S of wall time from now: wait until URLs were put
    back for this phase's failure, then wait out the rest of the phase. The duration is
    the thing under test (an outage of a given length), so the rest is waited out on the
    fetcher process exiting with a timeout: were it to die, the test fails at once."""
    ends = time.monotonic() + PHASE_S
    await wait_until(
        lambda: deferred_by_sink(db, like),
        fetcher,
        deadline_s=PHASE_S,
        what=f"URLs put back while the sink is {what}",
    )
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(fetcher.wait(), max(ends - time.monotonic(), 0))
    assert fetcher.returncode is None, f"the fetcher exited while the sink was {what}"
    await assert_nothing_lost(db)


async def assert_nothing_lost(db: Database) -> None:
    """During the outage: nothing indexed, nothing failed, every URL pending without an
    attempt counted or fetching under a live lease."""
    rows = await db.fetch(
        "SELECT status, retry_count, lease_until > now() AS leased FROM url_frontier"
    )
    assert len(rows) == SITES * PAGES
    assert {r["status"] for r in rows} <= {"pending", "fetching"}, await statuses(db)
    assert all(r["retry_count"] == 0 for r in rows)
    assert all(r["leased"] for r in rows if r["status"] == "fetching")


async def test_sink_down_for_60_s_then_everything_is_indexed_once(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    sites = [await LocalSite(address=f"127.0.0.{40 + i}").start() for i in range(SITES)]
    standin = await ElasticsearchStandIn().start()
    urls = []
    for site in sites:
        for i in range(PAGES):
            site.serve(f"/p{i}", article(f"{site.address} page {i}", word=f"w{site.port}x{i}"))
            urls.append(site.url(f"/p{i}"))
    try:
        async with frontier_process(
            fresh_dsn,
            tmp_path,
            "fetch",
            "--workers",
            "8",
            FRONTIER_ELASTICSEARCH_URL=standin.url,
            **ENV,
        ) as fetcher:

            async def index_created() -> bool:
                return INDEX in standin.indices

            await wait_until(index_created, fetcher, what="the index created at start")
            await standin.stop()  # phase 1: connections refused
            await submit(db, *urls)
            await outage_phase(db, fetcher, "%onnection%", "refusing connections")
            standin.down = True  # phase 2: up again, but answering 503 to everything
            await standin.start()
            await outage_phase(db, fetcher, "%503%", "answering 503")
            assert standin.indices[INDEX] == {}
            ok = "SELECT count(*) FROM fetch_log WHERE kind = 'page' AND outcome = 'ok'"
            assert await db.fetchval(ok) == 0

            standin.down = False  # the sink is back

            async def all_fetched() -> dict[str, int] | None:
                now = await statuses(db)
                return now if now == {"fetched": len(urls)} else None

            await wait_until(
                all_fetched,
                fetcher,
                deadline_s=DEADLINE_S,
                what="every URL fetched after the sink returned",
            )
            fetcher.send_signal(signal.SIGTERM)
            await asyncio.wait_for(fetcher.wait(), DEADLINE_S)
            assert fetcher.returncode == 0

        rows = await db.fetch("SELECT url, url_hash, retry_count FROM url_frontier")
        documents: dict[str, dict[str, Any]] = standin.indices[INDEX]
        assert sorted(documents) == sorted(r["url_hash"] for r in rows)  # one per URL
        assert {d["url"] for d in documents.values()} == set(urls)
        assert all(d["url_hash"] == key for key, d in documents.items())  # id = url_hash
        assert standin.rejected_requests == []
        assert all(r["retry_count"] == 0 for r in rows)  # the outage cost no attempt
        pages = await db.fetch(
            "SELECT outcome, count(*) AS n FROM fetch_log WHERE kind = 'page' GROUP BY 1"
        )
        by_outcome = {r["outcome"]: r["n"] for r in pages}
        assert by_outcome.pop("ok") == len(urls)  # each URL completed as fetched once
        assert set(by_outcome) == {"deferred"}  # every other attempt: put back by the sink
        assert await db.fetchval("SELECT count(*) FROM raw_content") == 0  # ES, not PG
        await assert_counters_agree(db)
    finally:
        await standin.stop()
        for site in sites:
            await site.stop()
