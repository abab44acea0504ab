"""The one background loop: ticks until stopped, backs off on an outage, survives errors."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

import frontier.loops as loops
from frontier.errors import DatabaseUnavailable
from frontier.loops import run_every, stop_event, wait_or_stop
from frontier.reconnect import Outage


async def test_a_tick_that_fails_or_finds_no_database_does_not_end_the_loop() -> None:
    stop = asyncio.Event()
    outage = Outage("test", cap_s=0.001)
    errors: list[Exception] = []
    script: list[BaseException | None] = [DatabaseUnavailable("down"), RuntimeError("bug"), None]
    calls: list[BaseException | None] = []

    async def tick() -> None:
        step = script[len(calls)]
        calls.append(step)
        if len(calls) == len(script):
            stop.set()
        if step is not None:
            raise step

    await asyncio.wait_for(
        run_every(stop, tick, 0.001, outage, name="t", on_error=errors.append), timeout=10
    )
    assert calls == script
    assert [str(e) for e in errors] == ["bug"]
    assert outage.reported  # the outage was reported once; nothing said it ended


async def test_wait_first_and_a_set_stop_mean_no_tick_at_all() -> None:
    stop = asyncio.Event()
    stop.set()
    ticks: list[int] = []

    async def tick() -> None:
        ticks.append(1)

    await run_every(stop, tick, 3600, Outage("test"), name="t", wait_first=True)
    assert ticks == []
    assert await wait_or_stop(stop, 3600) is True
    assert await wait_or_stop(asyncio.Event(), 0) is False


async def test_a_service_without_a_stop_event_is_stopped_by_sigterm() -> None:
    given = asyncio.Event()
    async with stop_event(given) as stop:
        assert stop is given  # its owner handles the signals
    async with stop_event() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert await wait_or_stop(stop, 10) is True
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is gone again


async def test_sooner_brings_the_next_tick_forward_but_never_into_a_busy_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stop = asyncio.Event()
    ticks: list[int] = []
    asked: list[int] = []
    answers: list[float | None] = [None, -5.0, 0.25]  # then a tick, then stop

    async def tick() -> None:
        ticks.append(1)
        if len(ticks) == 4:
            stop.set()

    async def sooner() -> float | None:
        asked.append(1)
        return answers.pop(0) if answers else 3600.0

    waits: list[float] = []

    async def recorded(event: asyncio.Event, seconds: float | None) -> bool:
        waits.append(seconds or 0.0)
        return event.is_set()

    monkeypatch.setattr(loops, "wait_or_stop", recorded)  # the waits recorded, not waited
    await run_every(stop, tick, 3600, Outage("test"), name="t", sooner=sooner)
    # None: the tick's own interval; a source overdue: the floor, not 0; a source due in
    # a quarter of a second: that, not the floor (a poll a second late, seen in
    # bench.freshness, where a source falls due every 60 ms)
    assert waits == [3600, loops.MIN_SOONER_S, 0.25, 3600]
    assert len(asked) == 4
