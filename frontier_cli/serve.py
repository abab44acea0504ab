"""`frontier serve`: the HTTP API and dashboard, given the poller's manual fire and the
fetcher's re-extraction."""

from __future__ import annotations

import typer

from fetcher.reextract import run_reextract
from frontier import migrate
from frontier.api.server import run
from frontier.connect import database_dsn
from frontier_cli.app import app, settings_of, start_service
from poller.service import fire


@app.command()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
) -> None:
    """Run the HTTP API and dashboard (http://HOST:PORT/)."""
    settings = settings_of(ctx)
    start_service(settings)
    with database_dsn(settings) as dsn:
        migrate.make_ready(dsn, embedded=not settings.database_url)
        typer.echo(f"serving the API and dashboard on http://{host}:{port}/", err=True)
        run(settings, dsn, host, port, fire=fire, reextract=run_reextract)
