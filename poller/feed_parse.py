"""Turn a fetched feed body into `Entry` objects.

Plain, well-formed RSS 2.0/1.0 and Atom 1.0 take a fast lxml path (`feed_fastpath`) that
gives exactly feedparser's entries. Everything else (RSS 0.9x, Atom 0.3, any feed the fast
path is not certain of) goes through feedparser, which is only ever given the bytes and
the response headers (never a path or URL; the feed's URL is passed as Content-Location
so relative links and `xml:base` resolve). Released feedparser does not read JSON Feed,
so that is parsed here with the standard json module (a small, fully specified format).
Documents declaring XML entities are refused before any parser sees them.

A document that is not a feed at all raises `DocumentRefused`; a lenient parse of a broken
but recognisable feed keeps what could be read.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import feedparser
from feedparser.encodings import convert_to_utf8, parse_content_type

from frontier.link_header import parse_links
from frontier.urls import InvalidURL, normalize_url
from poller.entries import Entry, absolute, build_entry
from poller.errors import DocumentRefused
from poller.feed_fastpath import parse_fast
from poller.xml_safety import refuse_entity_declarations

JSON_FEED_TYPES = ("application/feed+json", "application/json", "text/json")
_FEED_ROOT = re.compile(rb"<(?:rdf:RDF|rss|feed)[\s>]")  # an empty but well-formed feed
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True, slots=True)
class Skipped:
    title: str | None
    reason: str


@dataclass(slots=True)
class ParsedFeed:
    kind: str  # feedparser's version (rss20, atom10, ...) or "json"
    title: str | None = None
    entries: list[Entry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    items_seen: int = 0  # entries in the document, usable or not
    ttl: object = None  # RSS <ttl>, minutes, as the feed wrote it
    problem: str | None = None  # what a lenient parse had to overlook
    hub: str | None = None  # the WebSub hub it declares (Link header first, then the feed)
    topic: str | None = None  # its rel="self" (the WebSub topic), or the URL it came from


def parse_feed(body: bytes, headers: Mapping[str, str], url: str) -> ParsedFeed:
    """Parse `body` fetched from `url`; raise `DocumentRefused` if it is not a usable feed."""
    if not body.strip():
        raise DocumentRefused("empty document")
    content_type = (headers.get("Content-Type") or headers.get("content-type") or "").lower()
    if _looks_like_json(body, content_type):
        parsed = _parse_json_feed(body, url)
    else:
        refuse_entity_declarations(body, "feed", parse_content_type(content_type)[1])
        parsed = _parse_xml_feed(body, headers, url)
    _websub_links(parsed, headers, url)
    return parsed


def parse_feeds(
    documents: list[tuple[bytes, Mapping[str, str], str]],
) -> list[ParsedFeed | str]:
    """`parse_feed` over several documents in one parse job (WebSub notifications: one
    process for a look's notifications, not one each); a refused one gives its reason."""
    parsed: list[ParsedFeed | str] = []
    for body, headers, url in documents:
        try:
            parsed.append(parse_feed(body, headers, url))
        except DocumentRefused as exc:
            parsed.append(str(exc))
    return parsed


def _websub_links(parsed: ParsedFeed, headers: Mapping[str, str], url: str) -> None:
    """The hub and topic (W3C WebSub section 4): the response's `Link` headers first, then
    what the feed declares; the topic defaults to the URL the feed came from."""
    values = [value for name, value in headers.items() if name.lower() == "link"]
    declared: dict[str, str] = {}
    for link in parse_links(values, url):
        for rel in ("hub", "self"):
            if rel in link.rel:
                declared.setdefault(rel, link.target)
    parsed.hub = declared.get("hub") or parsed.hub
    parsed.topic = declared.get("self") or parsed.topic
    if parsed.hub:
        parsed.topic = parsed.topic or url
    else:
        parsed.topic = None


def _looks_like_json(body: bytes, content_type: str) -> bool:
    head = body[:64]
    for bom in _BOMS:
        if head.startswith(bom):
            head = head[len(bom) :]
    head = head.lstrip()
    if head.startswith(b"{"):
        return True
    return any(t in content_type for t in JSON_FEED_TYPES) and not head.startswith(b"<")


def _parse_xml_feed(body: bytes, headers: Mapping[str, str], url: str) -> ParsedFeed:
    lowered = {k.lower(): v for k, v in headers.items()}
    lowered["content-location"] = url
    fast = parse_with_fast_path(body, lowered, url)
    return fast if fast is not None else parse_with_feedparser(body, lowered, url)


def parse_with_fast_path(body: bytes, lowered: Mapping[str, str], url: str) -> ParsedFeed | None:
    """Plain RSS/Atom read as feedparser would, without its cost; None: use feedparser."""
    fast = parse_fast(body, lowered, url)
    if fast is None:
        return None
    parsed = ParsedFeed(
        kind=fast.kind,
        title=fast.title,
        ttl=fast.ttl,
        hub=fast.links.get("hub"),
        topic=fast.links.get("self"),
    )
    parsed.items_seen = fast.items_seen
    _collect(parsed, fast.raw)
    return parsed


def parse_with_feedparser(body: bytes, lowered: Mapping[str, str], url: str) -> ParsedFeed:
    """The slow path (any RSS/Atom feedparser reads); `lowered`: lower-cased headers with
    Content-Location set to `url`."""
    # feedparser decodes by its own rules (RFC 3023, BOM, declaration, fallbacks); what it
    # will parse is checked once more, so no encoding it picks can hide an entity.
    try:
        decoded = convert_to_utf8(lowered, body, {})
    except (UnicodeDecodeError, ValueError) as exc:  # a declared encoding the bytes break,
        # or a NUL in what it decoded (feedparser 6.0.14 raises instead of marking bozo)
        raise DocumentRefused(f"unreadable feed encoding: {exc}") from None
    refuse_entity_declarations(decoded, "feed")
    try:
        result = feedparser.parse(
            # No relative-URI rewriting inside HTML bodies: they are only reduced to text here,
            # and skipping it halves feedparser's time. Entry links and xml:base still resolve.
            body,
            response_headers=lowered,
            resolve_relative_uris=False,
            sanitize_html=False,
        )
    except Exception as exc:  # feedparser on hostile input: refuse, never crash the poller
        raise DocumentRefused(f"unparseable feed: {type(exc).__name__}: {exc}") from None
    version = result.get("version") or ""
    raw_entries = result.get("entries") or []
    problem = None
    bozo = result.get("bozo_exception")
    if result.get("bozo") and not isinstance(bozo, feedparser.NonXMLContentType):
        problem = _describe(bozo)
    if not version and not raw_entries and not (problem is None and _FEED_ROOT.search(body[:4096])):
        raise DocumentRefused(f"not a feed ({problem or 'no RSS, Atom or RDF root element'})")
    feed = result.get("feed") or {}
    links = {
        str(link.get("rel")).lower(): absolute(link.get("href"), url)
        for link in reversed(feed.get("links") or [])
        if link.get("rel") in ("hub", "self") and link.get("href")
    }  # reversed: the first of each rel wins
    parsed = ParsedFeed(
        kind=version or "unknown",
        title=feed.get("title"),
        ttl=feed.get("ttl"),
        problem=problem,
        hub=links.get("hub"),
        topic=links.get("self"),
    )
    parsed.items_seen = len(raw_entries)
    _collect(parsed, (_from_feedparser(e, url) for e in raw_entries))
    return parsed


def _describe(exc: object) -> str:
    text = str(exc).splitlines()[0] if exc is not None and str(exc) else type(exc).__name__
    return text[:300]


def _from_feedparser(entry: Mapping[str, Any], base: str) -> tuple[str | None, dict[str, Any]]:
    link = entry.get("link")
    if not link:
        for candidate in entry.get("links") or []:
            if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
                link = candidate["href"]
                break
    if not link:
        guid = entry.get("id") or ""
        if isinstance(guid, str) and guid.startswith(("http://", "https://")):
            link = guid
    contents = [c.get("value") or "" for c in entry.get("content") or []]
    fields = {
        "title": entry.get("title"),
        "summary_html": entry.get("summary"),
        "content_html": max(contents, key=len) if contents else None,
        "author": entry.get("author"),
        "published_at": _struct_time(entry.get("published_parsed"))
        or (_struct_time(entry["updated_parsed"]) if "updated_parsed" in entry else None),
        "image_url": _image(entry, base),
    }
    return absolute(link, base), fields


def _struct_time(value: Any) -> datetime | None:
    if not isinstance(value, time.struct_time):
        return None
    try:
        return datetime(*value[:6], tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


def _image(entry: Mapping[str, Any], base: str) -> str | None:
    for thumb in entry.get("media_thumbnail") or []:
        if thumb.get("url"):
            return absolute(thumb["url"], base)
    for media in entry.get("media_content") or []:
        kind = str(media.get("type") or "")
        if media.get("url") and (media.get("medium") == "image" or kind.startswith("image/")):
            return absolute(media["url"], base)
    for link in entry.get("links") or []:
        if link.get("rel") == "enclosure" and str(link.get("type") or "").startswith("image/"):
            return absolute(link.get("href"), base)
    image = entry.get("image")
    if isinstance(image, Mapping) and image.get("href"):
        return absolute(image["href"], base)
    return None


def _parse_json_feed(body: bytes, url: str) -> ParsedFeed:
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DocumentRefused(f"not a JSON Feed: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise DocumentRefused("not a JSON Feed: no `items` list")
    base = absolute(document.get("feed_url"), url) or url
    hubs = [h for h in document.get("hubs") or [] if isinstance(h, dict)]
    hub = next((absolute(_text(h.get("url")), url) for h in hubs if _text(h.get("url"))), None)
    parsed = ParsedFeed(
        kind="json",
        title=_text(document.get("title")),
        hub=hub,
        topic=absolute(_text(document.get("feed_url")), url),
    )
    items = [item for item in document["items"] if isinstance(item, dict)]
    parsed.items_seen = len(document["items"])
    _collect(parsed, (_from_json_item(item, base, document) for item in items))
    return parsed


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _from_json_item(
    item: Mapping[str, Any], base: str, feed: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    link = _text(item.get("url")) or _text(item.get("external_url"))
    if not link:
        guid = _text(item.get("id"))
        link = guid if guid and guid.startswith(("http://", "https://")) else None
    authors = item.get("authors") or feed.get("authors") or []
    author = item.get("author") or feed.get("author")
    if isinstance(authors, list) and authors and isinstance(authors[0], dict):
        author = authors[0]
    fields = {
        "title": _text(item.get("title")),
        "summary_html": _text(item.get("summary")),
        "content_html": _text(item.get("content_html")) or _text(item.get("content_text")),
        "author": _text(author.get("name")) if isinstance(author, dict) else None,
        "published_at": _iso_date(item.get("date_published"))
        or _iso_date(item.get("date_modified")),
        "image_url": absolute(_text(item.get("image")) or _text(item.get("banner_image")), base),
    }
    return absolute(link, base), fields


def _iso_date(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _collect(parsed: ParsedFeed, raw: Iterable[tuple[str | None, dict[str, Any]]]) -> None:
    """Build entries, dropping those without a usable URL and repeats within the poll."""
    seen: set[str] = set()
    for link, fields in raw:
        title = fields.get("title")
        if not link:
            parsed.skipped.append(Skipped(title, "no link"))
            continue
        try:
            key = normalize_url(link)
        except InvalidURL as exc:
            parsed.skipped.append(Skipped(title, f"unusable link: {exc.reason}"))
            continue
        if key in seen:
            parsed.skipped.append(Skipped(title, "repeated within the feed"))
            continue
        seen.add(key)
        parsed.entries.append(build_entry(url=link, **fields))
