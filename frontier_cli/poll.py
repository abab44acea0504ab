"""`frontier poll`: run the feed and sitemap poller (`poller.service`)."""

from __future__ import annotations

from typing import Optional

import typer

from frontier_cli.app import (
    EXIT_PARTIAL,
    EXIT_USAGE,
    app,
    run_with_database,
    settings_of,
    start_service,
)
from frontier_cli.terminal import json_text, printable
from poller.service import fire_once, poll_forever, poll_once


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
    seed_defaults: bool = typer.Option(
        False,
        "--seed-defaults",
        help="Seed the packaged default sources first (as `frontier up` does; off by "
        "default, and FRONTIER_SEED_DEFAULT_SOURCES=false turns it off everywhere).",
    ),
) -> None:
    """Run the feed and sitemap poller (exit 1 if any source failed with --once)."""
    settings = settings_of(ctx)
    if dry_run and not source:
        typer.echo("frontier: --dry-run needs --source NAME", err=True)
        raise typer.Exit(EXIT_USAGE)
    if source:
        result = run_with_database(settings, lambda db: fire_once(settings, db, source, dry_run))
        payload = result.as_json()
        if as_json or dry_run:
            typer.echo(json_text(payload))
        else:
            typer.echo(
                f"{printable(payload['source'])}: {payload['outcome']}, seen "
                f"{payload['items_seen']}, new {payload['items_new']}"
                + (f", error: {printable(payload['error'])}" if payload["error"] else "")
            )
        if payload["error"] and payload["outcome"] not in ("ok", "ok_no_new", "not_modified"):
            raise typer.Exit(EXIT_PARTIAL)
        return
    if not once:
        start_service(settings)
        run_with_database(
            settings, lambda db: poll_forever(settings, db, seed_defaults=seed_defaults)
        )
        return
    summaries = run_with_database(settings, lambda db: poll_once(settings, db))
    if as_json:
        typer.echo(json_text([s.as_json() for s in summaries]))
    else:
        for s in summaries:
            state = "ok" if s.ok else "FAILED"
            typer.echo(
                f"{state:<6} {printable(s.source):<30} seen {s.items_seen:>5} "
                f"new {s.items_new:>5}  {printable(s.url)}"
                + (f"  ({printable(s.error)})" if s.error else "")
            )
        failed = sum(1 for s in summaries if not s.ok)
        typer.echo(f"polled {len(summaries)} sources, {failed} failed")
    if any(not s.ok for s in summaries):
        raise typer.Exit(EXIT_PARTIAL)
