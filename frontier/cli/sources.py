"""`frontier sources`: add, list, remove and import sources."""

from __future__ import annotations

import json
from typing import Optional

import typer

from frontier.cli.app import EXIT_PARTIAL, app, run_with_database, settings_of

sources_app = typer.Typer(help="Manage sources.", no_args_is_help=True)
app.add_typer(sources_app, name="sources")


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
