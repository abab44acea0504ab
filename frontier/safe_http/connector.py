"""The transport seam: what opens the safe client's connections.

`SafeClient(limits, connector_factory=...)` takes a `ConnectorFactory`, a callable that
returns an aiohttp `BaseConnector` for the client's `HttpLimits`, as httpx's client takes a
`transport=`. It is a factory rather than a connector because an aiohttp connector belongs
to the event loop it is made in: the client calls it once, in the loop, when it opens its
session (and the session closes it). The default, `guarded_connector`, is the one with the
SSRF guard in its resolver; a connector given instead (a test's, a proxy layer's) answers
for the addresses it connects to itself, while the client still refuses non-public IP
literals in every URL, redirect hops included (frontier.safe_http.ssrf).

Requests through a proxy (frontier.proxies) have a connector of their own,
`proxy_connector`: it connects only to the proxy, whose address the operator chose and the
guard does not judge; the client judges each target's address before asking the proxy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver

from frontier.allowed_networks import AllowedNetworks
from frontier.proxies import Proxy
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.ssrf import GuardedResolver

ConnectorFactory = Callable[[HttpLimits], aiohttp.BaseConnector]

DNS_CACHE_S = 300  # a name's resolved (and judged) addresses are kept this long


def guarded_resolver(limits: HttpLimits) -> GuardedResolver | None:
    """The resolver that refuses non-public addresses; None where private networks are
    allowed (aiohttp's own then)."""
    if limits.allow_private_networks:
        return None
    return GuardedResolver(AllowedNetworks.parse(limits.allowed_networks))


def requests_resolver(limits: HttpLimits) -> AbstractResolver:
    """A resolver like the one the requests of a client with `limits` use: guarded, or,
    with private networks allowed, aiohttp's threaded resolver (its default)."""
    return guarded_resolver(limits) or aiohttp.ThreadedResolver()


def guarded_connector(limits: HttpLimits) -> aiohttp.BaseConnector:
    """The default connector: the limits' connection caps and keep-alive, and the SSRF
    guard in its resolver (after DNS, so the address checked is the one connected to)."""
    return aiohttp.TCPConnector(
        limit=limits.max_connections,
        limit_per_host=limits.max_connections_per_host,
        ttl_dns_cache=DNS_CACHE_S,
        keepalive_timeout=limits.keepalive_s,
        resolver=guarded_resolver(limits),
    )


def proxy_connector(limits: HttpLimits, proxy: Proxy) -> aiohttp.BaseConnector:
    """The connector of requests through `proxy`, with the limits' caps and keep-alive.
    An http or https proxy: aiohttp's own (the request's `proxy=` names it; its resolver
    resolves only the proxy's name). A SOCKS proxy: aiohttp-socks's, which hands the
    target to the proxy, by name for socks5h, by the address python-socks resolves for
    socks5."""
    options: dict[str, Any] = {
        "limit": limits.max_connections,
        "limit_per_host": limits.max_connections_per_host,
        "ttl_dns_cache": DNS_CACHE_S,
        "keepalive_timeout": limits.keepalive_s,
    }
    if not proxy.socks:
        return aiohttp.TCPConnector(**options)
    # aiohttp has no SOCKS client: aiohttp-socks (python-socks) is the maintained one.
    from aiohttp_socks import ProxyConnector, ProxyType

    return ProxyConnector(
        host=proxy.host,
        port=proxy.port,
        proxy_type=ProxyType.SOCKS5,
        username=proxy.username,
        password=proxy.password,
        rdns=proxy.scheme == "socks5h",
        **options,
    )
