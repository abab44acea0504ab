"""`ReadGate`: how many expensive reads (document lists and searches, stats, the frontier
view, the dashboard) run at once, per client address and in all, in one API process.

One client may hold `per_client` of them; all clients together `total` (the pool's size
less the connections kept for everything else: /healthz, the cheap reads, the writes).
A read over either limit is answered 429 with Retry-After at once, never queued: a queue
of searches would hold the pool as surely as the searches themselves. Each statement of
a read is bounded in time too (`Database.bounded`), so a slot is held for at most that
long per statement.

The counts live in the app's context (one gate per app, not module state). With several
API processes behind a balancer, each process has its own counts: a client may hold
`per_client` reads in each, which still bounds its share of each process's pool.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from fastapi import Request

from frontier.api.errors import RateLimited

RETRY_AFTER_S = 1
KEPT_CONNECTIONS = 2  # of the pool, never taken by expensive reads


@dataclass(slots=True)
class ReadGate:
    per_client: int
    total: int
    in_flight: Counter[str] = field(default_factory=Counter)

    @classmethod
    def for_pool(cls, per_client: int, pool_size: int) -> ReadGate:
        return cls(per_client, max(1, pool_size - KEPT_CONNECTIONS))

    def enter(self, client: str) -> None:
        """Count a read of `client` in, or raise RateLimited (429) when over a limit."""
        if self.in_flight[client] >= self.per_client:
            raise RateLimited(
                f"too many expensive reads at once from {client}: at most {self.per_client} "
                f"(FRONTIER_API_READS_PER_CLIENT); wait for one to end",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        if self.in_flight.total() >= self.total:
            raise RateLimited(
                f"the server runs {self.total} expensive reads already; try again shortly",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        self.in_flight[client] += 1

    def leave(self, client: str) -> None:
        self.in_flight[client] -= 1
        if self.in_flight[client] <= 0:
            del self.in_flight[client]


def client_of(request: Request) -> str:
    """The client's address (behind a trusted proxy, the one it forwarded)."""
    return request.client.host if request.client else "unknown"


async def expensive_read(request: Request) -> AsyncIterator[None]:
    """A route dependency: the request holds one of its client's expensive-read slots
    while it runs."""
    gate: ReadGate = request.app.state.context.read_gate  # (context imports this module)
    client = client_of(request)
    gate.enter(client)
    try:
        yield
    finally:
        gate.leave(client)
