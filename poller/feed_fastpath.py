"""A fast path for plain, well-formed RSS 2.0, RSS 1.0 (RDF) and Atom 1.0 feeds, on lxml.

feedparser is correct on the messy web but slow (a pure-Python SAX handler per element).
Most feeds are plain: UTF-8, well-formed, a handful of common elements per item. For those,
`parse_fast` reads the document with lxml (no entity resolution, no DTD, no network) and
reproduces, element by element, what feedparser 6.0 stores for each entry: the same raw
link, title, summary, content, author, dates and image candidates. The caller then runs the
same normalisation on them, so both paths give identical `Entry` lists.

It is hand-written (no library mirrors feedparser's field rules) and deliberately narrow:
it returns None — the caller falls back to feedparser — whenever it meets anything whose
effect it does not reproduce with certainty: an encoding other than UTF-8/ASCII as
feedparser would pick it, a DOCTYPE, any parser warning, `xml:base`, an unknown root, an
element or attribute inside an entry it does not map, a repeated field, markup inside a
text field, Atom xhtml content, C1 control characters. tests/unit/test_feed_fastpath.py
runs every corpus feed through both paths and checks they agree wherever this one accepts.
"""

from __future__ import annotations

import contextlib
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import feedparser
from feedparser.datetimes import _parse_date  # the very date rules the slow path applies
from feedparser.encodings import RE_XML_PI_ENCODING, parse_content_type
from lxml import etree

from poller.entries import absolute

# The field rules below are feedparser 6.0's; another version disables the fast path.
ENABLED = feedparser.__version__.startswith("6.0.")

RSS10 = "http://purl.org/rss/1.0/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
ATOM = "http://www.w3.org/2005/Atom"
CONTENT = "http://purl.org/rss/1.0/modules/content/"
DC = "http://purl.org/dc/elements/1.1/"
MEDIA = ("http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss")
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
NOT_OWN = "{urn:frontier:none}"  # no element is in this namespace
_VERSION_URIS = ("http://my.netscape.com/rdf/simple/0.9/", RSS10.lower(), ATOM.lower())
_UTF8 = ("utf-8", "utf8", "us-ascii", "ascii")
_C1 = re.compile("[\x80-\x9f]")
_URIFIXER = re.compile("^([A-Za-z][A-Za-z0-9+-.]*://)(/*)(.*?)")  # feedparser.urls
_AMP_REF = re.compile("&([A-Za-z0-9_]+);")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_ATOM_TEXT_TYPES = {
    None: "text/plain",
    "text": "text/plain",
    "html": "text/html",
    "text/plain": "text/plain",
    "text/html": "text/html",
}


class Unsupported(Exception):
    """Something the fast path does not reproduce with certainty: use feedparser."""


@dataclass(slots=True)
class FastFeed:
    kind: str
    title: str | None
    ttl: str | None
    raw: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)  # the feed's atom:link hub and self

    @property
    def items_seen(self) -> int:
        return len(self.raw)


def parse_fast(body: bytes, headers: Mapping[str, str], url: str) -> FastFeed | None:
    """The feed as feedparser would read it, or None where only feedparser will do.

    `headers` are the lower-cased response headers feedparser is given; `url` its base."""
    if not ENABLED:
        return None
    try:
        data = _utf8_body(body, headers)
        parser = etree.XMLParser(
            encoding="utf-8",
            resolve_entities=False,
            no_network=True,
            huge_tree=False,
            load_dtd=False,
            recover=False,
            remove_comments=False,
            collect_ids=False,
        )
        root = etree.fromstring(data, parser)
        if len(parser.error_log):
            return None
        return _Reader(url).feed(root)
    except (Unsupported, etree.XMLSyntaxError, ValueError, UnicodeError):
        return None


def _utf8_body(body: bytes, headers: Mapping[str, str]) -> bytes:
    """`body` without a UTF-8 BOM, when feedparser would decode it as UTF-8 (or ASCII) at
    its first try; the rules are those of feedparser.encodings.convert_to_utf8."""
    if body[:1] in (b"\x00", b"\xfe", b"\xff", b"\x4c") or body[1:2] == b"\x00":
        raise Unsupported("UTF-16/32 or EBCDIC")
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    if b"<!DOCTYPE" in body or b"<!doctype" in body:
        raise Unsupported("DOCTYPE")
    match = RE_XML_PI_ENCODING.match(body)
    xml_encoding = match.group(1).decode("utf-8").lower() if match else ""
    content_type, http_encoding = parse_content_type(headers.get("content-type") or "")
    if content_type in (
        "application/xml",
        "application/xml-dtd",
        "application/xml-external-parsed-entity",
    ) or (content_type.startswith("application/") and content_type.endswith("+xml")):
        encoding = http_encoding or xml_encoding or "utf-8"
    elif content_type.startswith("text/"):
        encoding = http_encoding or "us-ascii"
    elif "content-type" not in headers:
        encoding = xml_encoding or "iso-8859-1"
    else:
        encoding = xml_encoding or "utf-8"
    if encoding.lower() not in _UTF8:
        raise Unsupported(f"encoding {encoding}")
    text = body.decode(encoding)  # UnicodeError: feedparser would try other encodings
    if _C1.search(text):  # feedparser maps these to cp1252 code points
        raise Unsupported("C1 control characters")
    return body


def _urljoin(base: str, uri: str) -> str:
    """feedparser.urls._urljoin."""
    uri = _URIFIXER.sub(r"\1\3", uri)
    try:
        return urllib.parse.urljoin(base, uri)
    except ValueError:
        return ""


def _fix_text(output: str) -> str:
    """The end of feedparser's `pop` on a (stripped) value: undo UTF-8 read as Latin-1."""
    with contextlib.suppress(UnicodeEncodeError, UnicodeDecodeError):
        output = output.encode("iso-8859-1").decode("utf-8")
    if _C1.search(output):
        raise Unsupported("C1 control characters")
    return output


def _raw(element: Any) -> str:
    """The element's stripped text; markup, comments or processing instructions inside it
    are reconstructed by feedparser, so they send the feed to the slow path."""
    if len(element):
        raise Unsupported(f"markup inside <{element.tag}>")
    return (element.text or "").strip()


def _text(element: Any) -> str:
    return _fix_text(_raw(element))


def _attrs(element: Any, allowed: tuple[str, ...]) -> dict[str, str]:
    """Attributes by name (feedparser lower-cases them); xml:lang is ignored."""
    found: dict[str, str] = {}
    for name, value in element.attrib.items():
        if name == XML_LANG:
            continue
        lowered = name.lower()
        if name.startswith("{") or lowered not in allowed or lowered in found:
            raise Unsupported(f"attribute {name} on <{element.tag}>")
        found[lowered] = value
    return found


def _date(value: str) -> time.struct_time | None:
    parsed: time.struct_time | None = _parse_date(value)
    return parsed


def _struct_time(value: time.struct_time | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime(*value[:6], tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


@dataclass(slots=True)
class _Entry:
    """The keys of one feedparser entry that the poller reads."""

    link: str | None = None
    links: list[dict[str, str]] = field(default_factory=list)
    id: str | None = None
    title: str | None = None
    summary: str | None = None
    content: list[str] = field(default_factory=list)
    author: str | None = None
    published: time.struct_time | None = None
    updated: time.struct_time | None = None
    has_published: bool = False
    has_updated: bool = False
    thumbnails: list[str] = field(default_factory=list)
    media: list[dict[str, str]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def once(self, key: str) -> None:
        if key in self.seen:
            raise Unsupported(f"repeated {key}")
        self.seen.add(key)

    def fields(self, base: str) -> tuple[str | None, dict[str, Any]]:
        """As feed_parse._from_feedparser reads a feedparser entry."""
        link = self.link
        if not link:
            for candidate in self.links:
                if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
                    link = candidate["href"]
                    break
        if not link:
            guid = self.id or ""
            if guid.startswith(("http://", "https://")):
                link = guid
        published = _struct_time(self.published)
        if published is None and self.has_updated:
            published = _struct_time(self.updated)
        return absolute(link, base), {
            "title": self.title,
            "summary_html": self.summary,
            "content_html": max(self.content, key=len) if self.content else None,
            "author": self.author,
            "published_at": published,
            "image_url": self._image(base),
        }

    def _image(self, base: str) -> str | None:
        for thumb in self.thumbnails:
            if thumb:
                return absolute(thumb, base)
        for media in self.media:
            kind = media.get("type") or ""
            if media.get("url") and (media.get("medium") == "image" or kind.startswith("image/")):
                return absolute(media["url"], base)
        for link in self.links:
            if link.get("rel") == "enclosure" and (link.get("type") or "").startswith("image/"):
                return absolute(link.get("href"), base)
        return None


class _Reader:
    def __init__(self, base: str) -> None:
        self.base = base
        self._joined: dict[str, str] = {}  # an item's link and guid are often the same

    def feed(self, root: Any) -> FastFeed:
        if any(XML_BASE in el.attrib for el in root.iter(etree.Element)):
            raise Unsupported("xml:base")
        declared = [uri.lower() for uri in root.nsmap.values()]
        versions = [uri for uri in declared if uri in _VERSION_URIS]
        if (
            root.tag == "rss"
            and root.get("version", "").startswith("2.")
            and versions in ([], [ATOM.lower()])
        ):
            channels = root.findall("channel")
            if len([c for c in root if isinstance(c.tag, str)]) != 1 or len(channels) != 1:
                raise Unsupported("not one <channel> alone")
            items = channels[0].findall("item")
            return self._read(root, channels[0], items, "rss20", self._rss_item)
        if root.tag == f"{{{RDF}}}RDF" and versions == [RSS10.lower()]:
            channel = root.find(f"{{{RSS10}}}channel")
            if channel is None:
                raise Unsupported("RDF without channel")
            items = root.findall(f"{{{RSS10}}}item")
            return self._read(root, channel, items, "rss10", self._rdf_item)
        if root.tag == f"{{{ATOM}}}feed" and versions == [ATOM.lower()]:
            items = root.findall(f"{{{ATOM}}}entry")
            return self._read(root, root, items, "atom10", self._atom_entry)
        raise Unsupported(f"root <{root.tag}>")

    def _read(
        self,
        root: Any,
        channel: Any,
        items: list[Any],
        kind: str,
        read_item: Callable[[Any], _Entry],
    ) -> FastFeed:
        # feedparser starts an entry at any element named item or entry, wherever it is.
        starts = sum(
            1
            for el in root.iter(etree.Element)
            if etree.QName(el).localname.lower() in ("item", "entry")
        )
        if starts != len(items):
            raise Unsupported("entries outside the expected place")
        ns = etree.QName(channel).namespace
        title, ttl, first_item = None, None, None
        links: dict[str, str] = {}
        item_set = set(items)
        for position, child in enumerate(channel):
            if not isinstance(child.tag, str):
                continue
            local = etree.QName(child).localname.lower()
            if child in item_set:
                first_item = position if first_item is None else first_item
            elif local == "title":
                if (
                    child.tag != (f"{{{ns}}}title" if ns else "title")
                    or title is not None
                    or first_item is not None
                ):
                    raise Unsupported("feed title")
                title = _text(child)
            elif local == "ttl":
                if child.tag != "ttl":
                    raise Unsupported("ttl")
                ttl = _text(child)
            elif child.tag == f"{{{ATOM}}}link":  # WebSub discovery (feedparser: feed.links)
                rel, href = (child.get("rel") or "").strip().lower(), child.get("href")
                if rel in ("hub", "self") and href and href.strip():
                    links.setdefault(rel, _urljoin(self.base, href.strip()))
            elif local in ("item", "entry", "source", "content"):
                raise Unsupported(f"<{local}> in the channel")
        nested = (
            el
            for child in channel
            if child not in item_set
            for el in child.iter(etree.Element)
            if el is not child
        )
        if title is None and any(etree.QName(el).localname.lower() == "title" for el in nested):
            raise Unsupported("a nested title and no feed title")
        feed = FastFeed(kind=kind, title=title, ttl=ttl, links=links)
        feed.raw = [read_item(item).fields(self.base) for item in items]
        return feed

    def _resolve(self, value: str) -> str:
        if not value:
            return value
        joined = self._joined.get(value)
        if joined is None:
            joined = self._joined[value] = _urljoin(self.base, value)
        return joined

    def _rss_common(self, entry: _Entry, child: Any, own: str) -> bool:
        """Elements RSS 2.0 and RSS 1.0 items (and Atom entries, for the namespaced ones)
        share; `own` is the item's own "{namespace}" ("" for none, NOT_OWN for Atom).
        False if `child` is not one of them."""
        tag = child.tag
        if tag == own + "title":
            entry.once("title")
            _attrs(child, ())
            entry.title = _text(child)
        elif tag == own + "link":
            entry.once("link")
            _attrs(child, ())
            value = _fix_text(self._resolve(_raw(child)))
            value = _AMP_REF.sub(r"&\g<1>", value.replace("&amp;", "&"))
            entry.link = value
            entry.links.append(
                {"rel": "alternate", "type": "text/html", **({"href": value} if value else {})}
            )
        elif tag == own + "description" or tag == f"{{{CONTENT}}}encoded":
            _attrs(child, ())
            if tag == f"{{{CONTENT}}}encoded":
                entry.once("content")
                value = _text(child)
                entry.content.append(value)
                if entry.summary is None:
                    entry.summary = value
            else:
                entry.once("description")
                entry.summary = _text(child)
        elif tag == f"{{{DC}}}creator" or tag == own + "author":
            entry.once("author")
            _attrs(child, ())
            entry.author = _text(child)
        elif tag == f"{{{DC}}}date":
            entry.once("updated")
            _attrs(child, ())
            entry.updated, entry.has_updated = _date(_text(child)), True
        elif tag in (f"{{{DC}}}subject", own + "category", own + "comments"):
            pass  # tags and comment links: no field of ours
        elif tag in tuple(f"{{{m}}}thumbnail" for m in MEDIA):
            attrs = _attrs(child, ("url", "width", "height", "time"))
            if "url" not in attrs or len(child) or (child.text or "").strip():
                raise Unsupported("media:thumbnail without url")
            entry.thumbnails.append(attrs["url"])
        elif tag in tuple(f"{{{m}}}content" for m in MEDIA):
            if len(child):
                raise Unsupported("media:content with children")
            entry.media.append(
                _attrs(
                    child,
                    (
                        "url",
                        "type",
                        "medium",
                        "width",
                        "height",
                        "filesize",
                        "duration",
                        "lang",
                        "bitrate",
                        "framerate",
                        "expression",
                        "isdefault",
                    ),
                )
            )
        else:
            return False
        return True

    def _rss_item(self, item: Any) -> _Entry:
        if item.attrib:
            raise Unsupported("attributes on <item>")
        entry = _Entry()
        for child in item:
            if not isinstance(child.tag, str):
                continue  # a comment between elements: feedparser ignores it too
            if self._rss_common(entry, child, ""):
                continue
            tag = child.tag
            if tag == "guid":
                entry.once("id")
                attrs = _attrs(child, ("ispermalink",))
                permalink = attrs.get("ispermalink", "true") == "true"
                value = _raw(child)
                entry.id = value = _fix_text(self._resolve(value) if permalink else value)
                if permalink and entry.link is None:
                    entry.link = value
            elif tag == "pubDate":
                entry.once("published")
                _attrs(child, ())
                entry.published, entry.has_published = _date(_text(child)), True
            elif tag == "enclosure":
                attrs = _attrs(child, ("url", "type", "length"))
                if len(child) or "url" not in attrs:
                    raise Unsupported("enclosure")
                entry.links.append(
                    {"type": attrs.get("type", ""), "href": attrs["url"], "rel": "enclosure"}
                )
            else:
                raise Unsupported(f"<{tag}> in an item")
        return entry

    def _rdf_item(self, item: Any) -> _Entry:
        about = item.attrib.get(f"{{{RDF}}}about")
        if len(item.attrib) != (1 if about is not None else 0):
            raise Unsupported("attributes on <item>")
        entry = _Entry(id=about or None)
        for child in item:
            if not isinstance(child.tag, str):
                continue
            if not self._rss_common(entry, child, f"{{{RSS10}}}"):
                raise Unsupported(f"<{child.tag}> in an item")
        return entry

    def _atom_entry(self, item: Any) -> _Entry:
        _attrs(item, ())
        entry = _Entry()
        atom = f"{{{ATOM}}}"
        for child in item:
            if not isinstance(child.tag, str):
                continue
            tag = child.tag
            if tag == atom + "title":
                entry.once("title")
                self._atom_text(child)
                entry.title = _text(child)
            elif tag == atom + "link":
                attrs = _attrs(child, ("href", "rel", "type", "title", "length", "hreflang"))
                if "href" not in attrs or not attrs["href"] or len(child):
                    raise Unsupported("atom:link without href")
                attrs.setdefault("rel", "alternate")
                default_type = "application/atom+xml" if attrs["rel"] == "self" else "text/html"
                attrs.setdefault("type", default_type)
                attrs["href"] = _urljoin(self.base, attrs["href"])
                entry.links.append(attrs)
                if attrs["rel"] == "alternate" and _content_type(attrs["type"]) in _HTML_TYPES:
                    entry.link = attrs["href"]
            elif tag == atom + "id":
                entry.once("id")
                _attrs(child, ())
                entry.id = _fix_text(self._resolve(_raw(child)))
                if entry.link is None:
                    entry.link = entry.id
            elif tag == atom + "updated":
                entry.once("updated")
                _attrs(child, ())
                entry.updated, entry.has_updated = _date(_text(child)), True
            elif tag == atom + "published":
                entry.once("published")
                _attrs(child, ())
                entry.published, entry.has_published = _date(_text(child)), True
            elif tag == atom + "summary":
                entry.once("summary")
                self._atom_text(child)
                if entry.summary is not None:
                    raise Unsupported("summary after content")
                entry.summary = _text(child)
            elif tag == atom + "content":
                entry.once("content")
                self._atom_text(child)
                value = _text(child)
                entry.content.append(value)
                if entry.summary is None:
                    entry.summary = value
            elif tag == atom + "author":
                entry.once("author")
                entry.author = self._atom_author(child)
            elif tag == atom + "category":
                _attrs(child, ("term", "scheme", "label"))
            elif not tag.startswith(atom) and self._rss_common(entry, child, NOT_OWN):
                pass  # Dublin Core, content:encoded and Media RSS as in RSS items
            else:
                raise Unsupported(f"<{tag}> in an entry")
        return entry

    @staticmethod
    def _atom_text(element: Any) -> None:
        attrs = _attrs(element, ("type",))
        if attrs.get("type") not in _ATOM_TEXT_TYPES:
            raise Unsupported(f"type {attrs.get('type')} on <{element.tag}>")

    @staticmethod
    def _atom_author(element: Any) -> str:
        _attrs(element, ())
        if (element.text or "").strip():
            raise Unsupported("text in atom:author")
        parts: dict[str, str] = {}
        for child in element:
            if not isinstance(child.tag, str):
                continue
            local = child.tag.removeprefix(f"{{{ATOM}}}")
            if local not in ("name", "email", "uri") or local in parts or child.tag == local:
                raise Unsupported("atom:author content")
            _attrs(child, ())
            parts[local] = _text(child)
            if (child.tail or "").strip():
                raise Unsupported("text in atom:author")
        name, email = parts.get("name"), parts.get("email")
        if name and email:
            return f"{name} ({email})"
        return name or email or ""


def _content_type(value: str) -> str:
    """feedparser's map_content_type."""
    value = value.lower()
    return {"text": "text/plain", "html": "text/html", "xhtml": "application/xhtml+xml"}.get(
        value, value
    )
