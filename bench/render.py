"""Benchmark rendering pages in a browser (issue 32 item 1; fetcher/render_pool.py).

Run ``python -m bench.render [--quick] [--rounds N]``; the last stdout line is one JSON
object with every figure.

1. **Rendering.** Client-rendered shells (tests/zoo/client_rendered.py's React shell: an
   empty ``#root``, a bundle that fetches the story as JSON from the same host), each
   distinct, served by an aiohttp site on 127.0.0.1, rendered by a pool of 2 browsers
   (Debian's Chromium) with every request the pages make sent through the fetcher's safe
   client, as the fetcher does (no host slots: this measures the browsers, not the
   politeness delay). It runs as a child process, so that its peak RSS is the whole tree's:
   the Python process, Playwright's driver and every Chromium process (``tree_peak_rss_mib``,
   the largest sum of their VmRSS at one time, as bench.fetch reports it, which counts
   Chromium's shared code and memory once per process; ``tree_peak_pss_mib``, the largest
   sum of their Pss, which counts it once; ``browser_peak_anon_mib``, one browser's
   anonymous resident memory, what the pool's memory limit watches). Pages/s is pages over
   the wall time of the renders, the browsers' start included. 100 pages a run
   (``--quick``: 40), ``--rounds`` runs (3 by default): each run's figures and the medians.
2. **The cost of ``auto`` on pages that need no rendering.** bench.fetch's ``small`` set
   (news pages with their text in the HTML, 2,000 over 20 hosts; ``--quick``: 1,000 over 10)
   fetched by one ``frontier fetch --until-idle`` process with the default extraction pool,
   the source's ``render`` at ``never`` and at ``auto`` in turn, ``--rounds`` times each
   (3 by default): the median pages/s and CPU per page of each, and auto over never. Under
   ``auto`` a page is checked for an app's shell only when its text is thin, so the figure
   is what the rule costs a fetch process that renders nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.fetch import aiohttp_site, compared, medians, ours, shape, url_list
from bench.server import emit_result, log, median, run_measured, running_server

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = 2


# -- 1. rendering, in a child process ------------------------------------------------------


async def render_pages(pages: int) -> dict[str, Any]:
    """Serve `pages` distinct shells, render them all with a pool of BROWSERS browsers."""
    from aiohttp import web

    from fetcher.render_pool import Answer, BrowserPool, RenderLimits, find_chromium
    from frontier.safe_http.client import SafeClient
    from frontier.safe_http.limits import HttpLimits
    from tests.zoo.client_rendered import react_shell, story

    class Site:
        """tests.local_site.LocalSite's `serve`, on an aiohttp app of our own."""

        def __init__(self) -> None:
            self.app = web.Application()
            self.port = 0

        def url(self, path: str) -> str:
            return f"http://127.0.0.1:{self.port}{path}"

        def serve(self, path: str, body: str | bytes, *, content_type: str = "text/html") -> None:
            data = body.encode() if isinstance(body, str) else body
            kind = content_type.split(";")[0]

            async def handler(_request: web.Request) -> web.Response:
                return web.Response(body=data, content_type=kind)

            self.app.router.add_get(path, handler)

    site = Site()
    for n in range(pages):
        react_shell(site, f"/story/{n}", f"/api/story/{n}.json", f"number {n}")  # type: ignore[arg-type]
    runner = web.AppRunner(site.app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    site.port = runner.addresses[0][1]

    limits = HttpLimits("frontier-bench/1.0", allowed_networks=("127.0.0.1/32",))
    pool = BrowserPool(RenderLimits(find_chromium("chromium"), browsers=BROWSERS, timeout_s=60))
    async with SafeClient(limits) as client:

        async def fetch(url: str) -> Answer:
            response = await client.get(url, follow_redirects=False)
            return Answer(response.status, response.headers, response.body)

        async def subrequest(url: str, _kind: str, _headers: Any) -> Answer:
            return await fetch(url)

        async def one(n: int) -> None:
            url = site.url(f"/story/{n}")
            rendered = await pool.render(url, await fetch(url), subrequest)
            if story(f"number {n}")["paragraphs"][0] not in rendered.html:
                raise RuntimeError(f"{url}: not rendered")

        peak = TreePss()
        peak.start()
        started = time.perf_counter()
        try:
            await asyncio.gather(*(one(n) for n in range(pages)))
            wall = time.perf_counter() - started
        finally:
            peak.stop()
            await pool.close()
    await runner.cleanup()
    return {
        "pages": pages,
        "render_wall_s": round(wall, 2),
        "browser_peak_anon_mib": round(pool.peak_rss / 2**20, 1),
        "tree_peak_pss_mib": round(peak.peak / 2**20, 1),
        "browsers_replaced": pool.replaced,
    }


class TreePss(threading.Thread):
    """The largest proportional set size (Pss) of this process and all below it (the
    driver, every Chromium process) seen at one time, sampled twice a second in a thread:
    a page shared by n processes counts 1/n in each, so the sum is the memory the tree
    holds, which a sum of their resident sizes overcounts by Chromium's shared code."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        from fetcher.render_pool import _descendants

        while not self._done.wait(0.5):
            total = 0
            for pid in (os.getpid(), *_descendants(os.getpid())):
                try:
                    with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
                        total += sum(
                            int(line.split()[1]) * 1024
                            for line in rollup
                            if line.startswith(b"Pss:")
                        )
                except OSError:
                    continue
            self.peak = max(self.peak, total)

    def stop(self) -> None:
        self._done.set()
        self.join()


def rendering(pages: int, rounds: int) -> dict[str, Any]:
    """`rounds` child processes, each rendering `pages`: each one's figures and the medians."""
    runs = []
    for n in range(rounds):
        command = [sys.executable, "-m", "bench.render", "--render-child", str(pages)]
        run = run_measured(command, cwd=ROOT)
        if run.returncode:
            raise RuntimeError(f"rendering failed:\n{run.stderr[-3000:]}")
        child = json.loads(run.stdout.strip().splitlines()[-1])
        result = {
            **child,
            "pages_per_s": round(child["pages"] / child["render_wall_s"], 2),
            "tree_peak_rss_mib": round(run.tree_peak_rss_mib, 1),
            "cpu_ms_per_page": round(1000 * run.cpu_s / child["pages"], 1),
            "steal_s": round(run.steal_s, 1),
        }
        log(f"rendering {n}: {result}")
        runs.append(result)
    medians = {
        f"median_{name}": median([r[name] for r in runs])
        for name in (
            "pages_per_s",
            "tree_peak_rss_mib",
            "tree_peak_pss_mib",
            "browser_peak_anon_mib",
            "cpu_ms_per_page",
        )
    }
    return {"browsers": BROWSERS, "pages": pages, **medians, "runs": runs}


# -- 2. auto's cost on ordinary pages --------------------------------------------------------


def render_mode(mode: str) -> Any:
    def prepare(dsn: str) -> None:
        import psycopg

        with psycopg.connect(dsn) as conn:
            conn.execute("UPDATE sources SET render = %s WHERE name = 'manual'", (mode,))

    return prepare


def auto_cost(quick: bool, rounds: int) -> dict[str, Any]:
    hosts, pages, concurrency = shape("small", quick, hosts=10 if quick else 20)
    pages = 1_000 if quick else 2_000
    urls = url_list(hosts, pages, "small")
    runs: dict[str, list[dict[str, Any]]] = {"never": [], "auto": []}
    with aiohttp_site(hosts), running_server() as server:
        for n in range(rounds):
            for mode in ("never", "auto"):  # in turn: a drift of the machine hits both
                runs[mode].append(
                    ours(server, f"render_{mode}_{n}", urls, concurrency, prepare=render_mode(mode))
                )
    result: dict[str, Any] = {"pages": pages, "hosts": hosts, "concurrency": concurrency}
    result |= {mode: medians(measured) for mode, measured in runs.items()}
    result |= compared(result["auto"], result["never"], "auto_over_never")
    log(f"auto's cost: {result}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each measurement")
    parser.add_argument(
        "--render-pages", type=int, help="pages rendered per run (default 100, quick 40)"
    )
    parser.add_argument(
        "--only", choices=("rendering", "auto-cost"), help="one of the two measurements"
    )
    parser.add_argument("--render-child", type=int, metavar="PAGES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.render_child:
        print(json.dumps(asyncio.run(render_pages(args.render_child))), flush=True)
        return
    pages = args.render_pages or (40 if args.quick else 100)
    emit_result(
        {
            "quick": args.quick,
            **({} if args.only == "auto-cost" else {"rendering": rendering(pages, args.rounds)}),
            **(
                {}
                if args.only == "rendering"
                else {"auto_cost": auto_cost(args.quick, args.rounds)}
            ),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )


if __name__ == "__main__":
    main()
