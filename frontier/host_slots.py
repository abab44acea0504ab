"""Holding a host for one request, for requesters without a claim: the spider (through its
download handler), the poller and a manual fire (through their `SafeClient`). A fetcher's
claim holds its host already (queue.sql `claim`).

`HostSlots.hold(url)` waits until the URL's host is free (nobody holds it, its delay has
passed since the previous answer, it is not backing off), holds it while the caller sends
its request and reads the answer, then gives it back (hosts.sql `take_slot`,
`release_slots`). So every requester together keeps one request in flight per host, and
the next starts no sooner than the host's delay after the previous answer, whatever the
load: there is no deadline to keep and nothing to race.

With a politeness key wider than the host (`domain`, `ip`: frontier.politeness_key), the
holder takes the host's key too, and gives it back with the host: one request in flight
per key, the next no sooner than the delay after its answer. A key that is busy is waited
for as a host is, without holding the host meanwhile.

While another requester holds the host, the wait looks again every `HELD_POLL_S` (a hold
usually ends long before its lease would); a wait for the delay or a backoff sleeps until
it ends. A host backing off for longer than the caller's patience is not requested
(`HostBackingOff`). While the database is unavailable a slot is asked for again with
backoff for up to `DB_PATIENCE_S`; no request goes out without its slot.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial

from frontier.db import Database
from frontier.hosts import SLOT_BACKOFF, SLOT_DELAY, SLOT_HELD, HostRepository, HostSlot, KeyBusy
from frontier.politeness_key import KeyFinder, KeyMode, KeyRepository
from frontier.safe_http.connector import requests_resolver
from frontier.safe_http.errors import FetchFailed
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.urls import normalize_url, url_host

HELD_POLL_S = 0.1  # another requester's request is in flight: look again this often
DB_PATIENCE_S = 120.0
BACKOFF_PATIENCE_S = 60.0  # a host backing off for longer is not requested


class HostBackingOff(FetchFailed):
    """The host backs off (after 429/503 or repeated failures) for longer than the
    requester waits: not requested, and, as any transient failure of a fetch, to be tried
    again later (callers that handle `HttpError` handle it)."""


def slot_host(url: str) -> str:
    """The host_state key of a URL (host, plus a non-default port), as the frontier's.
    Raises `frontier.urls.InvalidURL` for a URL the frontier would refuse."""
    return url_host(normalize_url(url))


def requester_id(kind: str) -> str:
    """kind:host:pid:random, unique per requester process (its holds are keyed by it)."""
    return f"{kind}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class HostSlots:
    """Takes and gives back host holds for `owner` (a requester's unique id). A hold is
    a lease of `lease_s`: longer than any request may take (its timeout), so that only a
    requester that died holding a host leaves it held, and then for no longer than that."""

    db: Database
    owner: str
    new_host_delay_ms: int
    lease_s: float
    backoff_patience_s: float = BACKOFF_PATIENCE_S
    key_mode: KeyMode = KeyMode.HOST  # frontier.politeness_key
    key_finder: KeyFinder = field(default_factory=KeyFinder)
    waited_s: float = 0.0  # time spent waiting for hosts, in all
    _keys: dict[str, tuple[str, int]] = field(default_factory=dict)  # host -> key, delay

    @classmethod
    def from_settings(cls, settings: Settings, db: Database, kind: str) -> HostSlots:
        """Holds for a requester of `kind` (poller, api), with the lease of a fetcher's
        claim (FRONTIER_LEASE_SECONDS): whoever dies holding a host holds it no longer
        than that. A new host gets the default delay until its robots.txt is read. The
        key is FRONTIER_POLITENESS_KEY's, an address looked up as the requests' are."""
        return cls(
            db,
            requester_id(kind),
            new_host_delay_ms=settings.default_delay_ms,
            lease_s=settings.lease_seconds,
            key_mode=KeyMode(settings.politeness_key),
            key_finder=KeyFinder(partial(requests_resolver, HttpLimits.from_settings(settings))),
        )

    @asynccontextmanager
    async def hold(self, url: str, key_mode: str | None = None) -> AsyncIterator[None]:
        """Hold `url`'s host while the body of the `with` sends one request and reads its
        answer (a failed request included); give the host back afterwards. `key_mode`:
        the politeness key of the request's source (None: `self.key_mode`)."""
        host = slot_host(url)
        held = await self.take(host, key_mode)
        try:
            yield
        finally:
            if held:
                await asyncio.shield(self.release(host))

    async def take(self, host: str, key_mode: str | None = None) -> bool:
        """Wait for `host` (and its politeness key in `key_mode`, else `self.key_mode`)
        and take it; returns whether it is held (a host without a delay is not) and must
        be given back with `release`."""
        mode = KeyMode(key_mode) if key_mode else self.key_mode
        hosts = HostRepository(self.db)
        started = time.monotonic()
        while True:
            asked = time.monotonic()
            slot = await self.db.outage.ride_out(
                lambda: hosts.take_slot(
                    host,
                    self.owner,
                    new_host_delay_ms=self.new_host_delay_ms,
                    lease_s=self.lease_s,
                ),
                DB_PATIENCE_S,
            )
            if slot.taken:
                busy = await self._take_key(host, slot, mode) if slot.held else None
                if busy is None:
                    self.waited_s += time.monotonic() - started
                    return slot.held
                slot = busy
            reason = slot.reason or "delay"
            if reason == SLOT_BACKOFF and slot.wait_s > self.backoff_patience_s:
                raise HostBackingOff(
                    f"{host} backs off for {slot.wait_s:.0f} s more (after 429/503 or "
                    "repeated failures): not requested"
                )
            # Counted from when it was asked, not from the answer: a fetcher wakes for the
            # host at the moment it is free, and a requester that woke a round trip later
            # would lose every turn of a busy host to the fetchers (seen: a spider held
            # back until they were done).
            wait = min(slot.wait_s, HELD_POLL_S) if reason == SLOT_HELD else slot.wait_s
            await asyncio.sleep(max(asked + wait - time.monotonic(), 0.001))

    async def _take_key(self, host: str, slot: HostSlot, mode: KeyMode) -> HostSlot | None:
        """Holding `host`, take its politeness key too (when it is wider than the host);
        None when held. A busy key is not waited for holding the host: the host is given
        back snoozed until the key may be free, as a fetcher's claim does
        (fetcher.politeness), and the answer says how long to wait."""
        key = await self.key_finder.key(host, mode)
        if key is None:
            return None
        keys = KeyRepository(self.db)
        take = await self.db.outage.ride_out(
            lambda: keys.take(key, self.owner, lease_s=self.lease_s), DB_PATIENCE_S
        )
        if take.taken:
            self._keys[host] = (key, slot.delay_ms)
            return None
        wait_s = take.wait_s(slot.delay_ms)
        await self._give_back(host, snoozed={host: KeyBusy(key, wait_s)})
        return HostSlot(False, wait_s, SLOT_HELD if take.held else SLOT_DELAY)

    async def release(self, host: str) -> None:
        await self._give_back(host)

    async def _give_back(self, host: str, snoozed: Mapping[str, KeyBusy] | None = None) -> None:
        """Give `host` back (snoozed: unrequested, its key busy), and the key held with it
        (first: the host's next holder then finds it free)."""
        held = self._keys.pop(host, None)
        if held is not None:
            key, delay_ms = held
            await self.db.outage.ride_out(
                lambda: KeyRepository(self.db).release({key: (self.owner, delay_ms)}),
                DB_PATIENCE_S,
            )
        await self.db.outage.ride_out(
            lambda: HostRepository(self.db).release_slots({host: self.owner}, snoozed=snoozed),
            DB_PATIENCE_S,
        )


class Pace:
    """The requests that one holder of a host sends it in a row (a fetcher's robots.txt,
    its page and the page's redirect hops): each starts no sooner than `delay_s` after the
    previous answer was in, by this process's clock. Holding the host (and its key, when
    the key is wider) keeps every other requester away meanwhile; the pace keeps the
    holder's own requests apart, and so the key's too: the key is given back with the
    host, and its gap is this host's delay."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.answered: float | None = None  # time.monotonic() when the last answer was in

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait out the delay since the previous answer; the body of the `with` sends one
        request and reads its answer (or fails), which is then the previous answer."""
        if self.answered is not None:
            # Again until it has passed: an event loop's timers may fire a little early
            # (uvloop's have a millisecond's grain).
            while (pause := self.answered + self.delay_s - time.monotonic()) > 0:
                await asyncio.sleep(pause)
        try:
            yield
        finally:
            self.answered = time.monotonic()
