"""The SSRF address rules: which addresses a request may reach.

Private, loopback, link-local, multicast, reserved and cloud-metadata addresses are refused
(`BlockedAddress`), unless the operator's allowed networks let them through
(FRONTIER_ALLOWED_NETWORKS, frontier.allowed_networks: a network, or a host name matched
against the name requested; metadata addresses only when listed exactly) or private
networks are allowed altogether (FRONTIER_ALLOW_PRIVATE_NETWORKS). The rule is applied
twice: to an IP literal in a URL before the request (`refuse_literal_address`; aiohttp
connects to a literal without asking the resolver), and to a name after DNS resolution
(`GuardedResolver`, in the connector, so the address checked is the one connected to).
IPv6 spellings of an IPv4 address (NAT64, 6to4, Teredo, SIIT, IPv4-mapped) are judged by
the IPv4 address they carry.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from frontier.allowed_networks import METADATA_ADDRESSES, AllowedNetworks
from frontier.safe_http.errors import BlockedAddress

NOTHING_ALLOWED = AllowedNetworks()

# Every refusal of the SSRF guard ends with this: the settings that lift it.
PRIVATE_NETWORKS_HINT = (
    "refused by the SSRF guard; list the network or host name in FRONTIER_ALLOWED_NETWORKS "
    "(metadata addresses only by exact address), or set FRONTIER_ALLOW_PRIVATE_NETWORKS=true "
    "to fetch every private and loopback address (tests, demos)"
)


def address_is_public(
    address: str, allowed: AllowedNetworks = NOTHING_ALLOWED, name: str | None = None
) -> bool:
    """False for private, loopback, link-local, multicast, reserved and metadata addresses,
    unless `allowed` lets the address through (reached for the host name `name`; None
    for an IP literal)."""
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
    if allowed.allows(ip, name):
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


def refuse_literal_address(url: str, allowed: AllowedNetworks = NOTHING_ALLOWED) -> None:
    """Raise `BlockedAddress` when `url`'s host is an IP literal that is not public. A name
    passes: the resolver judges what it resolves to."""
    host = url.split("/", 3)[2].rsplit("@", 1)[-1]
    host = host[1:].split("]", 1)[0] if host.startswith("[") else host.split(":", 1)[0]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return
    if not address_is_public(host, allowed):
        raise BlockedAddress(f"{host} is not a public address: {PRIVATE_NETWORKS_HINT}")


def refuse_private_answers(
    host: str, addresses: Iterable[str], allowed: AllowedNetworks = NOTHING_ALLOWED
) -> None:
    """Raise `BlockedAddress` when any of the addresses `host` resolved to is not public:
    the check of a target asked of a proxy, which resolves the name again and connects to
    whichever address it picks (so one private answer among public ones is refused too,
    where `GuardedResolver` keeps the public ones)."""
    private = sorted({a for a in addresses if not address_is_public(a, allowed, host)})
    if private:
        raise BlockedAddress(
            f"{host} resolves to non-public addresses ({', '.join(private)}), and the proxy "
            f"would connect to it: {PRIVATE_NETWORKS_HINT}"
        )


class GuardedResolver(AbstractResolver):
    """Resolves with aiohttp's threaded resolver, then drops every non-public address."""

    def __init__(self, allowed: AllowedNetworks = NOTHING_ALLOWED) -> None:
        self._inner = aiohttp.ThreadedResolver()
        self._allowed = allowed

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        public = [r for r in results if address_is_public(r["host"], self._allowed, host)]
        if not public:
            addresses = ", ".join(sorted({r["host"] for r in results}))
            raise BlockedAddress(
                f"{host} resolves only to non-public addresses ({addresses}): "
                f"{PRIVATE_NETWORKS_HINT}"
            )
        return public

    async def close(self) -> None:
        await self._inner.close()
