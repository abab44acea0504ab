"""`frontier url show URL`: one URL's whole story (frontier.url_story) and why it is not
being fetched right now (frontier.why_waiting)."""

from __future__ import annotations

import json
from typing import Any

import typer

from frontier.db import Database
from frontier.parse_pool import ParseLimits, ParsePool
from frontier.robots import stored_rules_check
from frontier.sinks.configured import open_reader
from frontier.url_story import UrlStory, UrlStoryRepository
from frontier_cli.app import app, run_with_database, settings_of
from frontier_cli.terminal import printable

ENDED = ("fetched", "dead")  # statuses with no next fetch to show

url_app = typer.Typer(help="One URL: its story.", no_args_is_help=True)
app.add_typer(url_app, name="url")


@url_app.command("show")
def url_show(
    ctx: typer.Context,
    url: str = typer.Argument(..., help="The URL (any spelling) or its url_hash."),
    as_json: bool = typer.Option(False, "--json", help="Print the story as JSON."),
) -> None:
    """Identity and request spelling, status, attempts, fetch-log rows, the document, and
    why it is not being fetched right now."""
    settings = settings_of(ctx)

    async def work(db: Database) -> UrlStory:
        reader = open_reader(settings, db)
        try:
            async with ParsePool(ParseLimits.from_settings(settings)) as parser:
                check = stored_rules_check(settings.user_agent, parser)
                return await UrlStoryRepository(db).story(
                    url,
                    documents=reader,
                    robots_allows=check,
                    key_mode=settings.politeness_key,
                )
        finally:
            await reader.close()

    story = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps(story.as_json(), indent=2, default=str))
    else:
        typer.echo(render_story(story.as_json()))
    if story.row is None:
        raise typer.Exit(1)


def render_story(story: dict[str, Any]) -> str:
    why = story["why"]
    lines = [f"url_hash   {story['url_hash']}"]
    row = story["frontier"]
    if row is None:
        lines.append(f"why        {why['sentence']}")
        return "\n".join(lines)
    lines += [
        f"url        {printable(row['url'])}",
        f"fetch_url  {printable(story['fetch_url'])}",
        f"host       {printable(row['host'])}",
        *(
            [f"key        {key['mode']}: {printable(key['key'])}"]
            if (key := story.get("politeness_key"))
            else []
        ),
        f"source     {printable(row['source_name'] or '-')}  (origin {row['origin']})",
        f"status     {row['status']}"
        + (f" ({row['dead_reason']})" if row["dead_reason"] else "")
        + f"  attempts {row['fetch_count']}, retries {row['retry_count']}",
    ]
    if row["status"] not in ENDED:  # a fetched or dead URL keeps a time long past
        lines.append(f"next fetch {row['next_fetch_at']}")
    if row["last_error"]:
        lines.append(f"last error {printable(row['last_error'])}")
    lines.append(f"why        {printable(why['sentence'])}")
    lines.append(f"fetch log  ({len(story['fetch_log'])} rows, newest first)")
    for entry in story["fetch_log"]:
        error = f"  {printable(entry['error'])}" if entry["error"] else ""
        lines.append(
            f"  {entry['at'][:19]}  {entry['kind']:<7} {entry['outcome']:<13} "
            f"{entry['http_status'] or '-':>3}{error}"
        )
    document = story["document"]
    if document is None:
        lines.append("document   none stored")
    else:
        lines.append(
            f"document   {printable(document['title'] or '(no title)')}  "
            f"({document['word_count']} words, {document['extractor']}, "
            f"fetched {document['fetched_at']})"
        )
        lines.append("text")  # the whole article, as stored: what docs/operations.md promises
        lines += [f"  {printable(line)}" if line else "" for line in _text_lines(document)]
    return "\n".join(lines)


def _text_lines(document: dict[str, Any]) -> list[str]:
    body = (document.get("body") or "").strip()
    return body.split("\n") if body else ["(no text stored)"]
