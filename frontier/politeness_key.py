"""The politeness key: what "one request in flight, the delay after the answer" counts on.

- `host` (the default): the host itself (host_state's key, host[:port]). Its hold is the
  host's own (hosts.sql): nothing more is taken.
- `domain`: the host's registrable domain by the public-suffix list
  (frontier/public_suffix.py): `a.b.blogspot.com` -> `b.blogspot.com`, `x.example.co.uk`
  -> `example.co.uk`. For the thousands of subdomains one server answers (*.wordpress.com,
  *.substack.com). An IP literal, or a name under no public suffix, is its own key.
- `ip`: the address the host resolves to (`ip:<address>`), for hosts of different names
  on one server. The address is the one resolved before the request (by the resolver the
  requests use, cached for a while), as StormCrawler's partitioner resolves it: if the
  name moves meanwhile, the request may go to another address than its key names. A name
  that does not resolve is its own key (its request fails anyway).

`FRONTIER_POLITENESS_KEY` sets the mode for every source; a source may set its own
(`politeness_key`). A key other than the host is held in `politeness_keys`
(frontier/sql/politeness_keys.sql) by whoever holds one of its hosts, alongside the host.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from aiohttp.abc import AbstractResolver

from frontier.buckets import bucket_of, by_bucket
from frontier.db import Database
from frontier.public_suffix import registrable_domain
from frontier.safe_http.connector import DNS_CACHE_S
from frontier.sql import load

SQL = load("politeness_keys")
RESOLVED_TTL_S = float(DNS_CACHE_S)  # as the requests' own DNS cache
UNRESOLVED_TTL_S = 30.0
CACHED_NAMES = 10_000


class KeyMode(StrEnum):
    HOST = "host"
    DOMAIN = "domain"
    IP = "ip"


def _name_of(host: str) -> str:
    """The name or address of a host_state key (host[:port], an IPv6 literal bracketed)."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def domain_key(host: str) -> str | None:
    """The `domain` key of `host` (a host_state key); None: the host is its own key."""
    name = _name_of(host)
    if _is_address(name):
        return None
    return registrable_domain(name)


def address_key(address: str) -> str:
    return f"ip:{address}"


class KeyFinder:
    """The key of a host in a mode. `resolver`: makes the resolver the requests use (for
    `ip`; made at the first lookup, on the event loop, as aiohttp's want); its answers are
    kept `RESOLVED_TTL_S` (a failure `UNRESOLVED_TTL_S`), per process."""

    def __init__(self, resolver: Callable[[], AbstractResolver] | None = None) -> None:
        self._make_resolver = resolver
        self._resolver: AbstractResolver | None = None
        self._resolved: dict[str, tuple[float, str | None]] = {}

    async def key(self, host: str, mode: KeyMode) -> str | None:
        """`host`'s key in `mode`; None when it is the host itself (its own hold)."""
        if mode is KeyMode.DOMAIN:
            return domain_key(host)
        if mode is KeyMode.IP:
            address = await self._address(_name_of(host))
            return address_key(address) if address is not None else None
        return None

    async def _address(self, name: str) -> str | None:
        if _is_address(name):
            return name
        now = time.monotonic()
        cached = self._resolved.get(name)
        if cached is not None and cached[0] > now:
            return cached[1]
        address = await self._resolve(name)
        if len(self._resolved) >= CACHED_NAMES:
            self._resolved.pop(next(iter(self._resolved)))
        ttl = RESOLVED_TTL_S if address is not None else UNRESOLVED_TTL_S
        self._resolved[name] = (now + ttl, address)
        return address

    async def _resolve(self, name: str) -> str | None:
        """The first IPv4 address of `name`, else its first address; None if it has none
        (a failure, or only addresses the requests' guard refuses)."""
        if self._resolver is None and self._make_resolver is not None:
            self._resolver = self._make_resolver()
        if self._resolver is None:
            return None
        try:
            found = await self._resolver.resolve(name, 0, socket.AF_UNSPEC)
        except Exception:  # a DNS failure, or only refused addresses: the host is the key
            return None
        addresses = [r["host"] for r in found]
        ipv4 = [a for a in addresses if ":" not in a]
        return (ipv4 or addresses)[0] if addresses else None

    async def close(self) -> None:
        if self._resolver is not None:
            await self._resolver.close()


@dataclass(frozen=True, slots=True)
class KeyTake:
    """What `KeyRepository.take` answered: taken, or not (then `held`: a request to a host
    of the key is in flight, by `holder`; else its delay runs to `next_allowed_at`)."""

    key: str
    taken: bool
    held: bool = False
    holder: str | None = None
    next_allowed_at: datetime | None = None
    now: datetime | None = None

    def wait_s(self, delay_ms: int) -> float:
        """How long until the key may be free: the end of its delay, or, while a request
        is in flight, an estimate, `delay_ms` (the delay of the host that asked)."""
        if self.held or self.next_allowed_at is None or self.now is None:
            return delay_ms / 1000
        return max((self.next_allowed_at - self.now).total_seconds(), 0.0)

    def reason(self) -> str:
        """Why the key is busy, in words (url show, logs)."""
        if self.held:
            return f"key busy: another host of key {self.key} has a request in flight"
        return f"key busy: the delay of key {self.key} runs until {self.next_allowed_at}"


class KeyRepository:
    """Takes and gives back key holds (frontier/sql/politeness_keys.sql)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def take(
        self, key: str, holder: str, *, lease_s: float, now: datetime | None = None
    ) -> KeyTake:
        bucket = bucket_of(key, await self._db.buckets())
        record = await self._db.fetchrow(SQL["take_key"], key, bucket, holder, lease_s, now)
        assert record is not None
        if record["taken"]:
            return KeyTake(key, True)
        return KeyTake(
            key,
            False,
            held=record["held"],
            holder=record["lease_owner"],
            next_allowed_at=record["next_allowed_at"],
            now=record["now"],
        )

    async def release(
        self, keys: Mapping[str, tuple[str, int]], *, now: datetime | None = None
    ) -> int:
        """The answers from hosts of `keys` (key -> its holder and the delay of the host
        just answered) are in: give them back. Returns how many were."""
        if not keys:
            return 0
        released = 0
        groups = by_bucket(sorted(keys), str, await self._db.buckets())
        for bucket, group in sorted(groups.items()):
            records = await self._db.fetch(
                SQL["release_keys"],
                group,
                [keys[k][0] for k in group],
                [keys[k][1] for k in group],
                bucket,
                now,
            )
            released += len(records)
        return released

    async def state(self, key: str) -> Mapping[str, object] | None:
        """The key's row (holder, lease, next_allowed_at), None if it has none."""
        bucket = bucket_of(key, await self._db.buckets())
        record = await self._db.fetchrow(SQL["key_state"], key, bucket)
        return dict(record) if record is not None else None
