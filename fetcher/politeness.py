"""Per-host politeness in a fetch batch: one request in flight per host, the delay counted
from the answer (frontier/sql/hosts.sql's header).

The claim holds every host with a delay (queue.sql `claim`; the hold is the claim's own,
`frontier.queue_values.claim_hold`), and the robots.txt step holds the hosts without a delay whose
robots.txt it fetches (hosts.sql `take_leases`, held by the worker).
While a host is held nobody else requests it. The worker's own requests to it (robots.txt,
the page, the page's redirect hops and meta refreshes) keep the host's delay between them
(`frontier.host_slots.Pace`). When the page's last answer is in, the hold is given back
(`HostRepository.release_slots`): the host's next request, whoever sends it, starts no
sooner than its delay after that answer, by the database's clock. A worker that dies
holding hosts delays them by at most its lease.

With a politeness key wider than the host (`domain`, `ip`: frontier.politeness_key), the
batch takes each held host's key before the host's first request, robots.txt included
(`BatchPipeline`), under the same holder, and gives it back with the host. A key that is
busy (another host of it has a request in flight, or its delay runs) is not waited for
while holding the host: the claim is deferred (no attempt counted) and the host given
back snoozed until the key may be free (`snooze`), so the claims do not spin on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

from frontier.host_slots import Pace
from frontier.hosts import HostContext, HostRepository, KeyBusy
from frontier.politeness_key import KeyRepository
from frontier.queue_values import Claim, claim_hold

log = logging.getLogger(__name__)


class BatchHolds:
    """The hosts one batch holds, the politeness keys it holds with them (a key other than
    the host: frontier.politeness_key), each host's pace, and their release. Releases that
    come in the same turn of the event loop, or while one is being written, go together
    in one statement per table (no timer: under load they batch themselves;
    bench/host_holds.py)."""

    def __init__(
        self,
        hosts: HostRepository,
        worker_id: str,
        claims: Sequence[Claim],
        context: Mapping[str, HostContext],
        *,
        keys: KeyRepository | None = None,
        now: datetime | None = None,
    ) -> None:
        self.hosts = hosts
        self.keys = keys
        self.worker_id = worker_id
        self.now = now
        # host -> the holder this batch gives it back as: the hosts its claims hold.
        self.held = {
            c.host: hold
            for c in claims
            if context[c.host].lease_owner == (hold := claim_hold(worker_id, c.url_hash))
        }
        self.paces = {host: Pace(ctx.delay_ms / 1000) for host, ctx in context.items()}
        self.held_keys: dict[str, str] = {}  # host -> the key held with it (same holder)
        self._snoozed: dict[str, KeyBusy] = {}  # hosts given back unrequested: key busy
        self._waiting: dict[str, str] = {}
        self._waiting_keys: dict[str, tuple[str, int]] = {}
        self._writing = asyncio.Lock()

    def robots_fetched(self, host: str, delay_ms: int) -> None:
        """This batch holds `host` (its claim's hold, or the worker's robots.txt lease)
        and fetched its robots.txt (with the host's pace, which knows when its answer was
        in); `delay_ms` is the host's delay as that answer left it."""
        self.held.setdefault(host, self.worker_id)
        self.paces[host].delay_s = delay_ms / 1000

    def key_taken(self, host: str, key: str) -> None:
        """The batch holds `host`'s key too (as the host's holder): it goes back with it."""
        self.held_keys[host] = key

    async def snooze(self, host: str, busy: KeyBusy) -> None:
        """`host`'s key is busy: give the host back unrequested, snoozed until the key may
        be free, rather than hold it while waiting."""
        self._snoozed[host] = busy
        await self.release(host)

    async def release(self, host: str) -> None:
        """The answers this batch wanted from `host` are in: give it back, and its key."""
        holder = self.held.pop(host, None)
        if holder is None:
            return  # a host without a delay, or released already
        self._waiting[host] = holder
        key = self.held_keys.pop(host, None)
        if key is not None:  # the key's next request waits this host's delay
            self._waiting_keys[key] = (holder, round(self.paces[host].delay_s * 1000))
        await asyncio.sleep(0)  # the answers that came with this one go in its statement
        async with self._writing:
            if not self._waiting:
                return  # given back by the statement before
            batch, self._waiting = self._waiting, {}
            keys, self._waiting_keys = self._waiting_keys, {}
            snoozed = {h: self._snoozed.pop(h) for h in batch if h in self._snoozed}
            try:
                if keys and self.keys is not None:  # the key first: the host's next
                    # claim then finds it free
                    await self.keys.release(keys, now=self.now)
                await self.hosts.release_slots(batch, snoozed=snoozed, now=self.now)
            except Exception as exc:  # the hosts stay held until their leases expire
                log.warning(
                    "could not give back %d hosts (%s); they wait for their leases to expire",
                    len(batch),
                    exc,
                )

    async def release_all(self) -> None:
        """Give back every host still held (pages that ended without a request)."""
        await asyncio.gather(*(self.release(host) for host in sorted(self.held)))
