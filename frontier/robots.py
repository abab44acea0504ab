"""robots.txt per RFC 9309: the one verdict of the fetcher, the spider and the API (and
`frontier url show`). Protego parses; this module decides what it is given and what its
answer means, as pure functions:

- The answer (`answer_status`): a 2xx body is parsed; a 4xx (and a 3xx that could not be
  followed, or more than `ROBOTS_REDIRECTS` redirects) is "unavailable": everything is
  allowed; a 5xx, a timeout or a network error is "unreachable": everything is disallowed
  for now and robots.txt fetched again later, never cached as allow-all.
- Decoding (`decode_robots`): UTF-8, a BOM (even a truncated one) and NUL characters
  dropped, bad bytes replaced; at most `ROBOTS_MAX_BYTES` read (RFC 9309 asks for at least
  500 KiB), the rest ignored.
- The user agent: rules are matched with its product token (`product_token`:
  `frontier-crawler` of `frontier-crawler/0.1 (+https://...)`), never the whole header,
  whose comment may name another crawler; a file's `User-agent: Foo/2.0 bar` line is read
  as `foo`.
- Rules: a group for the crawler of more than `MAX_GROUP_RULES` rules is not used:
  everything is disallowed for now and the fetch retried later, as for a 5xx.
- Crawl-delay (capped by the caller) and Sitemap lines of a 2xx file (`interpret`).

Who asks: the fetcher (`fetcher.robots_step`: `interpret` a fetched answer and store it,
match pages with `RobotsRules`), the spider (`spider.robots`: Scrapy's ROBOTSTXT_PARSER
on `rules_for_answer`), the API and `frontier url show` (`stored_rules_check`).

What an outsider wrote is parsed only in a parse process (`frontier.parse_pool`, under its
time, CPU and memory limits): `interpret`, `rules_for_answer` and `RobotsRules.of` are
the jobs, and what they return is small. Protego keeps every group of a file and costs as
much to pickle as to parse, so `RobotsRules` keeps only the group that applies to the
crawler, and a group is used only up to `MAX_GROUP_RULES` rules, which bounds what
matching a page costs on the event loop (docs/fetching.md, "robots.txt").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protego import Protego

from frontier.hosts import RobotsRecord
from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.robots_directives import product_token
from frontier.states import RobotsStatus

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
# The rules of the crawler's group that are matched per page, on the event loop: Protego
# tries them one by one (what that costs: docs/fetching.md, "robots.txt: parsed in a parse
# process"); real files hold far fewer (Wikipedia's: under 1,000 in all).
MAX_GROUP_RULES = 2000
ROBOTS_REDIRECTS = 5
# A `User-agent:` line's product token and what follows it on the line (a version, a
# comment), up to a `#`: the token is letters, `_` and `-` (RFC 9309 2.2.1).
_UA_LINE = re.compile(
    r"(?im)^([ \t]*user-?agent[ \t]*:[ \t]*)([A-Za-z_-]+)[^A-Za-z_\-\r\n#][^\r\n#]*"
)
_BOM = b"\xef\xbb\xbf"


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
    """`User-agent: Foo/2.0 Bar` names the product token `Foo` (RFC 9309 2.2.1: the value
    is a product token; Google's parser reads it up to the first character that cannot be
    in one). Protego would match the whole value, so the rest of such a line is cut here
    (a regex: no library does this)."""
    return _UA_LINE.sub(r"\1\2", text)


def parse(text: str) -> Protego | None:
    """Protego's parse of `text`; None (and a log line) if it cannot be parsed at all."""
    try:
        return Protego.parse(_product_tokens_only(text))
    except Exception as exc:  # a lenient parser that still failed: treat as no rules
        log.warning("unparseable robots.txt (%s); treating it as empty", exc)
        return None


def answer_status(http_status: int | None) -> RobotsStatus:
    """What a robots.txt answer's status means (RFC 9309 2.3.1): `http_status` None is no
    answer (a timeout, a network error)."""
    if http_status is None or http_status >= 500:
        # "unreachable": disallow all for now, and fetch robots.txt again later
        return RobotsStatus.DISALLOW_ALL
    if 200 <= http_status < 300:
        return RobotsStatus.OK
    # 4xx: "unavailable", crawl without restriction. A 1xx or a 3xx reaching here was not
    # followable (no Location, or past the redirect cap): RFC 9309 treats it the same.
    return RobotsStatus.ALLOW_ALL


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
    status = answer_status(http_status)
    if status is RobotsStatus.OK:
        text = decode_robots(body or b"")
        parsed = parse(text)
        delay_ms = None
        sitemaps: tuple[str, ...] = ()
        over = _over_rules(parsed, token)
        if over:
            return RobotsRecord(host, RobotsStatus.DISALLOW_ALL, None, http_status, over)
        if parsed is not None:
            delay = parsed.crawl_delay(token)
            if delay is not None and delay >= 0:
                delay_ms = min(int(delay * 1000), max_crawl_delay_ms)
            sitemaps = tuple(dict.fromkeys(s.strip() for s in parsed.sitemaps if s.strip()))
        return RobotsRecord(host, RobotsStatus.OK, text, http_status, None, delay_ms, sitemaps)
    if status is RobotsStatus.ALLOW_ALL:
        return RobotsRecord(host, RobotsStatus.ALLOW_ALL, None, http_status, error)
    reason = error or f"HTTP {http_status}"
    return RobotsRecord(host, RobotsStatus.DISALLOW_ALL, None, http_status, reason)


def _group(parsed: Protego | None, token: str) -> Any:
    """Protego's rule set for `token` (None: no group applies). Protego has no public
    way to read one group, so its own choice (`_get_matching_rule_set`) is used here and
    in `_only_group`, nowhere else; the conformance suite (RFC 9309 and Google's cases,
    tests/unit/test_fetch_robots_conformance.py) goes through both."""
    return None if parsed is None else parsed._get_matching_rule_set(token)


def _over_rules(parsed: Protego | None, token: str) -> str | None:
    """Why the group for `token` is not used (more rules than `MAX_GROUP_RULES`)."""
    group = _group(parsed, token)
    count = 0 if group is None else len(group._rules)
    if count <= MAX_GROUP_RULES:
        return None
    return (
        f"robots.txt unusable: {count} rules for {token!r}, more than the "
        f"{MAX_GROUP_RULES} read: disallowed for now"
    )


def _only_group(parsed: Protego | None, token: str) -> Protego | None:
    """A Protego holding only the group for `token` of `parsed` (its decisions for
    `token` are the same), or None when no group applies: small to pickle."""
    group = _group(parsed, token)
    if group is None:
        return None
    only = Protego()
    only._user_agents = {group.user_agent: group}
    group._parser_instance = only
    return only


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules a host's stored robots state imposes on the crawler (`token`)."""

    status: RobotsStatus
    parser: Protego | None = None  # the crawler's group only
    error: str | None = None  # why the stored robots.txt is not used (DISALLOW_ALL)

    @classmethod
    def of(cls, status: RobotsStatus, robots_txt: str | None, token: str) -> RobotsRules:
        """The rules of a stored state; a job for a parse process (`robots_txt` comes
        from outside)."""
        if status is not RobotsStatus.OK or not robots_txt:
            return cls(status)
        return cls.of_parsed(parse(robots_txt), token)

    @classmethod
    def of_parsed(cls, parsed: Protego | None, token: str) -> RobotsRules:
        """The rules of a parsed 2xx robots.txt (None: nothing could be parsed)."""
        over = _over_rules(parsed, token)
        if over:
            return cls(RobotsStatus.DISALLOW_ALL, error=over)
        return cls(RobotsStatus.OK, _only_group(parsed, token))

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

    def crawl_delay_s(self, token: str) -> float | None:
        """The Crawl-delay of the crawler's group, in seconds (None: none, or unusable)."""
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(token)
        return delay if delay is not None and delay >= 0 else None


def rules_for_answer(http_status: int | None, body: bytes | None, token: str) -> RobotsRules:
    """The rules one robots.txt answer imposes on `token`, for a crawler that keeps no
    host state (the spider); a job for a parse process when the answer has a body.
    `http_status` None is no answer. The same verdict as `interpret`, then `RobotsRules.of`
    on what it stored (tests/unit/test_robots_verdict.py holds them to it)."""
    status = answer_status(http_status)
    if status is RobotsStatus.ALLOW_ALL:
        return RobotsRules(status)
    if status is RobotsStatus.DISALLOW_ALL:
        answer = "no answer" if http_status is None else f"HTTP {http_status}"
        return RobotsRules(status, error=f"robots.txt unreachable ({answer}): disallowed for now")
    text = decode_robots(body or b"")
    return RobotsRules.of_parsed(parse(text), token) if text else RobotsRules(status)


def stored_allows(status: str, robots_txt: str | None, url: str, token: str) -> bool:
    """Whether a host's stored robots state allows `url` for `token`; a job for a parse
    process (the stored robots.txt came from outside)."""
    return RobotsRules.of(RobotsStatus(status), robots_txt, token).allows(url, token)


def stored_rules_check(
    user_agent: str, parser: ParsePool
) -> Callable[[str, str | None, str], Awaitable[bool | None]]:
    """`await check(robots_status, robots_txt, url)`: whether a host's stored robots state
    allows `url` for `user_agent`, as the fetcher decides it (for `frontier url show` and
    the API, which read host_state rather than fetch robots.txt), parsed and matched in
    `parser`'s process; None when that parse went over a limit."""
    token = product_token(user_agent)

    async def check(status: str, robots_txt: str | None, url: str) -> bool | None:
        try:
            return await parser.run(stored_allows, status, robots_txt, url, token)
        except ParseLimitExceeded as exc:
            log.warning("robots.txt of %s not matched: %s", url, exc)
            return None

    return check
