"""The one narrow seam to PostgreSQL: an asyncpg pool behind execute / fetch / fetchrow /
fetchval / copy. Repositories receive a `Database`; nothing else touches a pool.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import asyncpg

from frontier.errors import FrontierError

log = logging.getLogger(__name__)

T = TypeVar("T")

# A single statement that lost a deadlock or a serialization race is safe to run again.
_RETRYABLE = (asyncpg.DeadlockDetectedError, asyncpg.SerializationError)
_STATEMENT_ATTEMPTS = 5


class DatabaseUnavailable(FrontierError):
    """PostgreSQL cannot be reached or refused us; the message names the host and cause."""


def describe_dsn(dsn: str) -> str:
    """host:port/database of a DSN, without credentials, for messages."""
    try:
        parts = urlsplit(dsn)
        query = parse_qs(parts.query)
        host = query.get("host", [parts.hostname or "localhost"])[0]
        port = query.get("port", [str(parts.port or 5432)])[0]
        database = parts.path.lstrip("/") or query.get("dbname", [""])[0] or "(default)"
    except ValueError:
        return "(unparseable DSN)"
    return f"{host}:{port}/{database}"


async def _init_connection(conn: asyncpg.Connection) -> None:
    """jsonb values arrive as Python objects and leave as JSON text."""
    await conn.set_type_codec(
        "jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog"
    )


class Database:
    """Statements run on a pool (each its own transaction) or on one connection inside
    `transaction()`. Single statements on the pool are retried on deadlock."""

    def __init__(self, executor: asyncpg.Pool | asyncpg.Connection) -> None:
        self._executor = executor

    @classmethod
    async def connect(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 10.0
    ) -> Database:
        where = describe_dsn(dsn)
        try:
            pool = await asyncpg.create_pool(
                dsn, min_size=min_size, max_size=max_size, timeout=timeout,
                command_timeout=None, init=_init_connection,
            )  # fmt: skip
        except (OSError, TimeoutError) as exc:
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {exc}") from None
        except (asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
            cause = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {cause}") from None
        return cls(pool)

    async def close(self) -> None:
        if isinstance(self._executor, asyncpg.Pool):
            await self._executor.close()

    async def _retrying(self, once: Callable[[], Awaitable[T]], what: str) -> T:
        """Run `once` again if it loses a deadlock; only outside an enclosing transaction."""
        for attempt in range(1, _STATEMENT_ATTEMPTS + 1):
            try:
                return await once()
            except _RETRYABLE:
                if isinstance(self._executor, asyncpg.Connection) or attempt == _STATEMENT_ATTEMPTS:
                    raise
                log.info("%s lost a lock race; retrying (attempt %d)", what, attempt)
                await asyncio.sleep(0.01 * attempt)
        raise AssertionError("unreachable")

    async def _run(self, method: str, query: str, args: Sequence[Any]) -> Any:
        return await self._retrying(
            lambda: getattr(self._executor, method)(query, *args), "statement"
        )

    async def execute(self, query: str, *args: Any) -> str:
        result: str = await self._run("execute", query, args)
        return result

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        result: list[asyncpg.Record] = await self._run("fetch", query, args)
        return result

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        result: asyncpg.Record | None = await self._run("fetchrow", query, args)
        return result

    async def fetchval(self, query: str, *args: Any) -> Any:
        return await self._run("fetchval", query, args)

    async def copy_records(
        self, table: str, records: Iterable[Sequence[Any]], columns: Sequence[str]
    ) -> None:
        await self._executor.copy_records_to_table(table, records=records, columns=columns)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """A `Database` bound to one connection inside one transaction."""
        if isinstance(self._executor, asyncpg.Connection):
            async with self._executor.transaction():
                yield self
            return
        async with self._executor.acquire() as conn, conn.transaction():
            yield Database(conn)

    async def run_transaction(self, work: Callable[[Database], Awaitable[T]]) -> T:
        """Run `work` in one transaction, again from the start if it loses a deadlock."""

        async def once() -> T:
            async with self.transaction() as tx:
                return await work(tx)

        return await self._retrying(once, "transaction")

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """A raw connection, for LISTEN and session-level work only."""
        if isinstance(self._executor, asyncpg.Connection):
            yield self._executor
            return
        async with self._executor.acquire() as conn:
            yield conn
