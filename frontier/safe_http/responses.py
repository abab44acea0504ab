"""What a request brings back: the caller's `Response`, and the archive's `Exchange` (the
request and its answer as they went over the wire, for frontier/archive/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import aiohttp
from multidict import CIMultiDictProxy

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class Response:
    url: str  # the URL that answered (after any redirects followed)
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    elapsed_ms: int
    history: tuple[tuple[int, str], ...] = field(default=())  # (status, url) of redirects

    @property
    def permanent_redirect_to(self) -> str | None:
        """Where every followed redirect was permanent (301/308): the final URL."""
        if self.history and all(status in (301, 308) for status, _ in self.history):
            return self.url
        return None


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and its answer as they went over the wire, for the archive. The body
    is the payload as read: aiohttp has taken off the transfer and content codings
    (`Content-Encoding`, chunking) and `headers` still name them; `truncated` when the
    body was cut at the cap (`get(truncate=True)`)."""

    url: str
    started: datetime  # when the request was sent (the record's WARC-Date)
    request_headers: tuple[tuple[str, str], ...]  # as sent, aiohttp's own included
    version: str  # "1.1"
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # as received, in order
    body: bytes
    truncated: bool = False


def exchange_of(url: str, started: datetime, resp: aiohttp.ClientResponse, body: bytes) -> Exchange:
    """The exchange of an answer whose body has been read (`body`)."""
    version = resp.version
    return Exchange(
        url=url,
        started=started,
        request_headers=tuple(resp.request_info.headers.items()),
        version=f"{version.major}.{version.minor}" if version else "1.1",
        status=resp.status,
        reason=resp.reason or "",
        headers=tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers),
        body=body,
        truncated=not resp.content.at_eof(),  # cut at the cap (`truncate`)
    )
