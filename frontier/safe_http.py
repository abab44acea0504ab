"""The one outbound HTTP client of the poller and the fetcher, built on aiohttp.

Every request it makes is bounded and guarded:

- timeouts (connect, read, total), a body cap applied to the *decompressed* body (so a gzip
  or brotli bomb stops at the cap: aiohttp inflates in bounded steps as the body is read,
  and the read stops at the cap with `BodyTooLarge`), a redirect cap, and a configurable
  User-Agent;
- `Accept-Encoding` is aiohttp's own, which offers only what it can decode: gzip and
  deflate (zlib-wrapped or raw, as IIS sends it), br with the Brotli package (a
  dependency), zstd when a zstd module is present;
- redirects are requested as the server spelt them (`frontier.urls.request_spelling`), and
  the hops of one chain send the cookies that the chain's own responses set
  (`frontier.chain_cookies`); the session itself never keeps a cookie;
- `fetchprotection` levels: 0 refuses to fetch, 1 sends a bare request, 2 (the default)
  sends browser-like headers plus Origin and Referer;
- an SSRF guard: private, loopback, link-local, reserved and cloud-metadata addresses are
  refused after DNS resolution (in the connector's resolver, so the checked address is the
  one connected to) and for IP literals in every URL, redirects included, unless
  `allow_private_networks` is set;
- an archive's view (`exchanges=`, a list the caller passes): each request of the call
  and its answer, as sent and received (`Exchange`), for the WARC archive
  (frontier/archive/);
- politeness: given `HostSlots` (the poller's and a manual fire's client), every request
  holds its host from before it is sent until its answer is in (frontier/host_slots.py);
  a caller that holds the host already (a fetcher, through its claim) passes a `Pace`, and
  each request of the call (the redirect hops) starts no sooner than the host's delay
  after the previous answer.

Errors (all `HttpError`, a `FrontierError`):

    HttpError
    ├── Refused          permanent: not attempted, or its answer is unusable
    │   ├── BlockedAddress   the address is private/loopback/metadata
    │   ├── PolicyBlocked    fetchprotection 0
    │   ├── BodyTooLarge     over the body cap
    │   └── TooManyRedirects over the redirect cap, or a redirect to a non-http URL
    └── FetchFailed      transient: timeout, DNS failure, connection error; retry later
        └── HostBackingOff   (frontier.host_slots) the host backs off: not requested
"""

from __future__ import annotations

import asyncio
import ipaddress
import resource
import socket
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Protocol

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from multidict import CIMultiDictProxy

from frontier.chain_cookies import ChainCookies
from frontier.clock import utcnow
from frontier.errors import FrontierError
from frontier.settings import Settings
from frontier.urls import InvalidURL, request_spelling


class HostSlots(Protocol):
    """Holds a URL's host while one request is in flight (frontier.host_slots.HostSlots;
    a protocol here, so that this module does not import that one, which imports it)."""

    def hold(self, url: str, key_mode: str | None = None) -> AbstractAsyncContextManager[None]: ...


class Pace(Protocol):
    """Keeps one holder's requests to a host the delay apart (frontier.host_slots.Pace)."""

    def turn(self) -> AbstractAsyncContextManager[None]: ...


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# Browser-like request headers for fetchprotection level 2.
BROWSER_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en-US,en;q=0.9",
    "Upgrade-Insecure-Requests": "1",
}
# Cloud metadata endpoints, refused even though some are not "private" by the stdlib.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)


class HttpError(FrontierError):
    """Root of the safe client's errors."""


class Refused(HttpError):
    """Permanent: the request was not made, or its answer cannot be used."""


class BlockedAddress(Refused):
    pass


# Every refusal of the SSRF guard ends with this: the setting that lifts it.
PRIVATE_NETWORKS_HINT = (
    "refused by the SSRF guard; set FRONTIER_ALLOW_PRIVATE_NETWORKS=true to fetch private "
    "and loopback addresses (your own hosts, tests)"
)


class PolicyBlocked(Refused):
    pass


class BodyTooLarge(Refused):
    pass


class TooManyRedirects(Refused):
    pass


class FetchFailed(HttpError):
    """Transient: a timeout, DNS failure or connection error; worth retrying later."""


@dataclass(frozen=True, slots=True)
class HttpLimits:
    user_agent: str
    allow_private_networks: bool = False
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0
    total_timeout_s: float = 60.0
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    max_connections: int = 100
    max_connections_per_host: int = 8
    # An idle keep-alive connection is closed after this long. aiohttp's `limit` counts only
    # connections in use, so idle ones pile up per host fetched within the window: at
    # aiohttp's default of 15 s the soak held ~950 sockets per fetcher over 996 hosts. A
    # host is revisited once per politeness delay (1 s by default), so 5 s keeps the reuse.
    keepalive_s: float = 5.0
    # Networks reachable even though they are not public (an operator's own hosts).
    allowed_networks: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> HttpLimits:
        values: dict[str, Any] = {
            "user_agent": settings.user_agent,
            "allow_private_networks": settings.allow_private_networks,
        }
        values.update(overrides)
        return cls(**values)


def raise_open_file_limit() -> int:
    """Lift this process's soft open-file limit to its hard limit and return it. A fetcher
    with hundreds of hosts in flight, each with a keep-alive socket, passes the common soft
    default of 1024 long before the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def address_is_public(address: str, allowed: tuple[IPNetwork, ...] = ()) -> bool:
    """False for private, loopback, link-local, multicast, reserved and metadata addresses,
    unless the address is inside one of the `allowed` networks."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
            address.split("%", 1)[0]
        )
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _IPV4_COMPATIBLE:
            return False  # deprecated (RFC 4291 2.5.5.1); stacks may route it as IPv4
        inner = embedded_ipv4(ip)
        if inner is not None:
            ip = inner  # a gateway (NAT64, 6to4, Teredo, SIIT) delivers it there
    if any(ip in network for network in allowed):
        return True
    return ip.is_global and not ip.is_multicast and ip not in METADATA_ADDRESSES


# IPv6 forms whose packets a translator or tunnel delivers to an embedded IPv4 address.
# The stdlib calls most of them global (`::7f00:1`, `64:ff9b::7f00:1` and
# `::ffff:0:7f00:1` are all `is_global`), so they are judged by the IPv4 address inside.
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # ::a.b.c.d, also :: and ::1
_LAST_32_BITS = (
    ipaddress.IPv6Network("::ffff:0:0/96"),  # IPv4-mapped
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # SIIT IPv4-translated (RFC 2765)
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64 well-known prefix (RFC 6052)
)
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: any IPv4 may hide in it


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address that `ip` reaches through a translator or tunnel, if any; for
    NAT64's local-use prefix, whose layout the operator chooses, 0.0.0.0 (not public)."""
    if ip.sixtofour is not None:  # 2002::/16 (RFC 3056)
        return ip.sixtofour
    if ip.teredo is not None:  # 2001::/32 (RFC 4380): the client behind its NAT
        return ip.teredo[1]
    if ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(0)
    if any(ip in network for network in _LAST_32_BITS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    return None


class GuardedResolver(AbstractResolver):
    """Resolves with aiohttp's threaded resolver, then drops every non-public address."""

    def __init__(self, allowed: tuple[IPNetwork, ...] = ()) -> None:
        self._inner = aiohttp.ThreadedResolver()
        self._allowed = allowed

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        public = [r for r in results if address_is_public(r["host"], self._allowed)]
        if not public:
            addresses = ", ".join(sorted({r["host"] for r in results}))
            raise BlockedAddress(
                f"{host} resolves only to non-public addresses ({addresses}): "
                f"{PRIVATE_NETWORKS_HINT}"
            )
        return public

    async def close(self) -> None:
        await self._inner.close()


def requests_resolver(limits: HttpLimits) -> AbstractResolver:
    """A resolver like the one the requests of a client with `limits` use: guarded, or,
    with private networks allowed, aiohttp's threaded resolver (its default)."""
    if limits.allow_private_networks:
        return aiohttp.ThreadedResolver()
    return GuardedResolver(tuple(ipaddress.ip_network(n) for n in limits.allowed_networks))


@dataclass(frozen=True, slots=True)
class Response:
    url: str  # the URL that answered (after any redirects followed)
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    elapsed_ms: int
    history: tuple[tuple[int, str], ...] = field(default=())  # (status, url) of redirects

    @property
    def permanent_redirect_to(self) -> str | None:
        """Where every followed redirect was permanent (301/308): the final URL."""
        if self.history and all(status in (301, 308) for status, _ in self.history):
            return self.url
        return None


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and its answer as they went over the wire, for the archive. The body
    is the payload as read: aiohttp has taken off the transfer and content codings
    (`Content-Encoding`, chunking) and `headers` still name them; `truncated` when the
    body was cut at the cap (`get(truncate=True)`)."""

    url: str
    started: datetime  # when the request was sent (the record's WARC-Date)
    request_headers: tuple[tuple[str, str], ...]  # as sent, aiohttp's own included
    version: str  # "1.1"
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # as received, in order
    body: bytes
    truncated: bool = False


class SafeClient:
    """One aiohttp session for a process; `close()` it when done."""

    def __init__(self, limits: HttpLimits, slots: HostSlots | None = None) -> None:
        """`slots`: hold each request's host while it is in flight (requesters without a
        claim); None: the caller keeps to the hosts' pace itself (`get(pace=...)`)."""
        self.limits = limits
        self.slots = slots
        self._allowed = tuple(ipaddress.ip_network(n) for n in limits.allowed_networks)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.limits.max_connections,
                limit_per_host=self.limits.max_connections_per_host,
                ttl_dns_cache=300,
                keepalive_timeout=self.limits.keepalive_s,
                resolver=(
                    None if self.limits.allow_private_networks else GuardedResolver(self._allowed)
                ),
            )
            timeout = aiohttp.ClientTimeout(
                total=self.limits.total_timeout_s,
                sock_connect=self.limits.connect_timeout_s,
                sock_read=self.limits.read_timeout_s,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
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
        None: the slots' own), for the client's slots (frontier.politeness_key)."""
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
            cookie = jar.header(url)
            if cookie is not None:
                request_headers["Cookie"] = cookie
            status, response_headers, body = await self._polite(
                url, request_headers, cap, truncate, timeout_s, pace, exchanges, politeness_key
            )
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
                declared = resp.content_length
                if declared is not None and declared > cap and resp.status < 300 and not truncate:
                    raise BodyTooLarge(f"declares {declared} bytes, over {cap} ({url})")
                body = await _read_capped(resp, cap, url, truncate)
                if exchanges is not None:
                    exchanges.append(_exchange(url, started, resp, body))
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
                    written = 0
                    async for chunk in resp.content.iter_chunked(1 << 20):
                        written += len(chunk)
                        if written > max_bytes:
                            raise BodyTooLarge(f"more than {max_bytes} bytes ({url})")
                        await asyncio.to_thread(into.write, chunk)
                    return written
            except HttpError:
                raise
            except InvalidURL as exc:
                raise TooManyRedirects(f"unusable redirect from {url}: {exc.reason}") from None
            except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
                raise FetchFailed(f"{_describe(exc)} ({url})") from None
        raise TooManyRedirects(f"more than {self.limits.max_redirects} redirects ({url})")

    def _check_literal_address(self, url: str) -> None:
        if self.limits.allow_private_networks:
            return
        host = url.split("/", 3)[2].rsplit("@", 1)[-1]
        host = host[1:].split("]", 1)[0] if host.startswith("[") else host.split(":", 1)[0]
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return  # a name: the resolver checks what it resolves to
        if not address_is_public(host, self._allowed):
            raise BlockedAddress(f"{host} is not a public address: {PRIVATE_NETWORKS_HINT}")


def _exchange(url: str, started: datetime, resp: aiohttp.ClientResponse, body: bytes) -> Exchange:
    version = resp.version
    return Exchange(
        url=url,
        started=started,
        request_headers=tuple(resp.request_info.headers.items()),
        version=f"{version.major}.{version.minor}" if version else "1.1",
        status=resp.status,
        reason=resp.reason or "",
        headers=tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers),
        body=body,
        truncated=not resp.content.at_eof(),  # cut at the cap (`truncate`)
    )


def redirect_chain(urls: list[str], last: str) -> str:
    """`a -> b -> c` for an error message, each URL cut at 200 characters."""
    return " -> ".join(u if len(u) <= 200 else u[:200] + "..." for u in [*urls, last])


async def _read_capped(
    resp: aiohttp.ClientResponse, cap: int, url: str, truncate: bool = False
) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(65_536):
        size += len(chunk)
        if size > cap and truncate:
            chunks.append(chunk[: len(chunk) - (size - cap)])
            break
        if size > cap:
            raise BodyTooLarge(f"sent more than {cap} bytes after decompression ({url})")
        chunks.append(chunk)
    return b"".join(chunks)


def _describe(exc: BaseException) -> str:
    """The cause in words an operator reads at a glance (aiohttp's own text starts with
    "Cannot connect to host ..." for both a DNS failure and a refused connection)."""
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"DNS lookup failed for {exc.host}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return f"cannot connect to {exc.host}:{exc.port}: {reason}"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
