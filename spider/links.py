"""Link classification: what the spider does with each link it finds on a listing page.

Pure functions and small frozen objects, no I/O. A link is:

- `ARTICLE`: on the source's own domain and an article URL → submitted, not followed;
- `LISTING`: on the source's own domain, not an article → followed (a listing or
  navigation page), never submitted;
- `KNOWN_SOURCE`: on the host of another known source and an article URL by that source's
  rules → submitted under that source;
- `EXTERNAL`: anywhere else → counted; submitted under `discovered` only when the source
  allows external links and the URL looks like an article (by the heuristic);
- `IGNORED`: not http(s), unparseable, or a static resource.

Article URLs are recognised by the source's `article_url_patterns` (regexes searched in the
normalised URL). A source without patterns uses the heuristic below; the run summary says
`"classification": "heuristic"` so an operator knows to add patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urldefrag, urljoin, urlsplit

from frontier.queue_values import SourceRef
from frontier.urls import InvalidURL, normalize_url, url_host
from spider.errors import SpiderConfigError

# The heuristic for sources without article_url_patterns. A URL is an article when its
# path has a date (/2024/05/17/, /2024/05/, /20240517), or its last segment is a long
# slug (at least four words joined by '-' or '_'), or a numeric id followed by a slug
# (/12345-some-title); and it is not under a path that names a listing (tag, category,
# author, page N, search, feeds). Pages answering with og:type=article are articles too.
_DATED = re.compile(
    r"/(?:19|20)\d{2}/(?:0?[1-9]|1[0-2])(?:/(?:0?[1-9]|[12]\d|3[01]))?/"
    r"|/(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[/-]"
)
# Four words joined by '-' or '_', searched in the last segment only. Each word is matched
# possessively from the start of a run of letters and digits, so the cost is linear in the
# URL's length (`/[^/]*[a-z0-9]+(?:[-_][a-z0-9]+){3,}[^/]*/?$` backtracked cubically: three
# 2.8 KB links of `a-a-a-...` on one listing page took 31 s of CPU).
_SLUG_WORDS = re.compile(r"(?<![a-z0-9])[a-z0-9]++(?:[-_][a-z0-9]++){3}", re.IGNORECASE)
_ID_SLUG = re.compile(r"/\d{4,}[-_][a-z0-9][^/]*/?$", re.IGNORECASE)
_LISTING_PATH = re.compile(
    r"/(?:tag|tags|category|categories|topic|topics|author|authors|page|search|feed|rss"
    r"|archive|archives|section|sections|label)(?:/|$)|[?&](?:page|p)=\d",
    re.IGNORECASE,
)
# Links to these are never pages worth following or submitting.
_STATIC = """7z aac avi bmp css csv doc docx eot exe gif gz ico jpeg jpg js json m4a mov mp3 mp4
mpeg ogg otf pdf png ppt pptx rar rss svg tar tif tiff ttf wav webm webp woff woff2 xls xlsx
xml zip"""
STATIC_EXTENSIONS = frozenset(_STATIC.split())


def looks_like_article(url: str) -> bool:
    """The documented heuristic, on a normalised URL."""
    path_and_query = url.split("/", 3)[3] if url.count("/") >= 3 else ""
    path = "/" + path_and_query
    if _LISTING_PATH.search(path):
        return False
    path_only = path.split("?", 1)[0]
    last_segment = path_only.removesuffix("/").rsplit("/", 1)[-1]
    return bool(
        _DATED.search(path_only) or _SLUG_WORDS.search(last_segment) or _ID_SLUG.search(path_only)
    )


class LinkKind(StrEnum):
    ARTICLE = "article"
    LISTING = "listing"
    KNOWN_SOURCE = "known_source"
    EXTERNAL = "external"
    IGNORED = "ignored"


@dataclass(frozen=True, slots=True)
class ArticleRules:
    """How one source recognises its article URLs."""

    patterns: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def compile(cls, patterns: Iterable[str] | None, source_name: str) -> ArticleRules:
        compiled = []
        for pattern in patterns or ():
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise SpiderConfigError(
                    f"source {source_name!r}: article_url_patterns {pattern!r} is not a valid "
                    f"regular expression ({exc})"
                ) from None
        return cls(tuple(compiled))

    @property
    def uses_heuristic(self) -> bool:
        return not self.patterns

    def is_article(self, url: str) -> bool:
        if self.patterns:
            return any(pattern.search(url) for pattern in self.patterns)
        return looks_like_article(url)


@dataclass(frozen=True, slots=True)
class KnownSource:
    """Another source whose host links may point at."""

    name: str
    ref: SourceRef
    rules: ArticleRules


@dataclass(frozen=True, slots=True)
class Link:
    kind: LinkKind
    url: str  # normalised (the raw text when IGNORED): the key and what is submitted
    source: KnownSource | None = None  # KNOWN_SOURCE: whose
    href: str = ""  # the absolute URL as the page wrote it, without fragment: what is
    # requested (normalising may drop a trailing slash that the site or robots.txt needs)


def site_key(host: str) -> str:
    """A host without its port and a leading `www.`: what "the same site" compares."""
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.removeprefix("www.")


@dataclass(frozen=True, slots=True)
class LinkClassifier:
    """Classifies links for one source's crawl."""

    domain: str  # site_key of the source's base URL; subdomains count as in-domain
    rules: ArticleRules
    keep_trailing_slash: bool = False
    known: Mapping[str, KnownSource] = field(default_factory=dict)  # site_key -> source

    def in_domain(self, host: str) -> bool:
        key = site_key(host)
        return key == self.domain or key.endswith("." + self.domain)

    def classify(self, href: str, base: str) -> Link:
        try:
            url = normalize_url(href, base, keep_trailing_slash=self.keep_trailing_slash)
        except InvalidURL:
            return Link(LinkKind.IGNORED, href)
        absolute = urldefrag(urljoin(base, href))[0]
        path = urlsplit(url).path
        extension = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
        if extension in STATIC_EXTENSIONS:
            return Link(LinkKind.IGNORED, url)
        host = url_host(url)
        if self.in_domain(host):
            kind = LinkKind.ARTICLE if self.rules.is_article(url) else LinkKind.LISTING
            return Link(kind, url, href=absolute)
        other = self.known.get(site_key(host))
        if other is not None and other.rules.is_article(url):
            return Link(LinkKind.KNOWN_SOURCE, url, other, absolute)
        return Link(LinkKind.EXTERNAL, url, href=absolute)

    def key(self, href: str) -> str | None:
        """The normalised form of a URL to request, or None when it is unusable."""
        try:
            return normalize_url(href, keep_trailing_slash=self.keep_trailing_slash)
        except InvalidURL:
            return None
