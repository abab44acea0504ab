"""`frontier fetch`: run a fetcher process (`fetcher.service`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

import typer

from fetcher.allocators import preload_for, preloaded, preloading
from frontier_cli.app import Restart, app, run_with_database, settings_of, start_service

if TYPE_CHECKING:
    from frontier.settings import Settings


@app.command()
def fetch(
    ctx: typer.Context,
    workers: Optional[int] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None,
        "--workers",
        min=1,
        max=1000,
        help="Concurrent fetches in this process (default FRONTIER_FETCH_CONCURRENCY).",
    ),
    extract_processes: Optional[int] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None,
        "--extract-processes",
        min=0,
        max=256,
        help="Extraction worker processes (default FRONTIER_EXTRACT_PROCESSES, else one per "
        "core; 0: extract in this process).",
    ),
    until_idle: bool = typer.Option(
        False, "--until-idle", help="Exit once nothing is due and nothing is in flight."
    ),
) -> None:
    """Run a fetcher process: claim, robots.txt, fetch, extract, store, complete."""
    settings = settings_of(ctx)
    on_the_extraction_allocator(settings, extract_processes)
    # Imported here, not at the top as the other commands' services are: a process that
    # starts again on the allocator would have imported the fetcher (0.7 s) for nothing.
    from fetcher.service import run_fetcher

    # --until-idle too: the same work, logged the same way (a line per batch, at INFO)
    start_service(settings)
    summary = run_with_database(
        settings,
        lambda db: run_fetcher(
            settings,
            db,
            concurrency=workers,
            until_idle=until_idle,
            extract_processes=extract_processes,
        ),
    )
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.outcomes.items()))
    typer.echo(f"fetch: {summary.pages} pages ({counts or 'none'}); {summary.released} released")


def on_the_extraction_allocator(settings: Settings, extract_processes: int | None) -> None:
    """A fetch process that extracts in a thread of its own (no extraction processes) does
    the workers' parsing itself, so it runs on their allocator (fetcher.allocators): started
    without it, it starts again on it (`Restart`, before it logs or opens anything)."""
    # FetcherConfig's rule (unset: one process per core, never none), not FetcherConfig
    # itself: importing fetcher.config costs most of what the late import saves
    processes = settings.extract_processes if extract_processes is None else extract_processes
    preload = preload_for(settings.extract_allocator)
    if processes == 0 and preload and not preloaded(preload, os.environ):
        raise Restart(preloading(preload, os.environ))
