"""Riding out a PostgreSQL restart: which errors mean "the database went away", how long a
loop waits before it tries again, and the two lines an outage leaves in the log.

- `is_connection_loss(exc)`: the server is down, restarting or dropped our connection
  (retryable), as opposed to a statement that failed on its own (a bug or bad data).
- `Backoff`: one per loop; capped exponential delays with jitter
  (`frontier.backoff.retry_delay`), reset by the first success.
- `Outage`: one per process, held by its `frontier.db.Database`: logs ONE line when the
  database becomes unavailable ("database unavailable at host:port/db: <cause>; retrying
  in 2.0 s") and ONE when a statement started after that succeeds ("database reachable
  again after 7.4 s"), however many loops and requests hit the outage meanwhile.

asyncpg's pool reconnects lazily: a connection the server closed is replaced on the next
acquire, so waiting and trying again is all a caller has to do.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from frontier.backoff import retry_delay
from frontier.errors import DatabaseUnavailable

log = logging.getLogger("frontier.db")

T = TypeVar("T")

RECONNECT_BASE_S = 0.5  # the first retry after a connection loss
RECONNECT_MAX_S = 30.0  # default cap (FRONTIER_DB_RECONNECT_MAX_S)

# Server-side reasons the connection is gone or cannot be had yet: the server is shutting
# down (57P01 admin_shutdown, 57P02 crash_shutdown), starting up or shutting down
# (57P03 cannot_connect_now), full (53300 too_many_connections), or the connection failed
# (class 08, which includes asyncpg's ConnectionDoesNotExistError).
_SERVER_LOSS = (
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
)


def is_connection_loss(exc: BaseException) -> bool:
    """True if `exc` means PostgreSQL is unreachable or dropped the connection: socket
    errors (refused, reset, no such socket file, connect timeout), the server's shutdown
    and start-up refusals, and asyncpg's "connection is closed". A statement error
    (syntax, constraint, deadlock) is not one."""
    if isinstance(exc, (DatabaseUnavailable, OSError, *_SERVER_LOSS)):
        return True  # OSError covers ConnectionRefused/Reset, FileNotFound and TimeoutError
    # asyncpg raises a bare InterfaceError on a connection it already saw die; its message
    # is the only thing telling it from misuse (e.g. "another operation is in progress").
    if isinstance(exc, asyncpg.InterfaceError):
        return "connection is closed" in str(exc)
    # A pooled connection whose backend was terminated while idle can be handed out after
    # asyncpg read the server's FATAL message but before it saw the socket close; the next
    # statement then fails with "cannot switch to state 11; another operation (2) is in
    # progress" (2 is asyncpg's "consuming a server error" state) or a "failed" protocol
    # state (asyncpg issues #784, #1069). The connection is dead; the pool replaces it.
    return isinstance(exc, asyncpg.InternalClientError) and str(exc).startswith(
        "cannot switch to state"
    )


def describe_cause(exc: BaseException) -> str:
    """The first line of an error's message, or its type when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PoolFloorFilter(logging.Filter):
    """asyncpg's pool reconnects its `min_size` floor in the background and logs a
    warning with a traceback on every failed try; while the database is down that is a
    traceback flood saying what the one "database unavailable" line already says. This
    drops those records when their cause is a connection loss (others pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (
            record.getMessage().startswith("Failed to restore the pool connection")
            and error is not None
            and is_connection_loss(error)
        )


POOL_FLOOR_FILTER = PoolFloorFilter()  # stateless; adding it twice is a no-op


def quiet_pool_floor() -> None:
    """Install `PoolFloorFilter` on asyncpg's pool logger (idempotent)."""
    logging.getLogger("asyncpg.pool").addFilter(POOL_FLOOR_FILTER)


@dataclass(slots=True)
class Backoff:
    """Delays for one loop's successive retries: base, 2x base, 4x base ... up to `cap_s`,
    each +-20% so processes that lost the database together do not return in lockstep."""

    cap_s: float = RECONNECT_MAX_S
    base_s: float = RECONNECT_BASE_S
    rand: Callable[[], float] = random.random
    attempts: int = 0

    def next_delay(self) -> float:
        """Count one more failure; the seconds to wait before the next try."""
        self.attempts += 1
        return retry_delay(
            self.attempts, base_s=min(self.base_s, self.cap_s), cap_s=self.cap_s, rand=self.rand
        )

    def reset(self) -> None:
        self.attempts = 0


@dataclass(slots=True)
class Outage:
    """Whether this process currently sees the database as down, and the log lines that
    mark the change. `lost()` and `ok()` are called by `Database` on every failing or
    succeeding statement; `report()` by whoever decides what to do about it (a loop that
    will retry, the API answering 503)."""

    where: str
    cap_s: float = RECONNECT_MAX_S
    clock: Callable[[], float] = time.monotonic
    down_since: float | None = None
    reported: bool = False
    outages: int = 0

    def backoff(self) -> Backoff:
        """A fresh backoff for one loop, capped at this process's reconnect maximum."""
        return Backoff(cap_s=self.cap_s)

    def started(self) -> float:
        """The clock reading to pass to `ok()` once the operation started now succeeds."""
        return self.clock()

    def lost(self) -> None:
        if self.down_since is None:
            self.down_since = self.clock()
            self.reported = False
            self.outages += 1

    def report(self, exc: BaseException, retry_in_s: float | None) -> None:
        """Log the outage once: the first report after the database went away.
        `retry_in_s` None: the caller does not retry on its own (the API)."""
        self.lost()
        if self.reported:
            return
        self.reported = True
        then = (
            f"retrying in {retry_in_s:.1f} s"
            if retry_in_s is not None
            else "answering 503 until it is back"
        )
        cause = describe_cause(exc.__cause__ if exc.__cause__ is not None else exc)
        log.warning("database unavailable at %s: %s; %s", self.where, cause, then)

    def ok(self, started: float) -> None:
        """An operation that began at `started` succeeded. Only one begun after the outage
        was noticed proves the database is back (an older one may have slipped through)."""
        if self.down_since is not None and started >= self.down_since:
            log.warning("database reachable again after %.1f s", self.clock() - self.down_since)
            self.down_since = None
            self.reported = False

    async def ride_out(self, step: Callable[[], Awaitable[T]], patience_s: float) -> T:
        """Run `step`; while it raises `DatabaseUnavailable`, run it again with backoff for
        up to `patience_s` from the first failure, then let the last error through. Only for
        steps that are safe to repeat."""
        backoff = self.backoff()
        give_up_at: float | None = None
        while True:
            try:
                return await step()
            except DatabaseUnavailable as exc:
                now = self.clock()
                if give_up_at is None:
                    give_up_at = now + patience_s
                delay = backoff.next_delay()
                if now + delay > give_up_at:
                    raise
                self.report(exc, delay)
                await asyncio.sleep(delay)

    @property
    def down(self) -> bool:
        return self.down_since is not None
