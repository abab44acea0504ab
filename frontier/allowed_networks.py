"""The operator's allowed networks (`FRONTIER_ALLOWED_NETWORKS`): the private addresses the
SSRF guard lets through while it refuses every other one (frontier.safe_http.ssrf).

An entry is a CIDR (`10.1.0.0/16`, `fd12:3456::/48`), a bare address (`10.1.2.3`, one host)
or a host name (`wiki.intranet.example`). How an entry matches:

- a network: any address inside it, whatever name was asked for (an IP literal in a URL, or
  what a name resolved to);
- a host name: every address *that name* resolves to, when the request is for that very
  name (exact, case-insensitive, no subdomains). It is matched against the name requested,
  never against the address: another name that resolves to the same private address is
  still refused. Matching the address instead would allow whatever an outsider's DNS points
  at that address (and, through a rebinding name, at any address the allowed name ever had),
  and a reverse lookup is the answer of whoever runs the address's PTR zone. The allowed
  name's own answers are trusted because the operator's DNS gives them;
- cloud-metadata addresses (169.254.169.254 and the like, `METADATA_ADDRESSES`) pass only
  when an entry *is* that address (a bare address, a /32 or /128): a network that merely
  contains one (169.254.0.0/16 for link-local devices, fd00::/8 for an IPv6 intranet) or a
  name that resolves to one does not open it, because the endpoint hands out the machine's
  cloud credentials and nobody means to crawl it by accident.

Pure rules with no I/O, so the settings can check the entries at start-up (a malformed one
stops the command, named) and the spider and the safe client share them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from frontier.hostnames import normalize_host

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Cloud metadata endpoints (they hand out the machine's credentials): refused even inside an
# allowed network, unless listed by exact address. AWS EC2 (IMDS v4/v6), ECS task
# credentials, EKS Pod Identity (v4/v6); GCP, Azure, Oracle share 169.254.169.254;
# Alibaba Cloud 100.100.100.200.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "fd00:ec2::254",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::23",
        "100.100.100.200",
    )
)


def split_entries(text: str) -> tuple[str, ...]:
    """The entries of a comma-separated setting, stripped, empty ones dropped."""
    return tuple(entry.strip() for entry in text.split(",") if entry.strip())


@dataclass(frozen=True, slots=True)
class AllowedNetworks:
    """Parsed entries; empty (the default) allows nothing."""

    networks: tuple[IPNetwork, ...] = ()
    names: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowedNetworks:
        """Raise `ValueError` naming the first entry that is neither a network nor a host
        name."""
        networks: list[IPNetwork] = []
        names: set[str] = set()
        for entry in entries:
            parsed = _parse_entry(entry)
            if isinstance(parsed, str):
                names.add(parsed)
            else:
                networks.append(parsed)
        return cls(tuple(networks), frozenset(names))

    def __bool__(self) -> bool:
        return bool(self.networks or self.names)

    def allows(self, ip: IPAddress, name: str | None = None) -> bool:
        """Whether `ip` (reached for the host name `name`, None for an IP literal) is let
        through although it is not public."""
        if ip in METADATA_ADDRESSES:
            return any(
                n.prefixlen == n.max_prefixlen and n.network_address == ip for n in self.networks
            )
        if name is not None and name.rstrip(".").lower() in self.names:
            return True
        return any(ip in network for network in self.networks)


def _parse_entry(entry: str) -> IPNetwork | str:
    """A network, or a host name in its canonical spelling."""
    text = entry.strip()
    if "/" in text or ":" in text:
        try:
            return ipaddress.ip_network(text)  # strict: 10.0.0.1/8 (host bits set) is a typo
        except ValueError as exc:
            problem = str(exc)
    else:
        try:
            host = normalize_host(text.rstrip("."))
        except ValueError as exc:
            problem = str(exc)
        else:
            try:
                return ipaddress.ip_network(host)
            except ValueError:
                return host
    raise ValueError(f"entry {entry!r} is not a CIDR, an address or a host name ({problem})")
