"""Claiming pauses while the content sink is down (the wait itself: tests/unit/
test_sink_backoff.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from frontier.db import Database
from frontier.sinks import RawDocument, SinkUnavailable
from frontier.sinks.postgres import PostgresSink
from tests.fetch_harness import after, article, fetcher_for, submit
from tests.local_site import LocalSite


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
        assert fetcher.sink_backoff.paused_for(time.monotonic()) == 0
        await fetcher.run_once()
        assert 0 < fetcher.sink_backoff.paused_for(time.monotonic()) <= 60
        assert fetcher.sink_backoff.paused_for(time.monotonic() + 61) == 0  # the wait ran out
        # the URL's wait runs out
        assert (await fetcher.run_once(now=after(61))).claimed == 1
        # stored: claiming goes on at once
        assert fetcher.sink_backoff.paused_for(time.monotonic()) == 0
    assert await db.fetchval("SELECT status FROM url_frontier") == "fetched"
