"""`frontier import-warc`: the HTML responses of existing WARC files into the documents,
through the fetch pipeline, with no fetch (`fetcher.warc_input`)."""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Optional

import typer

from fetcher.warc_input import ImportCounts, ImportFilter, run_import
from frontier_cli.app import EXIT_PARTIAL, EXIT_USAGE, app, run_with_database, settings_of
from frontier_cli.terminal import printable

PROGRESS_EVERY_S = 0.5


class ByteProgress:
    """A progress line on a terminal, redrawn at most every PROGRESS_EVERY_S: the file,
    its bytes read and what was imported so far."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, name: str, done: int, size: int, counts: ImportCounts) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_S and done < size:
            return
        self.last = now
        share = f" ({100 * done // size}%)" if size else ""
        sys.stderr.write(
            f"\r{printable(name)[-60:]}: {_mib(done)}/{_mib(size)} MiB{share}, "
            f"{counts.imported} imported, {counts.duplicates + counts.known} duplicates\x1b[K"
        )
        sys.stderr.flush()

    def end(self) -> None:
        if self.last:
            sys.stderr.write("\n")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f}"


@app.command("import-warc")
def import_warc(
    ctx: typer.Context,
    locations: list[str] = typer.Argument(
        ..., metavar="PATH|URL", help="WARC files (gzip per record, or not), or http(s) URLs."
    ),
    source: str = typer.Option(
        "manual", "--source", help="The source the documents are filed under."
    ),
    hosts: list[str] = typer.Option(
        [], "--host", help="Import only this host and its subdomains (repeatable)."
    ),
    url_pattern: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--url-pattern", help="Import only URLs this regular expression finds."
    ),
    url_glob: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--url-glob", help="Import only URLs this glob matches (e.g. '*/2024/*')."
    ),
    extract_processes: Optional[int] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None,
        "--extract-processes",
        min=0,
        max=256,
        help="Extraction worker processes (default FRONTIER_EXTRACT_PROCESSES).",
    ),
    as_json: bool = typer.Option(False, "--json", help="The summary as JSON."),
) -> None:
    """Import WARC files (such as CC-NEWS): each HTML response through extraction, verdicts
    and deduplication into the documents, its URL `fetched` in the frontier."""
    settings = settings_of(ctx)
    if url_pattern and url_glob:
        typer.echo("frontier: give --url-pattern or --url-glob, not both", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        accepts = ImportFilter.of(tuple(hosts), url_pattern, url_glob)
    except re.error as exc:
        typer.echo(f"frontier: --url-pattern does not compile: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    progress = ByteProgress() if sys.stderr.isatty() and not as_json else None
    counts = run_with_database(
        settings,
        lambda db: run_import(
            settings,
            db,
            locations,
            source=source,
            accepts=accepts,
            progress=progress,
            extract_processes=extract_processes,
        ),
    )
    if progress is not None:
        progress.end()
    if as_json:
        typer.echo(json.dumps(counts.as_json()))
    else:
        typer.echo(
            f"import-warc: {counts.records} records, {counts.html} HTML, "
            f"{counts.imported} imported, {counts.duplicates} duplicates, "
            f"{counts.known} known, {counts.filtered} filtered, "
            f"{counts.too_large} too large, {counts.errors} errors"
        )
        for message in counts.messages:
            typer.echo(f"  {printable(message)}", err=True)
    if counts.errors:
        raise typer.Exit(EXIT_PARTIAL)
