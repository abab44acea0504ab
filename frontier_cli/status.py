"""`frontier status`: counts by status, origin, source and host; due work; recent errors."""

from __future__ import annotations

import json

import typer

from frontier.stats import FrontierStats, StatsRepository
from frontier_cli.app import app, run_with_database, settings_of
from frontier_cli.terminal import printable


@app.command()
def status(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the stable JSON shape."),
) -> None:
    """Counts by status, origin, source and host; due work; recent claims."""
    stats = run_with_database(settings_of(ctx), lambda db: StatsRepository(db).stats())
    if as_json:
        typer.echo(json.dumps(stats.as_json(), indent=2))
        return
    typer.echo(render_status(stats))


def render_status(stats: FrontierStats) -> str:
    lines = [f"URLs in the frontier: {stats.total}  (due now: {stats.due_now})"]
    for title, counts in (
        ("by status", stats.by_status),
        ("by origin", stats.by_origin),
        ("by source", stats.by_source),
    ):
        lines.append(f"{title}:" + ("" if counts else " none"))
        lines.extend(f"  {printable(name):<24} {n:>12}" for name, n in counts.items())
    hosts = stats.hosts
    lines.append(f"hosts: {hosts.known} known, {hosts.ready_now} ready now")
    lines.extend(
        f"  {printable(h['host']):<40} {h['pending']:>10} pending" for h in hosts.top_pending
    )
    lines.append(f"claims in the last minute: {stats.claims_last_minute}")
    revisits = stats.revisits
    lines.append(
        f"revisits: {revisits.waiting} waiting, {revisits.due_now} due now; "
        f"outcomes {_outcomes(revisits.outcomes)}"
    )
    lines.append(f"first fetches: outcomes {_outcomes(stats.page_outcomes)}")
    if stats.oldest_due_at:
        lines.append(f"oldest due URL waiting since: {stats.oldest_due_at.isoformat()}")
    if stats.recent_errors:
        lines.append("recent errors:")
        lines.extend(
            f"  {e['at']} {e['kind']} {printable(e['url'])}: {printable(e['error'])}"
            for e in stats.recent_errors
        )
    return "\n".join(lines)


def _outcomes(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none yet"
