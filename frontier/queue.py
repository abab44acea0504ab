"""The frontier queue: submit URLs, claim them host-first with leases, complete them with
one of the fetch outcomes (docs/fetching.md, "Fetch outcomes"), renew leases, and reap expired ones.

All SQL is in `frontier/sql/queue.sql`. Every statement works on a batch. Time-dependent
methods take an optional `now`; without it the database's clock is used, so processes on
several machines agree on time.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any

from frontier.backoff import retry_delay
from frontier.buckets import BucketRotation, by_bucket
from frontier.coalesce import Coalesced
from frontier.db import Database
from frontier.host_delay import RECOVERY_ANSWERS
from frontier.outbox import OutboxRepository, OutboxWrites
from frontier.queue_values import (
    ACTIONABLE,
    ATTEMPTS,
    MAX_REDIRECT_HOPS,
    Candidate,
    Claim,
    CompleteResult,
    Outcome,
    OutcomeKind,
    QueuePolicy,
    ReapResult,
    Relink,
    SourceRef,
    SubmitResult,
)
from frontier.sql import load
from frontier.sql.queue_params import CompleteParams, OutcomeColumns, SubmitParams
from frontier.submit_rows import FOLD_PARTS, PreparedBatch, prepare, printable_url, submit_columns
from frontier.urls import InvalidURL, normalize_url, url_hash

SQL = load("queue")


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
        # The folds of concurrent submits through this repository, shared (frontier.coalesce)
        self._folds = Coalesced(lambda buckets: self.fold_host_deltas(buckets))

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
        passes False and folds every half minute (`fold_host_deltas`). Submits that run at
        once through this repository (the poller's polls) share their folds: each returns
        after a fold that started once its batch was stored (frontier.coalesce)."""
        result = SubmitResult(known=batch.repeated, rejected=list(batch.rejected))
        if not batch.rows:
            return result
        db = db or self._db
        rows = [batch.rows[key] for key in sorted(batch.rows)]
        buckets = sorted(by_bucket(rows, _host, await db.buckets()).items())
        for bucket, group in buckets:
            texts, arrays, once = submit_columns(group)
            params = SubmitParams(
                texts=texts,
                arrays=arrays,
                now=now,
                default_delay_ms=batch.default_delay_ms,
                bucket=bucket,
                once=once,
                fold_parts=FOLD_PARTS,
            )
            record = await db.fetchrow(SQL["submit"], *params.args())
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
            folded = [bucket for bucket, _ in buckets]
            if db is self._db:
                await self._folds(folded)
            else:  # in the caller's transaction
                await self.fold_host_deltas(folded, db=db)
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
            hosts += await db.fetchval(SQL["fold_host_deltas"], bucket, list(range(FOLD_PARTS)))
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
            records = await self._db.fetch(
                SQL["claim"],
                bucket,
                worker_id,
                limit - len(claims),
                now,
                self.policy.host_concurrency,
                lease,
            )
            claims.extend(Claim.from_record(record) for record in records)
            if len(claims) >= limit:
                break
        return claims

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
        self,
        worker_id: str,
        outcomes: Sequence[Outcome],
        *,
        now: datetime | None = None,
        outbox: OutboxWrites | None = None,
    ) -> CompleteResult:
        """Apply outcomes, one statement per bucket (each a call of `frontier_complete`,
        which Citus runs on the worker holding the bucket: it delegates no call inside a
        transaction block, nor one a statement wraps). `outbox`: the sinks' outbox rows of
        the documents fetched (frontier.outbox), written exactly when their URLs'
        completion is: in the bucket's statement on a single server (`complete_enqueue`),
        in the completion's transaction on Citus. With redirects, all of it is one
        transaction: a redirect's target is submitted with the URL it ends."""
        outcomes, redirects = self._redirect_targets(outcomes)
        groups = sorted(by_bucket(outcomes, _claim_host, await self._db.buckets()).items())
        apart = outbox is not None and await self._db.distributed()  # Citus: not in one

        async def apply(db: Database) -> CompleteResult:
            result = CompleteResult()
            for bucket, group in groups:
                params = CompleteParams(
                    worker_id,
                    _outcome_columns(group),
                    max_retries=self.policy.max_retries,
                    now=now,
                    host_failure_threshold=self.policy.host_failure_threshold,
                    forbidden_attempts=self.policy.forbidden_attempts,
                    wall_threshold=self.policy.wall_threshold,
                    recovery_answers=RECOVERY_ANSWERS,
                    fetch_urls=[o.fetch_url for o in group],
                    bucket=bucket,
                )
                rows = None if outbox is None or apart else outbox.of_urls(_hashes(group))
                if rows is not None and rows.rows:
                    records = await db.fetch(
                        SQL["complete_enqueue"], *params.args(), *rows.columns()
                    )
                else:
                    records = await db.fetch(SQL["complete"], *params.args())
                result.applied.update((r["url_hash"], r["status"]) for r in records)
            result.refused = [
                o.claim.url_hash for o in outcomes if o.claim.url_hash not in result.applied
            ]
            return result

        if not redirects and not apart:
            # A bucket's statement is atomic; one that fails leaves its URLs claimed, for a
            # retry of the whole batch (the buckets done refuse it) or the reaper.
            return await apply(self._db)

        async def in_one_transaction(tx: Database) -> CompleteResult:
            result = await apply(tx)
            applied_redirects = [
                candidate for hash_, candidate in redirects if hash_ in result.applied
            ]
            if applied_redirects:
                batch = prepare(applied_redirects, self.policy.default_delay_ms)
                result.redirects = await self.submit_prepared(batch, now=now, db=tx, fold=False)
            if outbox is not None and apart:
                await OutboxRepository(tx).enqueue(outbox.of_urls(result.applied))
            return result

        result = await self._db.run_transaction(in_one_transaction)
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
                        final_url=printable_url(location),
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
        host leases: one call of `frontier_reap` per bucket."""
        returned = dead = host_leases = 0
        for bucket in range(await self._db.buckets()):
            record = await self._db.fetchrow(
                SQL["reap"], limit, self.policy.max_retries, now, bucket
            )
            assert record is not None
            returned += record["returned"]
            dead += record["dead"]
            host_leases += record["host_leases"]
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


def _hashes(outcomes: Sequence[Outcome]) -> set[str]:
    return {o.claim.url_hash for o in outcomes}


def _replace(outcome: Outcome, **changes: Any) -> Outcome:
    values = {name: getattr(outcome, name) for name in Outcome.__slots__}
    values.update(changes)
    return Outcome(**values)


def _outcome_columns(outcomes: Sequence[Outcome]) -> OutcomeColumns:
    def delay(outcome: Outcome) -> float | None:
        if outcome.kind in ATTEMPTS:
            return retry_delay(outcome.claim.retry_count + 1)
        if outcome.kind in (OutcomeKind.FETCHED, OutcomeKind.NOT_MODIFIED):
            return outcome.revisit_after_s
        return outcome.retry_after_s

    return OutcomeColumns(
        url_hashes=[o.claim.url_hash for o in outcomes],
        kinds=[str(o.kind) for o in outcomes],
        http_statuses=[o.http_status for o in outcomes],
        content_hashes=[o.content_hash for o in outcomes],
        etags=[o.etag for o in outcomes],
        last_modified=[o.last_modified for o in outcomes],
        final_urls=[o.final_url for o in outcomes],
        errors=[o.error for o in outcomes],
        delays_s=[delay(o) for o in outcomes],
    )
