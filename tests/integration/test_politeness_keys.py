"""Holding a politeness key wider than the host (frontier/sql/politeness_keys.sql), on a
pinned clock: one holder at a time, the next no sooner than the delay of the host just
answered after its answer (the largest delay wins), a dead holder's lease expiring; and
a host given back unrequested, its key busy, is snoozed rather than delayed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from frontier.db import Database
from frontier.hosts import HostRepository, KeyBusy
from frontier.politeness_key import KeyRepository

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
KEY = "blogspot-like.example"
LEASE_S = 60.0


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def test_one_holder_at_a_time_and_the_delay_after_the_answer(db: Database) -> None:
    keys = KeyRepository(db)
    assert (await keys.take(KEY, "fetcher-1/a", lease_s=LEASE_S, now=at(0))).taken
    # Another host of the key, while the first request is in flight: busy.
    busy = await keys.take(KEY, "fetcher-2/b", lease_s=LEASE_S, now=at(1))
    assert (busy.taken, busy.held, busy.holder) == (False, True, "fetcher-1/a")
    assert busy.wait_s(300) == pytest.approx(0.3)  # an estimate: the asking host's delay
    # Its own holder does not take it twice (a spider names all its holds alike).
    assert not (await keys.take(KEY, "fetcher-1/a", lease_s=LEASE_S, now=at(1))).taken
    # Only the holder gives it back.
    assert await keys.release({KEY: ("fetcher-2/b", 300)}, now=at(2)) == 0
    # The answer at 2 s, from a host with a 300 ms delay: free again at 2.3 s.
    assert await keys.release({KEY: ("fetcher-1/a", 300)}, now=at(2)) == 1
    early = await keys.take(KEY, "fetcher-2/b", lease_s=LEASE_S, now=at(2.1))
    assert (early.taken, early.held) == (False, False)
    assert early.next_allowed_at == at(2.3)
    assert early.wait_s(5000) == pytest.approx(0.2)  # the delay's end, known
    assert early.reason() == f"key busy: the delay of key {KEY} runs until {at(2.3)}"
    assert (await keys.take(KEY, "fetcher-2/b", lease_s=LEASE_S, now=at(2.3))).taken


async def test_the_largest_delay_wins(db: Database) -> None:
    keys = KeyRepository(db)
    assert (await keys.take(KEY, "h1", lease_s=LEASE_S, now=at(0))).taken
    assert await keys.release({KEY: ("h1", 5000)}, now=at(1)) == 1  # a slow host: 6 s
    assert (await keys.take(KEY, "h2", lease_s=LEASE_S, now=at(6))).taken
    # A quick host answered at 6 s; a delay already further out would be kept.
    await db.execute("UPDATE politeness_keys SET next_allowed_at = $1", at(9))
    assert await keys.release({KEY: ("h2", 100)}, now=at(6)) == 1
    state = await keys.state(KEY)
    assert state is not None and state["next_allowed_at"] == at(9)


async def test_a_dead_holders_key_is_free_once_its_lease_expires(db: Database) -> None:
    keys = KeyRepository(db)
    assert (await keys.take(KEY, "killed/a", lease_s=LEASE_S, now=at(0))).taken
    held = await keys.take(KEY, "alive/b", lease_s=LEASE_S, now=at(LEASE_S - 1))
    assert (held.taken, held.held) == (False, True)
    # No reaper: an expired lease is free to take.
    assert (await keys.take(KEY, "alive/b", lease_s=LEASE_S, now=at(LEASE_S))).taken


async def test_a_host_given_back_unrequested_is_snoozed_not_delayed(db: Database) -> None:
    hosts = HostRepository(db)
    for host in ("a.example", "b.example"):
        await hosts.take_slot(host, "h", new_host_delay_ms=5000, lease_s=LEASE_S, now=at(0))
    released = await hosts.release_slots(
        {"a.example": "h", "b.example": "h"},
        snoozed={"b.example": KeyBusy(KEY, 0.25)},
        now=at(1),
    )
    assert released == 2
    rows = {
        r["host"]: (r["next_allowed_at"], r["busy_key"], r["lease_owner"])
        for r in await db.fetch(
            "SELECT host, next_allowed_at, busy_key, lease_owner FROM host_state"
        )
    }
    assert rows == {
        "a.example": (at(6), None, None),  # answered: its delay after the answer
        "b.example": (at(1.25), KEY, None),  # nothing sent: until the key may be free
    }
