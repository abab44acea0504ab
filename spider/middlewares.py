"""The spider's SSRF guard, as the platform's safe HTTP client applies it
(`frontier.safe_http.ssrf.address_is_public`), in two places:

- `GuardedResolver`, Scrapy's Twisted DNS resolver (`TWISTED_DNS_RESOLVER`): a name that
  resolves to a non-public address fails with `BlockedAddress`. The connection goes to the
  address that was checked, so a name cannot re-resolve to something else in between.
- `SsrfGuardMiddleware`, a downloader middleware: refuses IP-literal URLs with a non-public
  address and non-http(s) URLs before any connection. Redirects come back through the
  downloader middlewares as new requests, so every hop is checked, robots.txt included.

Through a proxy (`SourceProxyMiddleware`: the source's for its hosts, else
`FRONTIER_PROXY_URL`), Scrapy resolves only the proxy's name, which the resolver lets
through (the operator chose it); the middleware judges the target first: every address
its name resolves to must be public (frontier.safe_http.ssrf.refuse_private_answers), as
the safe client does.

They all let through what `FRONTIER_ALLOWED_NETWORKS` lists (frontier.allowed_networks: a
network, or a host name for requests to that name), and everything when
`FRONTIER_ALLOW_PRIVATE_NETWORKS` is set (tests, demos).
The body cap is Scrapy's own `DOWNLOAD_MAXSIZE`, which also bounds decompressed bodies.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Sequence
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from frontier.allowed_networks import AllowedNetworks
from frontier.proxies import Proxy, ProxyRoute, host_of, proxy_of
from frontier.safe_http.errors import BlockedAddress
from frontier.safe_http.ssrf import (
    NOTHING_ALLOWED,
    PRIVATE_NETWORKS_HINT,
    address_is_public,
    refuse_private_answers,
)
from frontier.source_credentials import Credentials

logger = logging.getLogger(__name__)

ALLOW_PRIVATE = "FRONTIER_ALLOW_PRIVATE_NETWORKS"  # our keys in the Scrapy settings
ALLOWED_NETWORKS = "FRONTIER_ALLOWED_NETWORKS"  # the entries, a list
SOURCE_CREDENTIALS = "FRONTIER_SOURCE_CREDENTIALS"  # the crawled source's, resolved
SOURCE_PROXY = "FRONTIER_SOURCE_PROXY"  # the crawled source's proxy (a ProxyRoute)
DEFAULT_PROXY = "FRONTIER_DEFAULT_PROXY"  # FRONTIER_PROXY_URL's (a Proxy)


def allowed_networks(settings: Any) -> AllowedNetworks:
    """The allowed networks in a crawl's Scrapy settings (checked at start-up already)."""
    return AllowedNetworks.parse(settings.getlist(ALLOWED_NETWORKS))


def proxy_hosts(settings: Any) -> frozenset[str]:
    """The names of the crawl's proxies: the resolver lets them resolve anywhere."""
    route: ProxyRoute | None = settings.get(SOURCE_PROXY)
    default: Proxy | None = settings.get(DEFAULT_PROXY)
    proxies = (route.proxy if route else None, default)
    return frozenset(p.host for p in proxies if p is not None)


class BlockedRequest(IgnoreRequest):
    """The downloader middleware refused a request (non-public IP literal, bad scheme)."""


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's caching threaded resolver, refusing non-public answers."""

    def __init__(
        self,
        reactor: Any,
        cache_size: int,
        timeout: float,
        allow_private: bool,
        allowed: AllowedNetworks = NOTHING_ALLOWED,
        proxies: frozenset[str] = frozenset(),
    ):
        super().__init__(reactor, cache_size, timeout)
        self.allow_private = allow_private
        self.allowed = allowed
        self.proxies = proxies  # the proxies' names: the operator's choice, not judged
        # Names refused so far. Twisted turns the refusal into a plain "DNS lookup failed",
        # so the spider's errback asks here whether a failed lookup was a refusal.
        self.blocked_names: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> GuardedResolver:
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        return cls(
            reactor,
            cache_size,
            settings.getfloat("DNS_TIMEOUT"),
            settings.getbool(ALLOW_PRIVATE),
            allowed_networks(settings),
            proxy_hosts(settings),
        )

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        resolved: Deferred[str] = super().getHostByName(name, timeout)
        return resolved.addCallback(self._check, name)

    def _check(self, address: str, name: str) -> str:
        if self.allow_private or address_is_public(address, self.allowed, name):
            return address
        if name.rstrip(".").lower() in self.proxies:  # a proxy (SourceProxyMiddleware
            return address  # refuses it as a target)
        self.blocked_names.add(name)
        logger.warning("SSRF guard: %s resolves to the non-public address %s", name, address)
        raise BlockedAddress(
            f"{name} resolves to the non-public address {address}: {PRIVATE_NETWORKS_HINT}"
        )


class SsrfGuardMiddleware:
    """Refuses non-http(s) URLs and non-public IP literals before any connection."""

    def __init__(self, allow_private: bool, allowed: AllowedNetworks = NOTHING_ALLOWED) -> None:
        self.allow_private = allow_private
        self.allowed = allowed

    @classmethod
    def from_crawler(cls, crawler: Any) -> SsrfGuardMiddleware:
        settings = crawler.settings
        return cls(settings.getbool(ALLOW_PRIVATE), allowed_networks(settings))

    def process_request(self, request: Request) -> None:
        parts = urlparse_cached(request)
        if parts.scheme not in ("http", "https"):
            raise BlockedRequest(f"only http and https are fetched ({request.url})")
        if self.allow_private:
            return
        host = parts.hostname or ""
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return  # a name: GuardedResolver checks what it resolves to
        if not address_is_public(host, self.allowed):
            raise BlockedRequest(
                f"{host} is not a public address ({request.url}): {PRIVATE_NETWORKS_HINT}"
            )


def refused_by_resolver(host: str) -> bool:
    """Whether the installed resolver refused `host` (a lookup that "failed")."""
    from twisted.internet import reactor

    resolver = getattr(reactor, "resolver", None)
    return host in getattr(resolver, "blocked_names", ())


class SourceAccessMiddleware:
    """The source's credentials, headers and cookies (frontier.source_credentials) on each
    request to one of its origins, and off every other: Scrapy's redirect middleware
    copies a request's headers into the hop's request, which passes here again."""

    def __init__(self, credentials: Credentials | None) -> None:
        self.credentials = credentials

    @classmethod
    def from_crawler(cls, crawler: Any) -> SourceAccessMiddleware:
        return cls(crawler.settings.get(SOURCE_CREDENTIALS))

    def process_request(self, request: Request) -> None:
        if self.credentials is None:
            return
        for name in self.credentials.names():
            request.headers.pop(name, None)
        for name, value in self.credentials.headers_for(request.url).items():
            request.headers[name] = value


class SourceProxyMiddleware:
    """The proxy of each request (frontier.proxies): the source's for its own hosts, else
    FRONTIER_PROXY_URL's, else none (`meta["proxy"] = None`: not the environment's either),
    for Scrapy's HttpProxyMiddleware, which sends its credentials. Each hop of a redirect
    passes here again. The target of a proxied request is judged here, before the proxy is
    asked: the proxy resolves it, not our resolver. So is a request to a proxy's own name
    (the resolver lets that name through for the proxy's connection)."""

    def __init__(
        self,
        route: ProxyRoute | None,
        default: Proxy | None,
        allow_private: bool,
        allowed: AllowedNetworks = NOTHING_ALLOWED,
    ) -> None:
        self.route = route
        self.default = default
        self.allow_private = allow_private
        self.allowed = allowed
        self.proxy_hosts = frozenset(
            p.host for p in (route.proxy if route else None, default) if p is not None
        )
        self._judged: set[str] = set()  # names found public in this crawl

    @classmethod
    def from_crawler(cls, crawler: Any) -> SourceProxyMiddleware:
        settings = crawler.settings
        return cls(
            settings.get(SOURCE_PROXY),
            settings.get(DEFAULT_PROXY),
            settings.getbool(ALLOW_PRIVATE),
            allowed_networks(settings),
        )

    async def process_request(self, request: Request) -> None:
        proxy = proxy_of(self.route, request.url, self.default)
        host = host_of(request.url) or ""
        if proxy is not None or host in self.proxy_hosts:
            await self._judge(host, request.url)
        request.meta["proxy"] = str(proxy.aiohttp_url()) if proxy is not None else None

    async def _judge(self, host: str, url: str) -> None:
        if self.allow_private or host in self._judged:
            return
        try:
            ipaddress.ip_address(host)
            return  # a literal: SsrfGuardMiddleware judged it
        except ValueError:
            pass
        try:
            answers = await asyncio.get_running_loop().getaddrinfo(
                host, None, type=socket.SOCK_STREAM
            )
        except OSError as exc:
            raise IgnoreRequest(
                f"DNS lookup failed for {host} ({exc}): a proxied target is resolved here "
                f"first, for the SSRF guard ({url})"
            ) from None
        try:
            refuse_private_answers(host, (str(a[4][0]) for a in answers), self.allowed)
        except BlockedAddress as exc:
            raise BlockedRequest(f"{exc} ({url})") from None
        self._judged.add(host)
