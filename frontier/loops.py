"""The one background loop of every service: call a tick every so often until stopped.

    run_every(stop, tick, every_s, outage, name=...)

- while the database is unavailable, the loop backs off (capped, with jitter, from
  `outage.backoff()`) and the outage is logged once for the whole process;
- any other error is handed to `on_error` (default: logged with its traceback) and the
  next tick comes as usual, so one failing statement never ends a service;
- `stop` ends the loop at once, also in the middle of a wait.

`stop_event(stop)` gives a service its stop event: the caller's (`frontier up` owns
SIGTERM/SIGINT and stops every part itself), or a new one that those signals set.

Services keep their work in a `run_once()` that tests call directly; this module is only
the thin loop around it (STYLE.md, "background loops are thin").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable

from frontier.errors import DatabaseUnavailable
from frontier.reconnect import Outage

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def stop_event(stop: asyncio.Event | None = None) -> AsyncIterator[asyncio.Event]:
    """`stop` if given (its owner handles the signals); else a new event that SIGTERM and
    SIGINT set while the block runs."""
    if stop is not None:
        yield stop
        return
    own = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, own.set)
    try:
        yield own
    finally:
        for signum in signals:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)


async def wait_or_stop(stop: asyncio.Event, seconds: float | None) -> bool:
    """Wait `seconds` (None: for ever) or until `stop` is set; True if it was set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    return stop.is_set()


MIN_SOONER_S = 1.0  # the wait when `run_every`'s `sooner` says something is due already


async def run_every(
    stop: asyncio.Event,
    tick: Callable[[], Awaitable[object]],
    every_s: float,
    outage: Outage,
    *,
    name: str,
    on_error: Callable[[Exception], None] | None = None,
    wait_first: bool = False,
    sooner: Callable[[], Awaitable[float | None]] | None = None,
) -> None:
    """Run `tick` every `every_s` seconds until `stop` is set (`wait_first`: the first
    tick comes after one interval). A tick that finds the database unavailable is tried
    again after the outage backoff instead; `on_error` gets any other failure. `sooner`,
    asked after each tick that succeeded: the seconds until the next tick is wanted, when
    that comes before `every_s` (None: no sooner). A time ahead is waited as it is (what
    falls due then is new work); an answer of 0 or less, MIN_SOONER_S, so that a backlog
    the tick could not take is not asked for in a busy loop."""
    backoff = outage.backoff()
    if wait_first and await wait_or_stop(stop, every_s):
        return
    while not stop.is_set():
        wait = every_s
        try:
            await tick()
        except DatabaseUnavailable as exc:  # one line per outage, no traceback
            wait = backoff.next_delay()
            outage.report(exc, wait)
        except Exception as exc:  # a failing statement or a bug: report, tick again
            if on_error is None:
                log.error("%s failed", name, exc_info=exc)
            else:
                on_error(exc)
        else:
            backoff.reset()
            if sooner is not None:
                wait = await _sooner(sooner, every_s, name)
        await wait_or_stop(stop, wait)


async def _sooner(
    sooner: Callable[[], Awaitable[float | None]], every_s: float, name: str
) -> float:
    try:
        wanted = await sooner()
    except DatabaseUnavailable:  # the next tick meets it, and backs off
        return every_s
    except Exception:
        log.exception("%s: when to tick next failed; in %.0f s", name, every_s)
        return every_s
    if wanted is None:
        return every_s
    return min(every_s, wanted if wanted > 0 else MIN_SOONER_S)
