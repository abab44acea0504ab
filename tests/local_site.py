"""A real HTTP server on a loopback address for tests: register canned responses or
handlers per path; every request is recorded with its arrival time and headers, and every
answer with the time it was written whole.

Distinct loopback addresses (127.0.0.2, 127.0.0.3, ...) make distinct hosts.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def serve_on_loopback(
    dispatch: Handler, address: str, port: int = 0
) -> tuple[web.AppRunner, int]:
    """Serve every method and path with `dispatch` on address:port (0: any free port);
    returns the runner (clean it up to stop) and the bound port."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, address, port).start()
    return runner, runner.addresses[0][1]


@dataclass(frozen=True, slots=True)
class Seen:
    path: str  # path with query
    headers: Mapping[str, str]
    at: float  # time.monotonic() on arrival


@dataclass(frozen=True, slots=True)
class Answered:
    request: Seen
    at: float  # time.monotonic() as the answer's last bytes are handed to the socket


@dataclass
class LocalSite:
    address: str = "127.0.0.1"
    port: int = 0
    requests: list[Seen] = field(default_factory=list)
    answers: list[Answered] = field(default_factory=list)
    _routes: dict[str, Handler] = field(default_factory=dict)
    _runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        return f"http://{self.address}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def route(self, path: str, handler: Handler) -> None:
        self._routes[path] = handler

    def serve(
        self,
        path: str,
        body: bytes | str = b"",
        *,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        data = body.encode() if isinstance(body, str) else body

        async def handler(_request: web.Request) -> web.StreamResponse:
            response = web.Response(body=data, status=status, headers=dict(headers or {}))
            response.content_type = content_type.split(";")[0]
            if "charset=" in content_type:
                response.charset = content_type.split("charset=")[1]
            return response

        self.route(path, handler)

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        async def handler(_request: web.Request) -> web.StreamResponse:
            return web.Response(status=status, headers={"Location": location})

        self.route(path, handler)

    def hits(self, path: str) -> list[Seen]:
        return [seen for seen in self.requests if seen.path == path]

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        seen = Seen(request.path_qs, dict(request.headers), time.monotonic())
        self.requests.append(seen)
        handler = (
            self._routes.get(request.path_qs)
            or self._routes.get(request.path)
            # a path parameter (`;jsessionid=`) is the server's, not part of the route
            or (self._routes.get(request.path.partition(";")[0]) if ";" in request.path else None)
        )
        if handler is None:
            response: web.StreamResponse = web.Response(status=404, text="not found")
        else:
            response = await handler(request)
        # Written here rather than by aiohttp after the return, so that the answer's end
        # is stamped as its last bytes go: just before, since the client cannot have the
        # whole answer sooner, while a stamp after them ran late whenever this loop was
        # busy (a politeness gap measured from it came out 3 ms short under CI's load).
        try:
            if not response.prepared:
                await response.prepare(request)
            end = time.monotonic()
            await response.write_eof()
        except ConnectionResetError:  # the client went away: no answer was given
            return response
        self.answers.append(Answered(seen, end))
        return response

    async def start(self) -> LocalSite:
        self._runner, self.port = await serve_on_loopback(self._dispatch, self.address, self.port)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@asynccontextmanager
async def running_site(address: str = "127.0.0.1") -> AsyncIterator[LocalSite]:
    """A started LocalSite on `address`, stopped afterwards."""
    site = await LocalSite(address=address).start()
    try:
        yield site
    finally:
        await site.stop()
