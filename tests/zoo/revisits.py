"""Zoo: articles that change after they are first fetched, served the ways real servers
answer a revisit.

Where the behaviours come from:
- nginx serving a static page (a static-site generator's output) sends
  `ETag: "<mtime hex>-<length hex>"` and `Last-Modified` from the file, and answers 304 to
  an `If-None-Match` that matches (nginx `ngx_http_set_etag`; the `etag` directive is on
  by default); editing the file changes both;
- WordPress core sends neither ETag nor Last-Modified on posts, and every render differs
  in bytes: inline scripts carry a fresh nonce (`wpApiSettings.nonce`) while the article
  text is the same, so only the text says whether it changed;
- WordPress with a caching plugin (Cacheability, Add-Headers) sends `Last-Modified` from
  the post's modified date and answers 304 to an `If-Modified-Since` that is not older
  (cacheability-pro docs, "Conditional GET"; getpagespeed.com's walkthrough of it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from aiohttp import web

from tests.fetch_harness import article
from tests.local_site import LocalSite

_nonces = itertools.count(1)


@dataclass
class NginxStatic:
    """A static article file behind nginx: ETag and Last-Modified from the file's mtime and
    length; 304 when If-None-Match names the current ETag. `edit` rewrites the file."""

    site: LocalSite
    path: str
    html: str
    mtime: datetime = field(default_factory=lambda: datetime(2026, 11, 20, 8, 0, tzinfo=UTC))

    def __post_init__(self) -> None:
        self.site.route(self.path, self._handle)

    @property
    def etag(self) -> str:
        return f'"{int(self.mtime.timestamp()):x}-{len(self.html.encode()):x}"'

    def edit(self, html: str) -> None:
        self.html = html
        self.mtime += timedelta(hours=2)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        headers = {"ETag": self.etag, "Last-Modified": format_datetime(self.mtime, usegmt=True)}
        if request.headers.get("If-None-Match") == self.etag:
            return web.Response(status=304, headers=headers)
        return web.Response(text=self.html, content_type="text/html", headers=headers)


def wordpress_post(title: str, text: str = "news") -> str:
    """A WordPress post page: the article, plus an inline script with a fresh nonce on every
    render (as core's REST API settings are printed)."""
    nonce = f"{next(_nonces):010x}"
    script = f"<script>var wpApiSettings = {{'root': '/wp-json/', 'nonce': '{nonce}'}};</script>"
    return article(title, word=text).replace("</head>", f"{script}</head>")


@dataclass
class WordPressPost:
    """A WordPress post. Core: no validators, a new nonce per render. With `last_modified`
    (a caching plugin): Last-Modified is the post's modified date, and an
    If-Modified-Since not older than it is answered 304."""

    site: LocalSite
    path: str
    title: str
    text: str = "news"
    last_modified: bool = False
    modified: datetime = field(default_factory=lambda: datetime(2026, 11, 20, 8, 0, tzinfo=UTC))

    def __post_init__(self) -> None:
        self.site.route(self.path, self._handle)

    def update(self, title: str, text: str) -> None:
        self.title, self.text = title, text
        self.modified += timedelta(hours=3)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        headers = {"Cache-Control": "max-age=0, must-revalidate"}
        if self.last_modified:
            headers["Last-Modified"] = format_datetime(self.modified, usegmt=True)
            since = request.headers.get("If-Modified-Since")
            if since and parsedate_to_datetime(since) >= self.modified:
                return web.Response(status=304, headers=headers)
        body = wordpress_post(self.title, self.text)
        return web.Response(text=body, content_type="text/html", headers=headers)
