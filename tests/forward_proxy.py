"""A small HTTP forward proxy for tests, on 127.0.0.1: absolute-URI requests (`GET
http://host:port/path`) are forwarded to the origin server as origin-form requests, and
`CONNECT host:port` opens a tunnel. Every request is recorded (method, target, headers)
before anything else is done; `credentials` makes it ask for Proxy-Authorization (407
without it); `answer` makes it answer every request itself with that status, as a proxy
that cannot serve (a 502 with an RFC 9209 Proxy-Status naming its own error).
`Socks5Proxy`: the same for SOCKS5.

Written here (asyncio streams) rather than taken from a package: the tests need to see
exactly what the proxy was asked, and to make it fail on demand.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Self
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Asked:
    method: str
    target: str  # the absolute URI, or host:port of a CONNECT
    headers: dict[str, str]


@dataclass
class _Listener:
    """A server on 127.0.0.1 serving each connection with `_serve`."""

    port: int = 0
    _server: asyncio.Server | None = None

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


@dataclass
class ForwardProxy(_Listener):
    credentials: tuple[str, str] | None = None
    answer: int | None = None  # answer everything with this status (a failing proxy)
    asked: list[Asked] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            self.asked.append(Asked(method, target, headers))
            if self.answer is not None:
                status = "Proxy-Status: testproxy; error=proxy_internal_error"
                await _reply(writer, self.answer, status)
                return
            if self.credentials is not None and not self._authorized(headers):
                await _reply(writer, 407, 'Proxy-Authenticate: Basic realm="test"')
                return
            if method == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(method, target, lines[1:], reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            with contextlib.suppress(ConnectionError):
                writer.close()

    def _authorized(self, headers: dict[str, str]) -> bool:
        assert self.credentials is not None
        expected = base64.b64encode(":".join(self.credentials).encode()).decode()
        given = {k.lower(): v for k, v in headers.items()}.get("proxy-authorization", "")
        return given == f"Basic {expected}"

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, _, port = target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except OSError:
            await _reply(writer, 502)
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _forward(
        self,
        method: str,
        target: str,
        header_lines: list[str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        parts = urlsplit(target)
        if not parts.hostname:
            await _reply(writer, 400)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        except OSError:
            await _reply(writer, 502)
            return
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [
            line
            for line in header_lines
            if line
            and line.split(":", 1)[0].lower()
            not in ("proxy-authorization", "proxy-connection", "connection", "keep-alive")
        ]
        request = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{h}\r\n" for h in kept)
        up_writer.write((request + "Connection: close\r\n\r\n").encode("latin-1"))
        await up_writer.drain()
        # one request per connection: the answer, then both closed
        while data := await up_reader.read(65536):
            writer.write(data)
            await writer.drain()
        up_writer.close()


async def _reply(writer: asyncio.StreamWriter, status: int, header: str | None = None) -> None:
    extra = f"{header}\r\n" if header else ""
    writer.write(
        f"HTTP/1.1 {status} Proxy Says No\r\n{extra}Content-Length: 0\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    await writer.drain()


async def _pipe_both(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        with contextlib.suppress(ConnectionError, OSError):
            dst.close()

    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@dataclass
class Socks5Proxy(_Listener):
    """A SOCKS5 proxy (RFC 1928, CONNECT only), with the user name and password method of
    RFC 1929 when `credentials` is set; `asked` records each destination as host:port (a
    name for socks5h, an address for socks5)."""

    credentials: tuple[str, str] | None = None
    asked: list[str] = field(default_factory=list)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _version, count = await reader.readexactly(2)
            methods = await reader.readexactly(count)
            wanted = 2 if self.credentials else 0
            if wanted not in methods:
                writer.write(b"\x05\xff")
                return
            writer.write(bytes([5, wanted]))
            if self.credentials:
                _, size = await reader.readexactly(2)
                user = (await reader.readexactly(size)).decode()
                (size,) = await reader.readexactly(1)
                password = (await reader.readexactly(size)).decode()
                ok = (user, password) == self.credentials
                writer.write(b"\x01\x00" if ok else b"\x01\x01")
                if not ok:
                    return
            _, _command, _, kind = await reader.readexactly(4)  # CONNECT only
            if kind == 1:
                host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
            elif kind == 4:
                host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
            else:
                (size,) = await reader.readexactly(1)
                host = (await reader.readexactly(size)).decode()
            port = int.from_bytes(await reader.readexactly(2), "big")
            self.asked.append(f"{host}:{port}")
            try:
                up_reader, up_writer = await asyncio.open_connection(host, port)
            except OSError:
                writer.write(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
                return
            writer.write(b"\x05\x00\x00\x01" + bytes(6))
            await writer.drain()
            await _pipe_both(reader, writer, up_reader, up_writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            with contextlib.suppress(ConnectionError):
                writer.close()


@asynccontextmanager
async def running_socks5(
    credentials: tuple[str, str] | None = None,
) -> AsyncIterator[Socks5Proxy]:
    proxy = await Socks5Proxy(credentials=credentials).start()
    try:
        yield proxy
    finally:
        await proxy.stop()


@asynccontextmanager
async def running_proxy(
    credentials: tuple[str, str] | None = None, answer: int | None = None
) -> AsyncIterator[ForwardProxy]:
    proxy = await ForwardProxy(credentials=credentials, answer=answer).start()
    try:
        yield proxy
    finally:
        await proxy.stop()
