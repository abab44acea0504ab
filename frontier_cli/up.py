"""`frontier up`: the whole platform in one process, for a single machine.

    bind the API port -> database (embedded if no DSN) -> migrate -> seed sources
      -> poller loop + spider loop + fetcher pool + API/dashboard + progress line
      -> Ctrl-C / SIGTERM: stop taking work, finish or release what is in flight,
         report what is left `fetching` (nothing), close the pool, stop the database

Each part is the service's own entry point run as a task on one event loop, until the one
stop event: `poller.service.run_poller`, `spider.service.run_spider` (due sources crawled in
child processes), `fetcher.service.run_fetcher`, and the API's `create_app` (given
`poller.service.fire` and `fetcher.reextract.run_reextract`) under uvicorn. A failing
poll is reported and retried on the poller's schedule; it never stops the process.

All parts share one `Database`, so a PostgreSQL restart leaves one "database unavailable"
line and one "database reachable again" line (see `frontier.reconnect`); meanwhile the
loops back off, the API answers 503, and nothing stops.

Errors: `PlatformError` (a `FrontierError`): the address cannot be bound; see also
`frontier_cli.demo.DemoError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import typer
import uvicorn

from fetcher.reextract import run_reextract
from fetcher.service import run_fetcher
from frontier import event_loop, migrate
from frontier.api.app import create_app
from frontier.api.server import LISTEN_BACKLOG, uvicorn_config
from frontier.connect import database_dsn, open_database
from frontier.db import Database, describe_dsn
from frontier.errors import DatabaseUnavailable, FrontierError
from frontier.loops import run_every
from frontier.settings import Settings
from frontier.sinks.configured import chosen_sinks
from frontier.stats import FrontierStats, StatsRepository
from frontier_cli.app import app, settings_of, start_service
from frontier_cli.demo.profile import demo_settings, register, reset_home
from frontier_cli.demo.sites import DemoSites
from frontier_cli.terminal import printable
from poller import service as poller_service
from poller.poll_summary import PollSummary
from spider import service as spider_service
from spider.summary import CrawlSummary

log = logging.getLogger(__name__)


class PlatformError(FrontierError):
    """`frontier up` cannot start (the address is taken or not ours)."""


@dataclass(frozen=True, slots=True)
class UpOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    demo: bool = False


class Console:
    """What `frontier up` tells its operator: event lines, and a progress line that is
    redrawn in place on a terminal (plain lines every `every_s` seconds elsewhere). With
    `as_log` (FRONTIER_LOG_FORMAT=json off a terminal) both are INFO log records instead,
    so that the output is only the log's JSON lines."""

    def __init__(self, stream: TextIO, every_s: float, *, as_log: bool = False) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.as_log = as_log and not self.tty
        self.every_s = 1.0 if self.tty else every_s
        self._drawn = False

    def event(self, message: str) -> None:
        if self.as_log:
            log.info("%s", message)
            return
        prefix = "\r\033[K" if self._drawn else ""
        self._drawn = False
        self.stream.write(f"{prefix}{time.strftime('%H:%M:%S')} {printable(message)}\n")
        self.stream.flush()

    def progress(self, message: str) -> None:
        if self.tty:
            self.stream.write(f"\r\033[K{printable(message)}")
            self._drawn = True
            self.stream.flush()
        else:
            self.event(message)

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False


def progress_line(stats: FrontierStats) -> str:
    by_status = stats.by_status
    return (
        f"discovered {stats.total} | fetched {by_status['fetched']} | "
        f"failed {by_status['failed']} | dead {by_status['dead']} | "
        f"pending {by_status['pending']} | in flight {by_status['fetching']}"
    )


def bind(host: str, port: int) -> socket.socket:
    """Bind the API's socket before anything else starts, so a taken port fails at once."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise PlatformError(f"cannot resolve --host {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PlatformError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(LISTEN_BACKLOG)
    sock.set_inheritable(False)
    return sock


class _ApiServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # `frontier up` owns SIGINT/SIGTERM and stops the server itself


@app.command()
def up(
    ctx: typer.Context,
    demo: bool = typer.Option(
        False, "--demo", help="Serve bundled demo sites on loopback and crawl only them."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address of the API and dashboard."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
) -> None:
    """Everything in one process: database (embedded if no DSN), migrations, default
    sources, poller, spider, fetchers, API and dashboard. Ctrl-C stops it cleanly."""
    if not sys.stderr.isatty():
        # Under a supervisor (docker, systemd) the log is what is read: INFO, as for the
        # other services. On a terminal the console's event lines already say each poll,
        # spider run and failure, and log lines would break its redrawn progress line.
        start_service(settings_of(ctx), warn_user_agent=False)
    code = run_up(settings_of(ctx), UpOptions(host=host, port=port, demo=demo))
    if code:
        raise typer.Exit(code)


def run_up(settings: Settings, options: UpOptions, *, stream: TextIO | None = None) -> int:
    """Run until SIGINT/SIGTERM; 0 after a clean stop, 1 if a part of it crashed."""
    console = Console(
        stream or sys.stderr, settings.up_progress_s, as_log=settings.log_format == "json"
    )
    if options.demo:
        if settings.database_url or settings.elasticsearch_url or settings.sink or settings.sinks:
            console.event(
                "demo: FRONTIER_DATABASE_URL, FRONTIER_ELASTICSEARCH_URL, FRONTIER_SINK and "
                "FRONTIER_SINKS are ignored; the demo uses its own embedded database"
            )
        settings = demo_settings(settings)
        reset_home(settings.home)
    chosen_sinks(settings)  # a sink that is not installed stops `up` before it starts
    with bind(options.host, options.port) as sock:
        if settings.database_url:
            console.event(f"database: {describe_dsn(settings.database_url)}")
        else:
            console.event(
                f"database: starting the embedded PostgreSQL in "
                f"{(settings.home / 'pgdata').resolve()}"
            )
        with database_dsn(settings, say=console.event) as dsn:
            migrate.make_ready(dsn, embedded=not settings.database_url)
            console.event("database: schema up to date")
            platform = Platform(settings, dsn, sock, options, console)
            code = event_loop.run(platform.run())
    console.close()
    return code


class Platform:
    def __init__(
        self,
        settings: Settings,
        dsn: str,
        sock: socket.socket,
        options: UpOptions,
        console: Console,
    ) -> None:
        self.settings = settings
        self.dsn = dsn
        self.sock = sock
        self.options = options
        self.console = console
        self.stop = asyncio.Event()
        self.crashed: list[str] = []

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self._stop_requested, signum)
        sites = None
        try:
            async with open_database(self.dsn, self.settings) as db:
                if self.options.demo:
                    sites = await self._start_demo(db)
                else:
                    await self._seed(db)
                await self._serve(db)
                try:
                    left = (await StatsRepository(db).stats()).by_status["fetching"]
                    self.console.event(f"stopped: {left} URLs left fetching")
                except DatabaseUnavailable as exc:
                    self.console.event(f"stopped: cannot count URLs left fetching ({exc})")
        finally:
            if sites is not None:
                await sites.stop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
        return 1 if self.crashed else 0

    def _stop_requested(self, _signum: int) -> None:
        self.stop.set()

    async def _seed(self, db: Database) -> None:
        seeded = await poller_service.seed(self.settings, db)
        if seeded is None:
            return
        if seeded.added:
            self.console.event(f"sources: seeded {len(seeded.added)} default sources")
        for error in seeded.errors:
            self.console.event(f"sources: default {error.name!r} not seeded: {error.reason}")

    async def _start_demo(self, db: Database) -> DemoSites:
        sites = await DemoSites.start()
        try:
            summary = await register(db, sites.sources)
        except BaseException:
            await sites.stop()
            raise
        for error in summary.errors:
            self.console.event(f"demo: source {error.name!r} not registered: {error.reason}")
        for site in sites.sites.values():
            self.console.event(f"demo: site {site.key} serving on {site.origin}/")
        self.console.event(
            f"demo: registered {len(summary.added)} sources ({', '.join(summary.added)})"
        )
        return sites

    async def _serve(self, db: Database) -> None:
        app = create_app(self.settings, db, fire=poller_service.fire, reextract=run_reextract)
        server = _ApiServer(uvicorn_config(app, self.settings))
        host, port = self.sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        self.console.event(
            f"dashboard: http://{shown}:{port}/  (API /api/v1, "
            f"OpenAPI /openapi.json, metrics /metrics)"
        )
        concurrency = self.settings.fetch_concurrency
        self.console.event(
            f"running: poller every {self.settings.poll_tick_s:g} s, spider "
            f"checks every {self.settings.up_spider_tick_s:g} s, "
            f"{concurrency} fetch workers; Ctrl-C stops"
        )
        parts: dict[str, Awaitable[Any]] = {
            "api": server.serve(sockets=[self.sock]),
            "poller": poller_service.run_poller(
                self.settings,
                db,
                stop=self.stop,
                on_polled=self._report_polls,
                on_failed=self._report_poll_tick_failed,
            ),
            "spider": spider_service.run_spider(
                self.settings,
                db,
                self.dsn,
                stop=self.stop,
                on_crawling=self._report_crawling,
                on_crawled=self._report_crawl,
                on_failed=self._report_spider_tick_failed,
            ),
            "fetcher": self._fetch(db),
            "progress": self._progress_loop(db),
        }
        tasks = {
            asyncio.ensure_future(self._guard(name, part)): name for name, part in parts.items()
        }
        await self.stop.wait()
        self.console.event(
            f"stopping: in-flight fetches get {self.settings.fetch_shutdown_s:g} s to finish"
        )
        server.should_exit = True
        await asyncio.gather(*tasks)

    async def _guard(self, name: str, part: Awaitable[Any]) -> None:
        """Run one part; if it crashes, say so and stop the others."""
        try:
            await part
        except Exception as exc:
            log.exception("%s crashed", name)
            self.crashed.append(name)
            self.console.event(f"{name}: crashed ({type(exc).__name__}: {exc}); stopping")
        finally:
            if not self.stop.is_set() and name != "progress":
                self.stop.set()

    def _report_poll_tick_failed(self, exc: Exception) -> None:
        log.debug("poller tick failed", exc_info=exc)
        self.console.event(f"poller: tick failed ({type(exc).__name__}: {exc})")

    def _report_polls(self, summaries: list[PollSummary]) -> None:
        # A failed poll is the poller's own WARNING line (PollSummary.log), printed on a
        # terminal too: the console does not say it again.
        ok = [s for s in summaries if s.ok]
        if ok:
            new = sum(s.items_new or 0 for s in ok)
            self.console.event(
                f"poller: polled {len(summaries)} sources, "
                f"{len(summaries) - len(ok)} failed, {new} new URLs"
            )

    def _report_spider_tick_failed(self, exc: Exception) -> None:
        log.debug("spider tick failed", exc_info=exc)
        self.console.event(f"spider: check failed ({type(exc).__name__}: {exc})")

    def _report_crawling(self, name: str) -> None:
        self.console.event(f"spider: crawling {name}")

    def _report_crawl(self, name: str, summary: CrawlSummary) -> None:
        if summary.error:
            self.console.event(f"spider FAILED {name}: {summary.error}")
            return
        self.console.event(
            f"spider: {name}: {summary.outcome}, {summary.pages_crawled} pages, "
            f"{summary.articles_found} articles found, {summary.new_urls} new URLs"
        )

    async def _fetch(self, db: Database) -> None:
        summary = await run_fetcher(self.settings, db, stop=self.stop)
        counts = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.outcomes.items()))
        self.console.event(
            f"fetcher: stopped after {summary.pages} pages "
            f"({counts or 'none'}); {summary.released} released"
        )

    async def _progress_loop(self, db: Database) -> None:
        stats = StatsRepository(db)

        async def draw() -> None:
            self.console.progress(progress_line(await stats.stats()))

        await run_every(
            self.stop,
            draw,
            self.console.every_s,
            db.outage,
            name="progress",
            on_error=self._report_progress_failed,
        )

    def _report_progress_failed(self, exc: Exception) -> None:
        log.debug("progress failed", exc_info=exc)
        self.console.event(f"progress: cannot read counts ({type(exc).__name__})")
