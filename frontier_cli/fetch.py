"""`frontier fetch`: run a fetcher process (`fetcher.service`)."""

from __future__ import annotations

from typing import Optional

import typer

from fetcher.service import run_fetcher
from frontier_cli.app import app, run_with_database, settings_of, start_service


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
