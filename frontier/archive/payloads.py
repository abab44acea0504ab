"""`ArchivedPayloads`: the payload digests archived in response records that became
documents (`warc_payloads`, migration 0032), so that a later response with the same
payload is archived as a revisit of the first; and the archive's error counter for
/metrics. SQL in frontier/sql/archive.sql."""

from __future__ import annotations

from collections.abc import Sequence

from frontier.archive.records import Original
from frontier.archive.writer import Archived
from frontier.db import Database
from frontier.sql import load

SQL = load("archive")


class ArchivedPayloads:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def originals(self, digests: Sequence[str]) -> dict[str, Original]:
        if not digests:
            return {}
        rows = await self._db.fetch(SQL["originals"], sorted(set(digests)))
        return {
            r["payload_digest"]: Original(r["record_id"], r["target_uri"], r["warc_date"])
            for r in rows
        }

    async def remember(self, archived: Sequence[Archived]) -> None:
        rows = {
            a.record.payload_digest: a
            for a in archived
            if a.record.kind == "response" and a.record.payload_digest
        }
        if not rows:
            return
        kept = list(rows.values())
        await self._db.execute(
            SQL["remember"],
            [a.record.payload_digest for a in kept],
            [a.record.record_id for a in kept],
            [a.record.target_uri for a in kept],
            [a.record.date for a in kept],
            [a.location.file for a in kept],
            [a.location.offset for a in kept],
            [a.location.length for a in kept],
        )

    async def forget_files(self, files: Sequence[str]) -> None:
        if files:
            await self._db.execute(SQL["forget_files"], list(files))

    async def count_error(self, code: str, n: int = 1) -> None:
        await self._db.execute(SQL["count_error"], code, n)
