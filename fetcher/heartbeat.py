"""The fetch process's heartbeat: a file its claim loop touches as it goes round
(FRONTIER_FETCH_HEARTBEAT_FILE), whose age the container health check reads
(deploy/healthcheck.py). A process whose loop stopped going round (hung in a call,
deadlocked, its event loop held) goes unhealthy though PostgreSQL still answers.

The loop goes round at least every `BEAT_EVERY_S` (its waits are capped at it: an idle
wait, a pause for the sink or the archive, an outage's back-off), and touches the file at
most that often, so the file is never older than about twice that while the loop is
alive; the health check calls it stale after `STALE_AFTER_S`."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

BEAT_EVERY_S = 10.0
STALE_AFTER_S = 120.0  # deploy/healthcheck.py's HEARTBEAT_STALE_S says the same


@dataclass(slots=True)
class Heartbeat:
    """Touch `path` (None: no heartbeat) at most every `BEAT_EVERY_S`."""

    path: Path | None
    _last: float = field(default=-math.inf)
    _failing: bool = False

    def beat(self, now: float) -> None:
        """The loop went round at monotonic time `now`."""
        if self.path is None or now - self._last < BEAT_EVERY_S:
            return
        self._last = now
        try:
            # A touch (open and utime), not a write: microseconds, fine on the event loop.
            self.path.touch()
        except OSError as exc:
            if not self._failing:  # once, not every beat
                log.warning("heartbeat file %s cannot be touched: %s", self.path, exc)
            self._failing = True
        else:
            self._failing = False
