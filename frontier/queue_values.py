"""The queue's value types: what producers submit (`Candidate`, `SourceRef`), what a claim
hands a worker (`Claim`), how its fetch ended (`OutcomeKind`, `Outcome`), the queue's knobs
(`QueuePolicy`) and the repository's answers. The repository is `frontier.queue`; the
encoding of a submitted batch is `frontier.submit_rows`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from frontier.outcomes import OutcomeKind
from frontier.settings import Settings
from frontier.states import Origin, UrlStatus

# The statuses an operator may requeue (or purge): the two that are never fetched again
# on their own.
ACTIONABLE = (UrlStatus.FAILED, UrlStatus.DEAD)

MAX_REDIRECT_HOPS = 5  # a redirect chain longer than this is not followed further
MAX_DISCOVERY_META_BYTES = 16_384  # what a producer may say about one URL


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
