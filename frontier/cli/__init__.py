"""The edge: the `frontier` command, the only place (with the HTTP API) that wires the
services together. The core (`frontier/*.py`) imports no service; these modules import the
services' entry points (`poller.service`, `fetcher.service`, `spider.service`) at the top.

A command module is imported only when its command runs (`load_commands`): importing them
all costs 2 s and 70 MiB (Scrapy, uvicorn, the fetcher), which `frontier status` or a
`frontier poll` process should not pay. `frontier --help` loads them all.

Modules, one per group of commands:

- `app`       the typer app, the settings read once, `run_with_database`, exit codes
- `database`  `frontier db upgrade`
- `status`    `frontier status`
- `urls`      `frontier submit`, `frontier import`
- `import_warc` `frontier import-warc`: WARC files into the documents (fetcher.warc_input)
- `sources`   `frontier sources add|list|remove|import`
- `poll`      `frontier poll`            (poller.service)
- `fetch`     `frontier fetch`           (fetcher.service)
- `spider`    `frontier spider`          (spider.service)
- `serve`     `frontier serve`           (frontier.api, given poller.service.fire)
- `up`        `frontier up`: every service in one process, with its `Console`
- `documents` `frontier documents`: the stored articles, from the configured sink
- `url_show`  `frontier url show`: one URL's story  (fetcher.robots, to match robots.txt)
- `url_actions` `frontier urls requeue|purge`: act on failed and dead URLs
- `terminal`  `printable`: outside text (names, URLs, errors) escaped for a terminal
- `demo/`     the offline demo sites behind `frontier up --demo`

`main` is the console script (`frontier = "frontier.cli:main"`, also `python -m frontier`).
"""

import importlib
import sys
from collections.abc import Sequence

import typer

from frontier.cli.app import EXIT_USAGE, app
from frontier.cli.terminal import printable
from frontier.errors import FrontierError

__all__ = ["app", "load_commands", "main"]

# command name -> the module that registers it on `app` when imported
COMMAND_MODULES = {
    "db": "database",
    "status": "status",
    "submit": "urls",
    "import": "urls",
    "import-warc": "import_warc",
    "sources": "sources",
    "poll": "poll",
    "fetch": "fetch",
    "spider": "spider",
    "serve": "serve",
    "up": "up",
    "documents": "documents",
    "url": "url_show",
    "urls": "url_actions",
}


def load_commands(argv: Sequence[str] | None = None) -> typer.Typer:
    """Register the command that `argv` names (its first word that is not an option), or
    every command when it names none (help, usage errors); return the app."""
    named = next((word for word in argv or () if not word.startswith("-")), None)
    modules = [COMMAND_MODULES[named]] if named in COMMAND_MODULES else COMMAND_MODULES.values()
    for module in dict.fromkeys(modules):
        importlib.import_module(f"frontier.cli.{module}")
    return app


def main() -> None:
    """Console entry point: turns frontier's own errors into one line and exit code 2."""
    try:
        load_commands(sys.argv[1:])()
    except FrontierError as exc:
        typer.echo(f"frontier: {printable(exc)}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
