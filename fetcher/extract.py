"""Article extraction: per-source CSS selectors (selectolax) first, trafilatura (with
metadata) as the generic fallback, then what the feed or sitemap said (`discovery_meta`)
for fields still empty. Which of them produced the body is recorded as the extractor.

`content_hash` is the SHA-256 of the normalised body text (Unicode NFKC, case-folded,
whitespace collapsed), so the same article served under two URLs hashes the same.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import trafilatura
from selectolax.lexbor import LexborHTMLParser

log = logging.getLogger(__name__)

SELECTOR_FIELDS = ("title", "body", "author", "published", "image")
MIN_SELECTOR_WORDS = 30  # selectors yielding less body text than this fall back to generic
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None = None
    body: str | None = None
    summary: str | None = None
    author: str | None = None
    published_at: datetime | None = None
    image_url: str | None = None
    language: str | None = None
    extractor: str | None = None  # selectors | generic | feed

    @property
    def word_count(self) -> int:
        return len(_WORD.findall(self.body or ""))

    @property
    def content_hash(self) -> str | None:
        return content_hash(self.body) if self.body and self.body.strip() else None


def normalise_text(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def content_hash(body: str) -> str:
    return hashlib.sha256(normalise_text(body).encode("utf-8")).hexdigest()


def parse_date(value: object) -> datetime | None:
    """ISO 8601 or RFC 2822 date text (or a datetime) as an aware datetime; None if not."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text or None


def by_selectors(html: str, selectors: Mapping[str, Any]) -> Extracted:
    """Fields picked by a source's CSS selectors; a bad selector leaves its field empty."""
    tree = LexborHTMLParser(html)
    found: dict[str, str | None] = {}
    for name in SELECTOR_FIELDS:
        selector = selectors.get(name)
        if not isinstance(selector, str) or not selector.strip():
            continue
        try:
            nodes = tree.css(selector)
        except Exception as exc:  # selectolax raises on invalid CSS; say which, carry on
            log.warning("invalid %s selector %r: %s", name, selector, exc)
            continue
        if not nodes:
            continue
        if name == "image":
            node = nodes[0]
            found[name] = _clean(node.attributes.get("src") or node.attributes.get("content"))
        elif name == "published":
            node = nodes[0]
            found[name] = _clean(
                node.attributes.get("datetime") or node.attributes.get("content") or node.text()
            )
        elif name == "body":
            parts = (_SPACE.sub(" ", n.text(separator=" ")).strip() for n in nodes)
            found[name] = _clean("\n\n".join(p for p in parts if p))
        else:
            found[name] = _clean(nodes[0].text(separator=" "))
    lang = tree.root.attributes.get("lang") if tree.root is not None else None
    return Extracted(
        title=found.get("title"),
        body=found.get("body"),
        author=found.get("author"),
        published_at=parse_date(found.get("published")),
        image_url=found.get("image"),
        language=_clean(lang),
        extractor="selectors",
    )


def canonical_href(html: str) -> str | None:
    """The href of the page's `<link rel="canonical">` (rel is a token list, matched
    case-insensitively, as browsers and search engines read it), or None. Only the head
    is parsed: the link belongs there, and a `rel=canonical` in the body (user content)
    is ignored, as Google ignores it."""
    end = html.find("</head")
    if end < 0:
        end = html.find("<body")
    head = html[: end if end >= 0 else 65_536]
    if "canonical" not in head.lower():
        return None
    found = {
        _clean(node.attributes.get("href"))
        for node in LexborHTMLParser(head).css("link[rel][href]")
        if "canonical" in (node.attributes.get("rel") or "").lower().split()
    }
    # Several that disagree (a template's and a plugin's): none is trusted, as Google
    # ignores them all ("5 common mistakes with rel=canonical", 2013).
    return found.pop() if len(found) == 1 else None


def generic(html: str, url: str | None) -> Extracted:
    """trafilatura's main text and metadata."""
    try:
        doc = trafilatura.bare_extraction(
            html,
            url=url,
            with_metadata=True,
            include_comments=False,
            include_tables=True,
        )
    except Exception as exc:  # trafilatura on hostile markup: nothing extracted, say why
        log.warning("trafilatura failed on %s: %s", url, exc)
        return Extracted(extractor="generic")
    if doc is None or isinstance(doc, dict):
        return Extracted(extractor="generic")
    return Extracted(
        title=_clean(doc.title),
        body=_clean(doc.text),
        summary=_clean(doc.description),
        author=_clean(doc.author),
        published_at=parse_date(doc.date),
        image_url=_clean(doc.image),
        language=_clean(doc.language),
        extractor="generic",
    )


def _merge(first: Extracted, second: Extracted) -> Extracted:
    """`first`, its empty fields filled from `second`."""
    values = {
        name: getattr(first, name) or getattr(second, name)
        for name in Extracted.__slots__
        if name != "extractor"
    }
    return Extracted(**values, extractor=first.extractor)


def from_discovery(meta: Mapping[str, Any] | None) -> Extracted:
    """What the feed or sitemap said about the URL."""
    if not meta:
        return Extracted()
    return Extracted(
        title=_clean(meta.get("title")),
        summary=_clean(meta.get("summary")),
        author=_clean(meta.get("author")),
        published_at=parse_date(meta.get("published") or meta.get("published_at")),
        image_url=_clean(meta.get("image") or meta.get("image_url")),
        language=_clean(meta.get("language")),
    )


def extract(
    html: str,
    url: str | None,
    *,
    selectors: Mapping[str, Any] | None = None,
    discovery_meta: Mapping[str, Any] | None = None,
) -> Extracted:
    """Selectors if the source has them and they yield enough text, else trafilatura;
    empty fields are then filled from discovery_meta. A page with no body of its own but
    a feed summary keeps the summary as body, with extractor `feed`."""
    result: Extracted | None = None
    if selectors:
        picked = by_selectors(html, selectors)
        if picked.word_count >= MIN_SELECTOR_WORDS:
            result = _merge(picked, generic_metadata_only(html, url, picked))
    if result is None:
        result = generic(html, url)
    result = _merge(result, from_discovery(discovery_meta))
    if not result.body and result.summary:
        result = replace(result, body=result.summary, extractor="feed")
    return result


def generic_metadata_only(html: str, url: str | None, picked: Extracted) -> Extracted:
    """Metadata for fields the selectors left empty, without running text extraction
    when nothing is missing."""
    if all((picked.title, picked.author, picked.published_at, picked.image_url)):
        return Extracted()
    try:
        meta = trafilatura.extract_metadata(html, default_url=url)
    except Exception as exc:  # as in generic(): hostile markup must not stop the fetch
        log.warning("trafilatura metadata failed on %s: %s", url, exc)
        return Extracted()
    if meta is None:
        return Extracted()
    return Extracted(
        title=_clean(meta.title),
        summary=_clean(meta.description),
        author=_clean(meta.author),
        published_at=parse_date(meta.date),
        image_url=_clean(meta.image),
    )
