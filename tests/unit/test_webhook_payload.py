"""The webhook's signature (Standard Webhooks), the one payload function and its inverse,
and FRONTIER_SINKS' validation (issue 33 items 2-3)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest

from frontier.settings import Settings, SettingsError
from frontier.sinks import DOCUMENT_FIELDS, RawDocument
from frontier.sinks.payload import delivery_key, document_from_payload, document_payload
from frontier.sinks.webhook import sign, signed_headers, signing_key

HOURS_2 = timedelta(hours=2)


def test_the_signature_is_the_standard_webhooks_test_vector() -> None:
    # The specification's reference libraries' vector: secret, id, timestamp, body.
    key = signing_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    signature = sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}')
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_headers_name_the_id_and_time_that_are_signed() -> None:
    headers = signed_headers(b"k", "id-1", b"{}", now=1700000000.9)
    assert headers["webhook-id"] == "id-1"
    assert headers["webhook-timestamp"] == "1700000000"
    assert headers["webhook-signature"] == sign(b"k", "id-1", 1700000000, b"{}")
    assert signing_key("plain secret") == b"plain secret"  # Miniflux-style: its bytes


def test_the_payload_has_every_field_and_reads_back() -> None:
    doc = RawDocument(
        url_hash="a" * 64,
        url="https://example.org/x",
        final_url=None,
        source_id=UUID(int=7),
        source_name="news",
        host="example.org",
        origin="feed",
        title="T",
        body="B",
        summary=None,
        author=None,
        published_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
        image_url=None,
        language="en",
        content_hash="c" * 64,
        word_count=1,
        extractor="trafilatura",
        http_status=200,
        fetched_at=datetime(2026, 11, 28, tzinfo=UTC),
        tags=("x", "y"),
        paragraphs=("B",),
    )
    payload = document_payload(doc)
    assert list(payload) == list(DOCUMENT_FIELDS)
    assert payload["published_at"] == "2026-01-02T03:04:00+00:00"
    assert payload["source_id"] == str(UUID(int=7)) and payload["tags"] == ["x", "y"]
    assert document_from_payload(payload) == doc
    assert delivery_key(doc.url_hash, doc.content_hash) == "a" * 64 + "." + "c" * 32
    # A date declared with an offset is given in UTC, as raw_content gives it back (the
    # outbox builds the payloads of its keys-only rows from there): the same instant.
    declared = replace(doc, published_at=datetime(2026, 1, 2, 5, 4, tzinfo=timezone(+HOURS_2)))
    assert document_payload(declared)["published_at"] == "2026-01-02T03:04:00+00:00"
    assert document_from_payload(document_payload(declared)) == doc


@pytest.mark.parametrize(
    ("sinks", "reason"),
    [
        ([], "a non-empty JSON list"),
        ([{"name": "hook", "kind": "webhook", "required": False}], "at least one sink must be"),
        ([{"name": "pg"}, {"name": "pg", "kind": "postgres"}], "entry 2: the name 'pg' is"),
        ([{"name": "Bad Name"}], "entry 1: name: String should match pattern"),
        ([{"name": "pg", "option": {}}], "entry 1: option: Extra inputs are not permitted"),
    ],
)
def test_frontier_sinks_refuses_a_bad_list_naming_the_entry(
    sinks: list[object], reason: str
) -> None:
    with pytest.raises(SettingsError, match="FRONTIER_SINKS") as refused:
        Settings.load(_env_file=None, sinks=sinks)
    assert reason in str(refused.value)


def test_frontier_sinks_and_frontier_sink_are_one_or_the_other() -> None:
    with pytest.raises(SettingsError, match="set one or the other"):
        Settings.load(_env_file=None, sinks=[{"name": "postgres"}], sink="postgres")
    both = Settings.load(_env_file=None, sinks=[{"name": "pg", "kind": "postgres"}])
    assert both.sinks is not None and both.sinks[0].kind_name == "postgres"
