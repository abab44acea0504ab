"""The client CPU of a webhook POST: our sink's path against a bare aiohttp loop.

Run ``python -m bench.webhook_post [--documents 3000] [--rounds 5] [--profile]``.

A receiver (an aiohttp server answering 204, in a process of its own, so its CPU is not
counted) on 127.0.0.1; this process POSTs `--documents` signed documents of about 7 KB
(a standard page's payload) to it, one a POST, in turns of three modes:

- ``sink``: frontier.sinks.webhook.WebhookSink through the SafeClient (the SSRF checks,
  the receiver's address let through by FRONTIER_ALLOWED_NETWORKS, the signature, the
  event's body), handed 100 documents at a time as the outbox does;
- ``sink_unguarded``: the same with FRONTIER_ALLOW_PRIVATE_NETWORKS (no literal-address
  check: as `bench.fetch --outbox-compare` runs it);
- ``bare``: aiohttp's ClientSession.post of the same bodies with fixed headers, four in
  flight (FRONTIER_WEBHOOK_MAX_IN_FLIGHT's default), the answer read and released: the
  floor of aiohttp's own cost a request;
- ``bare_signed``: ``bare`` plus the body and signature built per POST as the sink does.

It reports, per mode, the median of the rounds' CPU time of this process (all its
threads) a POST, in microseconds, after an untimed warm-up round of each. ``--profile``
prints a cProfile of one round of ``sink`` (a thread CPU timer: time waited for the
receiver is not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.server import emit_result, log, median

PER_CLAIM = 100  # documents the outbox hands the sink at once


def payload(n: int) -> str:
    """A standard page's payload: about 7 KB of JSON."""
    words = " ".join(f"word{(n * 7 + i) % 97}" for i in range(60))
    paragraphs = [f"Story {n}, part {p}: {words}." for p in range(8)]
    return json.dumps(
        {
            "url": f"http://127.0.0.10/a/{n}",
            "url_hash": f"{n:064x}",
            "title": f"Story {n}",
            "text": "\n".join(paragraphs),
            "paragraphs": paragraphs,
            "language": "en",
            "fetched_at": "2026-11-28T09:00:00+00:00",
        }
    )


async def serve(port_out: Any) -> None:
    from aiohttp import web

    async def take(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=204)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/hook", take)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], file=port_out, flush=True)
    await asyncio.Event().wait()


async def sink_round(url: str, items: list[Any], *, guarded: bool = True) -> None:
    from frontier.safe_http.client import SafeClient
    from frontier.safe_http.limits import HttpLimits
    from frontier.sinks.webhook import WebhookSink

    limits = HttpLimits(
        "bench",
        allow_private_networks=not guarded,
        allowed_networks=("127.0.0.1",) if guarded else (),
    )
    sink = WebhookSink(SafeClient(limits), url, b"k" * 24, max_in_flight=4)
    try:
        for i in range(0, len(items), PER_CLAIM):
            await sink.write_prepared(items[i : i + PER_CLAIM])
    finally:
        await sink.close()


async def bare_round(url: str, items: list[Any], *, signed: bool) -> None:
    import aiohttp

    from frontier.sinks.webhook import _event, signed_headers

    fixed = {"Content-Type": "application/json", "webhook-id": "x"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=4)) as session:
        queue = list(items)

        async def sender() -> None:
            while queue:
                item = queue.pop()
                if signed:
                    body = _event("document.stored", item.payload)
                    headers = signed_headers(b"k" * 24, item.key, body)
                else:
                    body, headers = item.payload.encode(), fixed
                async with session.post(url, data=body, headers=headers) as resp:
                    await resp.read()

        await asyncio.gather(*(sender() for _ in range(4)))


def cpu_us_per_post(run: Callable[[], Awaitable[None]], posts: int) -> float:
    start = time.process_time()
    asyncio.run(run())
    return 1e6 * (time.process_time() - start) / posts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return asyncio.run(serve(sys.stdout))

    from frontier.sinks.payload import Prepared

    items = [Prepared(f"{n:064x}", f"key{n}", payload(n)) for n in range(args.documents)]
    receiver = subprocess.Popen(
        [sys.executable, "-m", "bench.webhook_post", "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert receiver.stdout is not None
        url = f"http://127.0.0.1:{int(receiver.stdout.readline())}/hook"
        modes: dict[str, Callable[[], Awaitable[None]]] = {
            "sink": lambda: sink_round(url, items),
            "sink_unguarded": lambda: sink_round(url, items, guarded=False),
            "bare": lambda: bare_round(url, items, signed=False),
            "bare_signed": lambda: bare_round(url, items, signed=True),
        }
        if args.profile:
            profile = cProfile.Profile(time.thread_time)
            profile.runcall(asyncio.run, modes["sink"]())
            pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(40)
            pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(60)
        for run in modes.values():  # a warm-up round: imports, the first connections
            cpu_us_per_post(run, len(items))
        cpu: dict[str, list[float]] = {mode: [] for mode in modes}
        for n in range(args.rounds):
            for mode, run in modes.items():
                cpu[mode].append(round(cpu_us_per_post(run, len(items)), 1))
            log(f"round {n}: { ({m: v[-1] for m, v in cpu.items()}) }")
    finally:
        receiver.terminate()
        receiver.wait()
    result: dict[str, Any] = {"documents": len(items), "rounds": args.rounds}
    result |= {f"{mode}_cpu_us_per_post": values for mode, values in cpu.items()}
    result |= {f"median_{mode}_cpu_us_per_post": median(v) for mode, v in cpu.items()}
    emit_result(result)


if __name__ == "__main__":
    main()
