"""The HTTP `Link` header (RFC 8288 section 3), read for the canonical a response names
there: `Link: <https://example.com/node/1>; rel="canonical"` counts like the page's
`<link rel="canonical">` (RFC 6596 section 3; Google reads it the same way). Drupal sends
it: `drupal_add_html_head_link($attributes, TRUE)` adds the HTTP `Link:` header beside
the tag (api.drupal.org, includes/common.inc, 7.x), and node pages call it for their
`rel="canonical"` and `rel="shortlink"`, so a Drupal 7 node answers
`Link: </node/69>; rel="canonical",</node/69>; rel="shortlink"`; from 8.7 the targets are
absolute (drupal.org/node/3024321). PDFs and other non-HTML documents can only say it
there. The poller reads it too, for a feed's WebSub hub and topic (`rel="hub"`,
`rel="self"`: W3C WebSub section 4), which the recommendation puts in the headers first.

Written here, not taken from a library: the project's dependencies hold no standalone
parser. aiohttp parses Link only as `ClientResponse.links` (our `SafeClient` keeps the
headers, not the aiohttp response), splits a link's parameters on every ``;``, quoted or
not, and keeps `rel` as one string rather than the token list it is; `requests` (only
installed as tldextract's dependency) splits the target itself on ``;``, so
`<https://example.com/a;jsessionid=1>` loses its path. The grammar is small:

    Link       = #link-value                      (comma-separated, across headers too)
    link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
    link-param = token BWS [ "=" BWS ( token / quoted-string ) ]

Bounded: a header is at most what aiohttp accepts (8 KiB a line), and this runs where the
page is extracted (`fetcher.extract_pool`) or the feed parsed (the poller's parse pool),
never on the event loop. A malformed link is
skipped up to the next comma outside quotes and angle brackets, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

__all__ = ["Link", "canonical_from_links", "link_values", "parse_links"]

MAX_LINKS = 64  # links read per response; a real one sends a handful


@dataclass(frozen=True, slots=True)
class Link:
    target: str  # resolved against the response's URL
    rel: tuple[str, ...]  # lowercased relation types (a token list)
    params: tuple[tuple[str, str], ...]  # every parameter, names lowercased, in order


def link_values(headers: Mapping[str, str]) -> tuple[str, ...]:
    """Every `Link` header value of a response, in order (a multidict holds several)."""
    getall = getattr(headers, "getall", None)
    if getall is not None:
        return tuple(getall("Link", ()))
    value = headers.get("Link")
    return (value,) if value else ()


def parse_links(headers: Iterable[str], base: str) -> list[Link]:
    """The links of every `Link` header value in `headers`, targets resolved against
    `base` (the URL that answered: RFC 8288 section 3.2)."""
    links: list[Link] = []
    for value in headers:
        position = 0
        while position < len(value) and len(links) < MAX_LINKS:
            link, position = _link_value(value, position, base)
            if link is not None:
                links.append(link)
    return links


def canonical_from_links(headers: Iterable[str], base: str) -> str | None:
    """The one target the `Link` headers name as `rel=canonical` (absolute), or None:
    none, or several that disagree (ignored all, as several `<link>` tags are)."""
    found = {link.target for link in parse_links(headers, base) if "canonical" in link.rel}
    return found.pop() if len(found) == 1 else None


def _link_value(text: str, i: int, base: str) -> tuple[Link | None, int]:
    """One link-value from `text[i:]`: the link (None if malformed) and where the next
    one starts (after its comma)."""
    n = len(text)
    i = _skip_space(text, i)
    if i >= n:
        return None, n
    if text[i] != "<":
        return None, _next_link(text, i)
    close = text.find(">", i + 1)
    if close < 0:
        return None, n
    reference = text[i + 1 : close].strip()
    params: list[tuple[str, str]] = []
    i = _skip_space(text, close + 1)
    while i < n and text[i] == ";":
        i = _skip_space(text, i + 1)
        start = i
        while i < n and text[i] not in "=;, \t":
            i += 1
        name = text[start:i].lower()
        i = _skip_space(text, i)
        value = ""
        if i < n and text[i] == "=":
            i = _skip_space(text, i + 1)
            if i < n and text[i] == '"':
                value, i = _quoted(text, i)
            else:
                start = i
                while i < n and text[i] not in ";, \t":
                    i += 1
                value = text[start:i]
            i = _skip_space(text, i)
        if name:
            params.append((name, value))
    if i < n and text[i] != ",":  # junk after the link: skipped with it
        return None, _next_link(text, i)
    i += 1  # past the comma (or the end)
    try:
        target = urljoin(base, reference)
    except ValueError:
        return None, i
    # RFC 8288 section 3.3: only the first rel parameter counts; its value is a list of
    # relation types separated by spaces, compared case-insensitively.
    rel = next((value for name, value in params if name == "rel"), "")
    return Link(target, tuple(rel.lower().split()), tuple(params)), i


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The quoted-string starting at `text[i]` (a ``"``), unescaped, and the index after
    it; an unterminated one runs to the end."""
    out: list[str] = []
    i += 1
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n:
            out.append(text[i + 1])
            i += 2
            continue
        if char == '"':
            return "".join(out), i + 1
        out.append(char)
        i += 1
    return "".join(out), n


def _next_link(text: str, i: int) -> int:
    """Where the link after a malformed one starts: past the next comma outside quotes
    and angle brackets."""
    n = len(text)
    while i < n:
        char = text[i]
        if char == '"':
            _, i = _quoted(text, i)
            continue
        if char == "<":
            close = text.find(">", i + 1)
            i = n if close < 0 else close + 1
            continue
        if char == ",":
            return i + 1
        i += 1
    return n


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    return i
