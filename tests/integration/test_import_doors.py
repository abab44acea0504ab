"""Issue 34, item 3: one import pipeline behind both doors, `frontier import` and
`POST /api/v1/import` (`frontier.imports.submit_lines`). The same file, of several batches
with repeats across batches (the lines a batch in flight holds are left out of the next
one) and refused lines, imported through each door into a database of its own, gives the
same verdicts and the same frontier, and every URL is claimable when the import returns
(the host summaries are folded at its end)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from frontier.db import Database
from frontier.imports import BATCH_SIZE
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy
from frontier_cli.app import EXIT_PARTIAL
from tests.integration.test_api import AUTH, client_for, make_settings
from tests.integration.test_cli_queue import frontier

HOSTS = 7
LINES = 2 * BATCH_SIZE + 1_000  # three batches


def the_file() -> bytes:
    lines = []
    for n in range(LINES):
        if n % 997 == 0:
            lines.append("not a url")  # refused
        elif n >= BATCH_SIZE and n % 3 == 0:
            lines.append(f"http://h{(n - BATCH_SIZE) % HOSTS}.example/a/{n - BATCH_SIZE}")
        else:
            lines.append(f"http://h{n % HOSTS}.example/a/{n}")
    return ("\n".join(lines) + "\n").encode()


async def frontier_of(db: Database) -> dict[str, Any]:
    rows = await db.fetch("SELECT url, priority, status FROM url_frontier ORDER BY url")
    hosts = await db.fetch(
        "SELECT host, pending_count, pending_due_at IS NOT NULL AS due FROM host_state"
    )
    return {"urls": [tuple(row) for row in rows], "hosts": sorted(tuple(h) for h in hosts)}


async def claimable(db: Database) -> tuple[int, int]:
    """The URLs the host summaries count as pending, and the hosts a claim takes now."""
    pending = await db.fetchval(
        "SELECT sum(pending_count) FROM host_state WHERE pending_due_at IS NOT NULL"
    )
    claims = await QueueRepository(db, QueuePolicy()).claim("counter", 2 * HOSTS)
    return pending, len({claim.host for claim in claims})


async def test_the_cli_and_the_api_import_the_same_file_the_same_way(
    fresh_dsn: str, second_dsn: str, tmp_path: Path
) -> None:
    path = tmp_path / "urls.txt"
    path.write_bytes(the_file())

    through_cli = frontier("import", str(path), "--json", dsn=fresh_dsn)
    assert through_cli.returncode == EXIT_PARTIAL, through_cli.stderr  # some lines refused
    cli_summary = json.loads(through_cli.stdout)

    api_db = await Database.connect(second_dsn, max_size=8)
    cli_db = await Database.connect(fresh_dsn, max_size=2)
    try:
        async with await client_for(make_settings(second_dsn, tmp_path), api_db) as api:
            answer = await api.post("/api/v1/import", headers=AUTH, content=path.read_bytes())
        assert answer.status_code == httpx.codes.OK, answer.text
        api_summary = answer.json()

        assert api_summary == cli_summary
        refused = len(range(0, LINES, 997))
        assert cli_summary["rejected"] == refused
        assert cli_summary["duplicate"] > 0  # the repeats across batches
        assert cli_summary["accepted"] + cli_summary["duplicate"] + refused == LINES
        assert await frontier_of(cli_db) == await frontier_of(api_db)
        for db in (cli_db, api_db):
            assert await claimable(db) == (cli_summary["accepted"], HOSTS)
    finally:
        await api_db.close()
        await cli_db.close()
