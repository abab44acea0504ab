"""`frontier export`: the stored documents to JSON lines, CSV or Parquet files, or standard
output (frontier.export), read from the configured sink (PostgreSQL, Elasticsearch or
OpenSearch)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from frontier.clock import utcnow
from frontier.db import Database
from frontier.documents import ExportQuery, build_filter
from frontier.export import FORMATS, ROWS_PER_FILE, ExportResult, check_language
from frontier.export import run_export as export_documents
from frontier.settings import SettingsError
from frontier.sinks.configured import ELASTICSEARCH, OPENSEARCH, POSTGRES, open_reader, sink_name
from frontier_cli.app import app, run_with_database, settings_of

READABLE = (POSTGRES, ELASTICSEARCH, OPENSEARCH)  # the sinks whose reader exports


@app.command("export")
def export(
    ctx: typer.Context,
    fmt: str = typer.Option(
        "jsonl", "--format", help=f"One of {', '.join(FORMATS)} (parquet: frontier[parquet])."
    ),
    output: str = typer.Option(
        "-",
        "--output",
        "-o",
        help="A file; a directory (existing, or ending in /) for rotated files; - for stdout.",
    ),
    since: Optional[str] = typer.Option(  # noqa: UP045
        None, "--since", help="Fetched since: an ISO 8601 date or time, or an age (6h, 2d)."
    ),
    source: Optional[str] = typer.Option(None, "--source", help="Source name or id."),  # noqa: UP045
    host: Optional[str] = typer.Option(None, "--host", help="A host, host:port or URL."),  # noqa: UP045
    language: Optional[str] = typer.Option(  # noqa: UP045
        None, "--language", help="A language code (detected, else declared): en, de, pt-BR."
    ),
    one_per_cluster: bool = typer.Option(
        False,
        "--one-per-cluster",
        help="Of near-duplicates (syndicated copies), only the earliest document.",
    ),
    with_body: bool = typer.Option(
        False, "--with-body", help="Include the article's text (body, paragraphs, markdown)."
    ),
    rows_per_file: int = typer.Option(
        ROWS_PER_FILE, "--rows-per-file", min=1, help="Rows per file in a directory."
    ),
) -> None:
    """Export the stored documents, oldest first, to JSON lines, CSV or Parquet (from
    the configured sink); prints the rows written and the rate on stderr."""
    settings = settings_of(ctx)
    if sink_name(settings) not in READABLE:
        raise SettingsError(
            f"export reads the documents from PostgreSQL, Elasticsearch or OpenSearch, and "
            f"the sink is {sink_name(settings)!r} (FRONTIER_SINK): its documents are where "
            "that sink keeps them"
        )

    async def work(db: Database) -> ExportResult:
        where = await build_filter(
            db,
            source=source,
            host=host,
            since=since,
            distinct="cluster" if one_per_cluster else None,
            now=utcnow(),
        )
        query = ExportQuery(
            where,
            until=utcnow(),
            language=check_language(language) if language is not None else None,
            with_body=with_body,
        )
        reader = open_reader(settings, db)
        try:
            return await export_documents(reader, query, fmt, output, rows_per_file=rows_per_file)
        finally:
            await reader.close()

    result = run_with_database(settings, work)
    rate = result.rows / result.seconds if result.seconds > 0 else 0.0
    files = ", ".join(result.files)
    print(
        f"exported {result.rows:,} documents in {result.seconds:.1f} s ({rate:,.0f} rows/s) "
        f"to {files}",
        file=sys.stderr,
    )
