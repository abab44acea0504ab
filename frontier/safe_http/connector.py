"""What opens the safe client's connections: `guarded_connector`, with the SSRF guard in its
resolver (frontier.safe_http.ssrf), and `requests_resolver`, the same rule for the host slots.
"""

from __future__ import annotations

import aiohttp
from aiohttp.abc import AbstractResolver

from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.ssrf import GuardedResolver, parse_networks

DNS_CACHE_S = 300  # a name's resolved (and judged) addresses are kept this long


def guarded_resolver(limits: HttpLimits) -> GuardedResolver | None:
    """The resolver that refuses non-public addresses; None where private networks are
    allowed (aiohttp's own then)."""
    if limits.allow_private_networks:
        return None
    return GuardedResolver(parse_networks(limits.allowed_networks))


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
