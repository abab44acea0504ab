"""A bulk import SIGKILLed mid-way, through the API (`frontier serve`) and the CLI
(`frontier import FILE`): what is in the frontier afterwards is exactly a union of whole
batches, the maintained counters agree with a real count, and importing the same input
again leaves every URL there exactly once, the known ones counted as duplicates.

Line n of the input is `https://hK.example/item/n`. Batches are BATCH_SIZE lines (the
server's batches are cut where the body is when a batch is full, so the API body is sent
one batch at a time, the next only once the previous one is in the frontier). One line,
the first of the held batch, names the host `held.example`; the test inserts that line's
URL into url_frontier in a transaction it keeps open: the submit statement of that batch
waits on it inside PostgreSQL (whether its own insert conflicts), so the process is provably
mid-import, with a batch in flight, when it dies. The test's insert is rolled back after,
so the URL is the import's. The host summaries of the batches committed before the kill
are folded afterwards, as a fetcher's maintenance tick folds them (queue.sql
`fold_host_deltas`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from asyncio.subprocess import Process
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import asyncpg
import httpx

from frontier.db import Database
from frontier.imports import BATCH_SIZE, PARALLEL_BATCHES
from frontier.queue import QueueRepository
from frontier.urls import url_hash
from tests.conditions import wait_until
from tests.frontier_checks import assert_counters_agree
from tests.processes import free_port, frontier_process, read_log

DEADLINE_S = 120.0
HELD_HOST = "held.example"
TOKEN = "acceptance-token-0123456789abcdef"
VICTIM = "frontier-victim"  # application_name of the child's connections
API_BATCHES, API_HELD_BATCH = 40, 21  # 200k lines; batches 1..20 in before the held one
CLI_BATCHES, CLI_HELD_BATCH = 40, 13


def url_of(line: int, held_line: int) -> str:
    host = HELD_HOST if line == held_line else f"h{line % 8}.example"
    return f"https://{host}/item/{line}"


def first_line(batch: int) -> int:
    return (batch - 1) * BATCH_SIZE + 1


def batch_bytes(batch: int, held_line: int) -> bytes:
    start = first_line(batch)
    return "".join(url_of(n, held_line) + "\n" for n in range(start, start + BATCH_SIZE)).encode()


def victim(dsn: str) -> str:
    """The DSN the child connects with: its backends are named, so the test finds them."""
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={VICTIM}"


async def imported_lines(db: Database) -> set[int]:
    rows = await db.fetch("SELECT url FROM url_frontier")
    return {int(r["url"].rsplit("/", 1)[1]) for r in rows}


def whole_batches(lines: set[int], batches: int) -> list[int]:
    """The batches present in `lines`; fails if any batch is there only in part."""
    present = []
    for batch in range(1, batches + 1):
        mine = set(range(first_line(batch), first_line(batch + 1)))
        found = len(mine & lines)
        assert found in (0, BATCH_SIZE), f"batch {batch}: {found} of {BATCH_SIZE} lines"
        if found:
            present.append(batch)
    assert sum(BATCH_SIZE for _ in present) == len(lines)  # nothing outside the input
    return present


async def waiting_on(db: Database, holder: int) -> list[int]:
    """Backends of the killed-to-be process whose submit waits on the test's insert."""
    rows = await db.fetch(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 "
        "AND $2 = ANY(pg_blocking_pids(pid))",
        VICTIM,
        holder,
    )
    return [r["pid"] for r in rows]


@asynccontextmanager
async def held_url(dsn: str, held_line: int) -> AsyncIterator[int]:
    """Insert the held line's URL in a transaction kept open until the block ends, then
    rolled back; yields the backend pid holding it."""
    url = url_of(held_line, held_line)
    holder = await asyncpg.connect(dsn)
    try:
        transaction = holder.transaction()
        await transaction.start()
        await holder.execute(
            "INSERT INTO url_frontier (url_hash, url, host, origin, priority) "
            "VALUES ($1, $2, $3, 'manual', 5)",
            url_hash(url),
            url,
            HELD_HOST,
        )
        yield await holder.fetchval("SELECT pg_backend_pid()")
        await transaction.rollback()
    finally:
        await holder.close()


@asynccontextmanager
async def submissions(dsn: str) -> AsyncIterator[asyncio.Event]:
    """An event set on each `frontier_submitted` notification (sent when a submit commits)."""
    notified = asyncio.Event()
    listener = await asyncpg.connect(dsn)
    try:
        await listener.add_listener("frontier_submitted", lambda *_: notified.set())
        yield notified
    finally:
        await listener.close()


async def wait_for_orphans(db: Database, notified: asyncio.Event) -> None:
    """The killed process's statements already in PostgreSQL run on once the row lock is
    free (and a lone statement commits: the client's Sync was sent with it); wait until its
    backends are gone. Woken by their commits' notifications, else every 0.2 s."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        notified.clear()
        left = await db.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", VICTIM
        )
        if not left:
            return
        assert time.monotonic() < deadline, f"{left} backends of the killed process remain"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(notified.wait(), 0.2)


async def after_the_kill(
    db: Database, notified: asyncio.Event, batches: int, held: int, in_flight: int
) -> set[int]:
    """Checks once the killed process's backends are gone; returns the imported lines.
    `in_flight`: how many batches the process has in the database at once, the held one
    included (those after it may commit once the lock is free)."""
    await wait_for_orphans(db, notified)
    lines = await imported_lines(db)
    present = whole_batches(lines, batches)
    assert present[: held - 1] == list(range(1, held)), present  # committed before
    assert all(batch < held + in_flight for batch in present), present  # never submitted
    print(f"after the kill: batches {present[0]}..{present[-1]} imported")
    await QueueRepository(db).fold_host_deltas()  # as a fetcher's maintenance tick does
    await assert_counters_agree(db)
    return lines


async def healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


def serve(dsn: str, tmp_path: Path, port: int) -> AbstractAsyncContextManager[Process]:
    return frontier_process(
        victim(dsn),
        tmp_path,
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        FRONTIER_API_TOKEN=TOKEN,
    )


async def test_api_sigkill_mid_import_keeps_whole_batches(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    held_line = first_line(API_HELD_BATCH)
    held_in_flight, paused, killed = asyncio.Event(), asyncio.Event(), asyncio.Event()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"}

    async def paced_body(notified: asyncio.Event) -> AsyncIterator[bytes]:
        """One batch at a time, the next once the previous is in the frontier (so the
        server cuts its batches where ours end); after the held batch, one more, then
        nothing until the server is dead."""
        for batch in range(1, API_BATCHES + 1):
            yield batch_bytes(batch, held_line)
            if batch < API_HELD_BATCH:
                # Woken by a fold's notification, else every 0.2 s: an import folds every
                # half minute and at its end, not after each batch.
                deadline = time.monotonic() + DEADLINE_S
                while True:
                    notified.clear()
                    count = await db.fetchval("SELECT count(*) FROM url_frontier")
                    if count >= batch * BATCH_SIZE:
                        break
                    assert time.monotonic() < deadline, f"batch {batch} never arrived"
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(notified.wait(), 0.2)
            elif batch == API_HELD_BATCH:
                await held_in_flight.wait()
            else:
                paused.set()
                await killed.wait()

    async def whole_body() -> AsyncIterator[bytes]:
        for batch in range(1, API_BATCHES + 1):
            yield batch_bytes(batch, held_line)

    try:
        async with submissions(fresh_dsn) as notified:
            port = free_port()
            async with (
                held_url(fresh_dsn, held_line) as holder,
                serve(fresh_dsn, tmp_path, port) as server,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=None) as client,
            ):
                await wait_until(
                    lambda: healthy(client), server, deadline_s=DEADLINE_S, what="the API answering"
                )
                request = asyncio.create_task(
                    client.post("/api/v1/import", content=paced_body(notified), headers=headers)
                )
                pids = await wait_until(
                    lambda: waiting_on(db, holder),
                    server,
                    deadline_s=DEADLINE_S,
                    what="the held batch",
                )
                assert len(pids) == 1  # one batch waits on the held URL: the held one
                held_in_flight.set()
                await asyncio.wait_for(paused.wait(), DEADLINE_S)
                server.send_signal(signal.SIGKILL)
                await asyncio.wait_for(server.wait(), DEADLINE_S)
                killed.set()  # the client sends on and finds the connection gone
                try:
                    response = await asyncio.wait_for(request, DEADLINE_S)
                except httpx.HTTPError:
                    pass
                else:
                    raise AssertionError(f"the import answered {response.status_code}")
            lines = await after_the_kill(db, notified, API_BATCHES, API_HELD_BATCH, 2)

        port = free_port()
        async with (
            serve(fresh_dsn, tmp_path, port) as server,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=None) as client,
        ):
            await wait_until(
                lambda: healthy(client),
                server,
                deadline_s=DEADLINE_S,
                what="the API answering again",
            )
            response = await asyncio.wait_for(
                client.post("/api/v1/import", content=whole_body(), headers=headers),
                DEADLINE_S,
            )
        assert response.status_code == 200, response.text
        total = API_BATCHES * BATCH_SIZE
        assert response.json() == {
            "accepted": total - len(lines),
            "duplicate": len(lines),
            "rejected": 0,
            "errors": [],
        }
        assert await imported_lines(db) == set(range(1, total + 1))
        await assert_counters_agree(db)
    finally:
        killed.set()
        held_in_flight.set()


def write_input(path: Path, batches: int, held_line: int) -> None:
    with path.open("wb") as out:
        for batch in range(1, batches + 1):
            out.write(batch_bytes(batch, held_line))


async def test_cli_sigkill_mid_import_keeps_whole_batches(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    urls = tmp_path / "urls.txt"
    write_input(urls, CLI_BATCHES, first_line(CLI_HELD_BATCH))
    async with submissions(fresh_dsn) as notified:
        async with (
            held_url(fresh_dsn, first_line(CLI_HELD_BATCH)) as holder,
            frontier_process(victim(fresh_dsn), tmp_path, "import", str(urls)) as importer,
        ):
            await wait_until(
                lambda: waiting_on(db, holder),
                importer,
                deadline_s=DEADLINE_S,
                what="the held batch",
            )
            importer.send_signal(signal.SIGKILL)
            await asyncio.wait_for(importer.wait(), DEADLINE_S)
        lines = await after_the_kill(db, notified, CLI_BATCHES, CLI_HELD_BATCH, PARALLEL_BATCHES)

    async with frontier_process(fresh_dsn, tmp_path, "import", str(urls), "--json") as again:
        await asyncio.wait_for(again.wait(), DEADLINE_S)
        assert again.returncode == 0
    summary = json.loads(read_log(tmp_path, "import", 1).strip().splitlines()[-1])
    total = CLI_BATCHES * BATCH_SIZE
    assert summary == {
        "accepted": total - len(lines),
        "duplicate": len(lines),
        "rejected": 0,
        "errors": [],
    }
    assert await imported_lines(db) == set(range(1, total + 1))
    await assert_counters_agree(db)
