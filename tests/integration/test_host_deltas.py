"""Host summaries through host_deltas (migration 0025): a submit appends its batch's
summary, a fold moves it into host_state; until then the URLs are stored but not
claimable. An import folds every half minute and at its end; a fetcher folds what an
interrupted import left, from its maintenance tick and before it calls itself idle."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime, timedelta

import pytest

from frontier.db import Database
from frontier.imports import ImportFormat, import_lines, read_lines
from frontier.priority import score
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy, SourceRef
from frontier.states import Origin
from frontier.submit_rows import FOLD_PARTS, prepare
from tests.conditions import wait_until
from tests.fetch_harness import fetcher_for
from tests.frontier_checks import assert_counters_agree
from tests.local_site import LocalSite

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POLICY = QueuePolicy(default_delay_ms=1000, lease_seconds=60)


@pytest.fixture
def queue(db: Database) -> QueueRepository:
    return QueueRepository(db, POLICY)


async def manual(db: Database, *, priority: int = 5, rate_limit_ms: int | None = None) -> SourceRef:
    source_id = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
    return SourceRef(source_id, priority=priority, rate_limit_ms=rate_limit_ms)


async def submit_unfolded(
    queue: QueueRepository, source: SourceRef, urls: list[str], now: datetime
) -> None:
    candidates = [Candidate(url, source, Origin.MANUAL) for url in urls]
    await queue.submit_prepared(prepare(candidates, 1000), now=now, fold=False)


async def test_unfolded_urls_are_stored_but_not_claimable_until_folded(
    db: Database, queue: QueueRepository
) -> None:
    low, high = await manual(db, priority=3), await manual(db, priority=8, rate_limit_ms=4000)
    await submit_unfolded(queue, low, ["https://a.example/1", "https://a.example/2"], T0)
    later = T0 + timedelta(seconds=30)
    await submit_unfolded(queue, high, ["https://a.example/3", "https://b.example/1"], later)

    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 4
    assert await db.fetchval("SELECT count(*) FROM host_state") == 0
    assert await queue.claim("w", 10, now=later) == []

    assert await queue.fold_host_deltas() == 2
    a = await db.fetchrow("SELECT * FROM host_state WHERE host = 'a.example'")
    assert a is not None
    # the two batches added up: every URL counted, the best priority, the earliest due
    # time, the largest source delay; a new host's own delay is the default
    assert a["pending_count"] == 3
    assert a["pending_priority"] == 8
    assert a["pending_due_at"] == T0
    assert (a["source_delay_ms"], a["min_delay_ms"]) == (4000, 1000)
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0
    claimed = await queue.claim("w", 10, now=later)
    assert sorted(c.host for c in claimed) == ["a.example", "b.example"]
    assert await queue.fold_host_deltas() == 0  # nothing left to fold


async def test_summaries_are_split_by_host_into_parts_folded_at_once(
    db: Database, queue: QueueRepository
) -> None:
    source = await manual(db)
    hosts = [f"site{i}.example" for i in range(40)]
    await submit_unfolded(queue, source, [f"https://{h}/1" for h in hosts], T0)
    await submit_unfolded(queue, source, [f"https://{h}/2" for h in hosts[:20]], T0)
    rows = await db.fetch("SELECT part, hosts FROM host_deltas ORDER BY part")
    parts = {r["part"] for r in rows}
    assert len(parts) > 1 and parts <= set(range(FOLD_PARTS))  # 40 hosts: more than one
    part_of: dict[str, int] = {}
    for row in rows:  # a host is in one part, the same one batch after batch
        for host in row["hosts"]:
            assert part_of.setdefault(host, row["part"]) == row["part"]
    assert sorted(part_of) == sorted(hosts)

    assert await queue.fold_host_deltas(at_once=True) == 40  # one statement a part, at once
    counts = await db.fetch("SELECT host, pending_count FROM host_state")
    assert {r["host"]: r["pending_count"] for r in counts} == {
        h: 2 if i < 20 else 1 for i, h in enumerate(hosts)
    }
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0
    await assert_counters_agree(db)


async def test_a_fold_adds_to_a_known_host_and_a_plain_submit_folds_at_once(
    db: Database, queue: QueueRepository
) -> None:
    source = await manual(db)
    await queue.submit([Candidate("https://a.example/1", source, Origin.MANUAL)], now=T0)
    assert (await db.fetchrow("SELECT pending_count FROM host_state"))["pending_count"] == 1
    await submit_unfolded(queue, source, ["https://a.example/2", "https://a.example/1"], T0)
    await queue.fold_host_deltas()
    # the repeat of /1 was known: only /2 is added
    assert (await db.fetchrow("SELECT pending_count FROM host_state"))["pending_count"] == 2
    await assert_counters_agree(db)


async def test_submits_at_once_share_their_folds_and_each_returns_with_its_urls_folded(
    db: Database, queue: QueueRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poller's polls each submit a feed's entries at about the same time: one fold a
    submit made them queue behind each other on host_deltas' rows."""
    source = await manual(db)
    folds: list[int] = []
    fold = queue.fold_host_deltas

    async def counted(*args: object, **kwargs: object) -> int:
        if not folds:  # the first waits until every batch is stored: the others ask meanwhile
            await wait_until(
                lambda: db.fetchval("SELECT count(*) = 36 FROM url_frontier"), deadline_s=60
            )
        written = await fold(*args, **kwargs)  # type: ignore[arg-type]
        folds.append(written)
        return written

    monkeypatch.setattr(queue, "fold_host_deltas", counted)

    async def submit(n: int) -> int:
        urls = [f"https://h{n}.example/{i}" for i in range(3)]
        await queue.submit([Candidate(url, source, Origin.MANUAL) for url in urls], now=T0)
        # claimable once it returns: its host's summary is folded
        pending: int = await db.fetchval(
            "SELECT pending_count FROM host_state WHERE host = $1", f"h{n}.example"
        )
        return pending

    assert await asyncio.gather(*(submit(n) for n in range(12))) == [3] * 12
    assert len(folds) <= 3 and sum(folds) == 12  # one a submit before
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0
    await assert_counters_agree(db)


async def test_an_import_folds_as_it_goes_and_at_its_end(
    db: Database, queue: QueueRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    folds = []
    fold = queue.fold_host_deltas

    async def counted(*args: object, **kwargs: object) -> int:
        written = await fold(*args, **kwargs)  # type: ignore[arg-type]
        folds.append(written)
        return written

    monkeypatch.setattr(queue, "fold_host_deltas", counted)
    monkeypatch.setattr("frontier.imports.FOLD_EVERY_S", 0.0)  # before every batch
    text = "".join(f"https://h{n % 7}.example/item/{n}\n" for n in range(1, 501))
    lines = read_lines(io.BytesIO(text.encode()), ImportFormat.TXT)
    summary = await import_lines(queue, lines, await manual(db), batch_size=100)

    assert summary.accepted == 500
    assert len(folds) == 5 + 1  # before each batch (the first finds nothing) and at the end
    assert sum(folds) > 7  # hosts recur from batch to batch: written once per fold
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0
    assert await db.fetchval("SELECT sum(pending_count) FROM host_state") == 500
    await assert_counters_agree(db)


async def test_a_fetcher_fetches_what_an_interrupted_import_left_unfolded(
    db: Database, queue: QueueRepository, local_site: LocalSite
) -> None:
    for n in range(3):
        words = " ".join(f"story{n} word{i}" for i in range(80))
        local_site.serve(
            f"/article/{n}", f"<html><body><article><p>{words}</p></article></body></html>"
        )
    urls = [local_site.url(f"/article/{n}") for n in range(3)]
    await submit_unfolded(queue, await manual(db, rate_limit_ms=0), urls, T0)
    async with fetcher_for(db) as fetcher:
        summary = await fetcher.run(until_idle=True)
    assert summary.outcomes["fetched"] == 3
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0


async def test_maintenance_folds_what_waits(db: Database, queue: QueueRepository) -> None:
    await submit_unfolded(queue, await manual(db), ["https://a.example/1"], T0)
    async with fetcher_for(db) as fetcher:
        await fetcher.maintain_once()
    assert await db.fetchval("SELECT pending_count FROM host_state") == 1
    assert await db.fetchval("SELECT count(*) FROM host_deltas") == 0


async def test_columns_every_row_shares_are_sent_once_and_stored_on_every_row(
    db: Database, queue: QueueRepository
) -> None:
    """The submit statement takes a column that every row of a batch shares once instead
    of as an array (`queue._array_or_once`): a batch of one source, origin and depth is
    stored as a mixed batch is, row by row."""
    low = await manual(db, priority=3)
    high = await manual(db, priority=8, rate_limit_ms=4000)
    mixed = [
        Candidate("https://a.example/1", low, Origin.MANUAL),
        Candidate(
            "https://a.example/2",
            high,
            Origin.FEED,
            parent_url="https://a.example/feed",
            depth=1,
            discovery_meta={"title": "Two"},
        ),
        Candidate("https://a.example/3?utm_source=x", high, Origin.SPIDER, depth=2),
    ]
    shared = [Candidate(f"https://b.example/{n}", high, Origin.SITEMAP, depth=1) for n in range(3)]
    await queue.submit(mixed, now=T0)
    await queue.submit(shared, now=T0)

    stored = {
        r["url"]: (r["origin"], r["depth"], r["priority"], r["parent_url"], r["discovery_meta"])
        for r in await db.fetch("SELECT * FROM url_frontier")
    }
    assert stored["https://a.example/1"] == ("manual", 0, score(3, Origin.MANUAL, 0), None, None)
    assert stored["https://a.example/2"] == (
        "feed",
        1,
        score(8, Origin.FEED, 1),
        "https://a.example/feed",
        {"title": "Two"},
    )
    assert stored["https://a.example/3"] == ("spider", 2, score(8, Origin.SPIDER, 2), None, None)
    assert {stored[f"https://b.example/{n}"] for n in range(3)} == {
        ("sitemap", 1, score(8, Origin.SITEMAP, 1), None, None)
    }
    fetch_urls = await db.fetch(
        "SELECT url, fetch_url FROM url_frontier WHERE fetch_url IS NOT NULL"
    )
    assert [(r["url"], r["fetch_url"]) for r in fetch_urls] == [
        ("https://a.example/3", "https://a.example/3?utm_source=x")
    ]
    hosts = {r["host"]: r for r in await db.fetch("SELECT * FROM host_state")}
    assert hosts["a.example"]["source_delay_ms"] == 4000
    assert hosts["b.example"]["source_delay_ms"] == 4000
    assert hosts["b.example"]["pending_count"] == 3
    await assert_counters_agree(db)
