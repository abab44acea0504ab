"""How long claimed URLs wait while the content sink is down: doubled per outage round
(a failure after the previous wait ran out), not per failed batch, and capped."""

from __future__ import annotations

import time
from collections.abc import Sequence

from frontier.db import Database
from frontier.sinks import RawDocument, SinkUnavailable
from frontier.sinks.postgres import PostgresSink
from tests.fetch_harness import article, fetcher_for, submit
from tests.local_site import LocalSite


async def test_batches_failing_together_share_one_wait_and_rounds_double_it(
    db: Database,
) -> None:
    async with fetcher_for(db, sink_retry_s=2.0, sink_retry_max_s=10.0) as fetcher:
        # Three batches fail within the first wait: one round, one wait.
        assert [fetcher._sink_wait(now=t) for t in (100.0, 100.5, 101.9)] == [2.0] * 3
        # Their URLs come back and fail again: the next round waits twice as long.
        assert [fetcher._sink_wait(now=t) for t in (102.0, 105.9)] == [4.0, 4.0]
        assert [fetcher._sink_wait(now=t) for t in (106.0, 114.0, 124.0)] == [8.0, 10.0, 10.0]


async def test_claiming_pauses_while_the_sink_is_down_and_resumes_once_it_stores(
    db: Database, local_site: LocalSite
) -> None:
    """Pages fetched while the sink is known to be down could not be stored; fetching them
    again later would spend the site's politeness twice."""

    class FlakySink(PostgresSink):
        calls = 0

        async def write(self, documents: Sequence[RawDocument]) -> None:
            self.calls += 1
            if self.calls == 1:
                raise SinkUnavailable("connection refused")
            await super().write(documents)

    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db, sink=FlakySink(db), sink_retry_s=60.0) as fetcher:
        assert fetcher.claims_paused_for() == 0
        await fetcher.run_once()
        assert 0 < fetcher.claims_paused_for() <= 60
        assert fetcher.claims_paused_for(now=time.monotonic() + 61) == 0  # the wait ran out
        # the URL's wait runs out (its row and its host's pending summary)
        await db.execute("UPDATE url_frontier SET next_fetch_at = now()")
        await db.execute("UPDATE host_state SET pending_due_at = now()")
        assert await fetcher.run_once() == 1
        assert fetcher.claims_paused_for() == 0  # stored: claiming goes on at once
    assert await db.fetchval("SELECT status FROM url_frontier") == "fetched"
