"""Per-host politeness across processes: a request starts only inside the slot its claim
reserved.

The claim moves the host's `next_allowed_at` to claim time + delay, which reserves the
slot [claim time, claim time + delay) for this worker. A request may only start inside
that slot (or while this worker holds the host's lease, taken while it fetches the host's
robots.txt): right before sending, one batched statement (`HostRepository.begin_requests`)
checks that and moves `next_allowed_at` to the actual start + delay + a small margin. A
worker that is late (its slot has passed, so another worker may have claimed the host
since) does not send; the URL goes back to pending untried.

The margin is also the time the request has to start in: the worker notes when it sent
the statement, and a request that cannot start within the margin of that moment is not
sent either (`Page.send_by`, checked by the client right before it writes the request:
`frontier.safe_http.SlotPassed`). The next requester's turn comes the delay and the margin
after the statement ran, so a request that starts later than the margin (an answer held
up by a row lock or the commit, an event loop busy with the rest of the batch, a process
the machine did not run for a while; a new connection's setup does not count) could reach the server
less than the delay before the next one; seen under load, 60-90 ms late on a 300 ms delay.
So the gap between two requests to a host, as the server sees them, does not fall below
its delay, however late a worker starts or answers come; what is left is the process not
being run between the check and the write itself (seen once, 63 ms, with the machine
loaded past its cores: bench/RESULTS.md, 2026-11-27).

After a host's robots.txt, the first page request waits out the delay from the moment the
robots.txt answer was in (`first_request_at`): its request went out at some point before
that, never after.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from fetcher.page import Page
from frontier.hosts import HostContext, HostRepository, send_by
from frontier.queue import OutcomeKind

LATE = "started after its politeness slot; not sent"
MIN_MARGIN_MS = 10  # a request must be able to start in it, round trip included


def margin_ms(delay_ms: int, cap_ms: int) -> int:
    """The margin kept on top of a host's delay (hosts.sql computes the same): a tenth of
    it, at least MIN_MARGIN_MS (a margin of 1 ms, on a 10 ms delay, would be missed by
    nearly every request, which would then never be sent) and at most `cap_ms`; none
    without a delay."""
    return min(max(delay_ms // 10, MIN_MARGIN_MS), cap_ms) if delay_ms > 0 else 0


def first_request_at(robots_answered: float, delay_ms: int, cap_ms: int) -> float:
    """The monotonic time before which the first page request to a host must not start,
    when its robots.txt answer was in at `robots_answered`: that request counts against
    the host's delay."""
    return robots_answered + (delay_ms + margin_ms(delay_ms, cap_ms)) / 1000


def slot_ends(
    pages: Sequence[Page], context: Mapping[str, HostContext], *, lease_s: float, leased: bool
) -> list[tuple[str, datetime]]:
    """(host, end of the slot its claim reserved) for the pages that have a slot to check:
    a host without a delay has none, unless its robots.txt lease is held."""
    slots: list[tuple[str, datetime]] = []
    for page in pages:
        ctx = context[page.claim.host]
        if ctx.delay_ms == 0 and not leased:
            continue  # no delay to keep: no slot to check
        claimed_at = page.claim.lease_until - timedelta(seconds=lease_s)
        end = min(ctx.next_allowed_at, claimed_at + timedelta(milliseconds=ctx.delay_ms))
        slots.append((page.claim.host, end))
    return slots


class Politeness:
    """Admits the pages of a batch whose slot has not passed; defers the others."""

    def __init__(
        self,
        hosts: HostRepository,
        worker_id: str,
        *,
        lease_s: float,
        margin_cap_ms: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hosts = hosts
        self.worker_id = worker_id
        self.lease_s = lease_s
        self.margin_cap_ms = margin_cap_ms
        self.clock = clock  # when a slot was asked for (the client reads time.monotonic)

    async def admit(
        self,
        pages: Sequence[Page],
        context: Mapping[str, HostContext],
        *,
        leased: bool,
        now: datetime | None = None,
    ) -> list[Page]:
        """The pages whose request may start now, each with the deadline its request must
        start by (`Page.send_by`); the late ones are deferred untried."""
        slots = slot_ends(pages, context, lease_s=self.lease_s, leased=leased)
        asked = self.clock()
        starts = await self.hosts.begin_requests(
            slots, self.worker_id, margin_ms=self.margin_cap_ms, now=now
        )
        ready = []
        for page in pages:
            start = starts.get(page.claim.host)
            if start is None:  # no delay to keep: no slot was checked
                ready.append(page)
            elif start.go:
                page.send_by = send_by(asked, start.margin_ms)
                ready.append(page)
            else:
                page.end(OutcomeKind.DEFERRED, retry_after_s=0.0, error=LATE)
        return ready
