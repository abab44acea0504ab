"""Acting on failures: requeue or purge the failed and dead URLs a filter selects (status,
dead reason, host, source, age), for `frontier urls requeue|purge` and
`POST /api/v1/urls/requeue|purge`. Asked by name (`--status fetched`), requeue also takes
fetched URLs: the documented way to fetch a page again whose stored document is wrong or
stale (their validators are dropped, so the server sends the page, not 304).

A filter may name one URL (`--url`): what `url show` advises to fetch a fetched URL again.
`parse_filter` checks what an operator asked for (pure: the CLI and the API share its
messages). `UrlActions` walks the matching URLs bucket by bucket in batches by url_hash
(frontier/sql/url_actions.sql `matching`), and each batch is requeued (queue.sql
`requeue`, which also keeps the hosts' pending summaries) or deleted (`purge`) in its own
statement: a set of millions never holds one giant lock, and each batch re-checks the
status of its rows, so a URL that a fetcher or another operator changed meanwhile is left
alone. A dry run walks the same batches without changing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from frontier.db import Database
from frontier.durations import EXAMPLES, seconds_of
from frontier.errors import FrontierError
from frontier.queue import QueueRepository
from frontier.queue_values import ACTIONABLE
from frontier.sources import SourceRepository
from frontier.sql import load
from frontier.states import DeadReason, UrlStatus
from frontier.urls import InvalidURL, host_key, normalize_url, url_hash

SQL = load("url_actions")

BATCH = 1000  # URLs per statement
SAMPLE = 20  # URLs listed in an answer


class BadUrlFilter(FrontierError, ValueError):
    """A requeue or purge filter that cannot be used; the message says which and why."""


@dataclass(frozen=True, slots=True)
class UrlFilter:
    """Which failed and dead (or, to requeue, fetched) URLs an action applies to (None:
    any)."""

    statuses: tuple[str, ...] = tuple(ACTIONABLE)
    dead_reason: str | None = None
    host: str | None = None
    source: str | None = None  # a source name, resolved to its id by the caller's database
    changed_before: datetime | None = None
    url_hash: str | None = None  # one URL


def parse_filter(
    *,
    status: str | None = None,
    reason: str | None = None,
    host: str | None = None,
    source: str | None = None,
    older_than: str | None = None,
    url: str | None = None,
    now: datetime,
    action: str = "requeue",
) -> UrlFilter:
    """The filter an operator asked for `action` (requeue or purge), or BadUrlFilter naming
    the option and why. Fetched URLs are requeued only when asked for by status."""
    statuses: tuple[str, ...] = tuple(ACTIONABLE)
    if status is not None:
        if status == UrlStatus.PENDING:
            raise BadUrlFilter("status: pending URLs are already queued")
        if status == UrlStatus.FETCHING:
            raise BadUrlFilter(
                "status: fetching URLs are leased to a fetcher; the reaper returns them "
                "when the lease expires"
            )
        if status == UrlStatus.FETCHED and action != "requeue":
            raise BadUrlFilter(
                "status: fetched URLs are not purged; `requeue --status fetched` fetches them again"
            )
        if status not in (*ACTIONABLE, UrlStatus.FETCHED):
            raise BadUrlFilter(f"status: {status[:40]!r} is not one of failed, dead, fetched")
        statuses = (status,)
    if reason is not None:
        if reason not in DeadReason.__members__.values():
            known = ", ".join(DeadReason)
            raise BadUrlFilter(f"reason: {reason[:40]!r} is not a dead reason ({known})")
        if statuses in ((UrlStatus.FAILED,), (UrlStatus.FETCHED,)):
            raise BadUrlFilter(f"reason: {statuses[0]} URLs have no dead reason; use --status dead")
        statuses = (UrlStatus.DEAD,)
    changed_before = None
    if older_than is not None:
        seconds = seconds_of(older_than)
        if seconds is None:
            raise BadUrlFilter(f"older_than: {older_than[:40]!r} is not a duration ({EXAMPLES})")
        changed_before = now - timedelta(seconds=seconds)
    key = None
    if host is not None:
        try:
            key = host_key(host)
        except InvalidURL as exc:
            raise BadUrlFilter(f"host: {host[:80]!r} is not a host name ({exc.reason})") from None
    digest = None
    if url is not None:
        try:
            digest = url_hash(normalize_url(url))
        except InvalidURL as exc:
            raise BadUrlFilter(f"url: {url[:80]!r} is not a URL ({exc.reason})") from None
    return UrlFilter(statuses, reason, key, source, changed_before, digest)


@dataclass(slots=True)
class ActionResult:
    """What an action did (or, dry, would do): how many URLs matched, how many changed,
    and the first few of them."""

    action: str  # requeue | purge
    dry_run: bool
    matched: int = 0
    changed: int = 0
    sample: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        done = "requeued" if self.action == "requeue" else "purged"
        return {
            "action": self.action,
            "dry_run": self.dry_run,
            "matched": self.matched,
            done: self.changed,
            "sample": self.sample,
        }


class UrlActions:
    def __init__(self, db: Database, *, batch: int = BATCH, sample: int = SAMPLE) -> None:
        self._db = db
        self._queue = QueueRepository(db)
        self._batch = batch
        self._sample = sample

    async def requeue(
        self, wanted: UrlFilter, *, dry_run: bool = False, now: datetime | None = None
    ) -> ActionResult:
        """Make the matching URLs pending and due now, with their retries, dead reason
        and last error reset (and a fetched one's validators dropped); a fetcher takes
        them like new ones."""

        async def apply(hashes: list[str], bucket: int) -> int:
            return await self._queue.requeue_in_bucket(
                hashes, wanted.statuses, bucket=bucket, now=now
            )

        return await self._walk("requeue", wanted, apply, dry_run=dry_run)

    async def purge(self, wanted: UrlFilter, *, dry_run: bool = False) -> ActionResult:
        """Delete the matching URLs from the frontier (their documents stay in the sink);
        one submitted again later is a new URL."""

        async def apply(hashes: list[str], bucket: int) -> int:
            purged: int = await self._db.fetchval(SQL["purge"], hashes, wanted.statuses, bucket)
            return purged

        return await self._walk("purge", wanted, apply, dry_run=dry_run)

    async def _walk(
        self, action: str, wanted: UrlFilter, apply: Any, *, dry_run: bool
    ) -> ActionResult:
        result = ActionResult(action, dry_run)
        source_id = await self._source_id(wanted.source)
        for bucket in range(await self._db.buckets()):
            after = ""
            while True:
                rows = await self._db.fetch(
                    SQL["matching"],
                    list(wanted.statuses),
                    wanted.dead_reason,
                    wanted.host,
                    source_id,
                    wanted.changed_before,
                    after,
                    self._batch,
                    bucket,
                    wanted.url_hash,
                )
                if not rows:
                    break
                result.matched += len(rows)
                for row in rows[: self._sample - len(result.sample)]:
                    result.sample.append(_shown(row))
                if not dry_run:
                    result.changed += await apply([r["url_hash"] for r in rows], bucket)
                if len(rows) < self._batch:
                    break
                after = rows[-1]["url_hash"]
        return result

    async def _source_id(self, name: str | None) -> UUID | None:
        if name is None:
            return None
        return (await SourceRepository(self._db).get(name)).id


def _shown(row: Any) -> dict[str, Any]:
    return {
        "url": row["url"],
        "status": row["status"],
        "dead_reason": row["dead_reason"],
        "last_error": row["last_error"],
        "updated_at": row["updated_at"].isoformat(),
    }
