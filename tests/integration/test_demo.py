"""`frontier up --demo` as a process, offline, on its own embedded PostgreSQL: the dashboard
shows fetched pages within a minute, every demo source has a successful poll or spider run
in the fetch log, and SIGINT stops it with exit 0, nothing left `fetching`, the database
stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

from frontier.embedded import EmbeddedPostgres
from frontier_cli.demo.sites import build
from tests.conditions import wait_until
from tests.processes import free_port

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0  # the promise: fetched > 0 within a minute of `make demo`
POLL_KINDS = {"feed", "sitemap", "spider"}


def demo_source_names() -> set[str]:
    origins = {
        key: f"http://127.0.0.1:{n}"
        for n, key in enumerate(("gazette", "lantern", "courier", "meadow"), start=1)
    }
    return {built.source["name"] for built in build(origins, datetime.now(UTC)).values()}


def up_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(FRONTIER_HOME=str(home), **extra)
    return env


async def demo_state(client: httpx.AsyncClient, names: set[str]) -> Any:
    """(fetched count, sources with an ok poll/spider row) once both are complete, else
    None."""
    try:
        stats = (await client.get("/api/v1/stats")).json()
        rows = (await client.get("/api/v1/fetch-log", params={"limit": 1000})).json()["items"]
    except (httpx.TransportError, ValueError, KeyError):
        return None  # not serving yet
    ok = {
        row["source_name"] for row in rows if row["kind"] in POLL_KINDS and row["outcome"] == "ok"
    }
    fetched = stats["by_status"]["fetched"]
    if fetched > 0 and names <= ok:
        return fetched, ok, stats
    return None


async def settled(client: httpx.AsyncClient) -> bool:
    """Every discovered URL is done (fetched or dead): the demo's traps have all been met.
    A stats answer that is not a 200 (a 503 while the database is busy, on a loaded
    machine) is "not yet", as in `demo_state`."""
    answer = await client.get("/api/v1/stats")
    if answer.status_code != 200:
        return False
    by_status = answer.json()["by_status"]
    return by_status["pending"] == by_status["fetching"] == by_status["failed"] == 0


async def test_demo_crawls_every_source_offline_and_stops_cleanly(
    tmp_path: Path, frontier_home: Path
) -> None:
    port, log = free_port(), tmp_path / "up.log"
    names = demo_source_names()
    assert len(names) == 4
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "frontier",
            "up",
            "--demo",
            "--port",
            str(port),
            env=up_env(frontier_home),
            stdout=out,
            stderr=out,
            cwd=REPO,
        )
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as c:
                fetched, ok, stats = await wait_until(
                    lambda: demo_state(c, names), process, deadline_s=DEADLINE_S, log=log
                )
                dashboard = await c.get("/")
                await wait_until(lambda: settled(c), process, deadline_s=DEADLINE_S, log=log)
            assert fetched > 0 and names <= ok
            assert stats["by_origin"]["feed"] and stats["by_origin"]["sitemap"]
            assert stats["by_origin"]["spider"]
            assert dashboard.status_code == 200
            process.send_signal(signal.SIGINT)
            code = await asyncio.wait_for(process.wait(), 60)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    text = log.read_text(errors="replace")
    assert code == 0, text[-4000:]
    assert "stopped: 0 URLs left fetching" in text, text[-4000:]
    pgdata = frontier_home / "demo" / "pgdata"
    assert not (pgdata / "postmaster.pid").exists(), "the embedded database was left running"
    with (
        EmbeddedPostgres(frontier_home / "demo") as server,
        psycopg.connect(server.dsn("frontier")) as conn,
    ):
        counts = dict(
            conn.execute("SELECT status, count(*) FROM url_frontier GROUP BY status").fetchall()
        )
        naptime = conn.execute("SHOW autovacuum_naptime").fetchone()
        outcomes = {
            row[0]
            for row in conn.execute(
                "SELECT dead_reason FROM url_frontier WHERE status = 'dead'"
            ).fetchall()
        }
    assert counts.get("fetching", 0) == 0
    assert counts["fetched"] > 0
    assert naptime == ("10s",)  # the embedded server's autovacuum keeps up (AUTOVACUUM)
    # the demo's traps, each met by the pipeline
    assert {"redirect", "not_found", "robots_blocked", "duplicate_content"} <= outcomes
