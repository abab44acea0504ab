"""What an HTTP answer to a page fetch means for its URL, as small pure objects: which row
of the outcome table (docs/fetching.md, "Fetch outcomes") applies, how long to wait
(Retry-After). How the body is decoded is `fetcher.encoding`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from fetcher.verdict import (
    MARKER_BYTES,
    error_page_challenge,
    header_challenge,
    vendor_marker,
)
from frontier.clock import utcnow
from frontier.outcomes import OutcomeKind
from frontier.retry_after import retry_after_s
from frontier.robots_directives import GENERIC_NAME, NOINDEX, header_directives
from frontier.safe_http.responses import REDIRECT_STATUSES

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
FORBIDDEN_STATUSES = frozenset({401, 403, 451})
RETRY_AFTER_CAP_S = 86_400.0


class Action(StrEnum):
    EXTRACT = "extract"  # a usable HTML page: extract and store it
    FINISH = "finish"  # complete with `kind`, no body to process


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    kind: OutcomeKind
    error: str | None = None
    retry_after_s: float | None = None
    redirect_to: str | None = None


def media_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def looks_like_html(body: bytes) -> bool:
    head = body[:2048].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<!--")) or b"<html" in head


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header, capped at a day; None if absent or unreadable
    (the rules are frontier.retry_after's, shared with the poller)."""
    return retry_after_s(value, now or utcnow(), cap_s=RETRY_AFTER_CAP_S)


def decide(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime | None = None,
    robots_names: frozenset[str] = frozenset({GENERIC_NAME}),
) -> Decision:
    """The outcome-table row of one response (`now`: the clock a Retry-After date is read
    against; the queue adds the wait to the same clock). What the headers and an error
    page's first bytes say is decided here, before any extraction: a challenge, whatever
    its status (`fetcher.verdict`), and an `X-Robots-Tag` that says `noindex` to a crawler
    known by `robots_names` (`frontier.robots_directives`)."""
    get = headers.get
    if status == 304:
        return Decision(Action.FINISH, OutcomeKind.NOT_MODIFIED)
    challenge = header_challenge(headers)
    if challenge is not None:
        return _challenge(status, challenge)
    if status in REDIRECT_STATUSES:
        location = get("Location")
        if not location:
            return Decision(Action.FINISH, OutcomeKind.RETRY, f"HTTP {status} without Location")
        return Decision(Action.FINISH, OutcomeKind.REDIRECT, redirect_to=location)
    if status == 404:
        return Decision(Action.FINISH, OutcomeKind.NOT_FOUND)
    if status == 410:
        return Decision(Action.FINISH, OutcomeKind.GONE)
    if status in (429, 503, 401, 403):
        # An interstitial answered with an error status (Cloudflare's "I'm Under Attack"
        # 503, DataDome's 403 captcha): a wall in front of the article, not a refusal.
        challenge = error_page_challenge(body)
        if challenge is not None:
            return _challenge(status, challenge)
    if status in (429, 503):
        return Decision(
            Action.FINISH,
            OutcomeKind.RATE_LIMITED,
            f"HTTP {status}",
            retry_after_s=retry_after(get("Retry-After"), now),
        )
    if status in FORBIDDEN_STATUSES:
        # A login, a paywall, a CDN's bot wall (Cloudflare's challenge, Akamai's "Access
        # Denied") or a legal block: another try soon answers the same, so it is not retried
        # like a server error; the queue ends it after FORBIDDEN_ATTEMPTS and backs off a
        # host that answers nothing else.
        return Decision(Action.FINISH, OutcomeKind.FORBIDDEN, _forbidden_reason(status, get))
    if 200 <= status < 300:
        kind = media_type(get("Content-Type"))
        if kind in HTML_TYPES or (kind is None and looks_like_html(body)):
            rules = header_directives(_all(headers, "X-Robots-Tag"), robots_names, now=now)
            if NOINDEX in rules:
                # A challenge page may say noindex too: it is the wall, not the article.
                challenge = vendor_marker(body[:MARKER_BYTES].decode("utf-8", "replace").lower())
                if challenge is not None:
                    return _challenge(status, challenge)
                return Decision(
                    Action.FINISH, OutcomeKind.NOINDEX, "X-Robots-Tag: " + _rules(rules)
                )
            return Decision(Action.EXTRACT, OutcomeKind.FETCHED)
        return Decision(
            Action.FINISH,
            OutcomeKind.UNSUPPORTED_CONTENT,
            f"content type {kind or 'unknown'} is not HTML",
        )
    # 5xx, other 4xx and anything else: retried with backoff, then dead.
    return Decision(Action.FINISH, OutcomeKind.RETRY, f"HTTP {status}")


def _challenge(status: int, challenge: str) -> Decision:
    return Decision(
        Action.FINISH, OutcomeKind.CHALLENGE, f"HTTP {status}: challenge page: {challenge}"
    )


def _all(headers: Mapping[str, str], name: str) -> list[str]:
    """Every value of a header that may be sent more than once (aiohttp's multidict)."""
    getall = getattr(headers, "getall", None)
    if getall is not None:
        return list(getall(name, []))
    value = headers.get(name)
    return [value] if value else []


def _rules(rules: frozenset[str]) -> str:
    return ", ".join(sorted(rules))[:300]


def _forbidden_reason(status: int, get: Callable[[str], str | None]) -> str:
    """`HTTP 403` plus what the answer says about who refused: the CDN's challenge, the
    login a 401 asks for, the authority a 451 names (RFC 7725's `rel="blocked-by"`)."""
    notes = []
    if get("cf-mitigated"):
        notes.append(f"cf-mitigated: {get('cf-mitigated')}")
    elif get("Server"):
        notes.append(f"server: {get('Server')}")
    if status == 401 and get("WWW-Authenticate"):
        notes.append(f"WWW-Authenticate: {get('WWW-Authenticate')}")
    if status == 451 and get("Link"):
        notes.append(f"Link: {get('Link')}")
    text = f"HTTP {status}" + (f" ({'; '.join(notes)})" if notes else "")
    return text[:500]
