"""`frontier spider`: run the discovery spider (`spider.service`) for a source or every
due one."""

from __future__ import annotations

import json
import re
from typing import Optional

import typer

from frontier_cli.app import EXIT_USAGE, app, settings_of, start_service
from frontier_cli.terminal import printable
from spider.service import render, run_command, run_service
from spider.summary import CrawlSummary

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_every(text: str) -> float:
    """`--every`: seconds, or a number with s, m, h or d (`300`, `5m`, `1h`)."""
    match = _DURATION.match(text)
    if match is None or float(match[1]) <= 0:
        raise typer.BadParameter(f"{text!r}: give seconds or a number with s, m, h or d (5m, 1h)")
    return float(match[1]) * _UNIT_S[match[2]]


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
    every: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--every",
        help="With --due: a service that looks for due sources this often (300, 5m, 1h) "
        "until SIGTERM.",
    ),
) -> None:
    """Run the Scrapy discovery spider for a source (or every due one) and submit the
    article URLs it finds to the frontier."""
    settings = settings_of(ctx)
    if every is not None:
        every_s = parse_every(every)
        if not due or source is not None:
            typer.echo("frontier: --every needs --due (and no SOURCE)", err=True)
            raise typer.Exit(EXIT_USAGE)
        per_run = (max_pages, max_depth, interval_hours, allow_external, listing_url)
        if any(option is not None for option in per_run):
            typer.echo(
                "frontier: with --every, the budget and depth come from "
                "FRONTIER_SPIDER_MAX_PAGES and FRONTIER_SPIDER_MAX_DEPTH; store a source's "
                "options with `frontier spider SOURCE ...`",
                err=True,
            )
            raise typer.Exit(EXIT_USAGE)
        start_service(settings)

        def crawled(_name: str, summary: CrawlSummary) -> None:
            text = json.dumps(summary.as_json()) if as_json else summary.render()
            typer.echo(printable(text, keep_newlines=True))

        run_service(settings, every_s, on_crawled=crawled)
        return
    results, code = run_command(
        settings,
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
