"""`frontier submit` and `frontier import`: URLs into the frontier, streamed in batches,
with a progress bar on a terminal and a summary of accepted, duplicate and rejected lines."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional

import typer

from frontier.db import Database
from frontier.imports import (
    ImportFormat,
    Line,
    UnusableInput,
    detect_format,
    import_lines,
    read_lines,
)
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier_cli.app import EXIT_PARTIAL, app, run_with_database, settings_of
from frontier_cli.terminal import printable

REQUEUE_HELP = (
    "Also requeue those already in the frontier as failed or dead (without it they count "
    "as duplicate and stay as they are)."
)


@app.command()
def submit(
    ctx: typer.Context,
    urls: list[str] = typer.Argument(..., help="URLs to add to the frontier."),
    source: str = typer.Option("manual", "--source", help="Source to file them under."),
    requeue: bool = typer.Option(False, "--requeue", help=REQUEUE_HELP),
) -> None:
    """Submit URLs to the frontier."""
    lines = iter([Line(number, url) for number, url in enumerate(urls, start=1)])
    _run_import(settings_of(ctx), lines, source, as_json=False, progress=None, requeue=requeue)


@app.command("import")
def import_file(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="A file of URLs, or - for standard input."),
    source: str = typer.Option("manual", "--source", help="Source to file them under."),
    fmt: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--format", help="txt, csv or ndjson (default: from the file name; txt)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    requeue: bool = typer.Option(False, "--requeue", help=REQUEUE_HELP),
) -> None:
    """Import URLs from text, CSV or NDJSON, streamed in batches with a progress bar."""
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
        _run_import(
            settings_of(ctx), lines, source, as_json=as_json, progress=progress, requeue=requeue
        )


def _run_import(
    settings: Settings,
    lines: Any,
    source_name: str,
    *,
    as_json: bool,
    progress: Any,
    requeue: bool = False,
) -> None:
    async def work(db: Database) -> Any:
        source = await SourceRepository(db).get(source_name)
        queue = QueueRepository(db, QueuePolicy.from_settings(settings))
        on_progress = progress.update if progress else None
        return await import_lines(
            queue, lines, source.ref, on_progress=on_progress, requeue=requeue
        )

    summary = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
    else:
        typer.echo(
            f"accepted {summary.accepted}, duplicate {summary.duplicate}, "
            f"rejected {summary.rejected}" + (f", requeued {summary.requeued}" if requeue else "")
        )
        for error in summary.errors[:50]:
            typer.echo(f"  line {error['line']}: {printable(error['reason'])}", err=True)
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
        """`stream`, its bytes counted for the bar; as it is when there is no bar (a script
        or a pipe), so that no generator runs for every line (a visible share of an
        import's CPU under a profiler)."""
        return stream if self._bar is None else self._counted(stream)

    def _counted(self, stream: Any) -> Any:
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
