"""`frontier spider`: run the discovery spider (`spider.service`) for a source or every
due one."""

from __future__ import annotations

import json
from typing import Optional

import typer

from frontier.cli.app import app, settings_of
from frontier.cli.terminal import printable
from spider.service import render, run_command


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
        None,
        "--allow-external/--no-external",
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
    results, code = run_command(
        settings_of(ctx),
        source,
        due=due,
        max_pages=max_pages,
        max_depth=max_depth,
        interval_hours=interval_hours,
        allow_external=allow_external,
        listing_urls=listing_url,
        verbose=verbose,
    )
    for result in results:
        typer.echo(
            json.dumps(result.as_json())
            if as_json
            else printable(render(result), keep_newlines=True)
        )
        if result.summary.error and not as_json:
            typer.echo(f"frontier: {printable(result.summary.error)}", err=True)
    if due and not results and not as_json:
        typer.echo("no source is due for the spider")
    if code:
        raise typer.Exit(code)
