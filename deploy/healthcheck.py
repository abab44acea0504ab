"""The image's HEALTHCHECK, for whichever `frontier` command the container runs (PID 1).

- `frontier serve`: healthy while GET /healthz on its port answers 200.
- every other service (`fetch`, `poll`, `spider --due --every ...`): healthy while the
  service's own FRONTIER_DATABASE_URL reaches PostgreSQL (one connection, `SELECT 1`).
- `fetch`, besides: while its heartbeat is fresh, when FRONTIER_FETCH_HEARTBEAT_FILE names
  one (the image sets it): the file its claim loop touches as it goes round
  (fetcher/heartbeat.py), older than HEARTBEAT_STALE_S is a worker that stopped (hung,
  deadlocked) although PostgreSQL answers.
  The services coordinate only through PostgreSQL, so a worker that cannot reach it, with
  its own user and password over its own network path, is the failure worth reporting;
  the check costs one short connection and no query on the frontier's tables.

Exit 0 healthy, 1 unhealthy (Docker's convention); the reason goes to standard output,
which `docker inspect` keeps.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path

TIMEOUT_S = 5
HEARTBEAT_STALE_S = 120.0  # fetcher/heartbeat.py's STALE_AFTER_S (the loop beats every 10 s)


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


def check_heartbeat(now: float) -> str:
    """The fetch worker's heartbeat file, if it has one, is fresh (raises if not)."""
    name = os.environ.get("FRONTIER_FETCH_HEARTBEAT_FILE")
    if not name:
        return "no heartbeat file (FRONTIER_FETCH_HEARTBEAT_FILE unset)"
    try:
        age = now - Path(name).stat().st_mtime
    except FileNotFoundError:
        raise RuntimeError(f"no heartbeat yet at {name}: the fetch loop has not run") from None
    if age > HEARTBEAT_STALE_S:
        raise RuntimeError(
            f"heartbeat {name} is {age:.0f} s old (over {HEARTBEAT_STALE_S:.0f} s): "
            "the fetch loop stopped going round"
        )
    return f"heartbeat {age:.0f} s old"


def check(args: list[str], now: float) -> str:
    if "serve" in args:
        return check_api(args)
    reached = check_database()
    if "fetch" in args:
        return f"{reached}; {check_heartbeat(now)}"
    return reached


def main() -> int:
    args = command_line()
    try:
        print(check(args, time.time()))
    except Exception as exc:  # any failure is "unhealthy", with its reason
        print(f"unhealthy: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
