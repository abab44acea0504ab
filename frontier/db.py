"""The one narrow seam to PostgreSQL: an asyncpg pool behind execute / fetch / fetchrow /
fetchval / copy. Repositories receive a `Database`; nothing else touches a pool.

When the server goes away (restart, crash, network), every operation raises
`DatabaseUnavailable` ("database unavailable at host:port/db: <cause>", the asyncpg or
socket error chained as its cause) instead of whichever of a dozen asyncpg/OS exceptions
it met, and marks the process's `Outage` (`db.outage`), which logs one line when a caller
reports the outage and one when the database answers again. The pool reconnects lazily on
the next acquire; callers wait with `db.outage.backoff()` and try again (see
`frontier.reconnect`). Statements are not retried here: a write whose connection died may
or may not have committed, and only the caller knows whether running it again is safe.

`db.bounded(seconds)` is the same pool whose statements each have a time limit (the API's
reads): asyncpg cancels a statement on the server when its limit passes, and the caller
gets `StatementTimedOut` instead of waiting, and holding a connection, for as long as the
query takes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import asyncpg

from frontier.dsn import describe_dsn, redact
from frontier.errors import DatabaseUnavailable, StatementTimedOut
from frontier.reconnect import (
    RECONNECT_MAX_S,
    Outage,
    describe_cause,
    is_connection_loss,
    quiet_pool_floor,
)
from frontier.sql import load

log = logging.getLogger(__name__)

# What asyncpg raises at a connection: a server that cannot be reached, and one that refuses
# the connection or the login (or a DSN it cannot read); each is DatabaseUnavailable
UNREACHABLE = (OSError, TimeoutError)
REFUSED = (asyncpg.PostgresError, asyncpg.InterfaceError, ValueError)


__all__ = ["Database", "describe_dsn"]

T = TypeVar("T")

# A single statement that lost a deadlock or a serialization race is safe to run again.
_RETRYABLE = (asyncpg.DeadlockDetectedError, asyncpg.SerializationError)
_STATEMENT_ATTEMPTS = 5
_BUCKETS = load("buckets")

# Run on every connection as it opens, and again after a reset. On a Citus node,
# `citus.override_table_visibility` (on by default) adds a call of `relation_is_a_known_shard`
# for every row of every query on pg_class, to hide shards from catalogue listings.
# asyncpg's type introspection, which each new connection runs before its first statement
# with an array parameter (the claim's complete, renew, submit), reads pg_class once per row
# of pg_type it walks, and with the filter took a second's CPU on a coordinator
# (bench/RESULTS.md, 2026-11-28, seventh session). The frontier lists no tables; a server
# without Citus keeps the value as a placeholder. A SET, not a startup parameter: a pooler
# in front of the server (PgBouncer) refuses startup parameters it does not know.
_SESSION_SETTINGS = "SET citus.override_table_visibility = off"


async def _init_connection(conn: asyncpg.Connection) -> None:
    """The session's settings; jsonb values arrive as Python objects and leave as JSON
    text."""
    await conn.execute(_SESSION_SETTINGS)
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


class _StatelessConnection(asyncpg.Connection):
    """A pooled connection released without asyncpg's reset query (advisory unlock, CLOSE
    ALL, UNLISTEN, RESET ALL) unless it was lent for session-level work: statements and
    transactions on the pool leave no session state (advisory locks are transaction-level,
    cursors live in transactions, no SET), and that query was a second round trip for
    every statement. `Database.connection()`, the one way to session-level work (LISTEN),
    marks its connection, which is then reset as asyncpg always did."""

    _session_used = False

    def lent_for_session(self) -> None:
        self._session_used = True

    def get_reset_query(self) -> str:
        if not self._session_used:
            return ""
        self._session_used = False
        return f"{super().get_reset_query()}\n{_SESSION_SETTINGS};"


class Database:
    """Statements run on a pool (each its own transaction) or on one connection inside
    `transaction()`. Single statements on the pool are retried on deadlock."""

    def __init__(
        self,
        executor: asyncpg.Pool | asyncpg.Connection,
        outage: Outage | None = None,
        facts: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> None:
        self._executor = executor
        self.outage = outage or Outage("(unknown)")
        # What the schema is, read once and shared with this pool's transactions: N of
        # frontier/buckets.py, and whether it is distributed (`buckets`, `distributed`).
        self._facts = facts if facts is not None else {}
        self.timeout_s = timeout_s  # each statement's time limit; None: none
        self._dsn: str | None = None  # where `connect` opened the pool, for `spare`

    def bounded(self, timeout_s: float) -> Database:
        """This database (the same pool or connection) with each statement cancelled
        after `timeout_s` seconds, raising `StatementTimedOut`."""
        bounded = Database(self._executor, self.outage, self._facts, timeout_s=timeout_s)
        bounded._dsn = self._dsn
        return bounded

    async def spare(self, *, timeout_s: float) -> Database | None:
        """A pool of one connection of its own to the same database, bounded by
        `timeout_s` (connecting and each statement): for a probe that must not wait
        behind this pool's work (the API's /healthz). None when this database was not
        opened by `connect`."""
        if self._dsn is None:
            return None
        spare = await Database.connect(self._dsn, min_size=0, max_size=1, timeout=timeout_s)
        return spare.bounded(timeout_s)

    async def buckets(self) -> int:
        """How many buckets the hosts are spread over (`frontier_buckets`), read once: it
        changes only with every writer stopped (deploy/README.md)."""
        return await self._fact("count")

    async def distributed(self) -> bool:
        """Whether the schema is distributed over a Citus cluster (the database has the
        citus extension: migration 0018 distributed it), read once."""
        return await self._fact("distributed")

    async def _fact(self, name: str) -> Any:
        if name not in self._facts:
            self._facts[name] = await self.fetchval(_BUCKETS[name])
        return self._facts[name]

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        reconnect_max_s: float = RECONNECT_MAX_S,
    ) -> Database:
        where = describe_dsn(dsn)
        quiet_pool_floor()
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                timeout=timeout,
                command_timeout=None,
                init=_init_connection,
                connection_class=_StatelessConnection,
            )
        except UNREACHABLE as exc:
            cause = redact(str(exc), dsn)
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {cause}") from None
        except REFUSED as exc:
            cause = redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, dsn)
            raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {cause}") from None
        db = cls(pool, Outage(where, cap_s=reconnect_max_s))
        db._dsn = dsn
        return db

    async def close(self) -> None:
        if isinstance(self._executor, asyncpg.Pool):
            await self._executor.close()

    def unavailable(self, exc: BaseException) -> DatabaseUnavailable:
        """`exc` (a connection loss) as the one retryable error; marks the outage."""
        self.outage.lost()
        error = DatabaseUnavailable(
            f"database unavailable at {self.outage.where}: {describe_cause(exc)}"
        )
        error.__cause__ = exc
        return error

    async def _watched(self, once: Callable[[], Awaitable[T]]) -> T:
        """Run `once`; a connection loss leaves as `DatabaseUnavailable`, and a success
        tells the outage tracker the database is back."""
        started = self.outage.started()
        try:
            result = await once()
        except DatabaseUnavailable:  # translated inside (a transaction's statement)
            self.outage.lost()
            raise
        except Exception as exc:
            if self.timeout_s is not None and isinstance(
                exc, (TimeoutError, asyncpg.QueryCanceledError)
            ):
                raise StatementTimedOut(
                    f"the query ran longer than its limit of {self.timeout_s:g} s and was "
                    f"cancelled: it is too expensive; narrow it"
                ) from exc
            if is_connection_loss(exc):
                raise self.unavailable(exc) from exc
            raise
        self.outage.ok(started)
        return result

    async def _retrying(self, once: Callable[[], Awaitable[T]], what: str) -> T:
        """Run `once` again if it loses a deadlock; only outside an enclosing transaction."""
        for attempt in range(1, _STATEMENT_ATTEMPTS + 1):
            try:
                return await self._watched(once)
            except _RETRYABLE:
                if isinstance(self._executor, asyncpg.Connection) or attempt == _STATEMENT_ATTEMPTS:
                    raise
                log.info("%s lost a lock race; retrying (attempt %d)", what, attempt)
                await asyncio.sleep(0.01 * attempt)
        raise AssertionError("unreachable")

    async def _run(self, method: str, query: str, args: Sequence[Any]) -> Any:
        return await self._retrying(
            lambda: getattr(self._executor, method)(query, *args, timeout=self.timeout_s),
            "statement",
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

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """A `Database` bound to one connection inside one transaction."""
        if isinstance(self._executor, asyncpg.Connection):
            async with self._executor.transaction():
                yield self
            return
        # Acquire, BEGIN, COMMIT and ROLLBACK may meet a dead server too; the body's own
        # errors pass through untouched (its statements already translate theirs).
        from_body: BaseException | None = None
        started = self.outage.started()
        try:
            async with self._executor.acquire() as conn, conn.transaction():
                try:
                    yield Database(conn, self.outage, self._facts, timeout_s=self.timeout_s)
                except BaseException as exc:
                    from_body = exc
                    raise
        except Exception as exc:
            if exc is not from_body and is_connection_loss(exc):
                raise self.unavailable(exc) from exc
            raise
        self.outage.ok(started)

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
        try:
            conn = await self._executor.acquire()
        except Exception as exc:
            if is_connection_loss(exc):
                raise self.unavailable(exc) from exc
            raise
        conn.lent_for_session()  # reset when released (the proxy passes the call on)
        try:
            yield conn
        finally:
            await self._executor.release(conn)
