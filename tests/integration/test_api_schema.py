"""schemathesis, run against /openapi.json of a live server over a real PostgreSQL, finds no
5xx. Bounded: a few examples per operation, so it stays well under a minute. The manual
fire is left out (it would poll whatever feed URLs the fuzzer invents; test_api covers it);
the re-extraction is the one `frontier serve` gives the app."""

from __future__ import annotations

import asyncio
import shutil
import socket
import sys
from pathlib import Path

import uvicorn

from fetcher.reextract import run_reextract
from frontier.api.app import create_app
from frontier.db import Database
from frontier.settings import Settings

TOKEN = "schemathesis-token-0123456789abcdef"


async def test_schemathesis_finds_no_server_errors(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, api_token=TOKEN, _env_file=None)
    app = create_app(settings, db, reextract=run_reextract)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    try:
        process = await asyncio.create_subprocess_exec(
            st,
            "run",
            f"http://127.0.0.1:{sock.getsockname()[1]}/openapi.json",
            "--checks",
            "not_a_server_error",
            "--max-examples",
            "8",
            "--workers",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
            "--exclude-path-regex",
            "/fire$",
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--request-timeout",
            "20",
            "--seed",
            "20261122",
            "--no-color",
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        # a deadline against a hang, far above its 1-2 minutes: every endpoint added adds to it
        output, _ = await asyncio.wait_for(process.communicate(), timeout=420)
    finally:
        server.should_exit = True
        await task
        sock.close()
    text = output.decode("utf-8", "replace")
    assert process.returncode == 0, text[-6000:]
    assert " passed" in text, text[-2000:]  # it ran the operations, not nothing
