"""Article extraction: the body from per-source CSS selectors (selectolax) when they
yield enough text, else from trafilatura's main-text extraction (`main_text`), or from
what the page declares in structured data (schema.org `articleBody`, JSON-LD or
microdata) when the HTML's text is thin beside it (a client-rendered page whose text is
only in its JSON-LD: THIN_SHARE, as for trafilatura's two readings); the
metadata from what the page declares (`fetcher.metadata`), then trafilatura's metadata
pass only for fields still missing, then what the feed or sitemap said
(`discovery_meta`). Which of them produced the body is recorded as the extractor.
trafilatura's reading also gives the body as Markdown when it has headings or lists (from
the same extraction), and the language the body is written in is detected
(`fetcher.language`), beside the one the page declares (`language`).

The page is parsed once with selectolax for the selectors and the declared metadata, once
with lxml (the tree trafilatura's own loader makes: `fetcher.lxml_load`) for
trafilatura's readings and the date search, which each copy the tree before changing it,
and once by resiliparse (lexbor) for its check when the check can change the reading
(`fetcher.plain_text_bound`).
bench/extract_quality.py measures the body candidates against the corpus (bench/RESULTS.md).

A page that declares its article not free to read (`isAccessibleForFree: false`, on the
article or on the `hasPart` element its `cssSelector` names, as Google documents for
paywalled content) and whose text here is not the whole article is `paywalled`: its
teaser is stored with the flag, not as a whole article (`paywall`).

`content_hash` is the SHA-256 of the normalised body text (Unicode NFKC, case-folded,
whitespace collapsed), so the same article served under two URLs hashes the same.
"""

from __future__ import annotations

import hashlib
import logging
import operator
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import trafilatura
from htmldate import find_date
from lxml.html import HtmlElement
from resiliparse.extract.html2text import extract_plain_text
from selectolax.lexbor import LexborHTMLParser
from trafilatura.core import bare_extraction, determine_returnstring
from trafilatura.settings import Document, Extractor
from trafilatura.xml import delete_element

from fetcher.date_bound import dateless
from fetcher.furniture import without_furniture
from fetcher.language import detect as detect_language
from fetcher.lxml_load import load
from fetcher.metadata import (
    PageMeta,
    microdata_body,
    parse_date,
    plausible_date,
    read_metadata,
)
from fetcher.plain_text_bound import plain_text_bound

log = logging.getLogger(__name__)

SELECTOR_FIELDS = ("title", "body", "author", "published", "image")
MIN_SELECTOR_WORDS = 30  # selectors yielding less body text than this fall back to generic
# trafilatura's precise reading is kept unless it is shorter than this share of
# resiliparse's main-content text: then it cut the article (a paywall teaser, a page cut
# by an inline widget) and trafilatura's default reading is taken instead. Measured in
# characters: on the article benchmark every page's decision is the one a share of words
# gives (the two ratios differ by 0.04 at most), without splitting both texts per page.
THIN_SHARE = 0.5
# A page declaring its article not free, without naming the gated part (`cssSelector`),
# is whole when its text has at least this many words: a paywall's teaser is the
# standfirst and a paragraph or two, where the shortest whole news stories (briefs) run
# to 150-250 words. With a `cssSelector`, the gated part itself must be in the page and
# hold MIN_SELECTOR_WORDS.
TEASER_WORDS = 150
# trafilatura's metadata pass costs about four times its text extraction: run it only
# when the page declares none of these.
_COSTLY_FIELDS = ("title", "author", "published_at")
_SPACE = re.compile(r"\s+")
# A paragraph's start that Markdown would read as a heading, quote, list or rule marker.
_BLOCK_START = re.compile(r"^(?:[#>*+=]|-(?=\S)|\d+[.)](?=\s))")


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
    paywalled: bool = False  # declared not free, and the text here is not the whole article
    modified_at: datetime | None = None
    section: str | None = None
    tags: tuple[str, ...] = ()  # tags and keywords, as declared
    markdown: str | None = None  # the body as Markdown, when it has headings or lists
    detected_language: str | None = None  # fetcher.language, from the body's text
    language_confidence: float | None = None

    def __reduce__(self) -> tuple[type[Extracted], tuple[Any, ...]]:
        """Pickled as its values in field order, rebuilt by the constructor: half the cost
        of a slotted dataclass's own state (a `fields()` call and a loop in Python each
        way), paid on every page an extraction worker sends back (bench/RESULTS.md, ninth
        session)."""
        return (Extracted, _EXTRACTED_VALUES(self))

    @property
    def paragraphs(self) -> list[str]:
        """The body's paragraphs (its non-empty lines: every extractor puts one
        paragraph a line)."""
        if not self.body:
            return []
        return [line for line in (part.strip() for part in self.body.splitlines()) if line]

    @property
    def word_count(self) -> int:
        """Whitespace-separated words, as `wc -w` counts them (a fifth of the cost of
        counting `\\w+` runs with a regular expression, on every page)."""
        return len(self.body.split()) if self.body else 0

    @property
    def content_hash(self) -> str | None:
        return content_hash(self.body) if self.body and self.body.strip() else None


_EXTRACTED_VALUES = operator.attrgetter(*Extracted.__slots__)


def normalise_text(text: str) -> str:
    # str.split() splits on exactly what `\s` matches, at a quarter of a regex's cost
    return _normal(unicodedata.normalize("NFKC", text).split())


def _normal(words: list[str]) -> str:
    """The normal form of a text already NFKC-normalised and split into `words`."""
    return " ".join(words).casefold()


def content_hash(body: str) -> str:
    return _sha256(normalise_text(body))


def hash_and_word_count(body: str | None) -> tuple[str | None, int]:
    """`Extracted.content_hash` and `Extracted.word_count` of `body`, from one split of
    it: NFKC leaves most text as it is (`unicodedata.normalize` then returns the string
    it was given), and then the hash joins the words counted."""
    if not body or not (words := body.split()):  # no text but white space: no hash
        return None, 0
    normal = unicodedata.normalize("NFKC", body)
    return _sha256(_normal(words if normal is body else normal.split())), len(words)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text or None


def by_selectors(tree: LexborHTMLParser, selectors: Mapping[str, Any]) -> Extracted:
    """Fields picked by a source's CSS selectors; a bad selector leaves its field empty."""
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


def main_text(html: str, url: str | None, page: HtmlElement | None = None) -> str | None:
    """The article's text (`main_reading`'s)."""
    return main_reading(html, url, page).text


def main_reading(
    html: str,
    url: str | None,
    page: HtmlElement | None = None,
    tree: LexborHTMLParser | None = None,
) -> Reading:
    """The article's text: trafilatura favouring precision, checked against
    resiliparse's main-content text (a tenth of the cost) and redone with trafilatura's
    default balance when it looks thin (THIN_SHARE), a check not run when the precise
    reading is already longer than that share of the whole page. On the article benchmark
    this beats either reading alone (bench/RESULTS.md, "Extraction quality"). `page`: the page as
    `lxml_page` parsed it, when the caller has it (trafilatura then need not parse again);
    the precise reading takes the furniture out of it (`fetcher.furniture`), so it is the
    caller's last use of it. `tree`: the page as selectolax parsed it, when the caller has
    it: resiliparse is then not run when its text cannot be long enough to change the
    decision (`fetcher.plain_text_bound`). With the text, its Markdown when it has headings
    or lists (`_trafilatura_reading`)."""
    precise = _trafilatura_reading(
        html if page is None else without_furniture(page), url, favor_precision=True
    )
    if len(precise.text or "") >= THIN_SHARE * len(html):
        # resiliparse's text is never longer than the markup it comes from (each character
        # of it is one of the page's, or a line break where a tag was): the check would
        # keep the precise reading whatever it found
        return precise
    longest = len(precise.text or "") / THIN_SHARE  # resiliparse's text that keeps it
    if tree is not None and plain_text_bound(tree, longest) <= longest:
        return precise  # resiliparse's text cannot be longer: the check would keep it
    try:
        reference = extract_plain_text(
            html, main_content=True, alt_texts=False, links=False, list_bullets=False
        )
    except Exception as exc:  # resiliparse on hostile markup: keep trafilatura's reading
        log.warning("resiliparse failed on %s: %s", url, exc)
        return precise
    if len(precise.text or "") >= THIN_SHARE * len(reference):
        return precise
    # The default balance measures the page as a whole (its baseline and its escalation
    # read the raw tree): the page as parsed, not the one the furniture left (a second
    # parse, on the few pages whose precise reading is thin).
    whole = html if page is None else without_scripts(lxml_page(html))
    recall = _trafilatura_reading(html if whole is None else whole, url, favor_precision=False)
    return recall if recall.text else precise


def lxml_page(html: str) -> HtmlElement | None:
    """The page parsed once for trafilatura's readings and its date search, as
    trafilatura's own loader parses it (its repairs and parser settings, so each reading
    is the one it would make of the text; `fetcher.lxml_load`, its repairs in linear time
    and its deletions only where there is something to delete). Both copy a tree before
    changing it (checked on the corpus with trafilatura 2.2 and 2.3, htmldate 1.10 and
    1.11): one parse instead of one per reading. None when lxml makes nothing of it (the
    readings then get the text)."""
    try:
        return load(html)
    except Exception as exc:  # lxml on hostile markup: each reading parses the text itself
        log.warning("lxml could not parse the page: %s", exc)
        return None


# The scripts trafilatura reads (its baseline and its forum test: schema.org JSON-LD),
# compared as its XPath compares them, and its metadata pass (settings).
_DATA_SCRIPTS = frozenset({"application/ld+json", "application/settings+json"})


def without_scripts(page: HtmlElement | None) -> HtmlElement | None:
    """`page` without its scripts (but the JSON-LD trafilatura reads) and style sheets,
    changed in place, tails kept, as trafilatura's own cleaning deletes them: each reading
    copies the tree first and searches it with XPath, and on a heavy template (bench.fetch's
    large set: 40 KB of inline state, analytics and CSS) that is work on nodes every
    reading throws away. The readings are the same (checked on the corpus and bench.fetch's
    pages): no paragraph is ever inside a script or a style, and trafilatura's fallbacks
    drop both too."""
    if page is not None:
        for node in list(page.iter("script", "style")):
            if node.tag == "script" and node.get("type") in _DATA_SCRIPTS:
                continue
            delete_element(node, keep_tail=True)
    return page


def _reading(*, precision: bool) -> Extractor:
    """trafilatura's options for one reading, made once: building them per call reads
    its configuration file's values each time (a visible share of a fetch process's CPU
    under a profiler). No url:
    without metadata it would only cost a public-suffix lookup (courlan). trafilatura
    never changes the options it is given."""
    return Extractor(fast=True, precision=precision, comments=False, tables=True)


_READINGS = {True: _reading(precision=True), False: _reading(precision=False)}


@dataclass(frozen=True, slots=True)
class Reading:
    text: str | None = None
    markdown: str | None = None  # the same text as Markdown, when it has headings or lists


def _trafilatura_reading(
    markup: str | HtmlElement, url: str | None, *, favor_precision: bool
) -> Reading:
    """One trafilatura reading, as `trafilatura.extract` makes it (`bare_extraction`
    then its text output), and its Markdown when the extracted tree holds headings or
    lists (`markdown_of`), from the same extraction."""
    options = _READINGS[favor_precision]
    try:
        document = bare_extraction(markup, options=options)
        if not isinstance(document, Document):
            return Reading()
        text = _clean(determine_returnstring(document, options))
    except Exception as exc:  # trafilatura on hostile markup: nothing extracted, say why
        log.warning("trafilatura failed on %s: %s", url, exc)
        return Reading()
    body = document.body
    return Reading(text, markdown_of(text, body) if text and body is not None else None)


def markdown_of(text: str, tree: Any) -> str | None:
    """The text of trafilatura's reading as Markdown, when its extracted `tree` holds
    headings or lists: each heading line marked with its level (`<head rend="h3">`: `###`;
    trafilatura's default, 2, without one), list items as the text output writes them
    (`- `, nested ones indented), blocks a blank line apart and a list's items a line
    apart, and a paragraph that would read as block syntax escaped. Not trafilatura's own
    Markdown output (`output_format="markdown"`, or its renderer on the same tree): that
    one copies the tree and escapes it node by node, several times the cost of the text
    rendering on bench.fetch's pages (bench/RESULTS.md), for
    the same structure; it also keeps inline emphasis, which this leaves out as the text
    does. None without headings or lists."""
    heads = {
        " ".join("".join(head.itertext()).split()): _heading_marks(head.get("rend"))
        for head in tree.iter("head")
    }
    if not heads and next(tree.iter("list"), None) is None:
        return None
    # A line is a heading's only when its first and last characters are the heading's
    # (both lines are stripped, and collapsing the spaces between words keeps the ends):
    # the others, the paragraphs, are not split again to be looked up.
    ends = {(head[0], head[-1]) for head in heads if head}
    parts: list[str] = []
    in_list = False
    for line in text.split("\n"):
        block = line.strip()
        if not block:
            continue
        item = block.startswith("- ")
        marks = (
            heads.get(" ".join(block.split()))
            if not item and (block[0], block[-1]) in ends
            else None
        )
        if marks:
            block = f"{marks} {block}"
        elif item:
            block = line.rstrip()  # nested items keep their indent
        else:
            block = _BLOCK_START.sub(_escaped, block, count=1)
        if parts:
            parts.append("\n" if item and in_list else "\n\n")
        parts.append(block)
        in_list = item
    return "".join(parts) or None


def _escaped(match: re.Match[str]) -> str:
    """`1.` as `1\\.`, `#` as `\\#`: the punctuation escaped, as CommonMark reads it."""
    marker = match.group()
    return f"{marker[:-1]}\\{marker[-1]}"


def _heading_marks(rend: str | None) -> str:
    level = rend[1:2] if rend and rend[:1] == "h" else ""
    return "#" * (int(level) if level in ("1", "2", "3", "4", "5", "6") else 2)


_MERGED = tuple(name for name in Extracted.__slots__ if name != "extractor")


def _merge(first: Extracted, *others: Extracted) -> Extracted:
    """`first`, its empty fields filled from `others`, each field from the first that
    has it (one `Extracted` built for all of them, not one for each)."""
    values = {}
    for name in _MERGED:
        value = getattr(first, name)
        for other in others:
            value = value or getattr(other, name)
        values[name] = value
    return Extracted(**values, extractor=first.extractor)


def from_declared(meta: PageMeta) -> Extracted:
    return Extracted(
        title=meta.title,
        summary=meta.summary,
        author=meta.author,
        published_at=meta.published_at,
        image_url=meta.image_url,
        language=meta.language,
        modified_at=meta.modified_at,
        section=meta.section,
        tags=meta.tags,
    )


def from_trafilatura_metadata(
    html: str, url: str | None, now: datetime, page: HtmlElement | None = None
) -> Extracted:
    """trafilatura's metadata pass: bylines in the text, dates in the URL, in microdata
    and in markup the page does not declare as metadata. Its date search stays in the
    markup (`extensive_search` off): scanning the free text for anything date-like costs
    four times the rest of the pass and finds event dates and copyright years as often as
    the publication date; the feed's date comes next. It may see dates in the future
    (`max_date` far ahead) because htmldate moves a date past `max_date` to the first of
    its month or year, a wrong date stored as if declared; `plausible_date` decides."""
    try:
        meta = trafilatura.extract_metadata(
            html if page is None else page,
            default_url=url,
            date_config=_date_config(now),
            extensive=False,
        )
    except Exception as exc:  # as in main_text(): hostile markup must not stop the fetch
        log.warning("trafilatura metadata failed on %s: %s", url, exc)
        return Extracted()
    if meta is None:
        return Extracted()
    return Extracted(
        title=_clean(meta.title),
        summary=_clean(meta.description),
        author=_clean(meta.author),
        published_at=plausible_date(parse_date(meta.date), now),
        image_url=_clean(meta.image),
        language=_clean(meta.language),
        section=_clean(meta.categories[0]) if meta.categories else None,
        tags=tuple(tag for tag in (_clean(t) for t in meta.tags or ()) if tag),
    )


def date_from_markup(
    html: str, url: str | None, now: datetime, page: HtmlElement | None = None
) -> Extracted:
    """The date search of trafilatura's metadata pass alone (htmldate, with the same
    settings: the URL's path included, the canonical link's before the fetched one, as
    that pass reads it: WordPress's `?p=123` names `/2025/07/14/slug/` there), for a page
    that declares its title and author but no date: the rest of the pass would look for
    what is already known, at about twice the cost of this on bench.fetch's standard
    pages. A page proven to hold nothing htmldate could read as a date
    (`fetcher.date_bound`: bench.fetch's standard pages) is not searched."""
    searched_url = canonical_href(html) or url
    if dateless(html, searched_url):
        return Extracted()
    try:
        markup = html if page is None else page
        found = find_date(markup, url=searched_url, **_date_config(now))
    except Exception as exc:  # as in main_text(): hostile markup must not stop the fetch
        log.warning("htmldate failed on %s: %s", url, exc)
        return Extracted()
    return Extracted(published_at=plausible_date(parse_date(found), now))


def _date_config(now: datetime) -> dict[str, Any]:
    """htmldate's settings (see from_trafilatura_metadata)."""
    return {
        "original_date": True,
        "extensive_search": False,
        "max_date": (now + timedelta(days=3660)).date().isoformat(),
    }


def from_discovery(meta: Mapping[str, Any] | None, now: datetime | None = None) -> Extracted:
    """What the feed or sitemap said about the URL."""
    if not meta:
        return Extracted()
    return Extracted(
        title=_clean(meta.get("title")),
        summary=_clean(meta.get("summary")),
        author=_clean(meta.get("author")),
        published_at=plausible_date(
            parse_date(meta.get("published") or meta.get("published_at")),
            now or datetime.now(UTC),
        ),
        image_url=_clean(meta.get("image") or meta.get("image_url")),
        language=_clean(meta.get("language")),
    )


def extract(
    html: str,
    url: str | None,
    *,
    selectors: Mapping[str, Any] | None = None,
    discovery_meta: Mapping[str, Any] | None = None,
    tree: LexborHTMLParser | None = None,
) -> Extracted:
    """The body from selectors if the source has them and they yield enough text, else
    from `main_text`; the metadata from what the page declares, then trafilatura's pass
    for title, author or date still missing, then discovery_meta. A page with no body of
    its own but a feed summary keeps the summary as body, with extractor `feed`. `tree`:
    the page as selectolax parsed it, when the caller has it."""
    now = datetime.now(UTC)
    tree = LexborHTMLParser(html) if tree is None else tree
    result: Extracted | None = None
    if selectors:
        picked = by_selectors(tree, selectors)
        if picked.word_count >= MIN_SELECTOR_WORDS:
            result = picked
    meta = read_metadata(tree, now=now)
    declared = from_declared(meta)
    missing = [
        name
        for name in _COSTLY_FIELDS
        if not getattr(declared, name) and not (result and getattr(result, name))
    ]
    page = lxml_page(html) if result is None or missing else None
    # The metadata passes before the readings, on the whole page: htmldate's timestamp
    # search reads the page's scripts, which the readings do without (`without_scripts`).
    found = (
        date_from_markup(html, url, now, page)
        if missing == ["published_at"]
        else from_trafilatura_metadata(html, url, now, page)
        if missing
        else None
    )
    structured = False
    if result is None:
        reading = main_reading(html, url, without_scripts(page), tree)
        body = reading.text
        declared_body = meta.article_body or (
            microdata_body(tree) if "articleBody" in html else None
        )
        structured = declared_body is not None and len(body or "") < THIN_SHARE * len(declared_body)
        result = (
            Extracted(body=declared_body, extractor="generic")
            if structured
            else Extracted(body=body, markdown=reading.markdown, extractor="generic")
        )
    known = (declared,) if found is None else (declared, found)
    result = _merge(result, *known, from_discovery(discovery_meta, now))
    if not result.body and result.summary:
        result = replace(result, body=result.summary, extractor="feed")
    if meta.closed and not structured and not _whole_behind_paywall(tree, meta, result):
        result = replace(result, paywalled=True)
    result = without_headline(result)
    detected = detect_language(result.body)
    if detected is not None:
        result = replace(
            result, detected_language=detected.language, language_confidence=detected.confidence
        )
    return result


# What sits between a headline and the site's name in a page's title ("Headline | Site")
_TITLE_SEPARATORS = ("|", "-", "\u2013", "\u2014", ":", "\u00b7", "\u2022")  # en and em dash, dots


def without_headline(result: Extracted) -> Extracted:
    """`result` without the headline as its body's first line: the readings keep the
    page's <h1>, which the title already holds (5 of the 36 benchmark pages). Dropped when
    the line is the title, or the title's start before a separator (a site-name suffix);
    a body that is only that line is left alone. The Markdown loses the same line: it
    stays the body's text (`markdown_after_headline`)."""
    if not result.body or not result.title:
        return result
    first, _, rest = result.body.partition("\n")
    head, title = normalise_text(first), normalise_text(result.title)
    if not head or not rest.strip():
        return result
    after = title[len(head) :].lstrip()
    if title == head or (title.startswith(head) and after[:1] in _TITLE_SEPARATORS):
        return replace(
            result,
            body=rest.lstrip("\n"),
            markdown=markdown_after_headline(result.markdown),
        )
    return result


# A Markdown line of structure as `markdown_of` writes it: a heading (a paragraph that would
# read as one is escaped, `\#`) or a list item, nested ones indented.
_STRUCTURE = re.compile(r"^(?:#{1,6} |[ \t]*- )", re.MULTILINE)


def markdown_after_headline(markdown: str | None) -> str | None:
    """`markdown` without its first block, the line `without_headline` drops from the
    body (`markdown_of` writes the body's lines in their order, one block a line); None
    when no heading or list is left: the page's headline was its only structure, and the
    body holds the rest as it is."""
    if markdown is None:
        return None
    rest = markdown.partition("\n")[2].lstrip("\n")
    return rest if _STRUCTURE.search(rest) else None


def _whole_behind_paywall(tree: LexborHTMLParser, meta: PageMeta, result: Extracted) -> bool:
    """Whether a page declaring its article not free holds it whole all the same (served
    whole to crawlers, as Google's paywalled-content markup is meant for): the gated
    parts its `cssSelector`s name are in the page with text, or, naming none, its text is
    longer than a teaser (TEASER_WORDS)."""
    if not meta.gated:
        return result.word_count >= TEASER_WORDS
    words = 0
    for selector in meta.gated:
        try:
            nodes = tree.css(selector)
        except Exception:  # selectolax raises on invalid CSS: that part is not found
            continue
        words += sum(len(node.text(separator=" ").split()) for node in nodes)
    return words >= MIN_SELECTOR_WORDS
