"""Feed auto-discovery for a source that has a `base_url` but no `feed_url`: first the
page's `<link rel="alternate">` RSS, Atom and JSON Feed links, then the common paths.
A candidate counts only once it has been fetched and parsed as a feed (the page and the
candidates are parsed in a parse process, `frontier.parse_pool`)."""

from __future__ import annotations

import logging
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.proxies import ProxyRoute
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.source_credentials import Credentials
from poller.entries import absolute
from poller.errors import DocumentRefused
from poller.feed_parse import parse_feed

log = logging.getLogger(__name__)

FEED_TYPES = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/feed+json",
        "application/json",
        "application/rdf+xml",
        "application/xml",
        "text/xml",
    }
)
COMMON_PATHS = ("/feed", "/rss", "/atom.xml", "/feed.xml", "/rss.xml", "/index.xml")
MAX_PAGE_BYTES = 2 * 1024 * 1024


def alternate_links(page: bytes, base: str) -> list[str]:
    """Feed links of an HTML page, in document order, resolved against the page URL (or
    its `<base href>`)."""
    tree = LexborHTMLParser(page)
    base_node = tree.css_first("base[href]")
    if base_node is not None and base_node.attributes.get("href"):
        base = urljoin(base, base_node.attributes["href"] or "")
    found: list[str] = []
    for node in tree.css("link[href]"):
        rel = (node.attributes.get("rel") or "").lower().split()
        kind = (node.attributes.get("type") or "").lower().split(";")[0].strip()
        if "alternate" in rel and kind in FEED_TYPES:
            url = absolute(node.attributes.get("href"), base)
            if url and url not in found:
                found.append(url)
    return found


async def discover_feed(
    client: SafeClient,
    parser: ParsePool,
    base_url: str,
    fetchprotection: int = 2,
    credentials: Credentials | None = None,
    proxy: ProxyRoute | None = None,
) -> str | None:
    """The first working feed URL for the site at `base_url`, or None. `credentials`:
    the source's (each request carries them to the source's own origins only); `proxy`:
    the source's own (frontier.proxies)."""
    candidates: list[str] = []
    try:
        page = await client.get(
            base_url,
            fetchprotection=fetchprotection,
            max_body_bytes=MAX_PAGE_BYTES,
            credentials=credentials,
            proxy=proxy,
        )
        if page.status == 200:
            candidates.extend(await parser.run(alternate_links, page.body, page.url))
    except ParseLimitExceeded as exc:
        log.info("feed discovery: %s unusable: %s", base_url, exc)
    except HttpError as exc:
        log.info("feed discovery: %s unreachable: %s", base_url, exc)
    root = urljoin(base_url, "/")
    candidates.extend(urljoin(root, path) for path in COMMON_PATHS)
    for candidate in dict.fromkeys(candidates):
        try:
            response = await client.get(
                candidate, fetchprotection=fetchprotection, credentials=credentials, proxy=proxy
            )
            if response.status != 200:
                continue
            await parser.run(parse_feed, response.body, dict(response.headers), response.url)
        except (HttpError, DocumentRefused, ParseLimitExceeded):
            continue
        return response.url
    return None
