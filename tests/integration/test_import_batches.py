"""`frontier.imports.import_lines` with several batches in the database at once, against the
real database: a batch that fails mid-import leaves every batch whole, the batches before
it imported, and no statement of the import still running once the error reaches the
caller (so its pool may close at once and the outcome is known)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from frontier.db import Database
from frontier.imports import Line, import_lines
from frontier.queue import QueueRepository
from frontier.sources import SourceRepository
from tests.frontier_checks import assert_counters_agree

BATCH, PARALLEL, BATCHES = 10, 3, 12
FAILING_BATCH = 4  # its one line on bad.example makes its statement fail


def url_of(number: int) -> str:
    host = "bad.example" if number == (FAILING_BATCH - 1) * BATCH + 5 else f"h{number % 3}.example"
    return f"https://{host}/item/{number}"


async def refuse_bad_host(db: Database) -> None:
    """A trigger that fails the statement inserting a URL of bad.example (the way a
    constraint or a full disk would fail it: inside PostgreSQL, mid-batch)."""
    await db.execute(
        """
        CREATE FUNCTION refuse_bad_host() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.host = 'bad.example' THEN
                RAISE EXCEPTION 'refused %', NEW.url;
            END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_bad_host BEFORE INSERT ON url_frontier
            FOR EACH ROW EXECUTE FUNCTION refuse_bad_host();
        """
    )


async def test_a_failing_batch_leaves_whole_batches_and_nothing_running(db: Database) -> None:
    await refuse_bad_host(db)
    source = (await SourceRepository(db).get("manual")).ref
    lines = iter([Line(n, url_of(n)) for n in range(1, BATCHES * BATCH + 1)])
    started = asyncio.all_tasks()

    with pytest.raises(asyncpg.RaiseError, match="refused"):
        await import_lines(QueueRepository(db), lines, source, batch_size=BATCH, parallel=PARALLEL)

    # Nothing of the import runs on: the batches sent after the failing one have ended.
    assert asyncio.all_tasks() - started == set()
    rows = await db.fetch("SELECT url FROM url_frontier")
    present = {int(r["url"].rsplit("/", 1)[1]) for r in rows}
    batches = {(n - 1) // BATCH + 1 for n in present}
    for batch in batches:  # each batch whole
        assert set(range((batch - 1) * BATCH + 1, batch * BATCH + 1)) <= present
    assert set(range(1, FAILING_BATCH)) <= batches  # the ones before it committed
    assert FAILING_BATCH not in batches
    assert max(batches) < FAILING_BATCH + PARALLEL  # none sent after the failure
    await assert_counters_agree(db)


async def test_lines_repeating_a_batch_in_flight_are_duplicates(db: Database) -> None:
    """Each batch repeats two URLs of the one before it, still in the database when this one
    is prepared, and one of the first batch, long committed: left out before sending or
    found known, they are duplicates alike, and every URL is stored once."""
    source = (await SourceRepository(db).get("manual")).ref
    urls = []
    for batch in range(BATCHES):
        first = batch * BATCH
        repeats = [first - 4, first - 5, 0] if batch else []  # the last two of the batch before
        new = range(first, first + BATCH - len(repeats))
        urls += [f"https://h{n % 4}.example/item/{n}" for n in new]
        urls += [f"https://h{n % 4}.example/item/{n}?utm_source=x" for n in repeats]
    lines = iter([Line(number, url) for number, url in enumerate(urls, start=1)])

    summary = await import_lines(
        QueueRepository(db), lines, source, batch_size=BATCH, parallel=PARALLEL
    )

    distinct = len({url.split("?")[0] for url in urls})
    assert (summary.accepted, summary.duplicate, summary.rejected) == (
        distinct,
        len(urls) - distinct,
        0,
    )
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == distinct
    pending = await db.fetch("SELECT host, pending_count FROM host_state ORDER BY host")
    assert sum(r["pending_count"] for r in pending) == distinct
    await assert_counters_agree(db)
