"""A TCP proxy in front of the test PostgreSQL, to cut the network between a client and the
server without touching the server (other tests share it): `cut()` drops every open
connection and refuses new ones until `restore()`. The client sees what a real outage
shows it: connections reset, then connections refused."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class DatabaseProxy:
    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        parts = urlsplit(dsn)
        query = dict(parse_qsl(parts.query))
        host = query.get("host") or parts.hostname or "localhost"
        port = int(query.get("port") or parts.port or 5432)
        self._upstream = (host, port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.down = False
        self.refused = 0  # connections refused while cut
        # When set, a connection the server closes is closed towards the client only once
        # this event is set: the client has read the server's last message but not the EOF.
        self.hold_close: asyncio.Event | None = None
        self.closes_held = 0  # server-side closes waiting on `hold_close`

    async def start(self) -> str:
        """Listen on 127.0.0.1; return the DSN that goes through the proxy."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        parts = urlsplit(self._dsn)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "port")]
        user = f"{parts.username}@" if parts.username else ""
        if parts.password:
            user = f"{parts.username}:{parts.password}@"
        return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{port}", query=urlencode(query)))

    async def _open_upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        host, port = self._upstream
        if host.startswith("/"):  # a Unix socket directory, as libpq names it
            return await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        return await asyncio.open_connection(host, port)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            self.refused += 1
            writer.close()
            return
        up_reader, up_writer = await self._open_upstream()
        self._writers |= {writer, up_writer}
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer, from_server=True)
        )

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, from_server: bool = False
    ) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            if from_server and self.hold_close is not None:
                self.closes_held += 1
                await self.hold_close.wait()
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def cut(self) -> None:
        self.down = True
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def restore(self) -> None:
        self.down = False

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
