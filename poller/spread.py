"""Where each polled source sits among its host's sources (`poller.intervals.Spread`), so
that a host's polls are spread evenly over their interval. Read from the database every
`refresh_s` (a host's sources change seldom); a source added since is polled at its id's
phase until the next read."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from uuid import UUID

from frontier.host_slots import slot_host
from frontier.urls import InvalidURL
from poller.intervals import Spread, host_spreads
from poller.poll_state import PollStateRepository

REFRESH_S = 300.0


class HostSpreads:
    def __init__(
        self,
        states: PollStateRepository,
        refresh_s: float = REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.states = states
        self.refresh_s = refresh_s
        self.clock = clock
        self._spreads: dict[UUID, Spread] = {}
        self._read_at: float | None = None

    async def current(self) -> Mapping[UUID, Spread]:
        """Each polled source's spread, read again when older than `refresh_s`."""
        now = self.clock()
        if self._read_at is None or now - self._read_at >= self.refresh_s:
            self._spreads = host_spreads(
                (source_id, host)
                for source_id, url in await self.states.polled_urls()
                if (host := _host(url)) is not None
            )
            self._read_at = now
        return self._spreads


def _host(url: str | None) -> str | None:
    """The host's politeness key (host_state's), as every request to it takes its slot."""
    if not url:
        return None
    try:
        return slot_host(url)
    except InvalidURL:
        return None
