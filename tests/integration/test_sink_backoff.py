"""How long claimed URLs wait while the content sink is down: doubled per outage round
(a failure after the previous wait ran out), not per failed batch, and capped."""

from __future__ import annotations

from frontier.db import Database
from tests.fetch_harness import fetcher_for


async def test_batches_failing_together_share_one_wait_and_rounds_double_it(
    db: Database,
) -> None:
    async with fetcher_for(db, sink_retry_s=2.0, sink_retry_max_s=10.0) as fetcher:
        # Three batches fail within the first wait: one round, one wait.
        assert [fetcher._sink_wait(now=t) for t in (100.0, 100.5, 101.9)] == [2.0] * 3
        # Their URLs come back and fail again: the next round waits twice as long.
        assert [fetcher._sink_wait(now=t) for t in (102.0, 105.9)] == [4.0, 4.0]
        assert [fetcher._sink_wait(now=t) for t in (106.0, 114.0, 124.0)] == [8.0, 10.0, 10.0]
