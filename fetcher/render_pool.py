"""Headless Chromium browsers rendering pages, in a small pool of their own (docs/fetching.md,
"Rendering in a browser"), apart from the extraction pool: `FRONTIER_RENDER_BROWSERS`
browsers per fetch process, each rendering one page at a time, driven by Playwright over
its own driver process. The browser is the system's (Debian's `chromium`), never one
downloaded at run time: `find_chromium` finds it, and without it nothing is rendered.

The browser reaches nothing by itself. Every request a page makes is intercepted
(`BrowserContext.route`) and answered by the caller's `Subrequests` (the fetcher's safe
client: the SSRF guard, the allowed networks, the host's politeness slot, the caps) or
refused; the page's own document is answered with the body the fetcher already has.
Behind the interception Chromium's resolver answers every name "not found" and its proxy
is a closed port, so whatever the interception does not see (a WebSocket, WebRTC, DNS
prefetching) fails instead of leaving the machine; service workers are blocked (they would
fetch past the interception).

Limits, as the extraction pool's (fetcher.extract_pool):

- time: a page's rendering, its requests included, is cut at `timeout_s`
  (`RenderOverLimit`); the context is closed, and the browser killed if closing hangs;
- memory: the page's JavaScript heap is capped by V8 (`--max-old-space-size`, half the
  limit), and the anonymous resident memory of the browser's processes (renderer, GPU and
  utility processes included, read from /proc in a thread) is watched while it renders:
  over `memory_mb`,
  the browser is killed and the page is over its limit (`RenderOverLimit`), not retried;
- a crash: a browser that dies under a page (killed, out of memory, a renderer bug) is
  replaced, and the page is rendered once more, alone in a fresh browser; dying again, it
  raises `RenderCrashed`. The other browsers' pages go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import math
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from frontier.errors import FrontierError

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright, Request, Route

log = logging.getLogger(__name__)

MEMORY_POLL_S = 0.2  # how often a rendering browser's memory is read
RESCAN_S = 1.0  # how often its processes are listed again
CLOSE_S = 5.0  # how long closing a page's context may take before its browser is killed
# Resource types the text never needs: refused unless FRONTIER_RENDER_MEDIA asks for them.
MEDIA_TYPES = frozenset({"image", "media", "font"})
# Never served: a beacon, a manifest, a WebSocket or an EventSource stream.
REFUSED_TYPES = frozenset({"ping", "manifest", "websocket", "eventsource", "texttrack", "other"})
READ_METHODS = frozenset({"GET", "HEAD"})  # a render reads: it never posts a form
# The serialized DOM's length in characters: at most its UTF-8 bytes (checked after it).
DOM_CHARACTERS = "document.documentElement ? document.documentElement.outerHTML.length : 0"
# What a fulfilled answer does not pass on: the safe client has decoded the body already.
_HOP_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)
ARGS = (
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--metrics-recording-only",
    "--mute-audio",
    "--no-first-run",
    # behind the interception: no name resolves, every connection goes to a closed port
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=socks5://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)


class RenderUnavailable(FrontierError):
    """No browser to render with (Chromium or Playwright missing); the message says which."""


class RenderFailed(FrontierError):
    """A page could not be rendered (its document refused, its DOM too large, an error)."""


class RenderOverLimit(RenderFailed):
    """A page's rendering went over its time or memory limit, and was stopped."""


class RenderCrashed(RenderFailed):
    """A page's browser died under it twice, the second time alone in a fresh browser."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a subrequest gets: the status, the headers and the body to fulfill it with."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class SubrequestRefused(FrontierError):
    """A subrequest the rules refuse (an address the SSRF guard refuses, a policy)."""


# (url, resource type, request headers) -> the answer; raises SubrequestRefused to refuse
Subrequests = Callable[[str, str, Mapping[str, str]], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class RenderLimits:
    chromium: str | None  # the executable; None: not installed
    browsers: int = 1
    timeout_s: float = 20.0
    memory_mb: int = 1024
    media: bool = False  # images, media and fonts fetched
    max_dom_bytes: int = 10 * 1024 * 1024  # a rendered DOM larger than this is refused
    user_agent: str | None = None


@dataclass(frozen=True, slots=True)
class Rendered:
    html: str
    requests: int  # the subrequests served
    refused: tuple[str, ...]  # the subrequests refused, each "url: why"


def find_chromium(name: str) -> str | None:
    """The Chromium executable `name` names (a command on PATH or an absolute path), or None."""
    if os.path.isabs(name):
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name)


def unavailable_reason(chromium_setting: str) -> str | None:
    """Why nothing can be rendered here, or None when a browser is there to drive."""
    # found, not imported: a fetch process imports it when its first page is rendered
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install 'frontier[render]')"
    if find_chromium(chromium_setting) is None:
        return (
            f"no Chromium at FRONTIER_RENDER_CHROMIUM={chromium_setting} "
            "(Debian: apt-get install chromium)"
        )
    return None


class _Browser:
    """One browser of the pool and its process id (for the memory watch)."""

    def __init__(self, browser: Browser, pid: int | None) -> None:
        self.browser = browser
        self.pid = pid
        self.dead = False
        browser.on("disconnected", lambda _b: self._disconnected())

    def _disconnected(self) -> None:
        self.dead = True

    def kill(self) -> None:
        self.dead = True
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


class BrowserPool:
    """`limits.browsers` browsers, started as pages come (none before the first), each
    rendering one page at a time. `render` waits for a free one. `close()` it when done."""

    def __init__(self, limits: RenderLimits) -> None:
        if limits.chromium is None:
            raise RenderUnavailable("no Chromium to render with")
        self.limits = limits
        self._playwright: Playwright | None = None
        self._starting = asyncio.Lock()
        self._free: asyncio.Queue[_Browser | None] = asyncio.Queue()
        for _ in range(max(1, limits.browsers)):
            self._free.put_nowait(None)  # a slot whose browser is started when taken
        self._all: list[_Browser] = []
        self.peak_rss = 0  # the largest anonymous memory of one browser seen, in bytes
        self.replaced = 0  # browsers that died or were killed, and replaced
        self._sandbox = os.geteuid() != 0  # Chromium's sandbox refuses to run as root

    def browser_pids(self) -> list[int]:
        return [b.pid for b in self._all if b.pid is not None and not b.dead]

    async def render(self, url: str, document: Answer, subrequests: Subrequests) -> Rendered:
        """The DOM of `url` once its scripts have run, its document answered by `document`
        and every other request it makes by `subrequests` (or refused). Raises
        RenderOverLimit, RenderCrashed or RenderFailed."""
        try:
            return await self._attempt(url, document, subrequests)
        except _Crashed as exc:
            log.warning("render: the browser died under %s (%s); rendering it again", url, exc)
        try:  # alone: one page per browser, in a fresh one
            return await self._attempt(url, document, subrequests)
        except _Crashed as exc:
            raise RenderCrashed(f"the browser died rendering it, twice ({exc})") from None

    async def _attempt(self, url: str, document: Answer, subrequests: Subrequests) -> Rendered:
        slot = await self._free.get()
        browser = slot
        try:
            if browser is None:
                browser = await self._launch()
            return await self._render_on(browser, url, document, subrequests)
        finally:
            if browser is not None and browser.dead:  # died or killed: replaced
                self._forget(browser)
                self.replaced += 1
                browser = None  # its slot starts a fresh one for the next page
            self._free.put_nowait(browser)

    async def _launch(self) -> _Browser:
        """A new browser of the pool; when it cannot start, Playwright's driver is started
        afresh once (it may have died, and its browsers with it). Raises RenderFailed."""
        async with self._starting:
            before = _descendants(os.getpid())
            try:
                await self._driver()
                browser = await self._start_browser()
            except Exception as exc:
                log.warning("render: a browser could not start (%s); again, with a new driver", exc)
                await self._stop_driver()
                try:
                    await self._driver()
                    browser = await self._start_browser()
                except Exception as again:
                    first = str(again).splitlines()[0][:300] if str(again) else repr(again)
                    raise RenderFailed(f"a browser could not start: {first}") from None
            new = _descendants(os.getpid()) - before
            pid = min((p for p in new if _is_browser(p)), default=None)
            entry = _Browser(browser, pid)
            self._all.append(entry)
            return entry

    async def _driver(self) -> None:
        if self._playwright is None:
            from playwright.async_api import async_playwright

            self._playwright = await async_playwright().start()

    async def _stop_driver(self) -> None:
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None

    async def _start_browser(self) -> Browser:
        """A Chromium of the pool, in its sandbox where it can have one: not as root (it
        refuses), nor where the system gives no user namespaces (a container under Docker's
        default seccomp profile): then without it, said once in the log. Either way the
        page reaches nothing by itself (see the module's docstring)."""
        assert self._playwright is not None
        heap_mb = max(64, self.limits.memory_mb // 2)
        args = [*ARGS, f"--js-flags=--max-old-space-size={heap_mb}"]
        if self._sandbox:
            try:
                return await self._playwright.chromium.launch(
                    executable_path=self.limits.chromium, chromium_sandbox=True, args=args
                )
            except Exception as exc:
                self._sandbox = False
                log.warning(
                    "render: Chromium cannot start in its sandbox here (%s); running it "
                    "without one",
                    str(exc).splitlines()[0][:200],
                )
        return await self._playwright.chromium.launch(
            executable_path=self.limits.chromium, chromium_sandbox=False, args=args
        )

    def _forget(self, browser: _Browser) -> None:
        if browser in self._all:
            self._all.remove(browser)
            browser.kill()

    async def _render_on(
        self, browser: _Browser, url: str, document: Answer, subrequests: Subrequests
    ) -> Rendered:
        limits = self.limits
        served = 0
        refused: list[str] = []
        answered_document = False
        over_memory: list[int] = []

        async def route(route: Route, request: Request) -> None:
            nonlocal served, answered_document
            kind = request.resource_type
            target = request.url
            why = None
            if kind == "document" and not answered_document and _main_frame(request):
                answered_document = True
                await route.fulfill(
                    status=document.status, headers=_passed(document.headers), body=document.body
                )
                return
            if kind == "document":  # a frame, or the page navigating away: not its text
                why = "a frame or a navigation (the page's DOM holds neither)"
            elif not target.startswith(("http://", "https://")):
                why = "not http(s)"
            elif request.method not in READ_METHODS:
                why = f"method {request.method}"
            elif kind in REFUSED_TYPES:
                why = f"a {kind} request"
            elif kind in MEDIA_TYPES and not limits.media:
                why = f"{kind} (FRONTIER_RENDER_MEDIA=false)"
            if why is None:
                try:
                    answer = await subrequests(target, kind, request.headers)
                except SubrequestRefused as exc:
                    why = str(exc)
                except Exception as exc:  # the request failed: the page sees a failure
                    refused.append(f"{target[:300]}: {exc}")
                    await _quietly(route.abort("failed"))
                    return
                else:
                    served += 1
                    await _quietly(
                        route.fulfill(
                            status=answer.status,
                            headers=_passed(answer.headers),
                            body=answer.body,
                        )
                    )
                    return
            refused.append(f"{target[:300]}: {why}")
            await _quietly(route.abort("blockedbyclient"))

        try:
            context = await browser.browser.new_context(
                service_workers="block",
                accept_downloads=False,
                user_agent=limits.user_agent,
            )
        except Exception as exc:  # the browser, or Playwright's driver, is gone
            browser.kill()
            raise _Crashed(str(exc).splitlines()[0][:300] if str(exc) else repr(exc)) from None
        watch = asyncio.create_task(self._watch(browser, over_memory))
        try:
            await context.route("**/*", route)
            page = await context.new_page()
            started = time.monotonic()
            try:
                async with asyncio.timeout(limits.timeout_s):
                    await page.goto(url, wait_until="load")
                    # the page's own requests (its text fetched by its script), while time is left
                    left = limits.timeout_s - (time.monotonic() - started)
                    with contextlib.suppress(Exception):
                        await page.wait_for_load_state("networkidle", timeout=left * 800)
                    # measured in the page first: a DOM over the cap never crosses to
                    # this process (Playwright parses what crosses on the event loop)
                    size = await page.evaluate(DOM_CHARACTERS)
                    if not isinstance(size, int) or size > limits.max_dom_bytes:
                        raise RenderFailed(
                            f"the rendered DOM is over {limits.max_dom_bytes} bytes ({size})"
                        )
                    html = await page.content()
            except TimeoutError:
                if over_memory:
                    raise RenderOverLimit(_memory_reason(over_memory[0], limits)) from None
                raise RenderOverLimit(f"over the {limits.timeout_s:g} s time limit") from None
            except RenderFailed:
                raise
            except Exception as exc:
                if over_memory:
                    raise RenderOverLimit(_memory_reason(over_memory[0], limits)) from None
                if browser.dead:
                    raise _Crashed(str(exc).splitlines()[0][:300]) from None
                raise RenderFailed(str(exc).splitlines()[0][:300]) from None
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
            if not browser.dead:
                try:
                    async with asyncio.timeout(CLOSE_S):
                        await context.close()
                except Exception:  # a context that will not close: its browser goes
                    browser.kill()
        if over_memory:
            raise RenderOverLimit(_memory_reason(over_memory[0], limits))
        if len(html.encode("utf-8", "replace")) > limits.max_dom_bytes:
            raise RenderFailed(f"the rendered DOM is over {limits.max_dom_bytes} bytes")
        return Rendered(html, served, tuple(refused))

    async def _watch(self, browser: _Browser, over: list[int]) -> None:
        """Kill `browser` once its processes' memory passes the limit. Read from /proc in a
        thread, not on the event loop (a scan of /proc takes milliseconds on a busy host);
        the browser's processes are listed again every `RESCAN_S`."""
        if browser.pid is None:
            return
        cap = self.limits.memory_mb * 1024 * 1024
        pids: set[int] = set()
        listed = -math.inf
        while True:
            if time.monotonic() - listed >= RESCAN_S:
                pids = {browser.pid, *await asyncio.to_thread(_descendants, browser.pid)}
                listed = time.monotonic()
            size = await asyncio.to_thread(_anonymous_bytes, pids)
            self.peak_rss = max(self.peak_rss, size)
            if size > cap:
                over.append(size)
                browser.kill()
                return
            await asyncio.sleep(MEMORY_POLL_S)

    async def close(self) -> None:
        for browser in list(self._all):
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_S):
                    await browser.browser.close()
            browser.kill()
        self._all.clear()
        await self._stop_driver()


class _Crashed(Exception):
    """The browser died under the page (internal: `render` retries the page once)."""


def _main_frame(request: Request) -> bool:
    """The request is for the page's own frame (its first is the page: `goto`'s, whatever
    spelling Chromium gave the URL)."""
    try:
        return request.frame.parent_frame is None
    except Exception:  # a request of no frame (a worker's)
        return False


async def _quietly(action: Awaitable[Any]) -> None:
    """A route answered after its page went (closed, crashed): nothing to answer."""
    with contextlib.suppress(Exception):
        await action


def _passed(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}


def _memory_reason(rss: int, limits: RenderLimits) -> str:
    return f"over the {limits.memory_mb} MiB memory limit ({rss >> 20} MiB resident)"


# -- processes, from /proc (Linux; elsewhere no memory watch) ---------------------------


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible."""
    out = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self").exists() else ():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            out[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _is_browser(pid: int) -> bool:
    """A Chromium main process (not one of its renderers, whose command line says --type=)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return (
        bool(cmdline)
        and b"chrom" in cmdline[0]
        and not any(a.startswith(b"--type=") for a in cmdline)
    )


def _anonymous_bytes(pids: set[int]) -> int:
    """The anonymous resident memory of `pids` together (statm's resident less shared
    pages: the heaps a page's scripts grow, without Chromium's code and mapped files, which
    every process of it shares and a sum of resident sizes would count once per process)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/statm").read_text().split()
            total += (int(fields[1]) - int(fields[2])) * page
        except (OSError, IndexError, ValueError):
            continue
    return total
