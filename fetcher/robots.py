"""robots.txt per RFC 9309, as pure functions: what a robots.txt fetch means for a host
(`interpret`), and whether a URL may be fetched under the stored state (`RobotsRules`).

- 2xx: parsed with Protego (at most `ROBOTS_MAX_BYTES`; the rest is ignored, as RFC 9309
  allows above 500 KiB); rules are matched with the product token of the User-Agent.
- 4xx (and more than 5 redirects): no usable robots.txt, so everything is allowed.
- 5xx, a timeout or a network error: everything is disallowed for now and the fetch is
  retried later; this is never cached as allow-all.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from protego import Protego

from frontier.hosts import RobotsRecord
from frontier.states import RobotsStatus

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
ROBOTS_REDIRECTS = 5
_TOKEN = re.compile(r"[A-Za-z_-]+")
_UA_LINE = re.compile(r"(?im)^([ \t]*user-?agent[ \t]*:[ \t]*)([A-Za-z_-]+)[ \t][^\r\n#]*")
_BOM = b"\xef\xbb\xbf"


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: `frontier-crawler` of
    `frontier-crawler/0.1 (+https://...)` (RFC 9309: letters, `_` and `-` only)."""
    match = _TOKEN.match(user_agent.strip())
    return match.group(0).lower() if match else user_agent.strip().lower()


def decode_robots(body: bytes) -> str:
    """robots.txt is UTF-8 (RFC 9309); a BOM (even a truncated one, as Google's parser
    allows) and NUL characters are dropped, and bad bytes are replaced."""
    body = body[:ROBOTS_MAX_BYTES]
    for prefix in (_BOM, _BOM[:2], _BOM[:1]):
        if body.startswith(prefix):
            body = body[len(prefix) :]
            break
    # NUL is dropped: PostgreSQL text cannot hold it (a binary robots.txt crashed the
    # fetcher when stored), and no robots.txt rule contains one.
    return body.decode("utf-8", errors="replace").replace("\x00", "")


def _product_tokens_only(text: str) -> str:
    """`User-agent: Foo Bar` names the product token `Foo` (RFC 9309 2.2.1: the value is a
    product token; Google's parser reads up to the first space). Protego would match the
    whole value, so the rest of such a line is cut here (a regex: no library does this)."""
    return _UA_LINE.sub(r"\1\2", text)


def parse(text: str) -> Protego | None:
    """Protego's parse of `text`; None (and a log line) if it cannot be parsed at all."""
    try:
        return Protego.parse(_product_tokens_only(text))
    except Exception as exc:  # a lenient parser that still failed: treat as no rules
        log.warning("unparseable robots.txt (%s); treating it as empty", exc)
        return None


def interpret(
    host: str,
    *,
    token: str,
    http_status: int | None,
    body: bytes | None,
    error: str | None,
    max_crawl_delay_ms: int,
) -> RobotsRecord:
    """The host state a robots.txt fetch leads to. `http_status` None means no answer (a
    timeout or network error, described by `error`)."""
    if http_status is not None and 200 <= http_status < 300:
        text = decode_robots(body or b"")
        parsed = parse(text)
        delay_ms = None
        sitemaps: tuple[str, ...] = ()
        if parsed is not None:
            delay = parsed.crawl_delay(token)
            if delay is not None and delay >= 0:
                delay_ms = min(int(delay * 1000), max_crawl_delay_ms)
            sitemaps = tuple(dict.fromkeys(s.strip() for s in parsed.sitemaps if s.strip()))
        return RobotsRecord(host, RobotsStatus.OK, text, http_status, None, delay_ms, sitemaps)
    if http_status is not None and (
        400 <= http_status < 500 or http_status < 200 or 300 <= http_status < 400
    ):
        # 4xx: "unavailable", crawl without restriction. A 3xx reaching here was not
        # followable (no Location, or past the redirect cap): RFC 9309 treats it the same.
        return RobotsRecord(host, RobotsStatus.ALLOW_ALL, None, http_status, error)
    reason = error or f"HTTP {http_status}"
    return RobotsRecord(host, RobotsStatus.DISALLOW_ALL, None, http_status, reason)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules a host's stored robots state imposes."""

    status: RobotsStatus
    parser: Protego | None = None

    @classmethod
    def of(cls, status: RobotsStatus, robots_txt: str | None) -> RobotsRules:
        if status is RobotsStatus.OK and robots_txt:
            return cls(status, parse(robots_txt))
        return cls(status)

    def allows(self, url: str, token: str) -> bool:
        if self.status is RobotsStatus.DISALLOW_ALL:
            return False
        if self.parser is None:
            return True
        try:
            return bool(self.parser.can_fetch(url, token))
        except Exception as exc:  # a URL Protego cannot match: be polite, do not fetch
            log.warning("robots.txt matching failed for %s: %s", url, exc)
            return False


def stored_rules_check(user_agent: str) -> Callable[[str, str | None, str], bool]:
    """`check(robots_status, robots_txt, url)`: whether a host's stored robots state allows
    `url` for `user_agent`, as the fetcher decides it (for `frontier url show` and the API,
    which read host_state rather than fetch robots.txt)."""
    token = product_token(user_agent)

    def check(status: str, robots_txt: str | None, url: str) -> bool:
        return RobotsRules.of(RobotsStatus(status), robots_txt).allows(url, token)

    return check
