"""`HeaderDeadlineProtocol`: uvicorn's h11 protocol with a deadline for a request's headers.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) but waits forever for
the headers of a request that has begun: 20,000 connections that never finished their
headers held 20,000 file descriptors until accept() failed and /healthz stopped answering.
Here every connection gets `header_timeout_s` from its start, and again from the end of
each response, to deliver a whole request head; a connection still without one is closed,
silently (an attack is not worth a log line per connection). The body is not covered:
routes cap it by size, and a client that sends a body slowly holds one connection.

uvicorn has no such option (h11's `max_incomplete_event_size` bounds the bytes of a head,
not its time), hence the small subclass; `protocol_with_header_deadline` makes one per
timeout for `uvicorn.Config(http=...)`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class HeaderDeadlineProtocol(H11Protocol):
    header_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_after: object = None  # the cycle before the head we wait for

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._deadline is not None and self.cycle is not self._waiting_after:
            self._disarm()  # a whole request head arrived: a new cycle started

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle is before:
            self._arm()  # waiting for the next request's head (keep-alive)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._waiting_after = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def protocol_with_header_deadline(timeout_s: float) -> type[HeaderDeadlineProtocol]:
    return type(
        "HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout_s": timeout_s}
    )
