"""`SafeClient`: the one outbound HTTP client of the poller, the fetcher and the API, built on
aiohttp (the package's docstring says what guards every request).

A request is sent as the caller's `fetchprotection` asks (0 refuses to fetch, 1 sends a bare
request, 2, the default, browser-like headers plus Origin and Referer), in its host's turn
(`HostSlots` or a `Pace`), with the limits' timeouts; redirects are followed hop by hop, each
hop a request of its own through the SSRF rules and the caps, sending the cookies the chain's
own responses set (the session keeps none).

Through a proxy (frontier.proxies: the source's for its own hosts, else the operator's
FRONTIER_PROXY_URL), each request's target is judged first: its IP literal, or every
address its name resolves to here, must be public (or allowed), since the proxy resolves
the name again and connects to what it finds; the proxy's own address is not judged. A
failure of the proxy itself is a `ProxyError`, never the target's.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import IO, Any, Protocol
from urllib.parse import urlencode, urlsplit

import aiohttp
from multidict import CIMultiDictProxy

from frontier.allowed_networks import AllowedNetworks
from frontier.chain_cookies import ChainCookies
from frontier.clock import utcnow
from frontier.proxies import Proxy, ProxyRoute, proxy_of
from frontier.safe_http.aiohttp_support import check_aiohttp
from frontier.safe_http.caps import read_capped, refuse_declared_length, stream_capped
from frontier.safe_http.connector import ConnectorFactory, guarded_connector, proxy_connector
from frontier.safe_http.errors import (
    FetchFailed,
    HttpError,
    PolicyBlocked,
    ProxyError,
    TooManyRedirects,
)
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.responses import REDIRECT_STATUSES, Exchange, Response, exchange_of
from frontier.safe_http.ssrf import refuse_literal_address, refuse_private_answers
from frontier.source_credentials import Credentials
from frontier.urls import InvalidURL, request_spelling

FORM_TYPE = "application/x-www-form-urlencoded"


class HostSlots(Protocol):
    """Holds a URL's host while one request is in flight (frontier.host_slots.HostSlots;
    a protocol, so that the client needs no database to be built)."""

    def hold(self, url: str, key_mode: str | None = None) -> AbstractAsyncContextManager[None]: ...


class Pace(Protocol):
    """Keeps one holder's requests to a host the delay apart (frontier.host_slots.Pace)."""

    def turn(self) -> AbstractAsyncContextManager[None]: ...


MASK = "[masked]"  # an archived request header the source's credentials set
JUDGED_S = 300.0  # how long a proxied target's judged name is trusted (the DNS cache's)
MAX_JUDGED = 10_000
# RFC 9209 Proxy-Status errors that name the destination, not the proxy itself
DESTINATION_ERRORS = ("destination_", "connection_", "tls_", "http_response_", "dns_")

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
        # FRONTIER_PROXY_URL: every request that its source's own proxy does not carry
        self.default_proxy = (
            Proxy.parse(limits.proxy_url, password=limits.proxy_password)
            if limits.proxy_url
            else None
        )
        # the sessions of proxied requests: one for http(s) proxies (named per request),
        # one per SOCKS proxy (its connector is the proxy)
        self._proxied: dict[Proxy | None, aiohttp.ClientSession] = {}
        self._judged: dict[str, float] = {}  # target host -> when its verdict expires
        self._target_resolver: aiohttp.ThreadedResolver | None = None
        # URL authorities whose host passed the literal-address check: its verdict
        # depends on the authority and the allowed networks alone, which do not change
        # (a webhook's receiver is posted to thousands of times: ~15 us a check saved).
        self._passed_literal: set[str] = set()
        self._post_timeouts: dict[float, aiohttp.ClientTimeout] = {}  # by `timeout_s`

    def _new_session(self, connector: aiohttp.BaseConnector) -> aiohttp.ClientSession:
        timeout = aiohttp.ClientTimeout(
            total=self.limits.total_timeout_s,
            sock_connect=self.limits.connect_timeout_s,
            sock_read=self.limits.read_timeout_s,
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={"User-Agent": self.limits.user_agent},
        )

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = self._new_session(self._connector_factory(self.limits))
        return self._session

    async def _route(
        self, url: str, proxy: Proxy | None
    ) -> tuple[aiohttp.ClientSession, dict[str, Any]]:
        """The session a request to `url` goes through, and its options: direct, or
        through `proxy` once the target's address is judged."""
        self._check_literal_address(url)
        if proxy is None:
            return self._client(), {}
        await self._judge_target(url)
        key = proxy if proxy.socks else None
        session = self._proxied.get(key)
        if session is None:
            session = self._proxied[key] = self._new_session(proxy_connector(self.limits, proxy))
        return session, ({} if proxy.socks else {"proxy": proxy.aiohttp_url()})

    async def _judge_target(self, url: str) -> None:
        """Refuse a proxied request whose target's name resolves (here) to any non-public
        address, before the proxy is asked: the SSRF guard of a request the proxy
        connects. (An IP literal was judged already.) The proxy resolves the name again:
        between the two lookups a rebinding name could change its answer; see
        docs/fetching.md, "Proxies"."""
        if self.limits.allow_private_networks:
            return
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
        try:
            ipaddress.ip_address(host)
            return  # a literal: refuse_literal_address judged it
        except ValueError:
            pass
        now = time.monotonic()
        if self._judged.get(host, 0.0) > now:
            return
        if self._target_resolver is None:
            self._target_resolver = aiohttp.ThreadedResolver()
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            answers = await self._target_resolver.resolve(host, port, socket.AF_UNSPEC)
        except (OSError, ValueError) as exc:
            raise FetchFailed(
                f"DNS lookup failed for {host} ({type(exc).__name__}): a proxied target is "
                f"resolved here first, for the SSRF guard ({url})"
            ) from None
        refuse_private_answers(host, (a["host"] for a in answers), self._allowed)
        if len(self._judged) >= MAX_JUDGED:
            self._judged.clear()
        self._judged[host] = now + JUDGED_S

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        for session in self._proxied.values():
            await session.close()
        self._proxied.clear()
        if self._target_resolver is not None:
            await self._target_resolver.close()
            self._target_resolver = None

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
        proxy: ProxyRoute | None = None,
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
        hop: a hop to another origin carries none of them. `proxy`: the source's
        (frontier.proxies), asked at each hop too: a hop to another host goes through
        FRONTIER_PROXY_URL, or direct."""
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
            via = proxy_of(proxy, url, self.default_proxy)
            status, response_headers, body = await self._polite(
                url,
                request_headers,
                cap,
                truncate,
                timeout_s,
                pace,
                exchanges,
                politeness_key,
                via,
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
        via: Proxy | None = None,
    ) -> tuple[int, CIMultiDictProxy[str], bytes]:
        """One request, in its host's turn: after the pace's delay, or holding the host
        (the client's slots), or as it is (neither: a caller with no host to spare). The
        turn is the target host's, whether or not a proxy carries the request."""
        if pace is not None:
            async with pace.turn():
                return await self._once(url, headers, cap, truncate, timeout_s, exchanges, via)
        if self.slots is not None:
            async with self.slots.hold(url, key_mode):
                return await self._once(url, headers, cap, truncate, timeout_s, exchanges, via)
        return await self._once(url, headers, cap, truncate, timeout_s, exchanges, via)

    async def _once(
        self,
        url: str,
        headers: dict[str, str],
        cap: int,
        truncate: bool = False,
        timeout_s: float | None = None,
        exchanges: list[Exchange] | None = None,
        via: Proxy | None = None,
    ) -> tuple[int, CIMultiDictProxy[str], bytes]:
        session, options = await self._route(url, via)
        started = utcnow()
        if timeout_s:
            options["timeout"] = aiohttp.ClientTimeout(
                total=timeout_s, sock_connect=timeout_s, sock_read=timeout_s
            )
        try:
            async with session.get(url, headers=headers, allow_redirects=False, **options) as resp:
                if via is not None:
                    refuse_proxy_answer(resp.status, resp.headers, via, url)
                if not truncate:
                    refuse_declared_length(resp, cap, url)
                body = await read_capped(resp, cap, url, truncate)
                if exchanges is not None:
                    exchange = exchange_of(url, started, resp, body)
                    exchanges.append(proxy_masked(exchange) if via is not None else exchange)
                return resp.status, resp.headers, body
        except HttpError:
            raise
        except Exception as exc:
            raise request_failure(exc, via, url) from None

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
            via = self.default_proxy
            try:
                session, options = await self._route(url, via)
                async with session.get(
                    url, allow_redirects=False, timeout=timeout, **options
                ) as resp:
                    if via is not None:
                        refuse_proxy_answer(resp.status, resp.headers, via, url)
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
            except Exception as exc:
                raise request_failure(exc, via, url) from None
        raise TooManyRedirects(f"more than {self.limits.max_redirects} redirects ({url})")

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        headers: Mapping[str, str],
        timeout_s: float | None = None,
        max_answer_bytes: int = 64 * 1024,
    ) -> Response:
        """POST `body` to `url` (a webhook's delivery, a WebSub hub's subscription),
        through the same SSRF guard as every request; no redirect is followed (a 3xx is the
        answer), `timeout_s` (else the client's) bounds the whole exchange, and the
        answer's body is read up to `max_answer_bytes` (truncated: it is only shown in an
        error). FetchFailed for a transport failure.

        Not in the host's crawl turn (the client's slots keep one request a second to a
        site we crawl): a receiver or a hub is a service built for its subscribers'
        requests, and a thousand feeds on one hub would otherwise wait a quarter of an hour
        to subscribe; a webhook sink paces its receiver itself (frontier.sinks.webhook)."""
        if url.split(":", 1)[0].lower() not in ("http", "https"):
            raise PolicyBlocked(f"only http(s) URLs are posted to, not {url[:200]}")
        self._check_literal_address(url)
        options: dict[str, Any] = {}  # no timeout given: the client's own (not None: none)
        if timeout_s is not None:
            options["timeout"] = self._post_timeout(timeout_s)
        started = time.monotonic()
        try:
            async with self._client().post(
                url, data=body, headers=headers, allow_redirects=False, **options
            ) as resp:
                if resp.content.at_eof():  # no body (a 204), or read already: nothing to read
                    answer = b""
                else:
                    answer = await read_capped(resp, max_answer_bytes, url, truncate=True)
                elapsed = int((time.monotonic() - started) * 1000)
                return Response(url, resp.status, resp.headers, answer, elapsed)
        except HttpError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
            raise FetchFailed(f"{_describe(exc)} ({url})") from None

    def _post_timeout(self, timeout_s: float) -> aiohttp.ClientTimeout:
        """The timeout of a POST bounded by `timeout_s`: made once per value (a webhook
        sink's is always the same)."""
        timeout = self._post_timeouts.get(timeout_s)
        if timeout is None:
            if len(self._post_timeouts) >= MAX_JUDGED:
                self._post_timeouts.clear()
            timeout = self._post_timeouts[timeout_s] = aiohttp.ClientTimeout(
                total=timeout_s, sock_connect=min(timeout_s, self.limits.connect_timeout_s)
            )
        return timeout

    async def post_form(self, url: str, form: Mapping[str, str]) -> Response:
        """`post` of `form`, application/x-www-form-urlencoded (a WebSub hub's request)."""
        body = urlencode(form).encode("ascii")
        return await self.post(url, body, headers={"Content-Type": FORM_TYPE})

    def _check_literal_address(self, url: str) -> None:
        """`refuse_literal_address` of `url`, unless its authority passed it before (a
        refused one is judged, and refused, every time)."""
        if self.limits.allow_private_networks:
            return
        parts = url.split("/", 3)
        authority = parts[2] if len(parts) > 2 else url
        if authority in self._passed_literal:
            return
        refuse_literal_address(url, self._allowed)
        if len(self._passed_literal) >= MAX_JUDGED:
            self._passed_literal.clear()
        self._passed_literal.add(authority)


def masked(exchange: Exchange, credentials: Credentials | None) -> Exchange:
    """`exchange` with the values of the headers `credentials` set masked."""
    names = credentials.names() if credentials is not None else frozenset()
    headers = tuple(
        (name, MASK if name.lower() in names else value) for name, value in exchange.request_headers
    )
    return replace(exchange, request_headers=headers)


def proxy_masked(exchange: Exchange) -> Exchange:
    """`exchange` with the Proxy-Authorization aiohttp sent (an http target through an
    http proxy) masked."""
    headers = tuple(
        (name, MASK if name.lower() == "proxy-authorization" else value)
        for name, value in exchange.request_headers
    )
    return replace(exchange, request_headers=headers)


def refuse_proxy_answer(status: int, headers: Mapping[str, str], proxy: Proxy, url: str) -> None:
    """Raise `ProxyError` for an answer the proxy made itself to a plain-http request (an
    https target's goes through CONNECT, refused as `ClientHttpProxyError`): 407 (its
    credentials), or a 5xx whose RFC 9209 Proxy-Status names an error of the proxy, not of
    the destination. Any other answer is the target's (a 502 without it included: a
    gateway in front of the site answers the same)."""
    if status == 407:
        raise ProxyError(f"proxy error: {proxy.label()} answered 407 (its credentials) ({url})")
    if status >= 500:
        error = _proxy_status_error(headers.get("Proxy-Status", ""))
        if error and not error.startswith(DESTINATION_ERRORS):
            raise ProxyError(f"proxy error: {proxy.label()} answered {status} ({error}) ({url})")


def _proxy_status_error(value: str) -> str | None:
    """The `error` parameter of the last Proxy-Status member (the proxy nearest to us)."""
    last = value.rsplit(",", 1)[-1]
    for param in last.split(";")[1:]:
        key, _, found = param.strip().partition("=")
        if key.strip().lower() == "error":
            return found.strip().strip('"').lower()[:100] or None
    return None


def request_failure(exc: Exception, proxy: Proxy | None, url: str) -> HttpError:
    """The error a request that raised `exc` ends with: the proxy's `ProxyError`, else a
    `FetchFailed` for a transport failure (the cause first: a truncated column or log line
    still shows it); anything else is raised again as it is (a bug, not the network)."""
    failure = proxy_failure(exc, proxy, url)
    if failure is not None:
        return failure
    if isinstance(exc, (TimeoutError, aiohttp.ClientError, OSError, ValueError)):
        return FetchFailed(f"{_describe(exc)} ({url})")
    raise exc


def proxy_failure(exc: BaseException, proxy: Proxy | None, url: str) -> HttpError | None:
    """The `ProxyError` that `exc` is, when a request through `proxy` failed at the proxy:
    it could not be reached (refused, timed out), or refused the CONNECT or the SOCKS
    request (407, 403, 502, 503, a SOCKS error reply); except a CONNECT refused with an
    RFC 9209 Proxy-Status naming the destination's error, the target's `FetchFailed`."""
    if proxy is None:
        return None
    where = f"proxy error: {proxy.label()}"
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        error = _proxy_status_error(exc.headers.get("Proxy-Status", "") if exc.headers else "")
        if error and error.startswith(DESTINATION_ERRORS):  # the proxy says: the target's
            return FetchFailed(
                f"{proxy.label()} could not reach the target: {exc.status} ({error}) ({url})"
            )
        return ProxyError(f"{where} refused the tunnel: {exc.status} {exc.message} ({url})")
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return ProxyError(f"{where}: cannot connect: {_describe(exc.os_error)} ({url})")
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return ProxyError(f"{where}: connecting timed out ({url})")
    if proxy.socks:
        import aiohttp_socks  # (imported only where a SOCKS proxy is configured)

        socks_errors = (
            aiohttp_socks.ProxyError,
            aiohttp_socks.ProxyTimeoutError,
            aiohttp_socks.ProxyConnectionError,
        )
        if isinstance(exc, socks_errors):
            return ProxyError(f"{where}: {str(exc)[:300] or type(exc).__name__} ({url})")
    return None


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
