"""What a page declares about itself, read with selectolax and no text extraction: title,
author, published and modified dates, image, language, description, section and tags.

Sources, best first for each field:

- JSON-LD: the article object (`NewsArticle`, `Article`, `BlogPosting`,
  `ReportageNewsArticle` and the other CreativeWork article types), found at the top
  level, in a list, inside `@graph` (WordPress/Yoast, Drupal's schema_metatag) or nested
  (`mainEntity`); `author` and `image` may be strings, objects, lists or `@id`
  references to other nodes of the graph (Yoast's Person and ImageObject nodes).
- OpenGraph and `article:*` meta tags (`og:title`, `og:image`,
  `article:published_time`; og:title comes before the JSON-LD headline), then
  `twitter:*`, Dublin Core and the plain ones (`<meta name=author>`,
  `<meta name=description>`, `itemprop=datePublished`).
- `<time datetime>` (the `datePublished`/`pubdate` one, else the first in `<article>`),
  `<html lang>`, a single `<h1>`, `<title>`.

The image is the lead image: the article object's `image` (its first, when a list), then
`og:image`, as social cards and Google's article results take it. The section is
`articleSection`, then `article:section` (and Parse.ly's); the tags are the JSON-LD
`keywords` (a list, or one string separated by commas), else every `article:tag`, else
`news_keywords` or `keywords` (MAX_TAGS at most).

The article's text as structured data declares it, for a page whose HTML has little of
it (a client-rendered page: `fetcher.extract` decides): schema.org `articleBody` in the
JSON-LD article object, else the text of the microdata `itemprop="articleBody"` element.
And whether the page says its article is not free to read: `isAccessibleForFree: false`
on the article (or its WebPage), or on a `WebPageElement` of its `hasPart` whose
`cssSelector` names the gated part, as Google documents for subscription and paywalled
content (developers.google.com/search/docs/appearance/structured-data/paywalled-content).

Bounded: a JSON-LD script longer than `MAX_JSON_LD_CHARS` is skipped (a real one is a few
kilobytes; one with a whole `articleBody` some tens), and so is JSON nested deeper than
Python's parser goes (`RecursionError`). This runs in the extraction worker, under its
time and memory limits (`fetcher.extract_pool`), never on the event loop.

Malformed JSON-LD (trailing commas, HTML comments, CDATA wrappers, raw newlines in
strings, several objects in one script) is repaired where that is unambiguous and
skipped otherwise: it never stops the extraction.

Dates keep the time of day and the offset the page declares (a date without an offset
is read as UTC). `plausible_date` is the one rule for dates in the future: see there.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from selectolax.lexbor import LexborHTMLParser

# A published date up to this far ahead of our clock is kept: the publisher's clock or
# ours may be off, a scheduled post may go live a little early, and a local time
# declared without its offset reads up to 14 hours ahead when taken as UTC (UTC+14).
# Further ahead it is an error (an event date, a template placeholder, a typo): dropped,
# so the next source (trafilatura's reading of the page, then the feed) may supply one.
FUTURE_SKEW = timedelta(days=1)

ARTICLE_TYPES = frozenset(
    {
        "Article",
        "NewsArticle",
        "AnalysisNewsArticle",
        "AskPublicNewsArticle",
        "BackgroundNewsArticle",
        "OpinionNewsArticle",
        "ReportageNewsArticle",
        "ReviewNewsArticle",
        "BlogPosting",
        "LiveBlogPosting",
        "SocialMediaPosting",
        "DiscussionForumPosting",
        "Report",
        "ScholarlyArticle",
        "SatiricalArticle",
        "TechArticle",
    }
)
MAX_JSON_LD_CHARS = 1_000_000  # a longer script is skipped, not parsed
MAX_TAGS = 50  # a page's tags and keywords kept (some templates declare hundreds)
_PAGE_TYPES = frozenset({"WebPage", "ItemPage", "AboutPage", "CollectionPage"})
_NESTED_KEYS = ("@graph", "mainEntity", "mainEntityOfPage", "hasPart", "itemListElement")
_MAX_DEPTH = 6
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_WRAPPERS = re.compile(r"<!--|-->|(?://\s*)?<!\[CDATA\[|(?://\s*)?\]\]>")
# Each of its matches holds one of these: without them there is nothing to take out, and
# the search (its optional `//` tries every position: 0.016 ms for a 250-character
# script) is not made
_WRAPPER_MARKS = ("<!--", "-->", "<![CDATA[", "]]>")
# Made once: a decoder keeps no state between calls (the json module shares its own)
_DECODER = json.JSONDecoder(strict=False)
_BYLINE = re.compile(r"^by\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PageMeta:
    title: str | None = None
    author: str | None = None
    published_at: datetime | None = None
    image_url: str | None = None
    language: str | None = None
    summary: str | None = None
    article_body: str | None = None  # JSON-LD `articleBody` (microdata: `microdata_body`)
    closed: bool = False  # declares `isAccessibleForFree: false`
    gated: tuple[str, ...] = ()  # the `cssSelector`s of the parts it declares gated
    modified_at: datetime | None = None  # `dateModified`, `article:modified_time`...
    section: str | None = None  # `articleSection`, `article:section`
    tags: tuple[str, ...] = ()  # `keywords`, `article:tag`, `news_keywords`, `keywords`


def parse_date(value: object) -> datetime | None:
    """ISO 8601 or RFC 2822 date text (or a datetime) as an aware datetime, keeping the
    declared time of day and offset; no offset means UTC; None if it is not a date."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        try:
            # "2019-11-18 10:30:00 -0500": fromisoformat wants no space before the offset
            parsed = datetime.fromisoformat(re.sub(r"\s+([+-]\d\d:?\d\d)$", r"\1", text))
        except ValueError:
            try:
                parsed = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def plausible_date(value: datetime | None, now: datetime) -> datetime | None:
    """`value` unless it lies more than FUTURE_SKEW after `now` (then None)."""
    if value is None or value > now + FUTURE_SKEW:
        return None
    return value


def read_metadata(tree: LexborHTMLParser, *, now: datetime | None = None) -> PageMeta:
    """The metadata `tree` declares; fields it does not declare are None."""
    now = now or datetime.now(UTC)
    article = _article_fields(tree)
    meta = _meta_tags(tree)
    published = _first_date(
        now,
        article.get("published"),
        *(meta.get(name) for name in _DATE_METAS),
        _time_datetime(tree),
    )
    return PageMeta(
        # og:title first, as trafilatura and social cards read it: it is the editorial
        # headline, where the JSON-LD headline is often the search-engine title
        title=_first(*(meta.get(n) for n in _TITLE_METAS[:2]), article.get("title"))
        or _first(*(meta.get(n) for n in _TITLE_METAS[2:]))
        or _heading_or_title(tree),
        author=_first(article.get("author"), *(_author_meta(meta.get(n)) for n in _AUTHOR_METAS)),
        published_at=published,
        image_url=_first(article.get("image"), *(meta.get(n) for n in _IMAGE_METAS)),
        language=_first(
            _html_lang(tree),
            article.get("language"),
            _locale(meta.get("og:locale")),
            meta.get("content-language"),
        ),
        summary=_first(article.get("summary"), *(meta.get(n) for n in _SUMMARY_METAS)),
        article_body=article.get("body"),
        closed=bool(article.get("closed")),
        gated=article.get("gated", ()),
        modified_at=_first_date(
            now, article.get("modified"), *(meta.get(name) for name in _MODIFIED_METAS)
        ),
        section=_first(article.get("section"), *(meta.get(n) for n in _SECTION_METAS)),
        tags=_tags(
            article.get("keywords"), _article_tags(tree), *(meta.get(n) for n in _KEYWORD_METAS)
        ),
    )


def microdata_body(tree: LexborHTMLParser) -> str | None:
    """The text of the microdata `itemprop="articleBody"` elements (itemprop is a token
    list), paragraphs apart; None without one."""
    parts = [
        text
        for node in tree.css('[itemprop~="articleBody"]')
        if (
            text := _paragraphs(
                node.attributes.get("content") or ""  # microdata on <meta>: its content
                if node.tag == "meta"
                else node.text(separator="\n")
            )
        )
    ]
    return "\n\n".join(parts) or None


# -- meta tags ------------------------------------------------------------------------

_TITLE_METAS = ("og:title", "twitter:title", "dc.title", "headline")
_AUTHOR_METAS = (
    "author",
    "article:author",
    "dc.creator",
    "dcterms.creator",
    "parsely-author",
    "sailthru.author",
    "byl",
    "twitter:creator",
)
_DATE_METAS = (
    "article:published_time",
    "article:published",
    "og:published_time",
    "datepublished",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "parsely-pub-date",
    "sailthru.date",
    "pubdate",
    "publishdate",
    "publish-date",
    "date",
)
_MODIFIED_METAS = (
    "article:modified_time",
    "article:modified",
    "og:updated_time",
    "datemodified",
    "dcterms.modified",
    "dc.date.modified",
    "last-modified",
)
_SECTION_METAS = ("article:section", "parsely-section", "section")
_KEYWORD_METAS = ("news_keywords", "keywords", "parsely-tags", "sailthru.tags")
_IMAGE_METAS = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "image")
_SUMMARY_METAS = ("og:description", "description", "twitter:description", "dc.description")


def _meta_tags(tree: LexborHTMLParser) -> dict[str, str]:
    """`<meta>` contents by lowercased property, name or itemprop (the first of each).
    A name with spaces in it is read as several names: no meta name has one."""
    found: dict[str, str] = {}
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        content = _clean(attrs.get("content"))
        if content is None:
            continue
        for key in ("property", "name", "itemprop", "http-equiv"):
            # itemprop is a token list: "datePublished dateCreated" names both
            for name in (attrs.get(key) or "").lower().split():
                found.setdefault(name, content)
    return found


def _article_tags(tree: LexborHTMLParser) -> list[str]:
    """Every `article:tag` (OpenGraph repeats the property, one tag each)."""
    return [
        text
        for node in tree.css('meta[property="article:tag"][content]')
        if (text := _clean(node.attributes.get("content")))
    ]


def _tags(*sources: Any) -> tuple[str, ...]:
    """The first source's tags that has any: a list of strings, or one string of them
    separated by commas (`keywords`, `news_keywords`); duplicates dropped, case kept,
    at most MAX_TAGS of at most 100 characters each."""
    for source in sources:
        items = source if isinstance(source, list) else [source]
        tags: dict[str, str] = {}
        for item in items:
            if isinstance(item, dict):
                item = item.get("name") or item.get("@value")
            if not isinstance(item, str):
                continue
            for part in item.split(","):
                tag = _clean(part)
                if tag and len(tag) <= 100:
                    tags.setdefault(tag.casefold(), tag)
        if tags:
            return tuple(tags.values())[:MAX_TAGS]
    return ()


def _author_meta(value: str | None) -> str | None:
    """A name, not the profile URL that `article:author` usually holds, nor a handle."""
    if value is None or value.startswith(("http://", "https://", "@", "/")):
        return None
    return _clean(_BYLINE.sub("", value))


def _locale(value: str | None) -> str | None:
    return value.replace("_", "-") if value else None


def _html_lang(tree: LexborHTMLParser) -> str | None:
    root = tree.root
    return _clean(root.attributes.get("lang")) if root is not None else None


def _time_datetime(tree: LexborHTMLParser) -> str | None:
    for selector in (
        "time[itemprop=datePublished][datetime]",
        "time[pubdate][datetime]",
        "article time[datetime]",
    ):
        node = tree.css_first(selector)
        if node is not None:
            return node.attributes.get("datetime")
    return None


def _heading_or_title(tree: LexborHTMLParser) -> str | None:
    headings = tree.css("h1")
    if len(headings) == 1:
        text = _clean(headings[0].text(separator=" "))
        if text:
            return text
    node = tree.css_first("title")
    return _clean(node.text()) if node is not None else None


# -- JSON-LD ----------------------------------------------------------------------------


def _article_fields(tree: LexborHTMLParser) -> dict[str, Any]:
    """Fields of the page's JSON-LD article object (or, without one, its WebPage)."""
    nodes = [node for doc in _json_ld_documents(tree) for node in _walk(doc, 0)]
    if not nodes:
        return {}
    by_id = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    article = next((n for n in nodes if _types(n) & ARTICLE_TYPES), None)
    page = next((n for n in nodes if _types(n) & _PAGE_TYPES), None)
    chosen = article or page
    if chosen is None:
        return {}
    fields = {
        "title": _text(chosen.get("headline")) or _text(chosen.get("name")),
        "author": _names(chosen.get("author"), by_id),
        "published": _text(chosen.get("datePublished")) or _text(chosen.get("dateCreated")),
        "image": _image(chosen.get("image"), by_id) or _image(chosen.get("thumbnailUrl"), by_id),
        "language": _text(chosen.get("inLanguage")),
        "summary": _text(chosen.get("description")),
        "body": _body(chosen.get("articleBody")),
        "modified": _text(chosen.get("dateModified")),
        "section": _text(chosen.get("articleSection")),
        "keywords": chosen.get("keywords"),
    }
    if article is not None and page is not None:  # Yoast puts some fields on the WebPage
        for key, name in (
            ("published", "datePublished"),
            ("language", "inLanguage"),
            ("modified", "dateModified"),
        ):
            fields[key] = fields[key] or _text(page.get(name))
        fields["image"] = fields["image"] or _image(page.get("primaryImageOfPage"), by_id)
    owners = [node for node in (article, page) if node is not None]
    gated = [
        selector
        for owner in owners
        for part in _parts(owner.get("hasPart"), by_id)
        if _not_free(part.get("isAccessibleForFree"))
        for selector in _selectors(part.get("cssSelector"))
    ]
    closed = bool(gated) or any(_not_free(owner.get("isAccessibleForFree")) for owner in owners)
    return {**fields, "closed": closed, "gated": tuple(dict.fromkeys(gated))}


def _not_free(value: Any) -> bool:
    """`isAccessibleForFree` false: the boolean, or the text Google's older examples use
    ("False"), in any case."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict):
        value = value.get("@value")
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


def _parts(value: Any, by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    return [part for item in items if isinstance(part := _resolve(item, by_id), dict)]


def _selectors(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [text for item in items if (text := _clean(item))]


def _body(value: Any) -> str | None:
    """`articleBody` as text: strings (a list of them is paragraphs), markup some
    publishers leave in it read as text, paragraphs kept apart."""
    items = value if isinstance(value, list) else [value]
    parts: list[str] = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("@value")
        if not isinstance(item, str):
            continue
        if "<" in item and ">" in item:  # markup: its text, block by block
            root = LexborHTMLParser(item).body
            item = root.text(separator="\n") if root is not None else item
        elif "&" in item:
            item = html.unescape(item)
        text = _paragraphs(item)
        if text:
            parts.append(text)
    return "\n\n".join(parts) or None


def _paragraphs(text: str) -> str | None:
    """Spaces collapsed within each line, blank lines dropped, lines kept apart."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line) or None


def _json_ld_documents(tree: LexborHTMLParser) -> Iterator[Any]:
    for script in tree.css("script[type]"):
        kind = (script.attributes.get("type") or "").split(";")[0].strip().lower()
        if kind == "application/ld+json":
            text = script.text(deep=True)
            if len(text) <= MAX_JSON_LD_CHARS:
                yield from _lenient_json(text)


def _lenient_json(text: str) -> Iterator[Any]:
    """Every JSON value in `text`, however publishers wrap it; unreadable parts skipped.
    Hand-written because json has no lenient mode and the repairs are few and known:
    comment and CDATA wrappers, trailing commas, raw control characters in strings,
    several values one after another."""
    if any(mark in text for mark in _WRAPPER_MARKS):
        text = _WRAPPERS.sub("", text)
    text = text.strip()
    # the trailing commas taken out only when the text as it is gives no value
    for repaired in (False, True):
        candidate = _TRAILING_COMMA.sub(r"\1", text) if repaired else text
        values, position = [], 0
        try:
            while position < len(candidate):
                value, position = _DECODER.raw_decode(candidate, position)
                values.append(value)
                while position < len(candidate) and candidate[position] in " \t\r\n;,":
                    position += 1
        except (ValueError, RecursionError):  # RecursionError: nested beyond the parser
            if not values:
                continue
        yield from values
        return


def _walk(value: Any, depth: int) -> Iterator[dict[str, Any]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            yield from _walk(item, depth + 1)
    elif isinstance(value, dict):
        if "@type" in value:
            yield value
        for key in _NESTED_KEYS:
            if key in value:
                yield from _walk(value[key], depth + 1)


def _types(node: dict[str, Any]) -> set[str]:
    kinds = node.get("@type")
    names = kinds if isinstance(kinds, list) else [kinds]
    # "schema:NewsArticle" and "http://schema.org/NewsArticle" name the same type
    return {re.split(r"[/:]", n)[-1] for n in names if isinstance(n, str)}


def _resolve(value: Any, by_id: dict[str, dict[str, Any]]) -> Any:
    if isinstance(value, dict) and set(value) <= {"@id", "@type"} and value.get("@id") in by_id:
        return by_id[value["@id"]]
    return value


def _names(value: Any, by_id: dict[str, dict[str, Any]]) -> str | None:
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        item = _resolve(item, by_id)
        name = _text(item.get("name")) if isinstance(item, dict) else _text(item)
        name = _author_meta(name)
        if name and name not in names:
            names.append(name)
    return "; ".join(names) or None


def _image(value: Any, by_id: dict[str, dict[str, Any]]) -> str | None:
    value = _resolve(value[0] if isinstance(value, list) and value else value, by_id)
    if isinstance(value, dict):
        return _text(value.get("url")) or _text(value.get("contentUrl"))
    return _text(value)


def _text(value: Any) -> str | None:
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict):
        value = value.get("@value")
    return _clean(value)


# -- small pieces -----------------------------------------------------------------------


def _clean(value: object) -> str | None:
    """Whitespace collapsed and character references decoded: many CMSes escape twice,
    so `&#39;` survives the HTML parser in attributes and JSON-LD strings."""
    if not isinstance(value, str):
        return None
    # str.split() splits on exactly what `\s` matches, at a third of a regex's cost (a
    # dozen values a page)
    text = " ".join((html.unescape(value) if "&" in value else value).split())
    return text or None


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v), None)


def _first_date(now: datetime, *values: str | None) -> datetime | None:
    for value in values:
        parsed = plausible_date(parse_date(value), now)
        if parsed is not None:
            return parsed
    return None
