"""The `frontier` command. Settings are read here, once, and passed down.

Exit codes: 0 success, 1 partial failure (a summary says what failed), 2 bad usage, bad
input or an unusable database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Optional, TypeVar

import typer

from frontier.connect import database_dsn, open_database
from frontier.db import Database
from frontier.errors import FrontierError
from frontier.settings import Settings

T = TypeVar("T")

EXIT_PARTIAL = 1
EXIT_USAGE = 2

app = typer.Typer(
    help="frontier: a PostgreSQL-backed URL frontier for news and blog ingestion.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")
sources_app = typer.Typer(help="Manage sources.", no_args_is_help=True)
app.add_typer(sources_app, name="sources")


def settings_of(ctx: typer.Context) -> Settings:
    settings: Settings = ctx.find_root().obj
    return settings


def run_with_database(settings: Settings, work: Callable[[Database], Awaitable[T]]) -> T:
    """Open the database (embedded if no DSN), run `work`, close everything.

    The embedded database is ours, so it is migrated on the way; a configured one must
    already be at the current schema (`frontier db upgrade`)."""
    from frontier import migrate

    with database_dsn(settings) as dsn:
        if settings.database_url:
            migrate.check_current(dsn)
        else:
            migrate.upgrade(dsn)

        async def main() -> T:
            async with open_database(dsn, settings) as db:
                return await work(db)

        return asyncio.run(main())


@app.callback()
def root(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at debug level."),
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    ctx.obj = Settings.load()


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Apply the schema migrations (idempotent)."""
    from frontier import migrate

    with database_dsn(settings_of(ctx)) as dsn:
        migrate.upgrade(dsn)
    typer.echo("database schema is up to date")


@app.command()
def status(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the stable JSON shape."),
) -> None:
    """Counts by status, origin, source and host; due work; recent claims."""
    from frontier.stats import StatsRepository

    stats = run_with_database(settings_of(ctx), lambda db: StatsRepository(db).stats())
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    typer.echo(render_status(stats))


@app.command()
def submit(
    ctx: typer.Context,
    urls: list[str] = typer.Argument(..., help="URLs to add to the frontier."),
    source: str = typer.Option("manual", "--source", help="Source to file them under."),
) -> None:
    """Submit URLs to the frontier."""
    from frontier.imports import Line

    lines = iter([Line(number, url) for number, url in enumerate(urls, start=1)])
    _run_import(settings_of(ctx), lines, source, as_json=False, progress=None)


@app.command("import")
def import_file(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="A file of URLs, or - for standard input."),
    source: str = typer.Option("manual", "--source", help="Source to file them under."),
    fmt: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--format", help="txt, csv or ndjson (default: from the file name; txt)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import URLs from text, CSV or NDJSON, streamed in batches with a progress bar."""
    from frontier.imports import ImportFormat, UnusableInput, detect_format, read_lines

    try:
        chosen = ImportFormat(fmt) if fmt else detect_format(file)
    except ValueError:
        raise UnusableInput(f"unknown format {fmt!r}: use txt, csv or ndjson") from None
    if file == "-":
        stream, size = sys.stdin.buffer, None
    else:
        try:
            stream = open(file, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UnusableInput(f"cannot read {file}: {exc.strerror}") from None
        size = os.fstat(stream.fileno()).st_size
    with stream, ByteProgress(size) as progress:
        lines = read_lines(progress.counting(stream), chosen)
        _run_import(settings_of(ctx), lines, source, as_json=as_json, progress=progress)


def _run_import(
    settings: Settings, lines: Any, source_name: str, *, as_json: bool, progress: Any
) -> None:
    from frontier.imports import import_lines
    from frontier.queue import QueuePolicy, QueueRepository
    from frontier.sources import SourceRepository

    async def work(db: Database) -> Any:
        source = await SourceRepository(db).get(source_name)
        queue = QueueRepository(db, QueuePolicy.from_settings(settings))
        on_progress = progress.update if progress else None
        return await import_lines(queue, lines, source.ref, on_progress=on_progress)

    summary = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
    else:
        typer.echo(
            f"accepted {summary.accepted}, duplicate {summary.duplicate}, "
            f"rejected {summary.rejected}"
        )
        for error in summary.errors[:50]:
            typer.echo(f"  line {error['line']}: {error['reason']}", err=True)
        if summary.rejected > 50:
            typer.echo(f"  ... and {summary.rejected - 50} more rejected lines", err=True)
    if summary.rejected:
        raise typer.Exit(EXIT_PARTIAL)


class ByteProgress:
    """A progress bar on standard error (only on a terminal) fed by bytes read."""

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.read = 0
        self._bar: Any = None

    def counting(self, stream: Any) -> Any:
        for raw in stream:
            self.read += len(raw)
            yield raw

    def update(self, _lines: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.read)

    def __enter__(self) -> ByteProgress:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("importing", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


@sources_app.command("add")
def sources_add(
    ctx: typer.Context,
    name: str,
    feed_url: Optional[str] = typer.Option(None, "--feed-url"),  # noqa: UP045
    sitemap_url: Optional[str] = typer.Option(None, "--sitemap-url"),  # noqa: UP045
    base_url: Optional[str] = typer.Option(None, "--base-url"),  # noqa: UP045
    mode: str = typer.Option("feed", "--mode", help="feed, spider or both"),
    priority: int = typer.Option(5, "--priority", help="1..10"),
    interval: int = typer.Option(15, "--interval", help="Feed poll interval in minutes."),
    rate_limit_ms: Optional[int] = typer.Option(None, "--rate-limit-ms"),  # noqa: UP045
    article_pattern: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--article-pattern", help="Regex of article URLs (repeatable)."
    ),
) -> None:
    """Add a source."""
    from frontier.sources import InvalidSource, SourceRepository
    from frontier.states import IngestionMode

    try:
        ingestion_mode = IngestionMode(mode)
    except ValueError:
        raise InvalidSource(f"mode: {mode!r} is not one of feed, spider, both") from None
    source = run_with_database(settings_of(ctx), lambda db: SourceRepository(db).add(
        name, feed_url=feed_url, sitemap_url=sitemap_url, base_url=base_url,
        mode=ingestion_mode, priority=priority, interval_minutes=interval,
        rate_limit_ms=rate_limit_ms, article_patterns=article_pattern,
    ))  # fmt: skip
    typer.echo(f"added source {source.name} ({source.id})")


@sources_app.command("list")
def sources_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """List sources."""
    from frontier.sources import SourceRepository

    sources = run_with_database(settings_of(ctx), lambda db: SourceRepository(db).list())
    if as_json:
        typer.echo(json.dumps([source.as_json() for source in sources], indent=2))
        return
    for source in sources:
        where = source.feed_url or source.sitemap_url or source.base_url or "-"
        typer.echo(f"{source.name:<30} {source.ingestion_mode:<7} p{source.priority:<3} {where}")


@sources_app.command("remove")
def sources_remove(ctx: typer.Context, name: str) -> None:
    """Remove a source; its URLs stay in the frontier without a source."""
    from frontier.sources import SourceRepository

    run_with_database(settings_of(ctx), lambda db: SourceRepository(db).remove(name))
    typer.echo(f"removed source {name}")


# -- poller commands (poll) ------------------------------------------------------------


@app.command()
def poll(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="Poll what is due now, then exit."),
    as_json: bool = typer.Option(False, "--json", help="Print summaries as JSON."),
    source: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--source", help="Fire this source now (rate limited)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="With --source: print what would be submitted, write nothing."
    ),
) -> None:
    """Run the feed and sitemap poller (exit 1 if any source failed with --once)."""
    from poller.service import fire_once, poll_forever, poll_once

    settings = settings_of(ctx)
    if dry_run and not source:
        typer.echo("frontier: --dry-run needs --source NAME", err=True)
        raise typer.Exit(EXIT_USAGE)
    if source:
        result = run_with_database(settings, lambda db: fire_once(db, settings, source, dry_run))
        payload = result.as_json()
        if as_json or dry_run:
            typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            typer.echo(f"{payload['source']}: {payload['outcome']}, seen "
                       f"{payload['items_seen']}, new {payload['items_new']}"
                       + (f", error: {payload['error']}" if payload["error"] else ""))
        if payload["error"] and payload["outcome"] not in ("ok", "ok_no_new", "not_modified"):
            raise typer.Exit(EXIT_PARTIAL)
        return
    if not once:
        run_with_database(settings, lambda db: poll_forever(db, settings))
        return
    summaries = run_with_database(settings, lambda db: poll_once(db, settings))
    if as_json:
        typer.echo(json.dumps(summaries, indent=2, ensure_ascii=False))
    else:
        for s in summaries:
            state = "ok" if s["ok"] else "FAILED"
            typer.echo(f"{state:<6} {s['source']:<30} seen {s['items_seen']:>5} "
                       f"new {s['items_new']:>5}  {s['url']}"
                       + (f"  ({s['error']})" if s["error"] else ""))
        failed = sum(1 for s in summaries if not s["ok"])
        typer.echo(f"polled {len(summaries)} sources, {failed} failed")
    if any(not s["ok"] for s in summaries):
        raise typer.Exit(EXIT_PARTIAL)


@sources_app.command("import")
def sources_import(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="A YAML feeds spec or an OPML file."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import sources from a YAML feeds spec (`sources:` list) or OPML; per-entry errors."""
    from frontier.source_specs import UnusableSpec, import_specs, parse_specs

    try:
        with open(file, "rb") as stream:
            data = stream.read()
    except OSError as exc:
        raise UnusableSpec(f"cannot read {file}: {exc.strerror}") from None
    parsed = parse_specs(data, file)
    summary = run_with_database(settings_of(ctx), lambda db: import_specs(db, parsed))
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
    else:
        typer.echo(f"added {len(summary.added)} sources, {len(summary.errors)} failed")
        for error in summary.errors:
            typer.echo(f"  entry {error.entry} ({error.name or '?'}): {error.reason}", err=True)
    if summary.errors:
        raise typer.Exit(EXIT_PARTIAL)


# -- fetcher commands (fetch) -----------------------------------------------------------


@app.command()
def fetch(
    ctx: typer.Context,
    workers: Optional[int] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--workers", min=1, max=1000,
        help="Concurrent fetches in this process (default FRONTIER_FETCH_CONCURRENCY).",
    ),
    until_idle: bool = typer.Option(
        False, "--until-idle", help="Exit once nothing is due and nothing is in flight."
    ),
) -> None:
    """Run a fetcher process: claim, robots.txt, fetch, extract, store, complete."""
    from fetcher.service import run_fetcher

    settings = settings_of(ctx)
    summary = run_with_database(settings, lambda db: run_fetcher(
        settings, db, concurrency=workers, until_idle=until_idle))  # fmt: skip
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.outcomes.items()))
    typer.echo(f"fetch: {summary.pages} pages ({counts or 'none'}); "
               f"{summary.released} released")  # fmt: skip

# -- spider commands (spider) ----------------------------------------------------------


@app.command("spider")
def spider_command(
    ctx: typer.Context,
    source: Optional[str] = typer.Argument(None, help="The source to crawl."),  # noqa: UP045
    due: bool = typer.Option(False, "--due", help="Crawl every source whose interval passed."),
    max_pages: Optional[int] = typer.Option(  # noqa: UP045
        None, "--max-pages", min=1, help="Page budget (default FRONTIER_SPIDER_MAX_PAGES)."
    ),
    max_depth: Optional[int] = typer.Option(  # noqa: UP045
        None, "--max-depth", min=0, help="Depth limit (default FRONTIER_SPIDER_MAX_DEPTH)."
    ),
    interval_hours: Optional[float] = typer.Option(  # noqa: UP045
        None, "--interval-hours", help="Store the source's spider interval (default 24)."
    ),
    allow_external: Optional[bool] = typer.Option(  # noqa: UP045
        None, "--allow-external/--no-external",
        help="Store whether links to unknown hosts go to the 'discovered' source.",
    ),
    listing_url: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--listing-url", help="Store the source's extra start pages (repeatable)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON summary per run."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log the crawl at info level."),
) -> None:
    """Run the Scrapy discovery spider for a source (or every due one) and submit the
    article URLs it finds to the frontier."""
    from spider.service import render, run_command

    results, code = run_command(
        settings_of(ctx), source, due=due, max_pages=max_pages, max_depth=max_depth,
        interval_hours=interval_hours, allow_external=allow_external,
        listing_urls=listing_url, verbose=verbose,
    )  # fmt: skip
    for result in results:
        typer.echo(json.dumps(result.summary) if as_json else render(result))
        if result.summary.get("error") and not as_json:
            typer.echo(f"frontier: {result.summary['error']}", err=True)
    if due and not results and not as_json:
        typer.echo("no source is due for the spider")
    if code:
        raise typer.Exit(code)


# -- platform commands (up) -----------------------------------------------------------


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
    from frontier.cli.up import UpOptions, run_up

    code = run_up(settings_of(ctx), UpOptions(host=host, port=port, demo=demo))
    if code:
        raise typer.Exit(code)

# -- api commands (serve) ---------------------------------------------------------------


@app.command()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
) -> None:
    """Run the HTTP API and dashboard (http://HOST:PORT/)."""
    from frontier import migrate
    from frontier.api.server import run

    settings = settings_of(ctx)
    with database_dsn(settings) as dsn:
        if settings.database_url:
            migrate.check_current(dsn)
        else:
            migrate.upgrade(dsn)
        typer.echo(f"serving the API and dashboard on http://{host}:{port}/", err=True)
        run(settings, dsn, host, port)


def render_status(stats: dict[str, Any]) -> str:
    lines = [f"URLs in the frontier: {stats['total']}  (due now: {stats['due_now']})"]
    for title, key in (
        ("by status", "by_status"),
        ("by origin", "by_origin"),
        ("by source", "by_source"),
    ):
        counts = stats[key]
        lines.append(f"{title}:" + ("" if counts else " none"))
        lines.extend(f"  {name:<24} {n:>12}" for name, n in counts.items())
    hosts = stats["hosts"]
    lines.append(f"hosts: {hosts['known']} known, {hosts['ready_now']} ready now")
    lines.extend(f"  {h['host']:<40} {h['pending']:>10} pending" for h in hosts["top_pending"])
    lines.append(f"claims in the last minute: {stats['claims_last_minute']}")
    if stats["oldest_due_at"]:
        lines.append(f"oldest due URL waiting since: {stats['oldest_due_at']}")
    if stats["recent_errors"]:
        lines.append("recent errors:")
        lines.extend(f"  {e['at']} {e['kind']} {e['url']}: {e['error']}"
                     for e in stats["recent_errors"])  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    """Console entry point: turns frontier's own errors into one line and exit code 2."""
    try:
        app()
    except FrontierError as exc:
        typer.echo(f"frontier: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
