"""The polling half of a source kind (the core half, the name and config model, is
`frontier.source_kinds`). A kind is an object with

    name: str                         its name in the `frontier.source_kinds` group
    config_model: type[PollOptions]   the pydantic model of its `config`
    origin: Origin                    what its URLs are submitted as (feed or sitemap)
    def target(source, options) -> str | None
                                      the URL it polls (None: nothing to poll)
    async def poll(request: KindRequest) -> KindResult

`poll` makes its requests through `request.get` (the shared safe client with the
source's fetchprotection, timeout, host header and the in-poll retries), reads the
source's main document only when `request.readable(response)` (a 2xx whose validators
are not the stored ones), parses what it fetched through `request.parse(job, ...)` (in a
process of the poller's parse pool, under its time, CPU and memory limits: never on the
event loop), and returns the entries with that document's response (and, in
`KindResult.problems`, what it skipped without failing the poll: the poll's error); the
poller decides what the response means (304, 404, 410, 429...), filters the entries,
submits them and moves the source's schedule. docs/sources.md "Source kinds" has an
example.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from frontier.parse_pool import ParsePool
from frontier.proxies import route_for
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import FetchFailed, ProxyError
from frontier.safe_http.responses import Response
from frontier.source_credentials import credentials_for
from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from poller.entries import Entry
from poller.sitemap_parse import Budget, per_file

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Retry:
    """Retries inside one poll: a connection error or a 5xx (without Retry-After) is tried
    again up to `attempts` times in all, after `backoff_s` x attempt seconds; never a 4xx."""

    attempts: int = 3
    backoff_s: float = 2.0
    sleep: Sleep = asyncio.sleep


@dataclass(frozen=True, slots=True)
class KindRequest:
    source: Source
    options: Any  # the kind's config model, validated
    client: SafeClient
    parser: ParsePool
    url: str | None  # what `target` named (for a feed: or what discovery found)
    etag: str | None = None  # the stored validators (None on a dry run)
    last_modified: str | None = None
    body_digest: str | None = None  # the stored digest of the body last read (`digest`)
    max_body_bytes: int | None = None
    budget: Budget = field(default_factory=per_file)  # what a poll may read, in all
    retry: Retry = field(default_factory=Retry)
    answered: list[Response] = field(default_factory=list)  # every response `get` returned
    # each judged body's digest, by the id of its response (held here, so the id stays
    # its own): one SHA-256 a body, however often `readable` and `unchanged` ask
    _digests: dict[int, tuple[Response, str]] = field(default_factory=dict)

    def headers(self) -> dict[str, str]:
        """Fetch protection's host header, origin and referer (at level 2 only)."""
        options: PollOptions = self.options
        if self.source.fetchprotection < 2:
            return {}
        headers: dict[str, str] = {}
        if options.host_header:
            headers["Host"] = options.host_header
            headers["Origin"] = f"https://{options.host_header}"
            headers["Referer"] = f"https://{options.host_header}/"
        if options.origin:
            headers["Origin"] = options.origin
        if options.referer:
            headers["Referer"] = options.referer
        return headers

    async def get(
        self,
        url: str,
        *,
        conditional: bool = False,
        headers: Mapping[str, str] | None = None,
        max_body_bytes: int | None = None,
    ) -> Response:
        """GET `url` for this source (conditional: with the stored validators)."""
        sent = {**(headers or {}), **self.headers()}
        attempt = 1
        while True:
            try:
                response = await self.client.get(
                    url,
                    fetchprotection=self.source.fetchprotection,
                    politeness_key=self.source.politeness_key,
                    etag=self.etag if conditional else None,
                    last_modified=self.last_modified if conditional else None,
                    headers=sent,
                    max_body_bytes=max_body_bytes or self.max_body_bytes,
                    timeout_s=self.options.timeout_s,
                    credentials=credentials_for(self.source),
                    proxy=route_for(self.source),
                )
            except ProxyError:
                raise  # not retried here: the poll comes again in a minute (frontier.proxies)
            except FetchFailed:
                if attempt >= self.retry.attempts:
                    raise
            else:
                if not _retryable(response) or attempt >= self.retry.attempts:
                    self.answered.append(response)
                    return response
            await self.retry.sleep(self.retry.backoff_s * attempt)
            attempt += 1

    async def parse(self, job: Callable[..., T], *args: Any) -> T:
        """`job(*args)` (a module-level function) in a parse process; raises what it
        raises, or `ParseLimitExceeded`."""
        return await self.parser.run(job, *args)

    def unchanged(self, response: Response) -> bool:
        """A 304, or a 200 with the ETag or Last-Modified stored (a server that ignores
        conditional requests but sends the same validators), or with the very body read
        last time (a server that sends no validators: not parsed again to find the same
        entries)."""
        if response.status == 304:
            return True
        if not 200 <= response.status < 300:
            return False
        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        if (etag and etag == self.etag) or (modified and modified == self.last_modified):
            return True
        return self.body_digest is not None and self.digest(response) == self.body_digest

    def digest(self, response: Response) -> str:
        """The SHA-256 of `response`'s body (`digest`), computed once."""
        key = id(response)
        if key not in self._digests:
            self._digests[key] = (response, digest(response.body))
        return self._digests[key][1]

    def readable(self, response: Response) -> bool:
        """A 2xx that is not `unchanged`: its body is worth parsing."""
        return 200 <= response.status < 300 and not self.unchanged(response)


def digest(body: bytes) -> str:
    """The body's SHA-256, as feed_state.last_body_digest keeps it."""
    return hashlib.sha256(body).hexdigest()


def _retryable(response: Response) -> bool:
    return response.status >= 500 and "Retry-After" not in response.headers


@dataclass(slots=True)
class KindResult:
    response: Response  # the answer to the source's main document
    entries: list[Entry] = field(default_factory=list)
    items_seen: int = 0
    ttl: object = None  # a feed's own <ttl> (minutes, as written): the interval's floor
    problems: list[str] = field(default_factory=list)  # what the poll skipped, and why
    websub: tuple[str, str] | None = None  # the WebSub (hub, topic) the document declares

    def error(self) -> str | None:
        """The problems as the poll's error text (the poll still succeeds)."""
        return problems_text(self.problems)


def problems_text(problems: Sequence[str], shown: int = 5) -> str | None:
    """`problems` as one error text: the first `shown`, and how many more."""
    more = f" (and {len(problems) - shown} more)" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more or None


class SourceKind(Protocol):
    name: str
    config_model: type[PollOptions]
    origin: Origin

    def target(self, source: Source, options: Any) -> str | None: ...

    async def poll(self, request: KindRequest) -> KindResult: ...
