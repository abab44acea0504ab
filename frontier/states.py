"""Every state enum of the data model, declared once. Each mirrors a CHECK constraint in
the migrations; tests/integration/test_migrations.py keeps the two in step."""

from enum import StrEnum


class UrlStatus(StrEnum):
    """`url_frontier.status`."""

    PENDING = "pending"  # waiting to be claimed once next_fetch_at has passed
    FETCHING = "fetching"  # claimed by claimed_by until lease_until
    FETCHED = "fetched"  # fetched and stored (or unchanged since the last fetch)
    FAILED = "failed"  # fetched but not storable (the sink refused it); needs an operator
    DEAD = "dead"  # final: will not be fetched again; dead_reason says why


class Origin(StrEnum):
    """`url_frontier.origin`: which producer found the URL."""

    FEED = "feed"  # an RSS, Atom or JSON Feed entry
    SITEMAP = "sitemap"  # a sitemap <loc>
    SPIDER = "spider"  # a link the discovery spider followed
    MANUAL = "manual"  # submitted by the CLI or the import API


class DeadReason(StrEnum):
    """`url_frontier.dead_reason`."""

    NOT_FOUND = "not_found"  # 404
    GONE = "gone"  # 410
    ROBOTS_BLOCKED = "robots_blocked"  # robots.txt disallows it
    REDIRECT = "redirect"  # redirected; final_url was submitted in its place
    MAX_RETRIES = "max_retries"  # failed more often than the retry limit allows
    DUPLICATE_CONTENT = "duplicate_content"  # its body is already indexed under another URL
    UNSUPPORTED_CONTENT = "unsupported_content"  # not HTML, or over the size cap
    BLOCKED_BY_POLICY = "blocked_by_policy"  # its source forbids fetching (fetchprotection 0)
    FORBIDDEN = "forbidden"  # 401, 403 or 451 (a login, a bot wall, a legal block), twice
    NOINDEX = "noindex"  # X-Robots-Tag or <meta name="robots">: noindex (or none)
    SOFT_404 = "soft_404"  # a 200 that says "not found", twice
    LOGIN_REQUIRED = "login_required"  # redirects to a login or subscription page, twice


# The last_error of a `duplicate_content` URL says how its article was found stored under
# another URL (fetcher.response_steps writes it; frontier.why_waiting explains it).
CANONICAL_DUPLICATE = "its canonical {holder} holds the article"  # its canonical link
CONTENT_DUPLICATE = "same content as {holder}"  # the same text


def found_by_canonical(last_error: str | None) -> bool:
    """Whether a `duplicate_content` URL's article was found through its canonical link."""
    return bool(last_error) and str(last_error).startswith(CANONICAL_DUPLICATE.split("{")[0])


class IngestionMode(StrEnum):
    """`sources.ingestion_mode`."""

    FEED = "feed"  # poll the feed (and sitemap)
    SPIDER = "spider"  # run the discovery spider
    BOTH = "both"  # both of the above


class ShippedKind(StrEnum):
    """The `sources.kind` values frontier ships. The column is open to plugins (any kind
    registered in the `frontier.source_kinds` entry-point group), so its CHECK is on the
    name's form only, not this list (frontier.source_kinds)."""

    FEED = "feed"  # RSS, Atom or JSON Feed (the default; every source before kinds)
    SITEMAP = "sitemap"  # a sitemap or sitemap index
    WORDPRESS = "wordpress"  # a WordPress REST listing, /wp-json/wp/v2/posts


class RobotsStatus(StrEnum):
    """`host_state.robots_status`."""

    OK = "ok"  # a robots.txt was fetched and parsed
    ALLOW_ALL = "allow_all"  # robots.txt answered 4xx: everything is allowed
    DISALLOW_ALL = "disallow_all"  # robots.txt was unreachable or 5xx: nothing for now
    UNKNOWN = "unknown"  # not fetched yet


class FetchKind(StrEnum):
    """`fetch_log.kind`."""

    FEED = "feed"
    SITEMAP = "sitemap"
    ROBOTS = "robots"
    PAGE = "page"  # an article page's first fetch (and its retries)
    SPIDER = "spider"
    REVISIT = "revisit"  # an article fetched again on its source's revisit schedule


class LogOutcome(StrEnum):
    """`fetch_log.outcome`."""

    OK = "ok"  # fetched, and (for a poll) new items were found
    OK_NO_NEW = "ok_no_new"  # a poll that found nothing new
    NOT_MODIFIED = "not_modified"  # 304
    FAILED = "failed"  # a transient failure; retried later
    BLOCKED = "blocked"  # robots.txt or policy refused it
    REDIRECT = "redirect"  # redirected; the target went to the frontier
    NOT_FOUND = "not_found"  # 404
    GONE = "gone"  # 410
    RATE_LIMITED = "rate_limited"  # 429/503 with back-off
    DEFERRED = "deferred"  # not attempted yet (host not ready, shutting down)
    DUPLICATE = "duplicate"  # the body duplicates another URL's
    UNSUPPORTED = "unsupported"  # not HTML, or too large
    REFUSED = "refused"  # refused before any request (SSRF guard, bad URL)
    CHALLENGE = "challenge"  # a CDN's or firewall's challenge page instead of the article
    NOINDEX = "noindex"  # the page asks not to be indexed
    SOFT_404 = "soft_404"  # a 200 that says "not found"
    LOGIN_REQUIRED = "login_required"  # redirected to a login or subscription page
    EMPTY = "empty"  # a page with no body text at all


class WebSubState(StrEnum):
    """`websub_subscriptions.state`: a subscription to the hub a feed declares."""

    REQUESTED = "requested"  # asked of the hub (subscribe or renew); its intent not verified
    ACTIVE = "active"  # the hub verified it; notifications come until lease_until
    DENIED = "denied"  # the hub refused it (hub.mode=denied); asked again a day later
    UNSUBSCRIBING = "unsubscribing"  # its source is gone or no longer declares the hub
