"""The JSON shape of a document as it leaves frontier by push: the webhook's payload and
the outbox's copy of a document waiting for an optional sink (frontier.outbox). One
function builds it, `document_payload`, so the shape is checked in one place; its
inverse, `document_from_payload`, gives the outbox's sinks their `RawDocument` back.

`delivery_key` is a document version's idempotency key: the URL's `url_hash` and the
text's `content_hash`, so that the same version delivered twice (a retry, a fetcher that
died after sending) carries the same key, and a new text a new one (the webhook's
`webhook-id`; the outbox's unique key per sink)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any, NamedTuple, Protocol, runtime_checkable
from uuid import UUID

from frontier.sinks import DOCUMENT_FIELDS, RawDocument

DATES = ("published_at", "fetched_at", "modified_at")
LISTS = ("tags", "paragraphs")
_values = attrgetter(*DOCUMENT_FIELDS)  # a document's fields, in their order


def document_payload(doc: RawDocument) -> dict[str, Any]:
    """The document as JSON-ready fields (ISO dates in UTC, string ids), every field of
    DOCUMENT_FIELDS in its order. The dates are given in UTC as PostgreSQL gives them
    back (a timestamptz keeps no offset): the outbox builds the payload of a document
    from raw_content when it holds it (frontier.outbox), and the same document must
    give the same bytes whether its payload was built at the fetch or from the table."""
    return fields_payload(dict(zip(DOCUMENT_FIELDS, _values(doc), strict=True)))


def fields_payload(values: Mapping[str, Any]) -> dict[str, Any]:
    """`document_payload` of a document given as its fields' values: a `RawDocument`'s,
    or a raw_content row's as the driver reads it (lists as lists or NULL, `source_id`
    the driver's UUID), whose payload the outbox builds without a `RawDocument` first."""
    payload = {name: values[name] for name in DOCUMENT_FIELDS}
    for name in DATES:
        value = payload[name]
        if value is not None:
            if value.tzinfo is not None and value.utcoffset():
                value = value.astimezone(UTC)
            payload[name] = value.isoformat()
    for name in LISTS:
        payload[name] = list(payload[name] or ())
    if payload["source_id"] is not None:
        payload["source_id"] = str(payload["source_id"])
    return payload


def document_from_payload(payload: dict[str, Any]) -> RawDocument:
    """The `RawDocument` of a `document_payload` (a KeyError names a field it lacks)."""
    values = {name: payload[name] for name in DOCUMENT_FIELDS}
    for name in DATES:
        if values[name] is not None:
            values[name] = datetime.fromisoformat(values[name])
    for name in LISTS:
        values[name] = tuple(values[name] or ())
    if values["source_id"] is not None:
        values["source_id"] = UUID(values["source_id"])
    return RawDocument(**values)


def delivery_key(url_hash: str, content_hash: str | None) -> str:
    """The idempotency key of a document's version (of its deletion: `content_hash`
    None)."""
    return f"{url_hash}.{content_hash[:32] if content_hash else 'deleted'}"


class Prepared(NamedTuple):
    """A document as the outbox holds it: its url_hash, its idempotency key and its
    payload's JSON text (`document_payload`, encoded once, when it was queued)."""

    url_hash: str
    key: str
    payload: str


@runtime_checkable
class PreparedWrites(Protocol):
    """What a sink may add to `Sink` to take the outbox's documents as their JSON text
    (the webhook sends it as it is): `write_prepared`, `write`'s contract otherwise."""

    async def write_prepared(self, items: Any) -> None: ...
