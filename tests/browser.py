"""The browser tests' harness: an app served by uvicorn on a loopback socket, and a page of
Debian's headless `chromium` driven by Playwright (a fresh profile under the test's
directory)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn

if TYPE_CHECKING:
    from playwright.async_api import Page, Playwright

CHROMIUM = shutil.which("chromium")
IN_CI = os.environ.get("CI") == "true"


def unless_in_ci(missing: bool, reason: str) -> pytest.MarkDecorator:
    """Skip when a tool is `missing`, except in CI: `make test` installs it there, so a
    test that cannot run is a failure, not a skip."""
    return pytest.mark.skipif(missing and not IN_CI, reason=reason)


needs_chromium = unless_in_ci(
    CHROMIUM is None, "Debian's chromium is not installed (`make chromium` installs it)"
)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """`app` on 127.0.0.1; yields its base URL (no trailing slash)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections queue from here on, so no wait for start-up is needed
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def chromium_page(
    playwright: Playwright, profile: Path, *, width: int = 1440, height: int = 900
) -> AsyncIterator[Page]:
    """A page of a headless Chromium with its own profile directory, closed at the end."""
    browser = await playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": width, "height": height},
    )
    try:
        yield browser.pages[0] if browser.pages else await browser.new_page()
    finally:
        await browser.close()
