"""Several sinks as one (FRONTIER_SINKS, docs/outputs.md): `SinkSet` writes and deletes
through every required sink at once, and hands the deletions meant for the optional ones
to the outbox (frontier.outbox; their writes are put there by the fetcher, with the
completion of their URLs).

A batch counts as stored only when every required sink stored it: one sink unavailable
makes the whole batch `SinkUnavailable` (the fetcher writes it again later, and the sinks
that took it replace their copy: writes are idempotent); a document any required sink
refused for good is refused (`DocumentRejected`, the reasons named by sink)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from frontier.sinks import DocumentRejected, RawDocument, Sink, SinkUnavailable

if TYPE_CHECKING:
    from frontier.outbox import OutboxRepository


class SinkSet:
    """The required sinks of the configuration as one `Sink`."""

    def __init__(
        self, required: Sequence[Sink], optional: Sequence[str], outbox: OutboxRepository
    ) -> None:
        self.sinks = list(required)
        self.optional = list(optional)
        self.outbox = outbox
        self.name = "+".join(s.name for s in self.sinks)

    async def write(self, documents: Sequence[RawDocument]) -> None:
        results = await asyncio.gather(
            *(s.write(documents) for s in self.sinks), return_exceptions=True
        )
        reasons: dict[str, str] = {}
        for sink, result in zip(self.sinks, results, strict=True):
            if isinstance(result, DocumentRejected):
                for url_hash, reason in result.reasons.items():
                    reasons.setdefault(url_hash, f"{sink.name}: {reason}")
            elif isinstance(result, BaseException):
                raise result  # the first sink that could not store the batch says why
        if reasons:
            raise DocumentRejected(
                f"{len(reasons)} documents refused", list(reasons), reasons=reasons
            )

    async def delete(self, url_hashes: Sequence[str]) -> None:
        await asyncio.gather(*(s.delete(url_hashes) for s in self.sinks))
        await self.outbox.enqueue_deletes(self.optional, url_hashes)

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        for sink in self.sinks:
            found = await sink.get(url_hash)
            if found is not None:
                return found
        return None

    async def health(self) -> str:
        answers = await asyncio.gather(*(s.health() for s in self.sinks), return_exceptions=True)
        for sink, answer in zip(self.sinks, answers, strict=True):
            if isinstance(answer, BaseException):
                raise SinkUnavailable(f"sink {sink.name}: {answer}") from None
        return "; ".join(str(a) for a in answers)

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.sinks), return_exceptions=True)
