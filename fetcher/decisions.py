"""What an HTTP answer to a page fetch means for its URL, as small pure objects: which row
of DESIGN.md's outcome table applies, how long to wait (Retry-After), and how to decode
the body (charset from the headers, then `<meta>`, then detection)."""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import charset_normalizer

from frontier.clock import utcnow
from frontier.queue import OutcomeKind
from frontier.retry_after import retry_after_s
from frontier.safe_http import REDIRECT_STATUSES

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
RETRY_AFTER_CAP_S = 86_400.0
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


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


def charset_param(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = re.search(r"charset\s*=\s*[\"']?([^\"';\s]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


def looks_like_html(body: bytes) -> bool:
    head = body[:2048].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<!--")) or b"<html" in head


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header, capped at a day; None if absent or unreadable
    (the rules are frontier.retry_after's, shared with the poller)."""
    return retry_after_s(value, now or utcnow(), cap_s=RETRY_AFTER_CAP_S)


def decide(status: int, headers: Mapping[str, str], body: bytes) -> Decision:
    """The outcome-table row of one response."""
    get = headers.get
    if status == 304:
        return Decision(Action.FINISH, OutcomeKind.NOT_MODIFIED)
    if status in REDIRECT_STATUSES:
        location = get("Location")
        if not location:
            return Decision(Action.FINISH, OutcomeKind.RETRY, f"HTTP {status} without Location")
        return Decision(Action.FINISH, OutcomeKind.REDIRECT, redirect_to=location)
    if status == 404:
        return Decision(Action.FINISH, OutcomeKind.NOT_FOUND)
    if status == 410:
        return Decision(Action.FINISH, OutcomeKind.GONE)
    if status in (429, 503):
        return Decision(
            Action.FINISH,
            OutcomeKind.RATE_LIMITED,
            f"HTTP {status}",
            retry_after_s=retry_after(get("Retry-After")),
        )
    if 200 <= status < 300:
        kind = media_type(get("Content-Type"))
        if kind in HTML_TYPES or (kind is None and looks_like_html(body)):
            return Decision(Action.EXTRACT, OutcomeKind.FETCHED)
        return Decision(
            Action.FINISH,
            OutcomeKind.UNSUPPORTED_CONTENT,
            f"content type {kind or 'unknown'} is not HTML",
        )
    # 5xx, other 4xx (401, 403, ...) and anything else: retried with backoff, then dead.
    return Decision(Action.FINISH, OutcomeKind.RETRY, f"HTTP {status}")


def _usable(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None


def decode_html(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(text, encoding): a BOM first, then the Content-Type charset, then `<meta>`, then
    charset detection; undecodable bytes are replaced."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body.decode(name, errors="replace"), name
    encoding = _usable(charset_param(content_type))
    if encoding is None:
        match = _META_CHARSET.search(body[:4096])
        encoding = _usable(match.group(1).decode("ascii", "replace")) if match else None
    if encoding is None:
        try:
            return body.decode("utf-8"), "utf-8"  # most of the web; detection is slow
        except UnicodeDecodeError:
            pass
        best = charset_normalizer.from_bytes(body[:65_536]).best()
        encoding = _usable(best.encoding if best else None) or "utf-8"
    return body.decode(encoding, errors="replace"), encoding
