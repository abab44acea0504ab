"""`frontier reextract`: extraction run again over the archived responses of stored
documents, with no network request (fetcher.reextract, issue 30 item 3)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, Optional

import typer

from fetcher.reextract import ReextractSummary, run_reextract
from frontier.clock import utcnow
from frontier.db import Database
from frontier.documents import build_filter
from frontier.errors import FrontierError
from frontier_cli.app import app, run_with_database, settings_of


class NothingSelected(FrontierError, ValueError):
    """reextract was given no selection."""


@app.command()
def reextract(
    ctx: typer.Context,
    source: Optional[str] = typer.Option(None, "--source", help="Source name or id."),  # noqa: UP045
    host: Optional[str] = typer.Option(None, "--host", help="A host, host:port or URL."),  # noqa: UP045
    since: Optional[str] = typer.Option(  # noqa: UP045
        None, "--since", help="Fetched since: an ISO 8601 date or time, or an age (6h, 2d)."
    ),
    every: bool = typer.Option(False, "--all", help="Every stored document."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Count what would change; write nothing."
    ),
    extract_processes: Optional[int] = typer.Option(  # noqa: UP045
        None,
        "--extract-processes",
        min=0,
        help="Extraction processes (FRONTIER_EXTRACT_PROCESSES).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run extraction again over the archived responses of stored documents (no request is
    made); a document is rewritten only when its result changed."""
    if not (every or source or host or since):
        raise NothingSelected("reextract: say which documents: --source, --host, --since or --all")
    settings = settings_of(ctx)
    show = sys.stderr.isatty() and not as_json

    async def work(db: Database) -> ReextractSummary:
        where = await build_filter(db, source=source, host=host, since=since, now=utcnow())
        with _progress() if show else nullcontext() as update:
            return await run_reextract(
                settings,
                db,
                where,
                dry_run=dry_run,
                extract_processes=extract_processes,
                progress=update,
            )

    summary = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
        return
    typer.echo(render_summary(summary))


class _progress:
    """A progress bar on the terminal (stderr): documents examined, changed so far."""

    def __enter__(self) -> Callable[[ReextractSummary], None]:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("reextract"),
            BarColumn(),
            TextColumn("{task.completed:,} documents, {task.fields[changed]:,} changed"),
            TimeElapsedColumn(),
            transient=True,
            console=Console(stderr=True),
        )
        self.bar.start()
        self.task = self.bar.add_task("reextract", total=None, changed=0)
        return self.update

    def update(self, summary: ReextractSummary) -> None:
        self.bar.update(self.task, completed=summary.examined, changed=summary.changed)

    def __exit__(self, *exc: Any) -> None:
        self.bar.stop()


def render_summary(summary: ReextractSummary) -> str:
    verb = "would change" if summary.dry_run else "changed"
    lines = [
        f"{summary.examined:,} documents examined: {summary.changed:,} {verb}, "
        f"{summary.unchanged:,} unchanged",
    ]
    others = {
        "now duplicates of another URL's document (theirs went)": summary.duplicates,
        "not archived (stored with archiving off)": summary.not_archived,
        "archive record unreadable (retention, or torn)": summary.unreadable,
        "not fetched now (being fetched, or requeued)": summary.not_fetched,
        "ended without a document (a verdict, a failed extraction)": summary.failed,
    }
    lines += [f"  {n:,} {what}" for what, n in others.items() if n]
    if summary.outcomes:
        lines.append("  outcomes: " + ", ".join(f"{k} {v}" for k, v in summary.outcomes.items()))
    return "\n".join(lines)
