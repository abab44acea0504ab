"""`frontier sinks status`: each content sink, required or optional, with what the outbox
holds for it (frontier.outbox): the backlog, how long its oldest row has waited, the rows
refused for good and the last error."""

from __future__ import annotations

import json

import typer

from frontier_cli.app import app, run_with_database, settings_of
from frontier_cli.terminal import printable

sinks_app = typer.Typer(help="The content sinks: backlog, oldest pending, last error.")
app.add_typer(sinks_app, name="sinks")


@sinks_app.command("status")
def status(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
) -> None:
    """Each sink: required or optional, its backlog in the outbox, the oldest pending
    row's age and the last error."""
    from frontier.clock import utcnow
    from frontier.outbox import OutboxRepository
    from frontier.sinks.configured import sinks_status

    settings = settings_of(ctx)
    backlogs = run_with_database(settings, lambda db: OutboxRepository(db).status())
    lines = sinks_status(settings, backlogs, utcnow())
    if as_json:
        typer.echo(json.dumps(lines, indent=2))
        return
    typer.echo(render_sinks(lines))


def render_sinks(lines: list[dict[str, object]]) -> str:
    out = [f"{'sink':<20} {'role':<9} {'backlog':>9} {'oldest':>9} {'rejected':>9}  last error"]
    for line in lines:
        role = "required" if line["required"] else "optional"
        if not line["configured"]:
            role = "removed"
        oldest = line["oldest_pending_s"]
        age = "-" if oldest is None else _age(float(oldest))  # type: ignore[arg-type]
        error = printable(str(line["last_error"])) if line["last_error"] else "-"
        if line["last_error_at"]:
            error += f" (at {line['last_error_at']})"
        out.append(
            f"{printable(str(line['sink'])):<20} {role:<9} {line['backlog']:>9} {age:>9} "
            f"{line['rejected']:>9}  {error}"
        )
    return "\n".join(out)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
