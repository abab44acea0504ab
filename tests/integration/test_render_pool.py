"""The browser pool's limits (fetcher/render_pool.py), with Debian's headless Chromium: a
browser that dies under a page is replaced and the page rendered once more; a page over its
time or memory limit is stopped, and the pool goes on rendering. The pages are given
directly (no server: every request a page makes is answered by the test), one small pool
for the module."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest

from fetcher.render_pool import (
    Answer,
    BrowserPool,
    RenderFailed,
    RenderLimits,
    RenderOverLimit,
    _descendants,
    find_chromium,
)
from tests.browser import needs_chromium

pytestmark = needs_chromium
LIMITS = RenderLimits(
    find_chromium("chromium"), browsers=1, timeout_s=4.0, memory_mb=700, max_dom_bytes=1_000_000
)
URL = "http://news.example/story"
SHELL = (
    b"<html><body><div id='root'></div><script>fetch('/api/story.json').then(r => r.json())"
    b".then(s => { document.getElementById('root').innerHTML = '<p>' + s.text + '</p>'; });"
    b"</script></body></html>"
)
STORY = Answer(200, {"Content-Type": "application/json"}, b'{"text": "The bridge opened."}')


def page(script: str) -> Answer:
    return Answer(
        200, {"Content-Type": "text/html"}, f"<html><body><script>{script}</script>".encode()
    )


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[BrowserPool]:
    browsers = BrowserPool(LIMITS)
    try:
        yield browsers
    finally:
        await browsers.close()


async def story(_url: str, _kind: str, _headers: Mapping[str, str]) -> Answer:
    return STORY


async def test_a_browser_that_dies_under_a_page_is_replaced_and_the_page_rendered_again(
    pool: BrowserPool,
) -> None:
    asked = 0

    async def killing(url: str, kind: str, headers: Mapping[str, str]) -> Answer:
        nonlocal asked
        asked += 1
        if asked == 1:  # the first time: the browser dies while the page waits for its text
            for pid in pool.browser_pids():
                os.kill(pid, signal.SIGKILL)
            await asyncio.Event().wait()  # never answered: the page's browser is gone
        return STORY

    replaced = pool.replaced
    rendered = await pool.render(URL, Answer(200, {}, SHELL), killing)
    assert "<p>The bridge opened.</p>" in rendered.html
    assert asked == 2 and pool.replaced == replaced + 1


async def test_a_page_over_its_time_limit_is_stopped_and_the_pool_goes_on(
    pool: BrowserPool,
) -> None:
    with pytest.raises(RenderOverLimit, match="time limit"):
        await pool.render(URL, page("while (true) {}"), story)
    rendered = await pool.render(URL, Answer(200, {}, SHELL), story)
    assert "The bridge opened." in rendered.html


async def test_a_page_over_its_memory_limit_is_stopped_and_the_pool_goes_on(
    pool: BrowserPool,
) -> None:
    hog = "const kept = []; while (true) { kept.push(new Array(1e6).fill(kept.length)); }"
    with pytest.raises(RenderFailed):  # the heap cap or the watch, whichever comes first
        await pool.render(URL, page(hog), story)
    rendered = await pool.render(URL, Answer(200, {}, SHELL), story)
    assert "The bridge opened." in rendered.html


async def test_a_rendered_dom_over_the_cap_is_refused(pool: BrowserPool) -> None:
    huge = f"document.body.textContent = 'x'.repeat({LIMITS.max_dom_bytes + 1});"
    with pytest.raises(RenderFailed, match=f"over {LIMITS.max_dom_bytes} bytes"):
        await pool.render(URL, page(huge), story)


async def test_a_dead_playwright_driver_is_started_again(pool: BrowserPool) -> None:
    await pool.render(URL, Answer(200, {}, SHELL), story)  # the driver and a browser run
    drivers = [p for p in _descendants(os.getpid()) if b"node" in _command(p)]
    assert drivers
    for pid in drivers:
        os.kill(pid, signal.SIGKILL)
    rendered = await pool.render(URL, Answer(200, {}, SHELL), story)
    assert "The bridge opened." in rendered.html


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""
