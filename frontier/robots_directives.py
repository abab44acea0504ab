"""Page-level robots directives: the `X-Robots-Tag` response header and `<meta name="robots">`,
read as Google documents them ("Robots meta tag, data-nosnippet, and X-Robots-Tag
specifications", developers.google.com/search/docs/crawling-indexing/robots-meta-tag):

- `<meta name="robots">` speaks to every crawler, `<meta name="<token>">` to the one whose
  product token it names; both apply, together. Names and contents are case-insensitive.
- An `X-Robots-Tag` value is a comma-separated list of rules; a rule may be preceded by a
  user agent (`X-Robots-Tag: otherbot: noindex, nofollow`): the rules after it, in the
  same header value, are that crawler's. Several headers add up.
- `none` is `noindex, nofollow`; `unavailable_after: <date>` is `noindex` once the date
  has passed; where rules compete, the most restrictive one applies (a `noindex` wins over
  an `index`). Unknown rules are ignored.

Shared by the fetcher (a `noindex` page ends with no document) and the spider (a `nofollow`
page's links are not followed); docs/fetching.md says where we differ from Google.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from frontier.clock import utcnow

NOINDEX = "noindex"
NOFOLLOW = "nofollow"
GENERIC_NAME = "robots"
# Rules whose own syntax has a colon: never read as a user agent in X-Robots-Tag.
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_SCOPED = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*:\s*(.*)", re.DOTALL)
_TOKEN = re.compile(r"[A-Za-z_-]+")


def product_token(user_agent: str) -> str:
    """The product token robots rules are matched against: `frontier-crawler` of
    `frontier-crawler/0.1 (+https://...)` (RFC 9309: letters, `_` and `-` only)."""
    match = _TOKEN.match(user_agent.strip())
    return match.group(0).lower() if match else user_agent.strip().lower()


def names_for(user_agent: str) -> frozenset[str]:
    """The meta names and header scopes that speak to us: `robots` and our product token."""
    return frozenset({GENERIC_NAME, product_token(user_agent)})


def directives(rules: Iterable[str], *, now: datetime | None = None) -> frozenset[str]:
    """The rules of comma-separated lists, lowercased, with `none` and a past
    `unavailable_after` spelt out as what they mean (`noindex`, `nofollow`)."""
    found: set[str] = set()
    for text in rules:
        for rule in text.split(","):
            _add(found, rule.strip().lower(), now)
    return frozenset(found)


def header_directives(
    values: Iterable[str], names: frozenset[str], *, now: datetime | None = None
) -> frozenset[str]:
    """The `X-Robots-Tag` rules (one string per header line) that apply to a crawler known
    by `names`: those without a user agent and those scoped to one of `names`."""
    found: set[str] = set()
    for value in values:
        scope: str | None = None
        for part in value.split(","):
            rule = part.strip()
            scoped = _SCOPED.fullmatch(rule)
            if scoped and scoped.group(1).lower() not in _VALUED:
                scope, rule = scoped.group(1).lower(), scoped.group(2).strip()
            if scope is None or scope in names:
                _add(found, rule.lower(), now)
    return frozenset(found)


def meta_directives(
    metas: Iterable[tuple[str, str]], names: frozenset[str], *, now: datetime | None = None
) -> frozenset[str]:
    """The rules of the `<meta name content>` pairs whose name is one of `names`."""
    return directives((c for n, c in metas if n.strip().lower() in names), now=now)


def meta_selector(names: frozenset[str]) -> str:
    """A CSS selector for the `<meta>` tags named one of `names`, case-insensitively (a
    product token is letters, `_` and `-` only): the page's other metas are never read."""
    return ", ".join(f'meta[name="{name}" i][content]' for name in sorted(names))


def _add(found: set[str], rule: str, now: datetime | None) -> None:
    if rule == "none":
        found.update((NOINDEX, NOFOLLOW))
    elif rule.startswith("unavailable_after"):
        _, _, when = rule.partition(":")
        if _passed(when.strip(), now):
            found.add(NOINDEX)
    elif rule:
        found.add(rule)


def _passed(text: str, now: datetime | None) -> bool:
    """Google reads the date in RFC 822, RFC 850 or ISO 8601; an unreadable one is
    ignored, as Google ignores it."""
    when: datetime | None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        try:
            when = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        except ValueError:
            return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when <= (now or utcnow())
