"""`SafeClient`: the one outbound HTTP client of the poller, the fetcher and the API, built on
aiohttp (the package's docstring says what guards every request).

A request is sent as the caller's `fetchprotection` asks (0 refuses to fetch, 1 sends a bare
request, 2, the default, browser-like headers plus Origin and Referer), in its host's turn
(`HostSlots` or a `Pace`), with the limits' timeouts; redirects are followed hop by hop, each
hop a request of its own through the SSRF rules and the caps, sending the cookies the chain's
own responses set (the session keeps none).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import IO, Any, Protocol

import aiohttp
from multidict import CIMultiDictProxy

from frontier.allowed_networks import AllowedNetworks
from frontier.chain_cookies import ChainCookies
from frontier.clock import utcnow
from frontier.safe_http.aiohttp_support import check_aiohttp
from frontier.safe_http.caps import read_capped, refuse_declared_length, stream_capped
from frontier.safe_http.connector import ConnectorFactory, guarded_connector
from frontier.safe_http.errors import (
    FetchFailed,
    HttpError,
    PolicyBlocked,
    TooManyRedirects,
)
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.responses import REDIRECT_STATUSES, Exchange, Response, exchange_of
from frontier.safe_http.ssrf import refuse_literal_address
from frontier.source_credentials import Credentials
from frontier.urls import InvalidURL, request_spelling


class HostSlots(Protocol):
    """Holds a URL's host while one request is in flight (frontier.host_slots.HostSlots;
    a protocol, so that the client needs no database to be built)."""

    def hold(self, url: str, key_mode: str | None = None) -> AbstractAsyncContextManager[None]: ...


class Pace(Protocol):
    """Keeps one holder's requests to a host the delay apart (frontier.host_slots.Pace)."""

    def turn(self) -> AbstractAsyncContextManager[None]: ...


MASK = "[masked]"  # an archived request header the source's credentials set

# Browser-like request headers for fetchprotection level 2.
BROWSER_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en-US,en;q=0.9",
    "Upgrade-Insecure-Requests": "1",
}


class SafeClient:
    """One aiohttp session for a process; `close()` it when done."""

    def __init__(
        self,
        limits: HttpLimits,
        slots: HostSlots | None = None,
        *,
        connector_factory: ConnectorFactory = guarded_connector,
    ) -> None:
        """`slots`: hold each request's host while it is in flight (requesters without a
        claim); None: the caller keeps to the hosts' pace itself (`get(pace=...)`).
        `connector_factory`: makes the session's connector, once, in the event loop
        (frontier.safe_http.connector; the default is the one with the SSRF guard).
        Raises `UnsupportedAiohttp` for an aiohttp the client was not written for."""
        check_aiohttp()
        self.limits = limits
        self.slots = slots
        self._connector_factory = connector_factory
        self._allowed = AllowedNetworks.parse(limits.allowed_networks)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(
                total=self.limits.total_timeout_s,
                sock_connect=self.limits.connect_timeout_s,
                sock_read=self.limits.read_timeout_s,
            )
            self._session = aiohttp.ClientSession(
                connector=self._connector_factory(self.limits),
                timeout=timeout,
                cookie_jar=aiohttp.DummyCookieJar(),
                headers={"User-Agent": self.limits.user_agent},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> SafeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def request_headers(self, url: str, fetchprotection: int) -> dict[str, str]:
        if fetchprotection <= 0:
            raise PolicyBlocked(f"fetchprotection 0 forbids fetching {url}")
        if fetchprotection == 1:
            return {}
        origin = url.split("/", 3)
        return {
            **BROWSER_HEADERS,
            "Origin": "/".join(origin[:3]),
            "Referer": "/".join(origin[:3]) + "/",
        }

    async def get(
        self,
        url: str,
        *,
        fetchprotection: int = 2,
        etag: str | None = None,
        last_modified: str | None = None,
        follow_redirects: bool = True,
        follow_if: Callable[[str], bool] | None = None,
        max_redirects: int | None = None,
        cookies: ChainCookies | None = None,
        headers: Mapping[str, str] | None = None,
        max_body_bytes: int | None = None,
        truncate: bool = False,
        timeout_s: float | None = None,
        pace: Pace | None = None,
        exchanges: list[Exchange] | None = None,
        politeness_key: str | None = None,
        credentials: Credentials | None = None,
    ) -> Response:
        """GET `url` with conditional headers. Redirects are followed (each hop checked)
        up to the cap (`max_redirects`, else the limits') when `follow_redirects`, and only
        to the targets `follow_if` accepts when it is given; any other 3xx is returned as
        it is. The hops send the cookies the chain's responses set, in `cookies` (a jar the
        caller shares across the requests of one fetch) or in a jar of this call. With
        `truncate`, a body over the cap is cut at the cap instead of refused (robots.txt).
        `timeout_s` replaces the client's timeouts for each request of this call.
        `pace`: the host's pace, kept by a caller that holds the host: each request waits
        its delay after the previous answer. `exchanges`: each request made and its answer
        are appended to it (the archive's record of the call, redirect hops included).
        `politeness_key`: the key mode of the source the request is for (host, domain, ip;
        None: the slots' own), for the client's slots (frontier.politeness_key).
        `credentials`: the source's (frontier.source_credentials), asked again at each
        hop: a hop to another origin carries none of them."""
        cap = max_body_bytes or self.limits.max_body_bytes
        hops = self.limits.max_redirects if max_redirects is None else max_redirects
        jar = ChainCookies() if cookies is None else cookies
        history: list[tuple[int, str]] = []
        started = time.monotonic()
        while True:
            request_headers = self.request_headers(url, fetchprotection)
            if etag:
                request_headers["If-None-Match"] = etag
            if last_modified:
                request_headers["If-Modified-Since"] = last_modified
            request_headers.update(headers or {})
            own = credentials.headers_for(url) if credentials is not None else {}
            request_headers.update(own)
            cookie = "; ".join(filter(None, (own.get("Cookie"), jar.header(url))))
            if cookie:
                request_headers["Cookie"] = cookie
            status, response_headers, body = await self._polite(
                url, request_headers, cap, truncate, timeout_s, pace, exchanges, politeness_key
            )
            if own and exchanges:  # the archive keeps that they were sent, not the secrets
                exchanges[-1] = masked(exchanges[-1], credentials)
            set_cookie = response_headers.getall("Set-Cookie", ())
            if set_cookie:
                jar.update(url, set_cookie)
            location = response_headers.get("Location")
            target = None
            if follow_redirects and status in REDIRECT_STATUSES and location:
                try:
                    target = request_spelling(location, url)
                except InvalidURL as exc:
                    if follow_if is not None:  # the caller decides what the 3xx means
                        target = None
                    else:
                        raise TooManyRedirects(
                            f"unusable redirect from {url}: {exc.reason}"
                        ) from None
            if target is None or (follow_if is not None and not follow_if(target)):
                elapsed = int((time.monotonic() - started) * 1000)
                return Response(url, status, response_headers, body, elapsed, tuple(history))
            history.append((status, url))
            if len(history) > hops:
                raise TooManyRedirects(
                    f"more than {hops} redirects: {redirect_chain([u for _, u in history], target)}"
                )
            url = target
            etag = last_modified = None  # validators belong to the first URL

    async def _polite(
        self,
        url: str,
        headers: dict[str, str],
        cap: int,
        truncate: bool,
        timeout_s: float | None,
        pace: Pace | None,
        exchanges: list[Exchange] | None = None,
        key_mode: str | None = None,
    ) -> tuple[int, CIMultiDictProxy[str], bytes]:
        """One request, in its host's turn: after the pace's delay, or holding the host
        (the client's slots), or as it is (neither: a caller with no host to spare)."""
        if pace is not None:
            async with pace.turn():
                return await self._once(url, headers, cap, truncate, timeout_s, exchanges)
        if self.slots is not None:
            async with self.slots.hold(url, key_mode):
                return await self._once(url, headers, cap, truncate, timeout_s, exchanges)
        return await self._once(url, headers, cap, truncate, timeout_s, exchanges)

    async def _once(
        self,
        url: str,
        headers: dict[str, str],
        cap: int,
        truncate: bool = False,
        timeout_s: float | None = None,
        exchanges: list[Exchange] | None = None,
    ) -> tuple[int, CIMultiDictProxy[str], bytes]:
        self._check_literal_address(url)
        started = utcnow()
        options: dict[str, Any] = {}
        if timeout_s:
            options["timeout"] = aiohttp.ClientTimeout(
                total=timeout_s, sock_connect=timeout_s, sock_read=timeout_s
            )
        try:
            async with self._client().get(
                url, headers=headers, allow_redirects=False, **options
            ) as resp:
                if not truncate:
                    refuse_declared_length(resp, cap, url)
                body = await read_capped(resp, cap, url, truncate)
                if exchanges is not None:
                    exchanges.append(exchange_of(url, started, resp, body))
                return resp.status, resp.headers, body
        except HttpError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            cause = _describe(exc)
            raise FetchFailed(f"{cause} ({url})") from None  # the cause first: a truncated
            # column or log line still shows it

    async def download(self, url: str, into: IO[bytes], *, max_bytes: int) -> int:
        """Stream `url`'s body into the file `into` (a WARC file to import, too large for
        memory), through the same SSRF guard as every request: each redirect hop (at most
        the limits' cap) is checked as a request of its own. Only http(s). No total
        timeout (a large file takes what it takes); the connect and read timeouts apply.
        Returns the bytes written; raises BodyTooLarge past `max_bytes`, HttpError for an
        answer that is not 200, FetchFailed for a transport failure."""
        timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=self.limits.connect_timeout_s,
            sock_read=self.limits.read_timeout_s,
        )
        for _ in range(self.limits.max_redirects + 1):
            if url.split(":", 1)[0].lower() not in ("http", "https"):
                raise PolicyBlocked(f"only http(s) URLs are downloaded, not {url[:200]}")
            self._check_literal_address(url)
            try:
                async with self._client().get(url, allow_redirects=False, timeout=timeout) as resp:
                    location = resp.headers.get("Location")
                    if resp.status in REDIRECT_STATUSES and location:
                        url = request_spelling(location, url)
                        continue
                    if resp.status != 200:
                        raise HttpError(f"HTTP {resp.status} ({url})")
                    return await stream_capped(resp, into, max_bytes, url)
            except HttpError:
                raise
            except InvalidURL as exc:
                raise TooManyRedirects(f"unusable redirect from {url}: {exc.reason}") from None
            except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
                raise FetchFailed(f"{_describe(exc)} ({url})") from None
        raise TooManyRedirects(f"more than {self.limits.max_redirects} redirects ({url})")

    async def post_form(
        self, url: str, form: Mapping[str, str], *, max_body_bytes: int = 64 * 1024
    ) -> Response:
        """POST `form` (application/x-www-form-urlencoded) to `url`, through the same SSRF
        guard, no redirect followed: a WebSub subscription request, which the hub answers
        202. Not in the host's crawl turn (the client's slots keep one request a second to
        a site we crawl): a hub is a service built for its subscribers' requests, which
        come once per feed and lease, and a thousand feeds on one hub would otherwise wait
        a quarter of an hour to subscribe. The answer's body is cut at `max_body_bytes`
        (it is only shown in an error)."""
        self._check_literal_address(url)
        started = time.monotonic()

        try:
            async with self._client().post(url, data=dict(form), allow_redirects=False) as resp:
                body = await read_capped(resp, max_body_bytes, url, truncate=True)
                elapsed = int((time.monotonic() - started) * 1000)
                return Response(url, resp.status, resp.headers, body, elapsed)
        except HttpError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            raise FetchFailed(f"{_describe(exc)} ({url})") from None

    def _check_literal_address(self, url: str) -> None:
        if not self.limits.allow_private_networks:
            refuse_literal_address(url, self._allowed)


def masked(exchange: Exchange, credentials: Credentials | None) -> Exchange:
    """`exchange` with the values of the headers `credentials` set masked."""
    names = credentials.names() if credentials is not None else frozenset()
    headers = tuple(
        (name, MASK if name.lower() in names else value) for name, value in exchange.request_headers
    )
    return replace(exchange, request_headers=headers)


def redirect_chain(urls: list[str], last: str) -> str:
    """`a -> b -> c` for an error message, each URL cut at 200 characters."""
    return " -> ".join(u if len(u) <= 200 else u[:200] + "..." for u in [*urls, last])


def _describe(exc: BaseException) -> str:
    """The cause in words an operator reads at a glance (aiohttp's own text starts with
    "Cannot connect to host ..." for both a DNS failure and a refused connection)."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"DNS lookup failed for {exc.host}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return f"cannot connect to {exc.host}:{exc.port}: {reason}"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
