"""The fetch log: one row per poll or fetch attempt, written in batches and pruned on a
retention setting. SQL is in `frontier/sql/fetch_log.sql`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from frontier.clock import utcnow
from frontier.db import Database
from frontier.sql import load
from frontier.states import FetchKind, LogOutcome

SQL = load("fetch_log")

MAX_ERROR_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class LogEntry:
    kind: FetchKind
    source_id: UUID | None
    url: str
    outcome: LogOutcome
    http_status: int | None = None
    items_seen: int | None = None
    items_new: int | None = None
    elapsed_ms: int | None = None  # excluding time spent waiting in a queue
    error: str | None = None
    at: datetime | None = None  # None: the database's now()


LOG_FIELDS = tuple(f.name for f in fields(LogEntry))


class FetchLogRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, entries: Sequence[LogEntry]) -> None:
        if not entries:
            return
        # A shallow tuple per entry: `astuple` deep-copies every field (plain values
        # here), which showed in the fetch process's profile.
        rows = [tuple(getattr(entry, name) for name in LOG_FIELDS) for entry in entries]
        columns = [list(column) for column in zip(*rows, strict=True)]
        columns[0] = [str(kind) for kind in columns[0]]
        columns[3] = [str(outcome) for outcome in columns[3]]
        columns[8] = [e[:MAX_ERROR_CHARS] if e else e for e in columns[8]]
        await self._db.execute(SQL["insert_many"], *columns)

    async def recent(
        self,
        limit: int = 50,
        *,
        before_id: int | None = None,
        kind: FetchKind | None = None,
        source_id: UUID | None = None,
    ) -> list[dict[str, Any]]:
        records = await self._db.fetch(
            SQL["recent"], limit, before_id, str(kind) if kind else None, source_id
        )
        return [dict(record) for record in records]

    async def prune(
        self, retention: timedelta, *, now: datetime | None = None, batch: int = 10_000
    ) -> int:
        """Delete rows older than `retention`; returns how many went."""
        cutoff = (now or utcnow()) - retention
        deleted = 0
        while True:
            status = await self._db.execute(SQL["prune"], cutoff, batch)
            count = int(status.split()[-1])
            deleted += count
            if count < batch:
                return deleted
