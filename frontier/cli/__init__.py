"""The edge: the `frontier` command, the only place (with the HTTP API) that wires the
services together. The core (`frontier/*.py`) imports no service; these modules import the
services' entry points (`poller.service`, `fetcher.service`, `spider.service`) at the top.

Modules, one per group of commands:

- `app`       the typer app, the settings read once, `run_with_database`, exit codes
- `database`  `frontier db upgrade`
- `status`    `frontier status`
- `urls`      `frontier submit`, `frontier import`
- `sources`   `frontier sources add|list|remove|import`
- `poll`      `frontier poll`            (poller.service)
- `fetch`     `frontier fetch`           (fetcher.service)
- `spider`    `frontier spider`          (spider.service)
- `serve`     `frontier serve`           (frontier.api, given poller.service.fire)
- `up`        `frontier up`: every service in one process, with its `Console`
- `terminal`  `printable`: outside text (names, URLs, errors) escaped for a terminal
- `demo/`     the offline demo sites behind `frontier up --demo`

`main` is the console script (`frontier = "frontier.cli:main"`, also `python -m frontier`).
"""

import sys

import typer

# Each command module registers its commands on `app` when it is imported.
from frontier.cli import database, fetch, poll, serve, sources, spider, status, up, urls  # noqa: F401
from frontier.cli.app import EXIT_USAGE, app
from frontier.cli.terminal import printable
from frontier.errors import FrontierError

__all__ = ["app", "main"]


def main() -> None:
    """Console entry point: turns frontier's own errors into one line and exit code 2."""
    try:
        app()
    except FrontierError as exc:
        typer.echo(f"frontier: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
