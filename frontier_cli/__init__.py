"""The edge: the `frontier` command, the composition root that wires the services together.
It sits above them: the core (`frontier`, with the HTTP API `frontier.api`) imports no
service and nothing of this package, and the services import only the core; these modules
import the services' entry points (`poller.service`, `fetcher.service`, `spider.service`)
at the top (but `frontier fetch`, which may start its process again first: `fetch`), and
give the API the service functions it serves (docs/architecture.md, 1).

A command module is imported only when its command runs (`load_commands`): importing them
all costs seconds and tens of MiB (Scrapy, uvicorn, the fetcher), which `frontier status` or a
`frontier poll` process should not pay. `frontier --help` loads none: it lists SUMMARIES.
`plain_help` makes every help read as click's did (no `<bool>` or `{file}`).

Modules, one per group of commands:

- `app`       the typer app, the settings read once, `run_with_database`, exit codes
- `database`  `frontier db upgrade`
- `status`    `frontier status`
- `urls`      `frontier submit`, `frontier import`
- `sinks`     `frontier sinks status`: each sink's backlog in the outbox (frontier.outbox)
- `import_warc` `frontier import-warc`: WARC files into the documents (fetcher.warc_input)
- `sources`   `frontier sources add|list|show|update|enable|disable|remove|import|export`
- `poll`      `frontier poll`            (poller.service)
- `fetch`     `frontier fetch`           (fetcher.service)
- `spider`    `frontier spider`          (spider.service)
- `serve`     `frontier serve`           (frontier.api, given poller.service.fire and
                                         fetcher.reextract.run_reextract)
- `up`        `frontier up`: every service in one process, with its `Console`
- `documents` `frontier documents`: the stored articles, from the configured sink
- `export`    `frontier export`: the documents to JSON lines, CSV or Parquet (frontier.export)
- `reextract` `frontier reextract`: extraction again over the WARC archive (fetcher.reextract)
- `url_show`  `frontier url show`: one URL's story  (frontier.robots, to match robots.txt)
- `url_actions` `frontier urls requeue|purge`: act on failed and dead URLs
- `terminal`  `printable`: outside text (names, URLs, errors) escaped for a terminal
- `demo/`     the offline demo sites behind `frontier up --demo`

`main` is the console script (`frontier = "frontier_cli:main"`); `python -m frontier` runs
it through its entry point (frontier/__main__.py).
"""

import gc
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import typer
import typer.core
import typer.main

from frontier.errors import FrontierError
from frontier_cli.app import EXIT_USAGE, Restart, app
from frontier_cli.terminal import printable

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
    "export": "export",
    "reextract": "reextract",
    "url": "url_show",
    "urls": "url_actions",
    "sinks": "sinks",
}


# What `frontier --help` lists, in its order, without importing a command module: each
# command's own help (its docstring's first paragraph; a group's `help=`).
# tests/integration/test_cli_help.py checks this help against the one the modules give.
SUMMARIES = {
    "status": "Counts by status, origin, source and host; due work; recent claims.",
    "submit": "Submit URLs to the frontier.",
    "import": "Import URLs from text, CSV or NDJSON, streamed in batches with a progress bar.",
    "import-warc": "Import WARC files (such as CC-NEWS): each HTML response through extraction, "
    "verdicts\nand deduplication into the documents, its URL `fetched` in the frontier.",
    "poll": "Run the feed and sitemap poller (exit 1 if any source failed with --once).",
    "fetch": "Run a fetcher process: claim, robots.txt, fetch, extract, store, complete.",
    "spider": "Run the Scrapy discovery spider for a source (or every due one) and submit the\n"
    "article URLs it finds to the frontier.",
    "serve": "Run the HTTP API and dashboard (http://HOST:PORT/).",
    "up": "Everything in one process: database (embedded if no DSN), migrations, default\n"
    "sources, poller, spider, fetchers, API and dashboard. Ctrl-C stops it cleanly.",
    "export": "Export the stored documents, oldest first, to JSON lines, CSV or Parquet (from\n"
    "the configured sink); prints the rows written and the rate on stderr.",
    "reextract": "Run extraction again over the archived responses of stored documents (no "
    "request is\nmade); a document is rewritten only when its result changed.",
    "db": "Database schema commands.",
    "sources": "Manage sources.",
    "documents": "The stored articles, newest first (from Elasticsearch or PostgreSQL, as "
    "configured).",
    "url": "One URL: its story.",
    "urls": "Act on failed and dead URLs, or fetch fetched ones again.",
    "sinks": "The content sinks: backlog, oldest pending, last error.",
}


def load_commands(argv: Sequence[str] | None = None) -> typer.Typer:
    """Register the command that `argv` names (its first word that is not an option), or
    every command when it names none (usage errors; `argv` None: all of them, for tests).
    The root's help (`frontier`, `frontier --help`) lists SUMMARIES instead: no command
    module is imported for it. Returns the app."""
    named = next((word for word in argv or () if not word.startswith("-")), None)
    if argv is not None and named is None and (not argv or "--help" in argv):
        for name, summary in SUMMARIES.items():
            app.command(name, help=summary)(_listed_only)
        return app
    modules = [COMMAND_MODULES[named]] if named in COMMAND_MODULES else COMMAND_MODULES.values()
    for module in dict.fromkeys(modules):
        importlib.import_module(f"frontier_cli.{module}")
    return app


def plain_help(command: Any) -> None:  # typer's (vendored) click Command
    """The help of `command` and its subcommands as click wrote it: a flag shows no type
    (typer 0.29 shows `<bool>`), and a required argument is `FILE` in the usage line, an
    optional one `[FILE]` (typer's `{file}`)."""
    help_option = command.get_help_option(typer.Context(command))  # made once, then kept
    for param in [*command.params, *([help_option] if help_option else [])]:
        if isinstance(param, typer.core.TyperOption) and param.is_flag:
            param.metavar = ""
        elif isinstance(param, typer.core.TyperArgument):
            param.get_usage_pieces = partial(_usage, param)  # type: ignore[method-assign]
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def _usage(param: typer.core.TyperArgument, _ctx: typer.Context) -> list[str]:
    name = (param.name or "").upper() + ("..." if param.nargs != 1 else "")
    return [name if param.required else f"[{name}]"]


def _listed_only() -> None:
    """A command as the root's help lists it; never run (the help exits first)."""


@contextmanager
def modules_frozen() -> Iterator[None]:
    """The command's modules imported without the cyclic collector, then left out of its
    passes for good (`gc.freeze`). Their classes, functions, patterns and schemas live as
    long as the process: the passes over them while they were built (about 170 young and
    15 older ones for `frontier fetch`) found almost nothing to free and cost it 25 ms of
    CPU, and each full pass later (the fetcher's `frozen_heap` collection) would walk all
    125,000 of them again (bench/RESULTS.md, ninth session). What the imports left as
    garbage (about 1,900 objects, a few hundred KB) stays; collecting it first would cost
    what this saves. The process's own command only (`main`): a test that loads commands
    keeps its collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def main() -> None:
    """Console entry point: turns frontier's own errors into one line and exit code 2, and
    starts the process again where a command asks it to (`Restart`)."""
    try:
        with modules_frozen():
            command = typer.main.get_command(load_commands(sys.argv[1:]))
            plain_help(command)
        command(prog_name="frontier")
    except FrontierError as exc:
        typer.echo(f"frontier: {printable(exc, keep_newlines=exc.multiline)}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
    except Restart as restart:  # the same command line again (`sys.orig_argv`), same PID
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], restart.environment)
