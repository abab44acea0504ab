"""How a claimed URL's fetch ended (`OutcomeKind`): apart from the queue's value types
(`frontier.queue_values`, which import the database driver and the settings), so that
the verdicts on a page (`fetcher.verdict`), made in the extraction workers, import
neither."""

from enum import StrEnum


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
