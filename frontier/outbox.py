"""The sinks' outbox: how the optional sinks of FRONTIER_SINKS get every document
(docs/outputs.md, "Several sinks"; the table `sink_outbox`, migration 0042, SQL in
frontier/sql/sink_outbox.sql).

- The rows of the documents fetched (`OutboxWrites`) are written with the completion of
  their URLs (frontier.queue.QueueRepository.complete's `outbox`): in its statement on a
  single server (queue.sql's `complete_enqueue`), in its transaction on Citus. A document
  is fetched and waits for each optional sink in one commit, so a process that dies loses
  nothing. Deletions are put there by frontier.sinks.several.SinkSet as the required sinks
  delete.
- `OutboxDelivery` runs in each fetcher process beside its fetch loop: per optional sink,
  it claims due rows (FOR UPDATE SKIP LOCKED, leased for FRONTIER_OUTBOX_LEASE_S: several
  fetchers share the work and a dead one's rows come back when its lease runs out; a full
  batch at a time, else what gathered for GATHER_S since the last claim), hands
  them to the sink, deletes the rows it took, and puts back those it could not take with
  exponential backoff and jitter (FRONTIER_OUTBOX_RETRY_S doubling up to
  FRONTIER_OUTBOX_RETRY_MAX_S, per row by its attempts). A sink that fails pauses its own
  loop the same way, so a sink down for an hour costs a few attempts, and never the fetch.
- A row holds the document's payload (frontier.sinks.payload.document_payload, as JSON
  text), except when the PostgreSQL sink is required (frontier.sinks.configured's
  `outbox_payloads`): raw_content has the document, so the row holds its key alone and
  the delivery reads a batch's documents from there in one statement (`_prepared`).
- Each row has an idempotency key (frontier.sinks.payload.delivery_key), unique per sink:
  a version is enqueued once, and delivered again only when a delivery's answer was lost,
  under the same key (the webhook's `webhook-id`), so the sink can tell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from frontier.backoff import retry_delay
from frontier.db import Database
from frontier.settings import Settings
from frontier.sinks import DocumentRejected, RawDocument, Sink
from frontier.sinks.payload import (
    Prepared,
    PreparedWrites,
    delivery_key,
    document_from_payload,
    document_payload,
    fields_payload,
)
from frontier.sinks.postgres import PostgresSink, document_of
from frontier.sql import load

SQL = load("sink_outbox")
log = logging.getLogger(__name__)

WRITE, DELETE = "write", "delete"
BATCH = 100  # rows claimed at once per sink
IDLE_S = 1.0  # how long a sink's loop waits when nothing was due
# How long a sink's loop lets rows gather after a claim that was not a full batch: the
# fetch enqueues a few documents at a time, and a loop that claimed again at once would
# deliver them a few at a time (a claim, a delivery and a deletion, each a commit, and a
# webhook batch, every few documents), on the event loop the fetch runs on.
GATHER_S = 0.25
JITTER = 0.25


@dataclass(frozen=True, slots=True)
class OutboxPolicy:
    retry_s: float = 5.0
    retry_max_s: float = 3600.0
    lease_s: float = 120.0
    batch: int = BATCH

    @classmethod
    def from_settings(cls, settings: Settings) -> OutboxPolicy:
        return cls(settings.outbox_retry_s, settings.outbox_retry_max_s, settings.outbox_lease_s)


@dataclass(frozen=True, slots=True)
class SinkBacklog:
    """One sink's line of `frontier sinks status`."""

    sink: str
    backlog: int
    oldest_at: datetime | None
    rejected: int
    last_error: str | None
    last_error_at: datetime | None

    def as_json(self, now: datetime) -> dict[str, Any]:
        return {
            "sink": self.sink,
            "backlog": self.backlog,
            "oldest_pending_s": (
                round((now - self.oldest_at).total_seconds(), 1) if self.oldest_at else None
            ),
            "rejected": self.rejected,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at.isoformat() if self.last_error_at else None,
        }


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    key: str
    url_hash: str
    op: str
    payload: str | None
    attempts: int


Row = tuple[str, str, str, str, str | None]  # sink, key, url_hash, op, payload


@dataclass(frozen=True, slots=True)
class OutboxWrites:
    """The outbox rows of documents to write to the optional sinks: those of a batch of
    pages fetched, written with the completion of their URLs
    (frontier.queue.QueueRepository.complete), the rows of the URLs it completes only."""

    rows: tuple[Row, ...]

    @classmethod
    def of(
        cls, sinks: Sequence[str], documents: Iterable[RawDocument], *, with_payload: bool = True
    ) -> OutboxWrites:
        """Each document to write to each sink. `with_payload` False: the rows hold no
        copy of the document, which the delivery reads from raw_content (the PostgreSQL
        sink is required: it has stored the document before the completion)."""
        return cls(
            tuple(
                (sink, delivery_key(d.url_hash, d.content_hash), d.url_hash, WRITE, text)
                for d in documents
                for text in ((json.dumps(document_payload(d)) if with_payload else None),)
                for sink in sinks
            )
        )

    def of_urls(self, url_hashes: Collection[str]) -> OutboxWrites:
        """The rows of these URLs only."""
        return OutboxWrites(tuple(r for r in self.rows if r[2] in url_hashes))

    def columns(self) -> list[list[Any]]:
        """The rows as sink_outbox.sql's `enqueue` takes them: five parallel arrays."""
        return [list(column) for column in zip(*self.rows, strict=True)] or [[]] * 5


class OutboxRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def enqueue_documents(
        self, sinks: Sequence[str], documents: Iterable[RawDocument], *, with_payload: bool = True
    ) -> None:
        """Each document to write to each sink, now (`OutboxWrites.of`; the fetch's are
        written with their completion instead)."""
        await self.enqueue(OutboxWrites.of(sinks, documents, with_payload=with_payload))

    async def enqueue(self, writes: OutboxWrites) -> None:
        if writes.rows:
            await self._db.execute(SQL["enqueue"], *writes.columns())

    async def stored(self, url_hashes: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The documents raw_content holds for these URLs (the payload-less rows'), as
        read (frontier.sinks.postgres.PostgresSink.stored)."""
        return await PostgresSink(self._db).stored(url_hashes)

    async def enqueue_deletes(self, sinks: Sequence[str], url_hashes: Iterable[str]) -> None:
        rows = [(s, delivery_key(h, None), h, DELETE, None) for h in url_hashes for s in sinks]
        await self.enqueue(OutboxWrites(tuple(rows)))

    async def claim(
        self, sink: str, worker: str, limit: int, lease_s: float, now: datetime | None = None
    ) -> list[OutboxRow]:
        records = await self._db.fetch(SQL["claim"], sink, worker, limit, now, lease_s)
        return sorted((OutboxRow(**dict(r)) for r in records), key=lambda r: r.id)

    async def delivered(self, ids: Sequence[int], worker: str) -> None:
        if ids:
            await self._db.execute(SQL["delivered"], list(ids), worker)

    async def failed(
        self, ids: Sequence[int], worker: str, retry_at: datetime, error: str, now: datetime | None
    ) -> None:
        if ids:
            await self._db.execute(SQL["failed"], list(ids), worker, retry_at, error[:2000], now)

    async def rejected(self, reasons: Mapping[int, str], worker: str) -> None:
        if reasons:
            ids = list(reasons)
            await self._db.execute(SQL["rejected"], ids, worker, [reasons[i][:2000] for i in ids])

    async def status(self) -> list[SinkBacklog]:
        return [SinkBacklog(**dict(r)) for r in await self._db.fetch(SQL["status"])]


Opener = Callable[[], Awaitable[Sink]]


# A write row without a payload (`OutboxWrites.of(with_payload=False)`) is delivered as
# the document raw_content holds now, `stored`, its payload built from the row as read
# (`fields_payload`, what the enqueue's `document_payload` builds too), so
# the sink gets the same bytes:
# - raw_content holds a newer version (a later fetch): that one is delivered, under its
#   own idempotency key (the key names the content delivered; the newer version's own
#   row, delivered under the same key, is then a repeat the sink can tell);
# - raw_content holds no document for the URL any more (deleted since: the deletion has
#   a row of its own, after this one): nothing is delivered for this row, and it goes as
#   delivered (None), not tried again forever.
def _prepared(row: OutboxRow, stored: Mapping[str, Any] | None) -> Prepared | None:
    if row.payload is not None:
        return Prepared(row.url_hash, row.key, row.payload)
    if stored is None:
        return None
    key = delivery_key(stored["url_hash"], stored["content_hash"])
    return Prepared(row.url_hash, key, json.dumps(fields_payload(stored)))


def _document(row: OutboxRow, stored: Mapping[str, Any] | None) -> RawDocument | None:
    if row.payload is None:
        return None if stored is None else document_of(stored)
    return document_from_payload(json.loads(row.payload))


class OutboxDelivery:
    """Delivers the outbox's rows to the optional sinks (`openers`: how to open each, by
    name), a loop per sink (`run`), or one claim at a time (`deliver_once`, for tests)."""

    def __init__(
        self,
        outbox: OutboxRepository,
        openers: Mapping[str, Opener],
        worker_id: str,
        policy: OutboxPolicy,
        *,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.outbox = outbox
        self.openers = dict(openers)
        self.worker_id = worker_id
        self.policy = policy
        self.rand = rand
        self.sinks: dict[str, Sink] = {}
        self.failures: dict[str, int] = dict.fromkeys(openers, 0)  # in a row, per sink

    def pause_s(self, name: str) -> float:
        """How long the sink's loop waits before its next claim: none while it works."""
        failures = self.failures[name]
        if not failures:
            return 0.0
        return self._delay(failures)

    def _delay(self, attempt: int) -> float:
        return retry_delay(
            attempt,
            base_s=self.policy.retry_s,
            cap_s=self.policy.retry_max_s,
            jitter=JITTER,
            rand=self.rand,
        )

    async def deliver_once(self, name: str, now: datetime | None = None) -> int:
        """Claim the sink's due rows (up to a batch) and deliver them; returns how many
        were claimed. A sink that cannot be opened or take them: the rows wait."""
        rows = await self.outbox.claim(
            name, self.worker_id, self.policy.batch, self.policy.lease_s, now
        )
        if not rows:
            return 0
        try:
            sink = await self._sink(name)
            rejected = await self._hand_over(sink, rows)
        except Exception as exc:  # SinkUnavailable, or a sink's bug: the rows wait
            self.failures[name] += 1
            at = now or datetime.now(UTC)
            attempts = max(r.attempts for r in rows) + 1
            retry_at = at + timedelta(seconds=self._delay(attempts))
            log.warning(
                "sink %s: %d documents not delivered (%s); tried again from %s",
                name,
                len(rows),
                exc,
                retry_at.isoformat(timespec="seconds"),
            )
            await self.outbox.failed([r.id for r in rows], self.worker_id, retry_at, f"{exc}", now)
            return len(rows)
        self.failures[name] = 0
        await self.outbox.rejected(rejected, self.worker_id)
        await self.outbox.delivered([r.id for r in rows if r.id not in rejected], self.worker_id)
        return len(rows)

    async def _sink(self, name: str) -> Sink:
        if name not in self.sinks:
            self.sinks[name] = await self.openers[name]()
        return self.sinks[name]

    async def _hand_over(self, sink: Sink, rows: list[OutboxRow]) -> dict[int, str]:
        """Deliver the rows (writes, then deletions); returns the reasons of the rows the
        sink refused for good, by id. A sink with `write_prepared` (PreparedWrites) gets
        the payloads' JSON as stored; any other the documents rebuilt from them. The
        documents of rows without a payload are read from raw_content, one statement a
        batch (`_prepared`, `_document`)."""
        rejected: dict[int, str] = {}
        last = {r.url_hash: r for r in sorted(rows, key=lambda r: r.id)}  # a URL's last op
        writes = {h: r for h, r in last.items() if r.op == WRITE}
        stored = await self.outbox.stored([h for h, r in writes.items() if r.payload is None])
        try:
            if isinstance(sink, PreparedWrites):
                await sink.write_prepared(
                    [p for h, r in writes.items() if (p := _prepared(r, stored.get(h)))]
                )
            else:
                documents = []
                for url_hash, row in list(writes.items()):
                    try:
                        if (document := _document(row, stored.get(url_hash))) is not None:
                            documents.append(document)
                    except (ValueError, TypeError, KeyError) as exc:
                        rejected[row.id] = f"unreadable payload: {type(exc).__name__}: {exc}"
                        del writes[url_hash]
                await sink.write(documents)
        except DocumentRejected as exc:
            for url_hash, reason in exc.reasons.items():
                if url_hash in writes:
                    rejected[writes[url_hash].id] = reason
        deletes = sorted(h for h, r in last.items() if r.op == DELETE)
        if deletes:
            await sink.delete(deletes)
        return rejected

    async def drain(self, now: datetime | None = None) -> int:
        """Deliver what is due now to every sink until nothing is (rows put back by a
        failure are not due again at once). Returns the rows claimed."""
        total = 0
        for name in self.openers:
            while n := await self.deliver_once(name, now):
                total += n
                if self.failures[name]:
                    break
        return total

    async def run(self, stop: asyncio.Event) -> None:
        """A loop per sink until `stop` is set."""
        await asyncio.gather(*(self._loop(name, stop) for name in self.openers))

    async def _loop(self, name: str, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                claimed = await self.deliver_once(name)
            except Exception as exc:  # the database: the outbox waits for it
                log.error("sink %s: the outbox could not be read (%s)", name, exc)
                self.failures[name] += 1
                claimed = 0
            wait = self.pause_s(name) if self.failures[name] else self._gather_s(claimed)
            if wait:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=wait)

    def _gather_s(self, claimed: int) -> float:
        """How long a working sink's loop waits after claiming `claimed` rows: none after
        a full batch (more are due), GATHER_S after a partial one, IDLE_S after none."""
        if claimed >= self.policy.batch:
            return 0.0
        return GATHER_S if claimed else IDLE_S

    async def close(self) -> None:
        for sink in self.sinks.values():
            await sink.close()
        self.sinks.clear()
