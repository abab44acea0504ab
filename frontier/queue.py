"""The frontier queue: submit URLs, claim them host-first with leases, complete them with
one of the fetch outcomes (docs/fetching.md, "Fetch outcomes"), renew leases, and reap expired ones.

All SQL is in `frontier/sql/queue.sql`. Every statement works on a batch. Time-dependent
methods take an optional `now`; without it the database's clock is used, so processes on
several machines agree on time.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import partial
from operator import attrgetter, itemgetter
from typing import Any
from uuid import UUID

import asyncpg

from frontier.backoff import retry_delay
from frontier.buckets import BucketRotation, by_bucket
from frontier.db import Database
from frontier.host_delay import RECOVERY_ANSWERS
from frontier.priority import score
from frontier.settings import Settings
from frontier.sql import load
from frontier.states import Origin, UrlStatus
from frontier.urls import (
    InvalidURL,
    identity_and_spelling,
    normalize_url,
    url_hash,
    url_host,
)

SQL = load("queue")

# The statuses an operator may requeue (or purge): the two that are never fetched again
# on their own.
ACTIONABLE = (UrlStatus.FAILED, UrlStatus.DEAD)

MAX_REDIRECT_HOPS = 5  # a redirect chain longer than this is not followed further
MAX_DISCOVERY_META_BYTES = 16_384  # what a producer may say about one URL


class OutcomeKind(StrEnum):
    """How a claimed URL ended; one per row of docs/fetching.md's outcome table."""

    FETCHED = "fetched"  # 200, stored in the sink
    NOT_MODIFIED = "not_modified"  # 304
    REDIRECT = "redirect"  # 3xx: the target is submitted, the original is dead
    NOT_FOUND = "not_found"  # 404
    GONE = "gone"  # 410
    ROBOTS_BLOCKED = "robots_blocked"  # robots.txt disallows it
    DUPLICATE_CONTENT = "duplicate_content"  # body already indexed under another URL
    UNSUPPORTED_CONTENT = "unsupported_content"  # not HTML, or over the size cap
    BLOCKED_BY_POLICY = "blocked_by_policy"  # the source forbids fetching
    FORBIDDEN = "forbidden"  # 401/403/451: retried once, then dead; 401/403 count as a wall
    RETRY = "retry"  # 5xx, timeout, connection error: retried with backoff, then dead
    RATE_LIMITED = "rate_limited"  # 429/503: host backs off; no attempt counted
    DEFERRED = "deferred"  # not attempted (host not ready, shutting down); no attempt
    FAILED = "failed"  # fetched but could not be stored or processed; needs an operator
    # Not the article (docs/fetching.md, "Is this the article?"): no document.
    CHALLENGE = "challenge"  # a CDN/firewall challenge: a wall for the host; retried, then failed
    LOGIN_REQUIRED = "login_required"  # redirected to a login/subscription page: twice, dead
    NOINDEX = "noindex"  # X-Robots-Tag or meta robots noindex/none: dead at once
    SOFT_404 = "soft_404"  # a 200 that says "not found": twice, dead
    EMPTY = "empty"  # no body text at all: retried once, then failed (never dead)


# The outcomes that count an attempt against the URL and wait before the next one.
ATTEMPTS = frozenset(
    {
        OutcomeKind.RETRY,
        OutcomeKind.FORBIDDEN,
        OutcomeKind.CHALLENGE,
        OutcomeKind.LOGIN_REQUIRED,
        OutcomeKind.SOFT_404,
        OutcomeKind.EMPTY,
    }
)


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    """The queue's knobs, from settings."""

    default_delay_ms: int = 1000
    max_retries: int = 5
    lease_seconds: int = 300
    host_failure_threshold: int = 5  # consecutive failures before the whole host backs off
    forbidden_attempts: int = 2  # 401/403/451 answers before a URL is dead (forbidden)
    wall_threshold: int = 3  # answers in a row that are all 401/403: the host backs off
    host_concurrency: int = 8  # URLs in flight at once on a host without a delay

    @classmethod
    def from_settings(cls, settings: Settings) -> QueuePolicy:
        return cls(
            default_delay_ms=settings.default_delay_ms,
            max_retries=settings.max_retries,
            lease_seconds=settings.lease_seconds,
            host_concurrency=settings.host_concurrency,
        )


def claim_hold(worker_id: str, url_hash: str) -> str:
    """The owner of the hold a claim takes on its host (queue.sql `claim` spells it the
    same): the claim itself, so that another claim of the same worker never ends it."""
    return f"{worker_id}/{url_hash}"


@dataclass(frozen=True, slots=True)
class SourceRef:
    """What submitting needs to know of a source."""

    id: UUID | None
    priority: int = 5
    keep_trailing_slash: bool = False
    rate_limit_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL a producer wants in the frontier, before normalisation.

    `url` is spelt as the producer found it (resolved against `base` when relative): its
    normalised form is the frontier entry's identity, and the spelling itself, minus the
    fragment, is what a new entry requests (`fetch_url`). A producer must not normalise
    it first: a site that serves `/a/` may answer `/a` with a redirect back."""

    url: str
    source: SourceRef
    origin: Origin
    parent_url: str | None = None
    depth: int = 0
    discovery_meta: dict[str, Any] | None = None
    base: str | None = None  # resolve `url` against this
    priority: int | None = None  # overrides the computed priority (redirect targets)


@dataclass(frozen=True, slots=True)
class Rejection:
    index: int  # position in the submitted batch (the caller maps it to a line number)
    url: str
    reason: str


@dataclass(slots=True)
class SubmitResult:
    inserted: int = 0  # new URLs
    raised: int = 0  # known pending URLs whose priority went up
    known: int = 0  # already in the frontier (or repeated within the batch), unchanged
    rejected: list[Rejection] = field(default_factory=list)
    requeued: int = 0  # known failed or dead URLs made pending again (`requeue=True`)

    def __iadd__(self, other: SubmitResult) -> SubmitResult:
        self.inserted += other.inserted
        self.raised += other.raised
        self.known += other.known
        self.requeued += other.requeued
        self.rejected.extend(other.rejected)
        return self


@dataclass(slots=True)
class PreparedBatch:
    """Normalised, deduplicated rows ready for one submit statement."""

    rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # url_hash -> row
    default_delay_ms: int = 1000  # a new host's delay when none of its sources sets one
    repeated: int = 0
    rejected: list[Rejection] = field(default_factory=list)

    def keep(self, row: tuple[Any, ...]) -> None:
        """Add a row; a URL seen before in the batch keeps its higher priority."""
        known = self.rows.get(row[0])
        if known is not None:
            self.repeated += 1
            if known[_ROW_PRIORITY] >= row[_ROW_PRIORITY]:
                return
        self.rows[row[0]] = row

    def leave_out(self, sent: Iterable[Mapping[str, tuple[Any, ...]]]) -> None:
        """Count as repeated, and leave out, the rows whose URL one of the batches `sent`
        (still in the database) holds at a priority as high: the upsert would leave it as
        that batch makes it, after waiting for that batch's transaction to end, which is
        what an import's batches in flight were waiting on (bench/RESULTS.md)."""
        for rows in sent:
            for key in self.rows.keys() & rows.keys():
                if rows[key][_ROW_PRIORITY] >= self.rows[key][_ROW_PRIORITY]:
                    del self.rows[key]
                    self.repeated += 1


def prepare(candidates: Iterable[Candidate], default_delay_ms: int) -> PreparedBatch:
    """Normalise and score candidates; pure CPU work, so callers may overlap it with I/O."""
    batch = PreparedBatch(default_delay_ms=default_delay_ms)
    for index, candidate in enumerate(candidates):
        try:
            row = _row(candidate)
        except InvalidURL as exc:
            batch.rejected.append(Rejection(index, _printable(candidate.url), exc.reason))
            continue
        batch.keep(row)
    return batch


def prepare_urls(
    urls: Iterable[str], source: SourceRef, origin: Origin, default_delay_ms: int
) -> PreparedBatch:
    """`prepare` of bare URLs from one source and origin, at depth 0 with nothing else said
    about them (a bulk import): the same rows, with what they share worked out once, since
    this runs per line of an import of millions."""
    batch = PreparedBatch(default_delay_ms=default_delay_ms)
    keep_slash, source_id, delay = source.keep_trailing_slash, source.id, source.rate_limit_ms
    kind, priority = str(origin), score(source.priority, origin, 0)
    for index, raw in enumerate(urls):
        try:
            url, spelling = identity_and_spelling(raw, keep_trailing_slash=keep_slash)
        except InvalidURL as exc:
            batch.rejected.append(Rejection(index, _printable(raw), exc.reason))
            continue
        batch.keep(_frontier_row(url, spelling, source_id, kind, None, 0, priority, None, delay))
    return batch


def _row(candidate: Candidate) -> tuple[Any, ...]:
    source = candidate.source
    url, spelling = identity_and_spelling(
        candidate.url, candidate.base, keep_trailing_slash=source.keep_trailing_slash
    )
    meta = None
    if candidate.discovery_meta:
        meta = json.dumps(_without_nul(candidate.discovery_meta), default=str, ensure_ascii=False)
        if len(meta) > MAX_DISCOVERY_META_BYTES:
            raise InvalidURL(f"discovery_meta over {MAX_DISCOVERY_META_BYTES} bytes")
    if candidate.depth < 0:
        raise InvalidURL("negative depth")
    priority = candidate.priority or score(source.priority, candidate.origin, candidate.depth)
    return _frontier_row(
        url,
        spelling,
        source.id,
        str(candidate.origin),
        candidate.parent_url,
        candidate.depth,
        priority,
        meta,
        source.rate_limit_ms,
    )


_ROW_PRIORITY = 7  # where `_frontier_row` puts the priority
_ROW_SHARED = 3  # the columns from here on are often the same on every row of a batch
# Host summaries are kept in this many parts (queue.sql `submit`): folds of different parts
# write different hosts, so a large fold runs as one statement a part, at once.
FOLD_PARTS = 4
_ALL_PARTS = list(range(FOLD_PARTS))


def _lines(column: tuple[str, ...]) -> str:
    """A column of strings every row has its own of (hash, URL, host) as one text of
    lines, which the statement splits (`string_to_array`): asyncpg sends one value instead
    of checking and encoding each of a batch's elements. A normalised URL, its host and its
    hash hold no newline (control characters are refused); checked all the same, since a
    row shifted by one would store a URL under another's hash."""
    text = "\n".join(column)
    if text.count("\n") != len(column) - 1:
        raise ValueError("a submitted URL, host or hash holds a newline")
    return text


def _array_or_once(column: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """A column of the submit statement as (its array, NULL), or as (an empty array, the
    value) when every row has the same one: the statement reads NULL from the empty array
    and takes the value given once."""
    if column.count(column[0]) == len(column):
        return [], column[0]
    return list(column), None


def _frontier_row(
    url: str,
    spelling: str,
    source_id: Any,
    origin: str,
    parent_url: str | None,
    depth: int,
    priority: int,
    meta: str | None,
    delay_ms: int | None,
) -> tuple[Any, ...]:
    """One submitted URL as the submit statement's row (the order of its arrays)."""
    return (
        url_hash(url),
        url,
        url_host(url),
        source_id,
        origin,
        parent_url,
        depth,
        priority,
        meta,
        delay_ms,
        None if spelling == url else spelling,  # fetch_url; NULL means the same as url
    )


def _without_nul(value: Any) -> Any:
    """`value` with NUL characters dropped from every string in it: jsonb cannot hold
    ``\\u0000``, and one in a feed title must not make the whole feed unusable."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nul(v) for v in value]
    return value


def _printable(url: object) -> str:
    text = url if isinstance(url, str) else repr(url)
    return text if len(text) <= 200 else text[:200] + "..."


@dataclass(frozen=True, slots=True)
class Claim:
    """A URL leased to one worker until `lease_until`."""

    url_hash: str
    url: str
    host: str
    source_id: UUID | None
    origin: Origin
    parent_url: str | None
    depth: int
    priority: int
    etag: str | None
    last_modified: str | None
    discovery_meta: dict[str, Any] | None
    retry_count: int
    fetch_count: int
    lease_until: datetime
    fetch_url: str | None = None  # the spelling to request; None: `url`
    content_hash: str | None = None  # of the text stored by the last fetch (a revisit's)
    revisit_step: int = 0  # steps of the source's revisit schedule taken (0: first fetch)

    @property
    def is_revisit(self) -> bool:
        """Fetched before, and claimed again on its source's revisit schedule."""
        return self.revisit_step > 0

    @property
    def request_url(self) -> str:
        return self.fetch_url or self.url

    @classmethod
    def from_record(cls, record: asyncpg.Record) -> Claim:
        return cls(**dict(record))


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the fetch of one claim ended."""

    claim: Claim
    kind: OutcomeKind
    http_status: int | None = None
    content_hash: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    final_url: str | None = None
    error: str | None = None
    retry_after_s: float | None = None  # RATE_LIMITED: Retry-After; DEFERRED: wait this long
    redirect_to: str | None = None  # REDIRECT: the Location header, resolved against the URL
    fetch_url: str | None = None  # the server's spelling when it redirected to the same identity
    revisit_after_s: float | None = None  # FETCHED/NOT_MODIFIED: due again this long from now


@dataclass(frozen=True, slots=True)
class Relink:
    """A URL whose document was removed for another URL holding the same article."""

    url_hash: str
    host: str
    holder: str  # the URL holding the article


@dataclass(slots=True)
class CompleteResult:
    applied: dict[str, str] = field(default_factory=dict)  # url_hash -> new status
    refused: list[str] = field(default_factory=list)  # not fetching, or not ours any more
    redirects: SubmitResult = field(default_factory=SubmitResult)


@dataclass(frozen=True, slots=True)
class ReapResult:
    returned: int  # back to pending
    dead: int  # out of retries
    host_leases: int  # expired host leases freed


class QueueRepository:
    def __init__(
        self,
        db: Database,
        policy: QueuePolicy | None = None,
        *,
        rotation_start: int | None = None,
    ) -> None:
        self._db = db
        self.policy = policy or QueuePolicy()
        # Where this repository's claims start in the bucket rotation (None: a random
        # bucket), so that fetchers spread over the buckets from their first claim.
        self._rotation_start = rotation_start
        self._rotation: BucketRotation | None = None

    async def submit(
        self, candidates: Iterable[Candidate], *, now: datetime | None = None
    ) -> SubmitResult:
        """Normalise and upsert a batch: new URLs are inserted, known pending URLs keep the
        higher priority, fetched and dead URLs are left alone."""
        return await self.submit_prepared(
            prepare(candidates, self.policy.default_delay_ms), now=now
        )

    async def submit_prepared(
        self,
        batch: PreparedBatch,
        *,
        now: datetime | None = None,
        db: Database | None = None,
        requeue: bool = False,
        fold: bool = True,
    ) -> SubmitResult:
        """Upsert a prepared batch. With `requeue`, the batch's known failed and dead URLs
        are requeued too (an operator submitting them explicitly): counted in `requeued`,
        not in `known`. With `fold` (the default) the batch's host summaries are folded
        into host_state before this returns, so its URLs are claimable; a bulk import
        passes False and folds every half minute (`fold_host_deltas`)."""
        result = SubmitResult(known=batch.repeated, rejected=list(batch.rejected))
        if not batch.rows:
            return result
        db = db or self._db
        rows = [batch.rows[key] for key in sorted(batch.rows)]
        buckets = sorted(by_bucket(rows, _host, await db.buckets()).items())
        for bucket, group in buckets:
            columns = list(zip(*group, strict=True))
            arrays, once = zip(*map(_array_or_once, columns[_ROW_SHARED:]), strict=True)
            record = await db.fetchrow(
                SQL["submit"],
                *map(_lines, columns[:_ROW_SHARED]),
                *arrays,
                now,
                batch.default_delay_ms,
                bucket,
                *once,
                FOLD_PARTS,
            )
            assert record is not None
            result.inserted += record["inserted"]
            result.raised += record["raised"]
            result.known += len(group) - record["inserted"] - record["raised"]
            if requeue:
                revived = await self.requeue_in_bucket(
                    [row[0] for row in group], ACTIONABLE, bucket=bucket, now=now, db=db
                )
                result.requeued += revived
                result.known -= revived
        if fold:
            await self.fold_host_deltas([bucket for bucket, _ in buckets], db=db)
        return result

    async def fold_host_deltas(
        self,
        buckets: Iterable[int] | None = None,
        *,
        db: Database | None = None,
        at_once: bool = False,
    ) -> int:
        """Fold the host summaries that submits left in host_deltas into host_state (every
        bucket by default), making their URLs claimable (and waking the fetchers); returns
        how many hosts got new work. One statement a bucket takes its every part; with
        `at_once`, each part is one statement and they all run at the same time, each on a
        connection of the pool (a bulk import's fold of up to a hundred thousand hosts, on
        as many of the server's cores)."""
        db = db or self._db
        if buckets is None:
            buckets = range(await db.buckets())
        if at_once:
            folds = [
                db.fetchval(SQL["fold_host_deltas"], bucket, [part])
                for bucket in buckets
                for part in range(FOLD_PARTS)
            ]
            return sum(await asyncio.gather(*folds))
        hosts = 0
        for bucket in buckets:
            hosts += await db.fetchval(SQL["fold_host_deltas"], bucket, _ALL_PARTS)
        return hosts

    async def requeue_in_bucket(
        self,
        url_hashes: Sequence[str],
        statuses: Sequence[str],
        *,
        bucket: int,
        now: datetime | None = None,
        db: Database | None = None,
    ) -> int:
        """Make those of `url_hashes` (all in `bucket`) that are failed, dead or fetched,
        with a status in `statuses`, pending and due now; returns how many."""
        requeued: int = await (db or self._db).fetchval(
            SQL["requeue"], list(url_hashes), list(statuses), now, bucket
        )
        return requeued

    async def claim(
        self,
        worker_id: str,
        limit: int,
        *,
        lease_seconds: float | None = None,
        now: datetime | None = None,
    ) -> list[Claim]:
        """Lease up to `limit` URLs, at most one per host, each from a host whose delay has
        passed and that nobody holds; a host with a delay is held by `worker_id` until it
        releases it (`HostRepository.release_slots`), one without is claimable while it
        has fewer than the policy's `host_concurrency` URLs in flight. One
        statement per bucket, in this repository's rotation (frontier/buckets.py), until
        `limit` are claimed or every bucket was asked once."""
        lease = lease_seconds if lease_seconds is not None else self.policy.lease_seconds
        if self._rotation is None:
            buckets = await self._db.buckets()
            start = self._rotation_start
            self._rotation = BucketRotation(
                buckets, random.randrange(buckets) if start is None else start
            )
        claims: list[Claim] = []
        for bucket in self._rotation.order():
            claim_bucket = partial(
                self._claim_bucket,
                worker_id=worker_id,
                limit=limit - len(claims),
                bucket=bucket,
                lease=lease,
                now=now,
            )
            records = await self._db.run_transaction(claim_bucket)
            claims.extend(Claim.from_record(record) for record in records)
            if len(claims) >= limit:
                break
        return claims

    async def _claim_bucket(
        self,
        tx: Database,
        *,
        worker_id: str,
        limit: int,
        bucket: int,
        lease: float,
        now: datetime | None,
    ) -> list[asyncpg.Record]:
        """Lock the ready hosts, then claim from them in a second statement (queue.sql
        `claim_hosts` says why two)."""
        hosts = await tx.fetch(SQL["claim_hosts"], limit, now, bucket, self.policy.host_concurrency)
        if not hosts:
            return []
        return await tx.fetch(
            SQL["claim"],
            worker_id,
            [host["host"] for host in hosts],
            now,
            lease,
            bucket,
            [host["delay_ms"] for host in hosts],
        )

    async def take(
        self,
        worker_id: str,
        url_hashes: Sequence[tuple[str, str]],
        *,
        lease_seconds: float | None = None,
        now: datetime | None = None,
    ) -> list[Claim]:
        """Lease the URLs `url_hashes` ((url_hash, host) pairs) that are pending and were
        never fetched, whatever their due time or their host's turn: a WARC import
        completes them with the responses it read (no request is made). The rest (fetched
        before, dead, claimed by another) are left alone and not returned."""
        lease = lease_seconds if lease_seconds is not None else self.policy.lease_seconds
        claims: list[Claim] = []
        groups = by_bucket(url_hashes, itemgetter(1), await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            records = await self._db.fetch(
                SQL["take"], worker_id, [hash_ for hash_, _ in group], lease, bucket, now
            )
            claims.extend(Claim.from_record(record) for record in records)
        return claims

    async def complete(
        self, worker_id: str, outcomes: Sequence[Outcome], *, now: datetime | None = None
    ) -> CompleteResult:
        """Apply outcomes in one transaction; a redirect's target is submitted with it."""
        outcomes, redirects = self._redirect_targets(outcomes)

        buckets = by_bucket(outcomes, _claim_host, await self._db.buckets())

        async def work(tx: Database) -> CompleteResult:
            result = CompleteResult()
            for bucket, group in sorted(buckets.items()):
                records = await tx.fetch(
                    SQL["complete"],
                    worker_id,
                    *_outcome_arrays(group),
                    self.policy.max_retries,
                    now,
                    self.policy.host_failure_threshold,
                    self.policy.forbidden_attempts,
                    self.policy.wall_threshold,
                    RECOVERY_ANSWERS,
                    [o.fetch_url for o in group],
                    bucket,
                )
                result.applied.update((r["url_hash"], r["status"]) for r in records)
            result.refused = [
                o.claim.url_hash for o in outcomes if o.claim.url_hash not in result.applied
            ]
            applied_redirects = [
                candidate for hash_, candidate in redirects if hash_ in result.applied
            ]
            if applied_redirects:
                batch = prepare(applied_redirects, self.policy.default_delay_ms)
                result.redirects = await self.submit_prepared(batch, now=now, db=tx, fold=False)
            return result

        result = await self._db.run_transaction(work)
        if redirects:
            # After the commit: a fold inside the completion's transaction would hold the
            # host rows it writes (an import's waiting summaries too) until then.
            await self.fold_host_deltas()
        return result

    def _redirect_targets(
        self, outcomes: Sequence[Outcome]
    ) -> tuple[list[Outcome], list[tuple[str, Candidate]]]:
        """Resolve redirect targets (each submitted as the spelling the server gave); an
        unusable one or a chain past MAX_REDIRECT_HOPS ends the URL without following it.
        The fetcher follows a redirect to the same identity inline, so one that reaches
        here (a meta refresh past the hop cap) is retried."""
        checked: list[Outcome] = []
        targets: list[tuple[str, Candidate]] = []
        for outcome in outcomes:
            if outcome.kind is not OutcomeKind.REDIRECT:
                checked.append(outcome)
                continue
            claim = outcome.claim
            location = outcome.redirect_to or outcome.final_url or ""
            try:
                target = normalize_url(location, claim.url)
            except InvalidURL as exc:
                checked.append(
                    _replace(
                        outcome,
                        final_url=_printable(location),
                        error=f"unusable redirect target: {exc.reason}",
                    )
                )
                continue
            if url_hash(target) == claim.url_hash:
                checked.append(
                    _replace(outcome, kind=OutcomeKind.RETRY, error="redirects to itself")
                )
                continue
            meta = dict(claim.discovery_meta or {})
            hops = int(meta.get("redirect_hops", 0)) + 1
            checked.append(_replace(outcome, final_url=target))
            if hops > MAX_REDIRECT_HOPS:
                continue
            meta.update(redirect_hops=hops, redirected_from=claim.url)
            targets.append(
                (
                    claim.url_hash,
                    Candidate(
                        url=location,
                        base=claim.request_url,
                        source=SourceRef(claim.source_id),
                        origin=claim.origin,
                        parent_url=claim.parent_url,
                        depth=claim.depth,
                        discovery_meta=meta,
                        priority=claim.priority,
                    ),
                )
            )
        return checked, targets

    async def release(
        self, worker_id: str, claims: Sequence[Claim], *, now: datetime | None = None
    ) -> CompleteResult:
        """Give claims back untried (shutting down): pending again, no attempt counted."""
        return await self.complete(
            worker_id, [Outcome(claim, OutcomeKind.DEFERRED) for claim in claims], now=now
        )

    async def renew(
        self,
        worker_id: str,
        claims: Sequence[Claim],
        *,
        lease_seconds: float | None = None,
        now: datetime | None = None,
    ) -> set[str]:
        """Extend leases still held by `worker_id` on `claims`; returns the hashes
        renewed."""
        lease = lease_seconds if lease_seconds is not None else self.policy.lease_seconds
        renewed: set[str] = set()
        groups = by_bucket(claims, attrgetter("host"), await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            hashes = [claim.url_hash for claim in group]
            records = await self._db.fetch(SQL["renew"], worker_id, hashes, lease, now, bucket)
            renewed.update(record["url_hash"] for record in records)
        return renewed

    async def reap(self, *, now: datetime | None = None, limit: int = 10_000) -> ReapResult:
        """Return expired URL leases to pending (up to `limit` per bucket) and free expired
        host leases."""
        returned = dead = host_leases = 0
        for bucket in range(await self._db.buckets()):
            record = await self._db.fetchrow(
                SQL["reap"], limit, self.policy.max_retries, now, bucket
            )
            assert record is not None
            returned += record["returned"]
            dead += record["dead"]
            status = await self._db.execute(SQL["reap_host_leases"], now, bucket)
            host_leases += int(status.split()[-1])
        return ReapResult(returned, dead, host_leases)

    async def stored_claims(self, urls: Sequence[tuple[str, str]]) -> list[Claim]:
        """The `fetched` URLs among `urls` ((url_hash, host) each) as claims, no lease
        taken: for `frontier reextract`, which makes no request."""
        claims: list[Claim] = []
        groups = by_bucket(sorted(set(urls)), itemgetter(1), await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            records = await self._db.fetch(SQL["stored_claims"], [h for h, _ in group], bucket)
            claims += [Claim.from_record(r) for r in records]
        return claims

    async def reextracted(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """The new content hash of URLs ((url_hash, host, content_hash) each) whose
        document a re-extraction rewrote."""
        groups = by_bucket(sorted(set(rows)), itemgetter(1), await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            await self._db.execute(
                SQL["reextracted"], [r[0] for r in group], [r[2] for r in group], bucket
            )

    async def relink_duplicates(self, rows: Sequence[Relink]) -> set[str]:
        """Mark `fetched` URLs as duplicates linked to the URL that now holds their article
        (`dead`, `duplicate_content`, `final_url` the holder). Returns those marked."""
        ordered = sorted({row.url_hash: row for row in rows}.values(), key=lambda r: r.url_hash)
        marked: set[str] = set()
        groups = by_bucket(ordered, attrgetter("host"), await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            records = await self._db.fetch(
                SQL["relink_duplicates"],
                [r.url_hash for r in group],
                [r.holder for r in group],
                bucket,
            )
            marked.update(record["url_hash"] for record in records)
        return marked

    async def in_flight(self, worker_id: str | None = None) -> int:
        count: int = await self._db.fetchval(SQL["in_flight"], worker_id)
        return count

    async def next_due(self) -> datetime | None:
        """When the next host becomes claimable; None when nothing is pending."""
        due: datetime | None = await self._db.fetchval(SQL["next_due"])
        return due


def _host(row: tuple[Any, ...]) -> str:
    host: str = row[2]  # a prepared row's host (`_row`)
    return host


def _claim_host(outcome: Outcome) -> str:
    return outcome.claim.host


def _replace(outcome: Outcome, **changes: Any) -> Outcome:
    values = {name: getattr(outcome, name) for name in Outcome.__slots__}
    values.update(changes)
    return Outcome(**values)


def _outcome_arrays(outcomes: Sequence[Outcome]) -> list[list[Any]]:
    columns: list[list[Any]] = [[] for _ in range(9)]
    for outcome in outcomes:
        delay = (
            retry_delay(outcome.claim.retry_count + 1)
            if outcome.kind in ATTEMPTS
            else outcome.revisit_after_s
            if outcome.kind in (OutcomeKind.FETCHED, OutcomeKind.NOT_MODIFIED)
            else outcome.retry_after_s
        )
        values = (
            outcome.claim.url_hash,
            str(outcome.kind),
            outcome.http_status,
            outcome.content_hash,
            outcome.etag,
            outcome.last_modified,
            outcome.final_url,
            outcome.error,
            delay,
        )
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    return columns
