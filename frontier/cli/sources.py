"""`frontier sources`: add, list, remove and import sources."""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from frontier.cli.app import EXIT_PARTIAL, app, run_with_database, settings_of
from frontier.cli.terminal import printable

sources_app = typer.Typer(help="Manage sources.", no_args_is_help=True)
app.add_typer(sources_app, name="sources")


@sources_app.command("add")
def sources_add(
    ctx: typer.Context,
    name: str,
    feed_url: Optional[str] = typer.Option(None, "--feed-url"),  # noqa: UP045
    sitemap_url: Optional[str] = typer.Option(None, "--sitemap-url"),  # noqa: UP045
    base_url: Optional[str] = typer.Option(None, "--base-url"),  # noqa: UP045
    mode: Optional[str] = typer.Option(  # noqa: UP045
        None, "--mode", help="feed, spider or both (default feed)."
    ),
    priority: Optional[int] = typer.Option(None, "--priority", help="1..10 (default 5)."),  # noqa: UP045
    interval: Optional[int] = typer.Option(  # noqa: UP045
        None, "--interval", help="Feed poll interval in minutes (default 15)."
    ),
    rate_limit_ms: Optional[int] = typer.Option(None, "--rate-limit-ms"),  # noqa: UP045
    politeness_key: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--politeness-key",
        help="host, domain or ip: what one request in flight counts on (default: the setting).",
    ),
    article_pattern: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--article-pattern", help="Regex of article URLs (repeatable)."
    ),
    url_filters: Optional[str] = typer.Option(  # noqa: UP045
        None, "--url-filters", help='JSON object, e.g. \'{"exclude": ["/sponsored/"]}\'.'
    ),
    selectors: Optional[str] = typer.Option(  # noqa: UP045
        None, "--selectors", help='JSON object of CSS selectors, e.g. \'{"title": "h1"}\'.'
    ),
    min_published_at: Optional[str] = typer.Option(  # noqa: UP045
        None, "--min-published-at", help="ISO 8601 date or datetime (naive: UTC)."
    ),
    fetchprotection: Optional[int] = typer.Option(None, "--fetchprotection", help="0, 1 or 2."),  # noqa: UP045
    keep_trailing_slash: Optional[bool] = typer.Option(  # noqa: UP045
        None, "--keep-trailing-slash/--drop-trailing-slash"
    ),
    enabled: Optional[bool] = typer.Option(None, "--enabled/--disabled"),  # noqa: UP045
    adaptive_interval: Optional[bool] = typer.Option(  # noqa: UP045
        None,
        "--adaptive-interval/--fixed-interval",
        help="Adapt the feed poll interval to how often the feed changes (default fixed).",
    ),
    spider_interval_minutes: Optional[int] = typer.Option(  # noqa: UP045
        None, "--spider-interval-minutes", help="How often the spider crawls it (default 1440)."
    ),
    spider_allow_external: Optional[bool] = typer.Option(  # noqa: UP045
        None,
        "--spider-allow-external/--spider-no-external",
        help="Queue links to unknown hosts under the 'discovered' source (default no).",
    ),
    spider_listing_url: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--spider-listing-url", help="A listing page the spider starts from (repeatable)."
    ),
    kind: Optional[str] = typer.Option(  # noqa: UP045
        None, "--kind", help="feed, sitemap, wordpress or a plugin's kind (default feed)."
    ),
    kind_config: Optional[str] = typer.Option(  # noqa: UP045
        None, "--config", help="The kind's options as a JSON object, e.g. '{\"per_page\": 50}'."
    ),
    revisit: Optional[list[str]] = typer.Option(  # noqa: UP045
        None,
        "--revisit",
        help="Fetch each article again this long after the fetch before (repeatable: "
        "--revisit 1h --revisit 6h --revisit 1d; default never).",
    ),
    language: Optional[list[str]] = typer.Option(  # noqa: UP045
        None,
        "--language",
        help="Keep only articles detected in this language (repeatable: --language en "
        "--language de; default any).",
    ),
) -> None:
    """Add a source (validated by the same schema as the API and `sources import`)."""
    from frontier.source_schema import InvalidSource, parse_config
    from frontier.sources import SourceRepository

    def json_option(flag: str, text: str | None) -> Any:
        try:
            return None if text is None else json.loads(text)
        except ValueError as exc:
            raise InvalidSource(f"{flag}: not valid JSON ({exc})") from None

    given = {
        "name": name,
        "feed_url": feed_url,
        "sitemap_url": sitemap_url,
        "base_url": base_url,
        "ingestion_mode": mode,
        "priority": priority,
        "feed_poll_interval_minutes": interval,
        "rate_limit_ms": rate_limit_ms,
        "politeness_key": politeness_key,
        "article_url_patterns": article_pattern,
        "url_filters": json_option("url_filters", url_filters),
        "selectors": json_option("selectors", selectors),
        "min_published_at": min_published_at,
        "fetchprotection": fetchprotection,
        "keep_trailing_slash": keep_trailing_slash,
        "enabled": enabled,
        "adaptive_interval": adaptive_interval,
        "spider_interval_minutes": spider_interval_minutes,
        "spider_allow_external": spider_allow_external,
        "spider_listing_urls": spider_listing_url,
        "kind": kind,
        "config": json_option("config", kind_config),
        "revisit": revisit,
        "languages": language,
    }
    config = parse_config({key: value for key, value in given.items() if value is not None})
    source = run_with_database(settings_of(ctx), lambda db: SourceRepository(db).create(config))
    typer.echo(f"added source {printable(source.name)} ({source.id})")


@sources_app.command("list")
def sources_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """List sources."""
    from frontier.sources import SourceRepository

    async def listed(db: Any) -> tuple[list[Any], dict[Any, str]]:
        repository = SourceRepository(db)
        found = await repository.list()
        return found, await repository.poll_errors([s.id for s in found])

    sources, errors = run_with_database(settings_of(ctx), listed)
    if as_json:
        shown = [{**s.as_json(), "last_error": errors.get(s.id)} for s in sources]
        typer.echo(json.dumps(shown, indent=2))
        return
    for source in sources:
        url = source.feed_url or source.sitemap_url or source.base_url
        where = printable(url or (source.config or {}).get("url") or "-")
        if source.kind != "feed":
            where = f"{printable(source.kind)}: {where}"
        name = printable(source.name)
        error = f"  [error: {printable(errors[source.id])}]" if source.id in errors else ""
        typer.echo(f"{name:<30} {source.ingestion_mode:<7} p{source.priority:<3} {where}{error}")


@sources_app.command("remove")
def sources_remove(ctx: typer.Context, name: str) -> None:
    """Remove a source; its URLs stay in the frontier without a source."""
    from frontier.sources import SourceRepository

    run_with_database(settings_of(ctx), lambda db: SourceRepository(db).remove(name))
    typer.echo(f"removed source {printable(name)}")


@sources_app.command("import")
def sources_import(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="A YAML feeds spec or an OPML file."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import sources from a YAML feeds spec (`sources:` list) or OPML; per-entry errors."""
    from frontier.source_specs import MAX_FILE_BYTES, UnusableSpec, import_specs, parse_specs
    from frontier.sources import SourceRepository

    try:
        with open(file, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)  # parse_specs refuses what is over
    except OSError as exc:
        raise UnusableSpec(f"cannot read {file}: {exc.strerror}") from None
    parsed = parse_specs(data, file)
    summary = run_with_database(
        settings_of(ctx), lambda db: import_specs(SourceRepository(db), parsed)
    )
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
    else:
        typer.echo(f"added {len(summary.added)} sources, {len(summary.errors)} failed")
        for error in summary.errors:
            name, reason = printable(error.name or "?"), printable(error.reason)
            typer.echo(f"  entry {error.entry} ({name}): {reason}", err=True)
    if summary.errors:
        raise typer.Exit(EXIT_PARTIAL)
