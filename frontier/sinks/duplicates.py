"""Which URL keeps a document: the reservations of `document_keys` (docs/duplicates.md).

A document to store reserves its keys: its content hash, and when its page names a
trusted canonical (itself included), that canonical's identity. One statement decides
each key for every fetch process at once (SQL in `frontier/sql/document_keys.sql`): the
URL that reserves a key held by another either is the preferred one and takes it over,
or is a duplicate of the holder. The table lives in the frontier database, so it holds
whichever sink stores the documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from frontier.db import Database
from frontier.sql import load

SQL = load("document_keys")


class KeyKind(StrEnum):
    CONTENT = "content"  # a content_hash
    CANONICAL = "canonical"  # the url_hash of a canonical URL


@dataclass(frozen=True, slots=True)
class Reservation:
    """One key a URL asks to hold."""

    key: str
    kind: KeyKind
    url_hash: str
    url: str
    host: str
    canonical_claimed: str | None  # the canonical the URL's page named (itself included)
    own_host: bool  # the URL is on its source's own site
    published_at: datetime | None


@dataclass(frozen=True, slots=True)
class Holder:
    url_hash: str
    url: str


@dataclass(frozen=True, slots=True)
class TakenOver:
    """A key taken from `url_hash` (whose document the new holder replaces)."""

    key: str
    kind: KeyKind
    url_hash: str
    url: str
    host: str


@dataclass(slots=True)
class Decision:
    holders: dict[tuple[str, KeyKind], Holder]  # (key, kind) -> who holds it now
    taken_over: list[TakenOver]


class DuplicateContent:
    """Reserving and releasing document keys."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def reserve(self, reservations: Sequence[Reservation]) -> Decision:
        """Reserve every key in one transaction: in rounds, so that the URLs of one batch
        asking for the same key meet through the same statement as those of other
        processes. Returns who holds each key now and the keys taken over."""
        rounds: list[list[Reservation]] = []
        for r in reservations:  # the n-th URL asking for a key goes in round n
            placed = next(
                (g for g in rounds if all((x.key, x.kind) != (r.key, r.kind) for x in g)), None
            )
            if placed is None:
                rounds.append([r])
            else:
                placed.append(r)

        async def work(tx: Database) -> Decision:
            taken: dict[tuple[str, KeyKind, str], TakenOver] = {}
            for group in rounds:
                group = sorted(group, key=lambda x: (x.key, x.kind))
                records = await tx.fetch(
                    SQL["reserve"],
                    *(
                        [getattr(x, name) for x in group]
                        for name in (
                            "key",
                            "kind",
                            "url_hash",
                            "url",
                            "host",
                            "canonical_claimed",
                            "own_host",
                            "published_at",
                        )
                    ),
                )
                for rec in records:
                    if rec["previous_url_hash"] is not None:
                        kind = KeyKind(rec["kind"])
                        taken[(rec["key"], kind, rec["previous_url_hash"])] = TakenOver(
                            rec["key"],
                            kind,
                            rec["previous_url_hash"],
                            rec["previous_url"],
                            rec["previous_host"],
                        )
            keys = sorted({(r.key, r.kind) for r in reservations})
            records = await tx.fetch(SQL["holders"], [k for k, _ in keys], [k for _, k in keys])
            holders = {
                (rec["key"], KeyKind(rec["kind"])): Holder(rec["url_hash"], rec["url"])
                for rec in records
            }
            return Decision(holders, list(taken.values()))

        if not reservations:
            return Decision({}, [])
        return await self._db.run_transaction(work)

    async def release(self, keys: Sequence[tuple[str, KeyKind, str]]) -> None:
        """Give up keys (key, kind, url_hash of the holder) whose document was not stored."""
        if keys:
            await self._db.execute(SQL["release"], *map(list, zip(*keys, strict=True)))

    async def relinked(self, keys: Sequence[tuple[str, KeyKind, str]]) -> None:
        """The previous holders of these keys (key, kind, url_hash of the holder now)
        are relinked: forget them."""
        if keys:
            await self._db.execute(SQL["relinked"], *map(list, zip(*keys, strict=True)))

    async def forget(self, url_hashes: Sequence[str]) -> None:
        """These URLs hold no document any more: their keys go."""
        if url_hashes:
            await self._db.execute(SQL["forget"], sorted(set(url_hashes)))

    async def forget_stale_content(self, stored: Sequence[tuple[str, str]]) -> None:
        """(url_hash, content_hash) of documents just stored: the URLs' keys for an
        earlier text go."""
        if stored:
            await self._db.execute(
                SQL["forget_stale_content"], *map(list, zip(*stored, strict=True))
            )
