"""A host's delay in the database follows frontier/host_delay.py: the generated
`host_state.delay_ms` and the slowdown kept by queue.sql `complete` agree with the pure
rules, and changing a source's rate limit applies to the next claims on its hosts."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from frontier.db import Database
from frontier.host_delay import RECOVERY_ANSWERS, host_delay_ms, slowdown_after
from frontier.hosts import HostRepository
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, Outcome, OutcomeKind, QueuePolicy, claim_hold
from frontier.source_schema import SourcePatch
from frontier.sources import SourceRepository
from frontier.states import Origin

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_the_generated_delay_is_the_pure_rule(db: Database) -> None:
    grid = list(
        itertools.product([None, 0, 700, 3000, 90_000], [None, 0, 1500], [0, 1000], range(8))
    )
    for k, (crawl, source, default, slowdown) in enumerate(grid):
        await db.execute(
            "INSERT INTO host_state (host, crawl_delay_ms, source_delay_ms, min_delay_ms,"
            " slowdown) VALUES ($1, $2, $3, $4, $5)",
            f"h{k}.example",
            crawl,
            source,
            default,
            slowdown,
        )
    rows = await db.fetch("SELECT host, delay_ms FROM host_state WHERE host LIKE 'h%.example'")
    got = {r["host"]: r["delay_ms"] for r in rows}
    for k, (crawl, source, default, slowdown) in enumerate(grid):
        expected = host_delay_ms(
            crawl_delay_ms=crawl, source_delay_ms=source, min_delay_ms=default, slowdown=slowdown
        )
        assert got[f"h{k}.example"] == expected, (crawl, source, default, slowdown)


async def test_the_doubling_after_a_429_wears_off_after_good_answers(db: Database) -> None:
    manual = await SourceRepository(db).get("manual")
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=1000))
    urls = [f"http://busy.example/{i}" for i in range(2 * RECOVERY_ANSWERS + 4)]
    await queue.submit([Candidate(u, manual.ref, Origin.MANUAL) for u in urls], now=T0)
    t = 0.0
    state = (0, 0)

    async def one(kind: OutcomeKind, **values: object) -> int:
        nonlocal t, state
        t += 100  # past any delay and backoff
        claims = await queue.claim("w1", 1, now=at(t))
        assert len(claims) == 1
        await queue.complete("w1", [Outcome(claims[0], kind, **values)], now=at(t))  # type: ignore[arg-type]
        state = slowdown_after(
            *state,
            answered=int(kind is OutcomeKind.FETCHED),
            rate_limited=kind is OutcomeKind.RATE_LIMITED,
        )
        row = await db.fetchrow(
            "SELECT slowdown, good_answers, delay_ms FROM host_state WHERE host = 'busy.example'"
        )
        assert row is not None
        assert (row["slowdown"], row["good_answers"]) == state
        return int(row["delay_ms"])

    assert await one(OutcomeKind.RATE_LIMITED, http_status=429, retry_after_s=5) == 2000
    assert await one(OutcomeKind.RATE_LIMITED, http_status=429, retry_after_s=5) == 4000
    assert await one(OutcomeKind.RETRY, http_status=500) == 4000  # not a good answer
    delays = [await one(OutcomeKind.FETCHED, http_status=200) for _ in range(RECOVERY_ANSWERS)]
    assert delays[-2:] == [4000, 2000]  # one doubling off after RECOVERY_ANSWERS
    delays = [await one(OutcomeKind.FETCHED, http_status=200) for _ in range(RECOVERY_ANSWERS)]
    assert delays[-1] == 1000  # back to normal


async def test_changing_a_sources_rate_limit_applies_to_its_hosts(db: Database) -> None:
    sources = SourceRepository(db)
    own = await sources.add("own-site", base_url="http://own.example/", rate_limit_ms=0)
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=1000))
    urls = [f"http://own.example/{i}" for i in range(8)]
    await queue.submit([Candidate(u, own.ref, Origin.MANUAL) for u in urls], now=T0)

    async def claims(seconds: float) -> int:
        """Claims at `seconds`, each answered at once (its hold given back)."""
        claimed = await queue.claim("w1", 5, now=at(seconds))
        holds = {c.host: claim_hold("w1", c.url_hash) for c in claimed}
        await HostRepository(db).release_slots(holds, now=at(seconds))
        return len(claimed)

    assert (await claims(0), await claims(0)) == (1, 1)  # no delay: ready again at once
    await sources.update(own.id, SourcePatch(rate_limit_ms=5000))
    assert await claims(10) == 1
    assert await claims(14.999) == 0
    assert await claims(15) == 1
    await sources.update(own.id, SourcePatch(rate_limit_ms=None))  # back to the default
    assert await claims(20) == 1
    assert await claims(20.999) == 0
    assert await claims(21) == 1
    # A second source with a larger rate limit sharing the host: the largest applies.
    slow = await sources.add("syndicator", rate_limit_ms=3000)
    await queue.submit([Candidate("http://own.example/x", slow.ref, Origin.MANUAL)], now=at(21))
    await sources.update(own.id, SourcePatch(rate_limit_ms=0))
    assert await claims(30) == 1
    assert await claims(32.999) == 0
    assert await claims(33) == 1
