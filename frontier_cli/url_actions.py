"""`frontier urls requeue|purge`: operator actions on failed and dead URLs, and requeueing
fetched ones to fetch them again (frontier.url_actions), with the same filters as
`POST /api/v1/urls/requeue|purge`."""

from __future__ import annotations

import json
from typing import Optional

import typer

from frontier.clock import utcnow
from frontier.db import Database
from frontier.url_actions import ActionResult, UrlActions, UrlFilter, parse_filter
from frontier_cli.app import app, run_with_database, settings_of
from frontier_cli.terminal import printable

urls_app = typer.Typer(
    help="Act on failed and dead URLs, or fetch fetched ones again.", no_args_is_help=True
)
app.add_typer(urls_app, name="urls")

# The options both actions take (typer needs Optional; UP045 is silenced per line).
STATUS = typer.Option(
    None,
    "--status",
    help="failed or dead (default: both); requeue also takes fetched (fetch them again).",
)
REASON = typer.Option(None, "--reason", help="A dead reason (not_found, max_retries...).")
HOST = typer.Option(None, "--host", help="A host, host:port or URL.")
SOURCE = typer.Option(None, "--source", help="A source name.")
OLDER = typer.Option(None, "--older-than", help="Last changed longer ago than this (2d, 6h).")
URL = typer.Option(None, "--url", help="One URL (any spelling).")
DRY = typer.Option(False, "--dry-run", help="Count and list a sample; change nothing.")
JSON = typer.Option(False, "--json", help="Print the answer as JSON.")


def _command(action: str, summary: str) -> None:
    """Register `frontier urls ACTION`: both actions take the same filters."""

    def command(
        ctx: typer.Context,
        status: Optional[str] = STATUS,  # noqa: UP045
        reason: Optional[str] = REASON,  # noqa: UP045
        host: Optional[str] = HOST,  # noqa: UP045
        source: Optional[str] = SOURCE,  # noqa: UP045
        older_than: Optional[str] = OLDER,  # noqa: UP045
        url: Optional[str] = URL,  # noqa: UP045
        dry_run: bool = DRY,
        as_json: bool = JSON,
    ) -> None:
        wanted = parse_filter(
            status=status,
            reason=reason,
            host=host,
            source=source,
            older_than=older_than,
            url=url,
            now=utcnow(),
            action=action,
        )
        _run(ctx, action, wanted, dry_run=dry_run, as_json=as_json)

    command.__doc__ = summary
    urls_app.command(action)(command)


_command(
    "requeue",
    "Make matching failed and dead URLs pending and due now, retries reset "
    "(--status fetched: fetch fetched URLs again).",
)
_command("purge", "Delete matching failed and dead URLs from the frontier (documents stay).")


def _run(
    ctx: typer.Context, action: str, wanted: UrlFilter, *, dry_run: bool, as_json: bool
) -> None:
    async def work(db: Database) -> ActionResult:
        actions = UrlActions(db)
        if action == "requeue":
            return await actions.requeue(wanted, dry_run=dry_run)
        return await actions.purge(wanted, dry_run=dry_run)

    result = run_with_database(settings_of(ctx), work)
    if as_json:
        typer.echo(json.dumps(result.as_json(), indent=2))
        return
    typer.echo(render_result(result))


def render_result(result: ActionResult) -> str:
    done = "requeued" if result.action == "requeue" else "purged"
    if result.dry_run:
        head = f"dry run: {result.matched} URLs match; nothing {done}"
    else:
        head = f"{done} {result.changed} of {result.matched} matching URLs"
    lines = [head]
    for row in result.sample:
        why = row["dead_reason"] or row["status"]
        error = f"  {printable(row['last_error'])}" if row["last_error"] else ""
        lines.append(f"  {why:<20} {printable(row['url'])}{error}")
    if result.matched > len(result.sample):
        lines.append(f"  ... and {result.matched - len(result.sample)} more")
    return "\n".join(lines)
