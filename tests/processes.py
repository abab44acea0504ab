"""Real `python -m frontier COMMAND` child processes for the acceptance scenarios: a clean
environment (no inherited FRONTIER_* variables), output captured to a log file under
`tmp_path` and echoed when the block ends, and a SIGKILL for anything still running."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def clean_env(dsn: str, **extra: str) -> dict[str, str]:
    """This environment without FRONTIER_*, then the DSN and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    return {**env, "FRONTIER_DATABASE_URL": dsn, **extra}


def frontier_env(dsn: str, **extra: str) -> dict[str, str]:
    """The environment of a child: this one without FRONTIER_*, then the DSN, loopback
    allowed (the test servers live on 127.0.0.0/8) and `extra` (which may replace them)."""
    defaults = {
        "FRONTIER_ALLOW_PRIVATE_NETWORKS": "true",
        "FRONTIER_USER_AGENT": "frontier-test/1.0",
    }
    return clean_env(dsn, **{**defaults, **extra})


async def frontier_output(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """`python -m frontier ARGS...` run to its end: exit code, stdout and stderr."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "frontier",
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(child.communicate(), timeout=120)
    return await child.wait(), out.decode(), err.decode()


@asynccontextmanager
async def frontier_process(
    dsn: str, tmp_path: Path, command: str, *args: str, via: str | None = None, **env: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m frontier COMMAND ARGS...`; the log lands in tmp_path/COMMAND-N.log, and a
    fetcher's WARC archive in tmp_path/archive unless `env` names one (by default it would
    be ./.frontier/archive, in the repository). `via`: a module that runs frontier's
    (`python -m VIA frontier COMMAND ARGS...`)."""
    env = {"FRONTIER_ARCHIVE_DIR": str(tmp_path / "archive"), **env}
    log_path = tmp_path / f"{command}-{len(list(tmp_path.glob(f'{command}-*.log')))}.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            *([via] if via else []),
            "frontier",
            command,
            *args,
            env=frontier_env(dsn, **env),
            stdout=log,
            stderr=log,
            cwd=REPO,
        )
        try:
            yield process
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            print(log_path.read_text(errors="replace")[-3000:])


def read_log(tmp_path: Path, command: str, index: int = 0) -> str:
    """The output of the index-th COMMAND process of this test."""
    return (tmp_path / f"{command}-{index}.log").read_text(errors="replace")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, for a child server to bind."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
