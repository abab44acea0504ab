"""`frontier --help` lists every command without importing one (it cost a second of CPU
and 110 MiB: Scrapy, uvicorn, the fetcher), and says what the modules' own help says; no
help shows typer's `<bool>` for a flag or `{file}` for an argument."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("scrapy", "uvicorn", "fastapi", "asyncpg", "psycopg", "trafilatura")
HEAVY += ("fetcher.service", "poller.service", "spider.service", "frontier.api.app")


def run(code: str) -> str:
    env = {**os.environ, "COLUMNS": "100"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def help_of(*argv: str, all_modules: bool = False) -> str:
    """`frontier ARGV`'s output, through `main` (or with every command module loaded)."""
    load = "load_commands(None)" if all_modules else f"load_commands({list(argv)!r})"
    return run(
        "import sys, typer.main\n"
        "from frontier_cli import load_commands, plain_help\n"
        f"command = typer.main.get_command({load})\n"
        "plain_help(command)\n"
        "try:\n"
        f"    command({list(argv)!r}, prog_name='frontier')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))\n"
        "print('imported:', heavy)\n"
    )


def test_the_root_help_imports_no_command_and_says_the_same() -> None:
    cheap = help_of("--help")
    assert cheap.endswith("imported: []\n"), cheap[-400:]
    full = help_of("--help", all_modules=True)
    assert "imported: []" not in full  # the comparison below means something
    assert cheap.rsplit("imported:", 1)[0] == full.rsplit("imported:", 1)[0]


@pytest.mark.parametrize(
    "argv",
    [("--help",), ("fetch", "--help"), ("submit", "--help"), ("sources", "import", "--help")],
)
def test_no_help_shows_typer_placeholders(argv: tuple[str, ...]) -> None:
    shown = help_of(*argv)
    assert "<bool>" not in shown and "{" not in shown, shown
    if argv[0] == "sources":
        assert "Usage: frontier sources import [OPTIONS] FILE" in shown
