"""When a source is polled next, as pure functions (no I/O, `rand` injectable).

- Each source has a deterministic *phase*: a hash of its id modulo its interval. Polls
  land on `phase + k * interval` (epoch seconds), so sources with the same interval are
  spread over it and a restart does not bunch them together.
- A source whose host the poller knows has a *spread* instead: the sources of one host
  (`Spread`: its rank among them by id, their count, the host's own offset) take evenly
  spaced phases. Every request to a host takes its one slot, the delay after the previous
  answer; at random phases a host's polls bunched up and queued behind each other and the
  fetches of what they found (a 1 s delay and 20 feeds a minute kept a host 70 % busy),
  evenly spaced they meet no queue.
- Each poll adds *jitter*: up to `JITTER_FRACTION` of the interval (at most `JITTER_CAP_S`),
  and, spread, at most a quarter of the space between the host's phases (polls keep their
  order and spacing).
- A failed poll *backs off*: interval * 2^errors, capped at `BACKOFF_CAP_S`, jittered
  downwards so the cap is never exceeded; a Retry-After is honoured when longer.
- The *adaptive* interval follows the observed entry frequency (the median gap between
  recent entries), clamped to [`ADAPTIVE_MIN_S`, `ADAPTIVE_MAX_S`] and never below the
  feed's own floor (RSS `<ttl>`, Cache-Control max-age).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

JITTER_FRACTION = 0.1
JITTER_CAP_S = 300.0
BACKOFF_CAP_S = 24 * 3600.0
RETRY_AFTER_CAP_S = 7 * 24 * 3600.0  # a Retry-After further out than a week is not believed
ADAPTIVE_MIN_S = 5 * 60.0
ADAPTIVE_MAX_S = 24 * 3600.0
ADAPTIVE_SAMPLE = 20  # newest dated entries looked at

Rand = Callable[[], float]


def phase_s(source_id: UUID, interval_s: float) -> float:
    """Deterministic offset of a source within its interval, in [0, interval_s)."""
    if interval_s <= 0:
        return 0.0
    digest = hashlib.sha256(source_id.bytes).digest()
    return int.from_bytes(digest[:8], "big") % max(1, int(interval_s))


@dataclass(frozen=True, slots=True)
class Spread:
    """A source's place among the sources polled on its host: `rank` (0-based, by id) of
    `count`, and the host's `offset`, a fraction of any interval (from its name: hosts do
    not all start at 0)."""

    rank: int
    count: int
    offset: float

    def phase_s(self, interval_s: float) -> float:
        return ((self.offset + self.rank / self.count) % 1.0) * interval_s

    def spacing_s(self, interval_s: float) -> float:
        return interval_s / self.count


def host_spreads(hosts: Iterable[tuple[UUID, str]]) -> dict[UUID, Spread]:
    """Each source's `Spread`, from (source id, host) pairs."""
    by_host: dict[str, list[UUID]] = {}
    for source_id, host in hosts:
        by_host.setdefault(host, []).append(source_id)
    spreads = {}
    for host, ids in by_host.items():
        digest = hashlib.sha256(host.encode()).digest()
        offset = int.from_bytes(digest[:8], "big") / 2**64
        for rank, source_id in enumerate(sorted(ids)):
            spreads[source_id] = Spread(rank, len(ids), offset)
    return spreads


def jitter_s(interval_s: float, rand: Rand = random.random, spread: Spread | None = None) -> float:
    """Random extra delay in [0, min(JITTER_FRACTION * interval_s, JITTER_CAP_S)), and
    below a quarter of the spread's spacing."""
    cap = min(JITTER_FRACTION * interval_s, JITTER_CAP_S)
    if spread is not None:
        cap = min(cap, spread.spacing_s(interval_s) / 4)
    return cap * rand()


def next_slot(
    now: datetime, source_id: UUID, interval_s: float, spread: Spread | None = None
) -> datetime:
    """The first phase-aligned slot at least half an interval after `now` (the spread's
    phase when known, else the id's)."""
    interval_s = max(1.0, interval_s)
    epoch = now.timestamp()
    phase = spread.phase_s(interval_s) if spread else phase_s(source_id, interval_s)
    k = math.floor((epoch - phase) / interval_s) + 1
    slot = phase + k * interval_s
    if slot - epoch < interval_s / 2:
        slot += interval_s
    return now + timedelta(seconds=slot - epoch)


def next_poll_ok(
    now: datetime,
    source_id: UUID,
    interval_s: float,
    rand: Rand = random.random,
    spread: Spread | None = None,
) -> datetime:
    """When to poll again after a successful poll."""
    jitter = timedelta(seconds=jitter_s(interval_s, rand, spread))
    return next_slot(now, source_id, interval_s, spread) + jitter


def backoff_s(interval_s: float, errors: int, rand: Rand = random.random) -> float:
    """Delay after `errors` consecutive failures (1 for the first): interval * 2^errors,
    capped at BACKOFF_CAP_S, minus up to JITTER_FRACTION of itself."""
    exponent = min(max(errors, 0), 40)
    delay = min(BACKOFF_CAP_S, max(1.0, interval_s) * 2.0**exponent)
    return delay * (1.0 - JITTER_FRACTION * rand())


def next_poll_failed(
    now: datetime,
    interval_s: float,
    errors: int,
    retry_after_s: float | None = None,
    rand: Rand = random.random,
) -> datetime:
    """When to poll again after a failed poll; a longer Retry-After wins."""
    delay = backoff_s(interval_s, errors, rand)
    if retry_after_s is not None:
        delay = max(delay, min(retry_after_s, RETRY_AFTER_CAP_S))
    return now + timedelta(seconds=delay)


def adaptive_interval_s(
    published: Iterable[datetime | None], floor_s: float | None = None
) -> float | None:
    """The median gap between the newest dated entries, clamped; None with fewer than two
    dated entries (then the configured interval stays)."""
    dated = sorted((p for p in published if p is not None), reverse=True)[:ADAPTIVE_SAMPLE]
    if len(dated) < 2:
        return None
    gaps = [(a - b).total_seconds() for a, b in itertools.pairwise(dated)]
    gap = statistics.median(gaps)
    interval = min(ADAPTIVE_MAX_S, max(ADAPTIVE_MIN_S, gap))
    if floor_s:
        interval = max(interval, min(floor_s, ADAPTIVE_MAX_S))
    return interval


_MAX_AGE = re.compile(r"(?:^|,)\s*(?:s-)?max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


def interval_floor_s(ttl_minutes: object, headers: Mapping[str, str]) -> int | None:
    """The shortest interval the document asks for: an RSS `<ttl>` (minutes) or Cache-Control
    max-age (seconds), whichever is longer; None if neither is given."""
    floors: list[int] = []
    try:
        ttl = int(str(ttl_minutes).strip()) if ttl_minutes is not None else 0
    except ValueError:
        ttl = 0
    if 0 < ttl <= 7 * 24 * 60:
        floors.append(ttl * 60)
    match = _MAX_AGE.search(headers.get("Cache-Control", "") or "")
    if match:
        floors.append(min(int(match.group(1)), int(ADAPTIVE_MAX_S)))
    return max(floors) if floors else None
