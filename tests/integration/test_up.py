"""`frontier up` as a process on a configured database: it fetches, a source it cannot reach
is reported and retried while the process keeps serving, and SIGTERM releases the fetch in
flight (nothing left `fetching`) and exits 0. A taken port is a usage error (exit 2)."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import socket
import sys
from pathlib import Path

import httpx
from aiohttp import web

from frontier.db import Database
from frontier.sources import SourceRepository
from frontier_cli.up import Console, Platform
from poller.poll_summary import PollSummary
from tests.conditions import wait_until
from tests.fetch_harness import article, submit
from tests.integration.test_demo import REPO, up_env
from tests.local_site import LocalSite
from tests.processes import free_port

DEADLINE_S = 60.0


async def test_up_keeps_running_past_failing_polls_and_stops_cleanly(
    db: Database, fresh_dsn: str, tmp_path: Path, local_site: LocalSite
) -> None:
    hold = asyncio.Event()  # the slow page answers only once the test is over

    async def slow(_request: web.Request) -> web.StreamResponse:
        await hold.wait()
        return web.Response(text=article("late"), content_type="text/html")

    local_site.serve("/a", article("An article"))
    local_site.route("/slow", slow)
    await submit(db, local_site.url("/a"), local_site.url("/slow"))
    unreachable = f"http://127.0.0.1:{free_port()}/feed.xml"  # nothing listens there
    await SourceRepository(db).add("offline feed", feed_url=unreachable)
    port, log = free_port(), tmp_path / "up.log"
    env = up_env(
        tmp_path,
        FRONTIER_DATABASE_URL=fresh_dsn,
        FRONTIER_SEED_DEFAULT_SOURCES="false",
        FRONTIER_ALLOW_PRIVATE_NETWORKS="true",
        FRONTIER_POLL_TICK_S="1",
        FRONTIER_DEFAULT_DELAY_MS="0",
        FRONTIER_FETCH_SHUTDOWN_S="1",
    )

    async def progressed() -> bool:
        failed_poll = await db.fetchval(
            "SELECT count(*) FROM fetch_log WHERE kind = 'feed' AND outcome = 'failed'"
        )
        fetched = await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'fetched'")
        return bool(
            failed_poll
            and fetched
            and local_site.hits("/slow")
            and "poll failed: " in log.read_text(errors="replace")
        )

    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "frontier",
            "up",
            "--port",
            str(port),
            env=env,
            stdout=out,
            stderr=out,
            cwd=REPO,
        )
        try:
            await wait_until(progressed, process, deadline_s=DEADLINE_S, log=log)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as c:
                assert (await c.get("/healthz")).json()["status"] == "ok"
            in_flight = await db.fetchval(
                "SELECT count(*) FROM url_frontier WHERE status = 'fetching'"
            )
            assert in_flight == 1  # the slow page
            process.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(process.wait(), DEADLINE_S)
        finally:
            hold.set()
            if process.returncode is None:
                process.kill()
                await process.wait()
    text = log.read_text(errors="replace")
    assert code == 0, text[-4000:]
    assert "dashboard: http://127.0.0.1:" in text
    assert "stopped: 0 URLs left fetching" in text, text[-4000:]
    statuses = dict(await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status"))
    assert statuses == {"fetched": 1, "pending": 1}, statuses


async def test_up_refuses_a_taken_port(fresh_dsn: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "frontier",
            "up",
            "--port",
            str(taken.getsockname()[1]),
            env=up_env(tmp_path, FRONTIER_DATABASE_URL=fresh_dsn),
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), DEADLINE_S)
    assert process.returncode == 2
    assert b"cannot listen on 127.0.0.1:" in err


async def test_up_in_json_off_a_terminal_prints_only_json_lines(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    """FRONTIER_LOG_FORMAT=json, output to a file: the dashboard line, the progress lines
    and the rest are log records; a failed poll is one record."""
    unreachable = f"http://127.0.0.1:{free_port()}/feed.xml"
    await SourceRepository(db).add("offline feed", feed_url=unreachable)
    port, log = free_port(), tmp_path / "up.log"
    env = up_env(
        tmp_path,
        FRONTIER_DATABASE_URL=fresh_dsn,
        FRONTIER_LOG_FORMAT="json",
        FRONTIER_SEED_DEFAULT_SOURCES="false",
        FRONTIER_ALLOW_PRIVATE_NETWORKS="true",
        FRONTIER_POLL_TICK_S="1",
        FRONTIER_UP_PROGRESS_S="0.5",
    )

    def messages() -> list[str]:
        lines = log.read_text(errors="replace").splitlines()
        return [json.loads(line)["message"] for line in lines if line.startswith("{")]

    def seen() -> bool:
        said = messages()
        return any(m.startswith("poll failed: ") for m in said) and any(
            m.startswith("discovered ") for m in said
        )

    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "frontier", "up", "--port", str(port),
            env=env, stdout=out, stderr=out, cwd=REPO,
        )  # fmt: skip
        try:
            await wait_until(seen, process, deadline_s=DEADLINE_S, log=log)
            process.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(process.wait(), DEADLINE_S)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    lines = log.read_text(errors="replace").splitlines()
    assert code == 0 and [line for line in lines if not line.startswith("{")] == [], lines
    said = messages()
    assert any(m.startswith(f"dashboard: http://127.0.0.1:{port}/") for m in said), said
    failures = [m for m in said if unreachable in m]
    assert failures and all(m.startswith("poll failed: ") for m in failures), failures


def test_a_failed_poll_is_not_printed_again_by_the_console() -> None:
    """The poller logs a failed poll (a WARNING line, on a terminal too); the console's
    report of the tick says only how many failed."""
    stream = io.StringIO()
    platform = Platform(None, "", None, None, Console(stream, 30.0))  # type: ignore[arg-type]
    failed = PollSummary("offline", "http://o.example/rss", False, "timed out", 0, 0, "failed")
    worked = PollSummary("city", "http://c.example/rss", True, None, 4, 2, "ok")
    platform._report_polls([failed, worked])
    lines = stream.getvalue().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "poller: polled 2 sources, 1 failed, 2 new URLs"
    ]


async def test_a_second_up_on_the_same_home_leaves_the_embedded_server_to_the_first(
    tmp_path: Path, frontier_home: Path
) -> None:
    """The second instance joins the embedded PostgreSQL the first started, and on exit
    neither stops it nor says it stopped; the first still serves, then stops it."""
    env = up_env(frontier_home, FRONTIER_SEED_DEFAULT_SOURCES="false")
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    ports = [free_port(), free_port()]
    processes: list[asyncio.subprocess.Process] = []
    try:
        for log, port in zip(logs, ports, strict=True):
            with log.open("wb") as out:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "frontier", "up", "--port", str(port),
                    env=env, stdout=out, stderr=out, cwd=REPO,
                )  # fmt: skip
            processes.append(process)
            await wait_until(
                lambda log=log: "running: poller" in log.read_text(errors="replace"),
                process,
                deadline_s=DEADLINE_S * 2,
                log=log,
            )
        first, second = processes
        second.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(second.wait(), DEADLINE_S) == 0
        said = logs[1].read_text(errors="replace")
        assert "the embedded PostgreSQL was already running" in said, said
        assert "embedded PostgreSQL stopped" not in said, said
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{ports[0]}", timeout=5) as c:
            assert (await c.get("/healthz")).json()["status"] == "ok"
        first.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(first.wait(), DEADLINE_S) == 0
        assert "database: embedded PostgreSQL stopped" in logs[0].read_text(errors="replace")
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
