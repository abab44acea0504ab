"""Why a URL (or a host) is not being fetched right now, in one sentence: a pure function
of its `url_frontier` row, its host's `host_state` row, its source and a pinned `now`.

The claim (frontier/sql/queue.sql `claim`) takes a pending URL once its own
`next_fetch_at` and its host's `ready_at` (the latest of `next_allowed_at`,
`backoff_until` and the host lease) have passed; the fetcher then checks robots.txt. So a
pending URL waits for the latest of those times, and the cause named is the one that ends
last; robots.txt refusing it outranks them all, since no waiting helps. A disabled source
stops polls and crawls, not the fetching of URLs already queued, and the sentence says so.

`frontier url show`, `GET /api/v1/urls/{...}` and the dashboard's URL and host pages print
the same `Why`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from frontier.states import DeadReason, RobotsStatus, UrlStatus, found_by_canonical

# How to act on a URL that will not be fetched again (`act` owns the command): the
# failed and dead ones of its host (the cause is often the host's), a fetched one alone.
REQUEUE_HINT = "frontier urls requeue --status {status} --host {host}"
REFETCH_HINT = "frontier urls requeue --status fetched --url {url}"

DEAD_MEANING = {
    DeadReason.NOT_FOUND: "the server answered 404 Not Found",
    DeadReason.GONE: "the server answered 410 Gone",
    DeadReason.ROBOTS_BLOCKED: "robots.txt disallows it",
    DeadReason.REDIRECT: "it redirected to another URL, which was queued in its place",
    DeadReason.MAX_RETRIES: "it failed more often than the retry limit allows",
    DeadReason.DUPLICATE_CONTENT: "its text is already stored under another URL",
    DeadReason.UNSUPPORTED_CONTENT: "it is not HTML, or larger than the size cap",
    DeadReason.BLOCKED_BY_POLICY: "its source forbids fetching (fetchprotection 0)",
    DeadReason.FORBIDDEN: "the server refused it (401, 403 or 451) twice",
    DeadReason.NOINDEX: "the page asks not to be indexed (noindex or none, in its "
    "X-Robots-Tag header or robots meta tag), so no document was stored",
    DeadReason.SOFT_404: "it answered 200 with a page that says it was not found, twice, "
    "so no document was stored",
    DeadReason.LOGIN_REQUIRED: "it redirected to a login or subscription page twice; the "
    "login page was neither queued nor stored",
}


class Cause(StrEnum):
    """What keeps a URL from being fetched now (`Why.cause`)."""

    FETCHED = "fetched"  # done: stored, or unchanged since the last fetch
    DEAD = "dead"  # final; dead_reason says why
    FAILED = "failed"  # the sink refused its document; needs an operator
    LEASED = "leased"  # a fetcher holds it until lease_until
    LEASE_EXPIRED = "lease_expired"  # its fetcher's lease ran out; the reaper returns it
    ROBOTS_DISALLOWS = "robots_disallows"  # robots.txt forbids it: it will end dead
    ROBOTS_UNREACHABLE = "robots_unreachable"  # robots.txt failed; nothing until it is retried
    HOST_BACKOFF = "host_backoff"  # the host failed or rate-limited; blocked until T
    HOST_LEASED = "host_leased"  # a requester holds the host: its request is in flight
    HOST_DELAY = "host_delay"  # politeness: the host's next request may start at T
    KEY_BUSY = "key_busy"  # politeness: another host of its key is busy; snoozed until T
    RETRY_AT = "retry_at"  # its own next_fetch_at is in the future
    SOURCE_DISABLED = "source_disabled"  # due now, though its source is disabled
    ROBOTS_NOT_FETCHED = "robots_not_fetched"  # due now; robots.txt is fetched first
    DUE_NOW = "due_now"  # nothing holds it: waiting for a fetcher
    UNKNOWN_URL = "unknown_url"  # not in the frontier


@dataclass(frozen=True, slots=True)
class Why:
    cause: Cause
    sentence: str
    until: datetime | None = None  # when this cause ends, if it ends by itself

    def as_json(self) -> dict[str, Any]:
        return {
            "cause": str(self.cause),
            "sentence": self.sentence,
            "until": self.until.isoformat() if self.until else None,
        }


Row = Mapping[str, Any]


def why_url_waits(
    url: Row,
    host: Row | None,
    *,
    now: datetime,
    ahead: int = 0,
    robots_allows: bool | None = None,
    source_name: str | None = None,
    source_enabled: bool | None = None,
) -> Why:
    """Why the URL `url` (a url_frontier row) is not being fetched at `now`. `host` is its
    host_state row; `ahead` how many pending URLs of the host a claim takes before this
    one (url_story.sql `ahead`); `robots_allows` whether the host's stored robots.txt
    allows it (None: not known, e.g. robots.txt not fetched yet)."""
    status = UrlStatus(url["status"])
    if status is UrlStatus.FETCHED:
        return _fetched(url)
    if status is UrlStatus.DEAD:
        return _dead(url)
    if status is UrlStatus.FAILED:
        return Why(
            Cause.FAILED,
            f"It was fetched but {_failure(url)}; it stays failed until an operator acts: "
            f"{REQUEUE_HINT.format(status='failed', host=url['host'])}.",
        )
    if status is UrlStatus.FETCHING:
        lease_until = url["lease_until"]
        if host is not None and _after(lease_until, now) and _after(host["next_allowed_at"], now):
            # Claimed, robots.txt read: the claim waits for the host's delay to request it.
            return Why(
                Cause.LEASED,
                f"It is claimed by {url['claimed_by']}, which waits for the host delay of "
                f"{url['host']} before requesting it: the request may start at "
                f"{_at(host['next_allowed_at'])} ({_delay(host)}).",
                host["next_allowed_at"],
            )
        if _after(lease_until, now):
            return Why(
                Cause.LEASED,
                f"It is being fetched now: leased by {url['claimed_by']} until {_at(lease_until)}.",
                lease_until,
            )
        return Why(
            Cause.LEASE_EXPIRED,
            f"Its fetcher {url['claimed_by']} let the lease lapse at {_at(lease_until)}; the "
            f"reaper returns it to pending on its next run.",
        )
    why = _pending(url, host, now, robots_allows, source_name, source_enabled)
    if ahead and why.cause in HOST_WIDE:
        return _behind(why, ahead, host)
    return why


# The causes that hold every URL of the host alike: of its URLs, the first in its queue
# goes when the cause ends, and the others one by one after it.
HOST_WIDE = (
    Cause.HOST_BACKOFF,
    Cause.HOST_LEASED,
    Cause.HOST_DELAY,
    Cause.ROBOTS_UNREACHABLE,
    Cause.ROBOTS_NOT_FETCHED,
    Cause.DUE_NOW,
    Cause.SOURCE_DISABLED,
)


def _behind(why: Why, ahead: int, host: Row | None) -> Why:
    """`why`, and that `ahead` URLs of the host go before this one (one request at a time,
    `delay_ms` apart): only the first of them can start when the cause ends."""
    count = f"{ahead} URL{'s' if ahead != 1 else ''}"
    sentence = f"{why.sentence} {count} of the host {'are' if ahead != 1 else 'is'} ahead of it "
    if host is not None and host["delay_ms"] and why.until is not None:
        earliest = _aware(why.until) + timedelta(milliseconds=host["delay_ms"] * ahead)
        return Why(
            why.cause,
            sentence + f"in its queue, one request every {host['delay_ms']} ms: it waits "
            f"behind them, until {_at(earliest)} at the earliest.",
            earliest,
        )
    return Why(why.cause, sentence + "in its queue: it waits behind them.", why.until)


def _delay(host: Row) -> str:
    crawl = host.get("crawl_delay_ms")
    asked = f"; robots.txt asks a Crawl-delay of {crawl / 1000:g} s" if crawl else ""
    return f"one request every {host['delay_ms']} ms{asked}"


def _pending(
    url: Row,
    host: Row | None,
    now: datetime,
    robots_allows: bool | None,
    source_name: str | None,
    source_enabled: bool | None,
) -> Why:
    name = url["host"]
    if robots_allows is False and host is not None and host["robots_status"] == RobotsStatus.OK:
        return Why(
            Cause.ROBOTS_DISALLOWS,
            f"robots.txt of {name} disallows it: the next fetcher to claim it marks it dead "
            f"(robots_blocked) without requesting it.",
        )
    waits = [why for why in _timed(url, host, now) if _after(why.until, now)]
    if waits:
        return max(waits, key=lambda why: _aware(why.until))
    if source_enabled is False:
        return Why(
            Cause.SOURCE_DISABLED,
            f"Its source {source_name} is disabled, which stops polling it, not fetching the "
            f"URLs it already queued: this one is due now and waits for a fetcher.",
        )
    if host is None or host["robots_status"] == RobotsStatus.UNKNOWN:
        return Why(
            Cause.ROBOTS_NOT_FETCHED,
            f"It is due now and waits for a fetcher, which fetches robots.txt of {name} "
            f"first (not fetched yet).",
        )
    return Why(Cause.DUE_NOW, "It is due now and waits for a free fetcher.")


def _timed(url: Row, host: Row | None, now: datetime) -> list[Why]:
    """Every cause with an end time, so the caller can name the one that ends last."""
    name = url["host"]
    found = []
    next_fetch_at = url["next_fetch_at"]
    if url["retry_count"]:
        found.append(
            Why(
                Cause.RETRY_AT,
                f"Retry at {_at(next_fetch_at)} after {url['retry_count']} failed "
                f"attempt{'s' if url['retry_count'] != 1 else ''} "
                f"(last error: {_error(url)}).",
                next_fetch_at,
            )
        )
    elif url.get("revisit_step"):
        found.append(
            Why(
                Cause.RETRY_AT,
                f"It was fetched; revisit {url['revisit_step']} of its source's schedule is "
                f"due at {_at(next_fetch_at)}.",
                next_fetch_at,
            )
        )
    else:
        found.append(Why(Cause.RETRY_AT, f"It is due at {_at(next_fetch_at)}.", next_fetch_at))
    if host is None:
        return found
    found.append(
        Why(
            Cause.HOST_BACKOFF,
            f"Host {name} is backing off until {_at(host['backoff_until'])} after "
            f"{host['consecutive_failures']} failed or rate-limited answers in a row.",
            host["backoff_until"],
        )
    )
    found.append(
        Why(
            Cause.HOST_LEASED,
            f"Host {name} is held by {host['lease_owner']}: a request to it is in flight "
            f"(one at a time; the host is free once its answer is in, at the latest when "
            f"the hold's lease ends at {_at(host['lease_until'])}).",
            host["lease_until"],
        )
    )
    if host["robots_status"] == RobotsStatus.DISALLOW_ALL:
        found.append(
            Why(
                Cause.ROBOTS_UNREACHABLE,
                f"robots.txt of {name} could not be fetched ({_robots_error(host)}), so "
                f"nothing is fetched from the host until it is tried again at "
                f"{_at(host['robots_retry_at'])}.",
                host["robots_retry_at"],
            )
        )
    found.append(_key_busy(host, now) or _host_delay(host))
    return found


def _host_delay(host: Row) -> Why:
    return Why(
        Cause.HOST_DELAY,
        f"Host delay: the next request to {host['host']} may start at "
        f"{_at(host['next_allowed_at'])} ({_delay(host)}).",
        host["next_allowed_at"],
    )


def _key_busy(host: Row, now: datetime) -> Why | None:
    """The host was given back unrequested, its politeness key busy (host_state.busy_key;
    `key_lease_until` and `key_next_allowed_at`: the key's row, when read)."""
    key = host.get("busy_key")
    if key is None or not _after(host["next_allowed_at"], now):
        return None
    if _after(host.get("key_lease_until"), now):
        state = f"another host of key {key} has a request in flight"
    elif _after(host.get("key_next_allowed_at"), now):
        state = f"the delay of key {key} runs until {_at(host['key_next_allowed_at'])}"
    else:
        state = f"another host of key {key} had a request in flight, or its delay ran"
    return Why(
        Cause.KEY_BUSY,
        f"Key busy: {state} (one request at a time per key); {host['host']} waits until "
        f"{_at(host['next_allowed_at'])}.",
        host["next_allowed_at"],
    )


def why_host_waits(host: Row, *, now: datetime) -> Why:
    """Why nothing of `host` (a host_state row) is being fetched at `now`, or that its next
    URL is due."""
    if not host["pending_count"]:
        return Why(Cause.DUE_NOW, f"Host {host['host']} has no pending URL.")
    stand_in = {
        "host": host["host"],
        "status": UrlStatus.PENDING,
        "next_fetch_at": host["pending_due_at"],
        "retry_count": 0,
        "last_error": None,
    }
    return _pending(stand_in, host, now, None, None, None)


def _fetched(url: Row) -> Why:
    return Why(
        Cause.FETCHED,
        f"It was fetched at {_at(url['last_fetched_at'])} (HTTP {url['http_status']}) and is "
        f"not visited again; to fetch it again: "
        f"{REFETCH_HINT.format(url=shlex.quote(url['url']))}",
    )


def _dead(url: Row) -> Why:
    reason = url["dead_reason"]
    meaning = DEAD_MEANING.get(reason, "it will not be fetched again") if reason else None
    target = f" (to {url['final_url']})" if reason == DeadReason.REDIRECT else ""
    if reason == DeadReason.DUPLICATE_CONTENT:
        holder = url["final_url"] or "another URL"
        meaning = (
            f"its canonical link names {holder}, which holds the article"
            if found_by_canonical(url.get("last_error"))
            else f"its text is already stored under {holder}"
        )
    return Why(
        Cause.DEAD,
        f"It is dead ({reason}): {meaning}{target}; last HTTP status {url['http_status']}, "
        f"last error: {_error(url)}. Once the cause is fixed: "
        f"{REQUEUE_HINT.format(status='dead', host=url['host'])} --reason {reason}.",
    )


def _failure(url: Row) -> str:
    """What a `failed` URL's last error says went wrong, in words (fetcher.verdict and the
    pipeline write these errors)."""
    error = _error(url)
    if "challenge page:" in error:
        return (
            f"every answer was a CDN's or firewall's challenge page, not the article "
            f"({error}): a browser may get through where we do not; ask the site to allow "
            f"our user agent, then requeue"
        )
    if error.startswith("no body text"):
        return (
            "its page had no body text on every try (a page its scripts fill in, or an "
            "empty template), so no document was stored; give its source CSS selectors, "
            "then requeue"
        )
    return f"no document could be stored ({error})"


def _after(moment: datetime | None, now: datetime) -> bool:
    """`moment > now`; asyncpg reads 'infinity' and '-infinity' (host_state's default
    next_allowed_at) as naive datetime.max and datetime.min, which count as UTC here."""
    return moment is not None and _aware(moment) > now


def _aware(moment: datetime | None) -> datetime:
    assert moment is not None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _at(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else "an unknown time"


def _error(url: Row) -> str:
    error = url.get("last_error")
    return str(error)[:200] if error else "none"


def _robots_error(host: Row) -> str:
    parts = []
    if host.get("robots_http_status"):
        parts.append(f"HTTP {host['robots_http_status']}")
    if host.get("robots_error"):
        parts.append(str(host["robots_error"])[:200])
    return ", ".join(parts) or "no answer"
