"""The image's HEALTHCHECK, for whichever `frontier` command the container runs (PID 1).

- `frontier serve`: healthy while GET /healthz on its port answers 200.
- every other service (`fetch`, `poll`, `spider --due --every ...`): healthy while the
  service's own FRONTIER_DATABASE_URL reaches PostgreSQL (one connection, `SELECT 1`).
  The services coordinate only through PostgreSQL, so a worker that cannot reach it, with
  its own user and password over its own network path, is the failure worth reporting;
  the check costs one short connection and no query on the frontier's tables.

Exit 0 healthy, 1 unhealthy (Docker's convention); the reason goes to standard output,
which `docker inspect` keeps.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

TIMEOUT_S = 5


def command_line() -> list[str]:
    raw = Path("/proc/1/cmdline").read_bytes()
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def option(args: list[str], name: str, default: str) -> str:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def check_api(args: list[str]) -> str:
    port = option(args, "--port", "8000")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=TIMEOUT_S) as answer:
        return f"/healthz answered {answer.status}"


def check_database() -> str:
    dsn = os.environ.get("FRONTIER_DATABASE_URL")
    if not dsn:
        return "no FRONTIER_DATABASE_URL (embedded database): nothing to check"
    import psycopg

    with psycopg.connect(dsn, connect_timeout=TIMEOUT_S) as connection:
        connection.execute("SELECT 1")
    return "PostgreSQL reachable with the service's DSN"


def main() -> int:
    args = command_line()
    try:
        print(check_api(args) if "serve" in args else check_database())
    except Exception as exc:  # any failure is "unhealthy", with its reason
        print(f"unhealthy: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
