"""Read one sitemap document: a `<urlset>` (with the news and image extensions), a
`<sitemapindex>`, or a plain-text list of URLs; gzip is undone with a bounded inflater.

The XML is streamed with lxml's iterparse (no entity resolution, no DTD, no network; a
document declaring entities is refused first), each element cleared once read, and it
stops cleanly past its budget (`Budget`; `per_file()`: `MAX_URLS` URLs, `MAX_BYTES` bytes
once inflated, `MAX_ELEMENTS` elements), keeping what it read and naming the limit. A poll
gives each file what is left of its own budget, so the caps hold per file and per poll.
Elements are matched by local name, so sitemaps with a wrong or missing namespace still
read. It runs in a parse process (`frontier.parse_pool`), never on the event loop.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from poller.errors import DocumentRefused, SitemapRefused
from poller.xml_safety import refuse_entity_declarations, safe_iterparse

MAX_URLS = 50_000
MAX_BYTES = 50 * 1024 * 1024
# A urlset of MAX_URLS URLs with the news and image extensions has about 12 elements a
# URL; past this, a file is mostly something else (issue 35: 50 MiB of empty elements
# took 69.5 s to read).
MAX_ELEMENTS = 1_000_000
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class SitemapUrl:
    loc: str
    lastmod: datetime | None = None
    news_title: str | None = None
    news_published_at: datetime | None = None
    image_urls: tuple[str, ...] = ()

    @property
    def modified_at(self) -> datetime | None:
        return self.lastmod or self.news_published_at

    def as_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if self.lastmod:
            meta["lastmod"] = self.lastmod.isoformat()
        if self.news_title:
            meta["title"] = self.news_title
        if self.news_published_at:
            meta["published_at"] = self.news_published_at.isoformat()
        if self.image_urls:
            meta["image_url"] = self.image_urls[0]
        return meta


@dataclass(frozen=True, slots=True)
class Budget:
    """What one file may read; a poll passes what is left of its own (`per_poll`)."""

    bytes: int  # once inflated
    elements: int
    urls: int
    per_poll: bool = False  # the poll's budget is smaller than a file's

    def of(self, what: str) -> str:
        """The limit named, for the poll's error."""
        size = {
            "bytes": f"{self.bytes // (1024 * 1024)} MiB inflated",
            "elements": f"{self.elements} elements",
            "urls": f"{self.urls} URLs",
        }[what]
        return f"{size} {'left in the poll' if self.per_poll else 'per file'}"

    def after(self, sitemap: Sitemap) -> Budget:
        """What is left once `sitemap` was read."""
        return Budget(
            max(0, self.bytes - sitemap.inflated_bytes),
            max(0, self.elements - sitemap.elements),
            max(0, self.urls - len(sitemap.urls)),
        )

    def within(self, per_file: Budget) -> Budget:
        """This budget capped at `per_file`, marked per-poll where the poll's is smaller."""
        smaller = (
            self.bytes < per_file.bytes
            or self.elements < per_file.elements
            or self.urls < per_file.urls
        )
        return Budget(
            min(self.bytes, per_file.bytes),
            min(self.elements, per_file.elements),
            min(self.urls, per_file.urls),
            per_poll=smaller,
        )

    @property
    def spent(self) -> bool:
        return not (self.bytes and self.elements and self.urls)


@dataclass(slots=True)
class Sitemap:
    kind: str  # "urlset", "index" or "text"
    urls: list[SitemapUrl] = field(default_factory=list)  # pages, or child sitemaps
    limit: str | None = None  # the budget it stopped at, named
    inflated_bytes: int = 0
    elements: int = 0

    @property
    def truncated(self) -> bool:
        return self.limit is not None


def inflate(body: bytes, limit: int = MAX_BYTES) -> tuple[bytes, bool]:
    """Undo gzip if `body` is gzipped, producing at most `limit` bytes; (data, truncated)."""
    if not body.startswith(GZIP_MAGIC):
        return body, False
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit)
    except zlib.error as exc:
        raise SitemapRefused(f"corrupt gzip: {exc}") from None
    truncated = bool(inflater.unconsumed_tail)
    if not truncated and not inflater.eof:
        raise SitemapRefused("corrupt gzip: truncated stream")
    return data, truncated


def per_file() -> Budget:
    """What one file may read, whatever is left of its poll's budget."""
    return Budget(MAX_BYTES, MAX_ELEMENTS, MAX_URLS)


def parse_sitemap(body: bytes, budget: Budget | None = None) -> Sitemap:
    """Parse one sitemap document (gzipped or not) within `budget` (default: `per_file()`);
    `SitemapRefused` if unusable."""
    budget = budget or per_file()
    data, truncated = inflate(body, budget.bytes)
    if len(data) > budget.bytes:
        data, truncated = data[: budget.bytes], True
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise SitemapRefused("empty sitemap")
    if stripped.startswith(b"<"):
        try:
            refuse_entity_declarations(data, "sitemap")
        except DocumentRefused as exc:
            raise SitemapRefused(str(exc)) from None
        sitemap = _parse_xml(data, budget)
    else:
        sitemap = _parse_text(stripped, budget)
    sitemap.inflated_bytes = len(data)
    if truncated and sitemap.limit is None:
        sitemap.limit = budget.of("bytes")
    return sitemap


def _parse_text(data: bytes, budget: Budget) -> Sitemap:
    sitemap = Sitemap("text")
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip().lstrip("\ufeff")
        if line.startswith(("http://", "https://")):
            if len(sitemap.urls) >= budget.urls:
                sitemap.limit = budget.of("urls")
                break
            sitemap.urls.append(SitemapUrl(line))
    if not sitemap.urls and data.lstrip()[:1] not in (b"h", b"H"):
        raise SitemapRefused("not a sitemap: neither XML nor a list of URLs")
    return sitemap


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def _parse_xml(data: bytes, budget: Budget) -> Sitemap:
    kind: str | None = None
    sitemap = Sitemap("urlset")
    fields: dict[str, Any] = {}
    images: list[str] = []
    try:
        for event, element in safe_iterparse(io.BytesIO(data), events=("start", "end")):
            name = _local(element.tag)
            if kind is None and event == "start":
                if name == "urlset":
                    kind = "urlset"
                elif name == "sitemapindex":
                    kind = "index"
                else:
                    raise SitemapRefused(f"not a sitemap: root element <{name}>")
                sitemap.kind = kind
                continue
            if event != "end":
                continue
            sitemap.elements += 1
            if sitemap.elements > budget.elements:
                sitemap.limit = budget.of("elements")
                break
            text = (element.text or "").strip()
            if name == "loc" and _local(element.getparent().tag) in ("url", "sitemap"):
                fields["loc"] = text
            elif name == "lastmod":
                fields["lastmod"] = parse_w3c_date(text)
            elif name == "title" and "news" in str(element.tag):
                fields["news_title"] = text or None
            elif name == "publication_date":
                fields["news_published_at"] = parse_w3c_date(text)
            elif name == "loc" and "image" in str(element.tag):
                images.append(text)
            elif name in ("url", "sitemap"):
                if not fields.get("loc") and text.startswith(("http://", "https://")):
                    fields["loc"] = text  # lenient: a bare URL without <loc>
                if fields.get("loc"):
                    sitemap.urls.append(SitemapUrl(image_urls=tuple(images), **fields))
                fields, images = {}, []
                element.clear()
                if len(sitemap.urls) >= budget.urls:
                    sitemap.limit = budget.of("urls")
                    break
    except SitemapRefused:
        raise
    except Exception as exc:  # lxml on broken input: keep what was read, or refuse
        if kind is None:
            raise SitemapRefused(f"not a sitemap: {exc}") from None
    if kind is None:
        raise SitemapRefused("not a sitemap: no root element")
    return sitemap


def parse_w3c_date(text: str) -> datetime | None:
    """A W3C datetime (`2024-02-12`, `2024-02-12T12:34:56+01:00`, `...Z`), as UTC."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def sitemaps_in_robots(text: str) -> list[str]:
    """`Sitemap:` lines of a robots.txt, in order, without repeats (Protego does this)."""
    from protego import Protego

    try:
        found = list(Protego.parse(text).sitemaps)
    except Exception:  # Protego on a hostile file: no sitemaps rather than a crash
        return []
    wanted = (url for url in found if url[:8].lower().startswith(("http://", "https://")))
    return list(dict.fromkeys(wanted))
