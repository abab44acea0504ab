"""Rendering a fetched page in a browser (docs/fetching.md, "Rendering in a browser"): which
pages are rendered (`wants`), and the rendering itself with the fetcher's rules held inside
the browser (`RenderStep.render`).

A source's `render` says when: `never`; `auto`, a page whose extraction found a thin body
with a sign of a client-side app's shell (`fetcher.render_signs`); `always`, every HTML
page. The page's document is the response the fetcher already has (fetched in its host's
turn, after its robots.txt allowed it): the browser does not request it again. Every other
request the page makes is sent by a safe client of the step's own, which holds the
request's host for it (frontier.host_slots: one request in flight per host, the host's
delay after the previous answer, whoever sent it) and refuses what the SSRF guard refuses
(a private, loopback, link-local or metadata address not in FRONTIER_ALLOWED_NETWORKS), with
the source's credentials for its own origins only; its exchanges go into the archive with
the page's. The rendered DOM is then extracted as a fetched body is.

Without a browser (`unavailable`), `always` is the source's configuration error (its pages
are retried, with the reason, until one is installed or the source changed) and `auto`
keeps the plain result, the reason logged once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fetcher.extract_job import Extraction
from fetcher.page import Page
from fetcher.render_pool import (
    Answer,
    BrowserPool,
    RenderFailed,
    RenderLimits,
    SubrequestRefused,
    find_chromium,
    unavailable_reason,
)
from frontier.db import Database
from frontier.host_slots import HostSlots
from frontier.queue_values import OutcomeKind
from frontier.robots_directives import NOINDEX
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import BlockedAddress, PolicyBlocked
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings

log = logging.getLogger(__name__)

NEVER, AUTO, ALWAYS = "never", "auto", "always"
# Verdicts a rendering cannot change: a challenge's "enable JavaScript" is the wall's.
_FINAL = frozenset({OutcomeKind.CHALLENGE})
_HTML = ("text/html", "application/xhtml+xml")
_ACCEPT = "*/*"


class RenderStep:
    """The browser pool and the safe client its pages' requests go through; `close()` it."""

    def __init__(
        self,
        limits: RenderLimits,
        client: SafeClient | None,
        *,
        unavailable: str | None = None,
        pool: BrowserPool | None = None,
    ) -> None:
        """`client`: the safe client of the pages' requests, holding each request's host
        (SafeClient with HostSlots); `unavailable`: why no browser can run here (then no
        pool is started and `client` may be None); `pool`: browsers to share (the
        caller's to close), else a pool of the step's own."""
        self.limits = limits
        self.unavailable = unavailable
        self.client = client
        self._own_pool = pool is None and not unavailable
        self.pool = pool if pool is not None or unavailable else BrowserPool(limits)
        self._told = False

    @classmethod
    def from_settings(cls, settings: Settings, db: Database, limits: HttpLimits) -> RenderStep:
        """The step of a fetch process: FRONTIER_RENDER_* and a client holding hosts as
        the poller's does (requester kind `render`)."""
        reason = unavailable_reason(settings.render_chromium)
        if reason is None and settings.render_browsers == 0:
            reason = "FRONTIER_RENDER_BROWSERS is 0"
        render_limits = RenderLimits(
            chromium=find_chromium(settings.render_chromium),
            browsers=settings.render_browsers,
            timeout_s=settings.render_timeout_s,
            memory_mb=settings.render_memory_mb,
            media=settings.render_media,
            max_dom_bytes=limits.max_body_bytes,
            user_agent=settings.user_agent,
        )
        client = None
        if reason is None:
            client = SafeClient(limits, HostSlots.from_settings(settings, db, "render"))
        return cls(render_limits, client, unavailable=reason)

    def config_error(self, page: Page) -> str | None:
        """Why `page` cannot be fetched as its source asks: `render: always` and no browser."""
        if page.source.render == ALWAYS and self.unavailable:
            return f"render: always, but nothing can render here: {self.unavailable}"
        return None

    def wants(self, page: Page, content_type: str | None, extraction: Extraction | None) -> bool:
        """Whether `page` is rendered: always (before extraction, `extraction` None), or
        auto with a sign of an app's shell found by its extraction."""
        mode = page.source.render
        if mode == NEVER or page.rendered or not _is_html(content_type):
            return False
        if mode == ALWAYS:
            return extraction is None and not self.unavailable
        if extraction is None or extraction.app_shell is None:
            return False
        if extraction.verdict is not None and extraction.verdict.kind in _FINAL:
            return False
        if NOINDEX in extraction.robots:  # the page's own word, whatever its scripts add
            return False
        if self.unavailable:
            if not self._told:
                self._told = True
                log.warning(
                    "render: auto pages are kept as fetched, unrendered: %s", self.unavailable
                )
            return False
        return True

    async def render(
        self, page: Page, status: int, headers: Mapping[str, str], body: bytes, *, archive: bool
    ) -> bytes | None:
        """The page's rendered DOM (UTF-8), or None when it could not be rendered (the
        reason logged: the plain result stands)."""
        assert self.pool is not None and self.client is not None
        page.rendered = True
        client = self.client
        source = page.source
        url = page.fetch_url or page.claim.request_url

        async def subrequest(target: str, kind: str, sent: Mapping[str, str]) -> Answer:
            try:
                # Redirects are followed here, each hop through the guard and in its host's
                # turn: a 3xx fulfilled to the browser is not followed by the page's fetch().
                response = await client.get(
                    target,
                    fetchprotection=max(1, source.fetchprotection),
                    headers={"Accept": sent.get("accept", _ACCEPT)},
                    exchanges=page.render_exchanges if archive else None,
                    politeness_key=source.politeness_key,
                    credentials=source.credentials,
                )
            except (BlockedAddress, PolicyBlocked) as exc:
                raise SubrequestRefused(str(exc)) from None
            return Answer(response.status, response.headers, response.body)

        try:
            rendered = await self.pool.render(url, Answer(status, headers, body), subrequest)
        except RenderFailed as exc:
            log.warning("render: %s kept as fetched: %s", page.claim.url, exc)
            page.render_error = str(exc)
            return None
        except Exception as exc:  # rendering must never lose the claim
            log.exception("render: %s kept as fetched", page.claim.url)
            page.render_error = f"rendering failed: {exc}"
            return None
        if rendered.refused:
            log.info(
                "render: %s: %d requests refused (%s)",
                page.claim.url,
                len(rendered.refused),
                "; ".join(rendered.refused[:5]),
            )
        return rendered.html.encode("utf-8")

    async def close(self) -> None:
        if self.pool is not None and self._own_pool:
            await self.pool.close()
        if self.client is not None:
            await self.client.close()


def _is_html(content_type: str | None) -> bool:
    return content_type is None or content_type.split(";")[0].strip().lower() in _HTML
