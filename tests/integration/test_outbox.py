"""Several sinks at once and the webhook sink (issue 33 items 2-3): PostgreSQL required
and a webhook optional, fed through the outbox (frontier.outbox), written with the
completion of the URLs; a receiver on 127.0.0.1 that verifies the signatures
(tests/webhook_receiver.py). The fetch is the service's own (fetcher.service.run_fetcher,
what `frontier fetch --until-idle` runs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, cast
from uuid import UUID

import pytest

from fetcher.service import run_fetcher
from fetcher.sink_kinds import WebhookKind
from frontier.clock import utcnow
from frontier.db import Database
from frontier.outbox import OutboxDelivery, OutboxPolicy, OutboxRepository
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.settings import Settings, SettingsError
from frontier.sinks import RawDocument, Sink, SinkUnavailable
from frontier.sinks.configured import open_sinks, sinks_status
from frontier.sinks.installed import SinkRegistry, load_sinks
from frontier.sinks.payload import Prepared, delivery_key, document_payload
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.sql import load
from frontier.states import Origin
from tests.fetch_harness import article, fetcher_for, frontier_row, submit
from tests.full_documents import full_document
from tests.local_site import LocalSite
from tests.webhook_receiver import Receiver

SECRET_ENV = "FRONTIER_TEST_WEBHOOK_SECRET"


@pytest.fixture
async def receiver(
    local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Receiver]:
    hook = Receiver(local_site)
    monkeypatch.setenv(SECRET_ENV, hook.secret)
    yield hook


def installed() -> SinkRegistry:
    """The installed sinks and the webhook (registered by this checkout's pyproject.toml,
    which the test environment's metadata may predate)."""
    sinks = load_sinks()
    return SinkRegistry({**sinks.sinks, "webhook": WebhookKind()}, sinks.broken)


def hook_entry(receiver: Receiver, *, required: bool = False, **options: Any) -> dict[str, Any]:
    return {
        "name": "hook",
        "kind": "webhook",
        "required": required,
        "options": {"url": receiver.url, "secret": {"env": SECRET_ENV}, **options},
    }


def with_sinks(settings: Settings, *entries: dict[str, Any], **values: Any) -> Settings:
    return Settings.load(
        **{**settings.model_dump(exclude={"sinks"}), "sinks": list(entries), **values}
    )


async def crawl(db: Database, site: LocalSite, settings: Settings, n: int) -> list[str]:
    urls = [site.url(f"/a{i}") for i in range(n)]
    for i in range(n):
        site.serve(f"/a{i}", article(f"Story {i}"))
    await submit(db, *urls)
    await run_fetcher(settings, db, until_idle=True, extract_processes=0, installed=installed())
    return urls


async def stored_keys(db: Database) -> set[str]:
    rows = await db.fetch("SELECT url_hash, content_hash FROM raw_content")
    return {delivery_key(r["url_hash"], r["content_hash"]) for r in rows}


async def test_postgres_required_and_a_webhook_optional_get_every_document(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    both = with_sinks(settings, {"name": "postgres"}, hook_entry(receiver))
    urls = await crawl(db, receiver.site, both, 3)
    for url in urls:
        assert (await frontier_row(db, url))["status"] == "fetched"
    keys = await stored_keys(db)
    assert len(keys) == 3
    assert receiver.bad_signatures == 0
    assert sorted(receiver.keys()) == sorted(keys)  # each once, under its version's key
    titles = {event["data"]["title"] for _, event in receiver.accepted}
    assert titles == {"Story 0", "Story 1", "Story 2"}
    assert {event["type"] for _, event in receiver.accepted} == {"document.stored"}
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 0


async def test_an_optional_webhook_down_for_the_whole_crawl_loses_nothing(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    receiver.down = True
    both = with_sinks(settings, {"name": "postgres"}, hook_entry(receiver), outbox_retry_s=60)
    urls = await crawl(db, receiver.site, both, 4)
    for url in urls:  # the fetch did not wait for the webhook
        assert (await frontier_row(db, url))["status"] == "fetched"
    assert receiver.attempts >= 1 and receiver.accepted == []
    lines = sinks_status(both, await OutboxRepository(db).status(), utcnow())
    hook = next(line for line in lines if line["sink"] == "hook")
    assert (hook["backlog"], hook["required"]) == (4, False)
    # raw_content has the documents: the rows hold none (the delivery reads them there)
    assert await db.fetchval("SELECT count(*) FROM sink_outbox WHERE payload IS NULL") == 4
    assert "HTTP 503" in hook["last_error"]
    assert next(line for line in lines if line["sink"] == "postgres")["backlog"] == 0

    receiver.down = False  # back: the rows are due once their backoff ran out
    opened = await open_sinks(both, db, installed())
    delivery = OutboxDelivery(
        OutboxRepository(db), opened.optional, "w-later", OutboxPolicy.from_settings(both)
    )
    try:
        assert await delivery.drain(now=utcnow()) == 0  # still waiting: not hammered
        assert await delivery.drain(now=utcnow() + timedelta(hours=2)) == 4
    finally:
        await delivery.close()
        await opened.required.close()
    assert sorted(receiver.keys()) == sorted(await stored_keys(db))  # each once
    assert receiver.bad_signatures == 0
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 0


def raw(n: int) -> RawDocument:
    return RawDocument(
        url_hash=f"{n:064x}",
        url=f"http://example.org/{n}",
        final_url=None,
        source_id=None,
        source_name=None,
        host="example.org",
        origin="manual",
        title=f"t{n}",
        body="body",
        summary=None,
        author=None,
        published_at=None,
        image_url=None,
        language="en",
        content_hash=f"{n:064x}",
        word_count=1,
        extractor="generic",
        http_status=200,
        fetched_at=datetime(2026, 11, 28, tzinfo=UTC),
        tags=("a",),
    )


async def test_outbox_rows_are_leased_skipped_and_come_back_from_a_dead_fetcher(
    db: Database,
) -> None:
    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["hook"], [raw(1), raw(2), raw(3)])
    await outbox.enqueue_documents(["hook"], [raw(1)])  # the same version: one row
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 3
    now = utcnow()
    first = await outbox.claim("hook", "a", 2, lease_s=60, now=now)
    second = await outbox.claim("hook", "b", 5, lease_s=60, now=now)
    assert len(first) == 2 and len(second) == 1
    assert {r.id for r in first}.isdisjoint(r.id for r in second)
    assert await outbox.claim("hook", "b", 5, lease_s=60, now=now) == []
    await outbox.delivered([r.id for r in first], "b")  # not b's: nothing happens
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 3
    # a dies holding its rows: once the lease has run out, b delivers them
    back = await outbox.claim("hook", "b", 5, lease_s=60, now=now + timedelta(seconds=61))
    assert sorted(r.id for r in back) == sorted(r.id for r in first + second)


async def test_a_document_goes_to_the_outbox_only_with_its_completion(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    """The outbox rows are written with the completion: a completion refused
    (the lease lost to the reaper) writes none."""
    local_site.serve("/kept", article("Kept"))
    partner_site.serve("/lost", article("Lost"))
    await submit(db, local_site.url("/kept"), partner_site.url("/lost"))
    async with fetcher_for(db) as fetcher:
        fetcher.optional_sinks = ["hook"]
        claims = await fetcher.claim(10)
        lost = next(c for c in claims if c.url.endswith("/lost"))
        await db.execute(
            "UPDATE url_frontier SET claimed_by = 'someone-else' WHERE url_hash = $1",
            lost.url_hash,
        )
        await fetcher.process(claims)
    rows = await db.fetch("SELECT url_hash, payload::text FROM sink_outbox")
    kept = (await frontier_row(db, local_site.url("/kept")))["url_hash"]
    assert [r["url_hash"] for r in rows] == [kept]


@pytest.mark.parametrize("apart", [False, True], ids=["as-configured", "apart"])
async def test_a_page_its_source_revisits_goes_to_the_outbox(
    db: Database, local_site: LocalSite, monkeypatch: pytest.MonkeyPatch, apart: bool
) -> None:
    """A page fetched whose URL stays `pending` for its source's next revisit has its
    document stored all the same, and the optional sinks get it (the outbox took only
    the URLs a completion left `fetched`, so a source that revisits sent them nothing).
    `apart`: the rows written as on Citus, a statement of the completion's transaction
    (without, in the completion's statement on a single server)."""
    if apart:
        monkeypatch.setattr(Database, "distributed", _distributed)
    source = await SourceRepository(db).create(parse_config({"name": "Daily", "revisit": ["1h"]}))
    local_site.serve("/daily", article("Daily"))
    url = local_site.url("/daily")
    await QueueRepository(db, QueuePolicy(default_delay_ms=0)).submit(
        [Candidate(url, source.ref, Origin.FEED)]
    )
    async with fetcher_for(db) as fetcher:
        fetcher.optional_sinks = ["hook"]
        await fetcher.run_once()
    row = await frontier_row(db, url)
    assert (row["status"], row["revisit_step"]) == ("pending", 1)  # due again in an hour
    rows = await db.fetch("SELECT url_hash, op FROM sink_outbox")
    assert [(r["url_hash"], r["op"]) for r in rows] == [(row["url_hash"], "write")]


async def _distributed(self: Database) -> bool:
    return True


def test_the_completion_enqueues_as_the_outbox_does() -> None:
    """queue.sql's `complete_enqueue` writes the outbox's rows with sink_outbox.sql's
    `enqueue`'s very statements (the older versions superseded, then the rows)."""

    def outbox_part(statement: str) -> list[str]:
        lines = [line.strip().rstrip(",;") for line in statement.splitlines()]
        start = lines.index("superseded AS (")
        return lines[start : lines.index("ON CONFLICT (sink, key) DO NOTHING") + 1]

    ours, theirs = load("queue")["complete_enqueue"], load("sink_outbox")["enqueue"]
    part = outbox_part(theirs)
    assert len(part) > 8 and "queued AS (" in outbox_part(ours)
    assert [line for line in outbox_part(ours) if line != "queued AS ("] == part


async def test_a_required_webhook_that_fails_puts_the_url_back(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    receiver.down = True
    alone = with_sinks(settings, hook_entry(receiver, required=True))
    receiver.site.serve("/a", article("Story"))
    await submit(db, receiver.site.url("/a"))
    opened = await open_sinks(alone, db, installed())
    try:
        async with fetcher_for(db, sink=opened.required) as fetcher:
            await fetcher.run_once()
    finally:
        await opened.required.close()
    row = await frontier_row(db, receiver.site.url("/a"))
    assert row["status"] == "pending"
    assert "webhook 127.0.0.1: HTTP 503" in row["last_error"]


async def test_the_webhook_target_is_behind_the_ssrf_guard_and_batches(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    kind = WebhookKind()
    options = kind.options_model.model_validate(hook_entry(receiver, batch=2)["options"])
    guarded = Settings.load(**{**settings.model_dump(), "allow_private_networks": False})
    sink = await kind.open(guarded, db, options)
    try:
        with pytest.raises(SinkUnavailable) as refused:
            await sink.write([raw(1)])
        assert "not a public address" in str(refused.value), refused.value
    finally:
        await sink.close()
    assert receiver.attempts == 0
    sink = await kind.open(settings, db, options)
    try:
        await sink.write([raw(1), raw(2), raw(3)])
    finally:
        await sink.close()
    assert [len(event["data"]) for _, event in receiver.accepted] == [2, 1]
    ids = [item["id"] for _, event in receiver.accepted for item in event["data"]]
    assert ids == [delivery_key(d.url_hash, d.content_hash) for d in (raw(1), raw(2), raw(3))]
    assert {event["type"] for _, event in receiver.accepted} == {"documents.stored"}
    assert receiver.bad_signatures == 0


async def test_a_sink_without_prepared_writes_gets_documents_and_a_bad_row_is_kept(
    db: Database,
) -> None:
    """An optional sink that takes RawDocuments (here the PostgreSQL sink) gets them
    rebuilt from the payloads; an unreadable payload is refused for good and kept."""
    from frontier.sinks.postgres import PostgresSink

    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["copy"], [raw(1), raw(2)])
    await db.execute(
        "UPDATE sink_outbox SET payload = '{\"url_hash\": 1}' WHERE url_hash = $1", raw(2).url_hash
    )

    async def postgres() -> PostgresSink:
        return PostgresSink(db)

    delivery = OutboxDelivery(outbox, {"copy": postgres}, "w", OutboxPolicy())
    assert await delivery.drain() == 2
    stored = await db.fetch("SELECT url_hash, title, tags FROM raw_content")
    assert [(r["url_hash"], r["title"]) for r in stored] == [(raw(1).url_hash, "t1")]
    left = await db.fetch("SELECT url_hash, rejected, last_error FROM sink_outbox")
    assert [(r["url_hash"], r["rejected"]) for r in left] == [(raw(2).url_hash, True)]
    assert left[0]["last_error"].startswith("unreadable payload: KeyError")
    assert await delivery.drain() == 0  # refused for good: not tried again


async def test_a_webhook_whose_secret_cannot_be_read_does_not_open(
    db: Database, settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV)
    kind = WebhookKind()
    options = kind.options_model.model_validate(hook_entry(receiver)["options"])
    with pytest.raises(SettingsError) as refused:
        await kind.open(settings, db, options)
    assert str(refused.value) == (
        f"invalid configuration: webhook to 127.0.0.1: secret: the variable {SECRET_ENV} is not set"
    )


async def test_a_new_version_supersedes_an_older_one_still_waiting(db: Database) -> None:
    """A version that failed and waits for its retry must not reach the sink after the
    newer one: the newer one's row replaces it (one leased now stays)."""
    outbox = OutboxRepository(db)
    old = replace(raw(1), content_hash="a" * 64)
    await outbox.enqueue_documents(["hook", "other"], [old, raw(2)])
    [leased] = await outbox.claim("other", "w", 1, lease_s=60)  # raw(1)'s, in delivery
    await outbox.enqueue_documents(["hook", "other"], [raw(1)])  # its new text
    rows = await db.fetch("SELECT sink, key FROM sink_outbox ORDER BY sink, key")
    new_key = delivery_key(raw(1).url_hash, raw(1).content_hash)
    assert [(r["sink"], r["key"]) for r in rows] == sorted(
        [
            ("hook", new_key),
            ("hook", delivery_key(raw(2).url_hash, raw(2).content_hash)),
            ("other", leased.key),
            ("other", new_key),
            ("other", delivery_key(raw(2).url_hash, raw(2).content_hash)),
        ]
    )


async def test_a_write_stops_posting_once_the_receiver_fails(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    """Ten documents to a receiver that answers 503: the four in flight fail, the six
    waiting for their turn are not sent (a receiver that times out costs one round)."""
    receiver.down = True
    kind = WebhookKind()
    options = kind.options_model.model_validate(hook_entry(receiver)["options"])
    sink = await kind.open(settings, db, options)  # FRONTIER_WEBHOOK_MAX_IN_FLIGHT=4
    try:
        with pytest.raises(SinkUnavailable, match="HTTP 503"):
            await sink.write([raw(n) for n in range(10)])
    finally:
        await sink.close()
    assert receiver.attempts == settings.webhook_max_in_flight == 4


async def test_a_write_of_one_document_a_post_runs_a_task_per_post_in_flight_only(
    db: Database, settings: Settings, receiver: Receiver
) -> None:
    """Twenty documents, one a POST, FRONTIER_WEBHOOK_MAX_IN_FLIGHT=4: four senders take
    them in turn (a task a POST, each waiting for its turn, cost a few us a document);
    each document arrives once. (The sink's tasks are counted: aiohttp makes its own for
    each request's body, and the receiver runs on the same loop.)"""
    kind = WebhookKind()
    options = kind.options_model.model_validate(hook_entry(receiver)["options"])
    sink = await kind.open(settings, db, options)
    loop = asyncio.get_running_loop()
    created: list[object] = []
    factory = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if coro.__qualname__.startswith("WebhookSink."):
            created.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    documents = [raw(n) for n in range(20)]
    await sink.write(documents[:1])  # the connection opened, outside the count
    loop.set_task_factory(counting)
    try:
        await sink.write(documents)
    finally:
        loop.set_task_factory(factory)
        await sink.close()
    assert len(created) <= settings.webhook_max_in_flight == 4, len(created)
    keys = receiver.keys()[1:]
    assert sorted(keys) == sorted(delivery_key(d.url_hash, d.content_hash) for d in documents)


async def test_the_rows_a_new_version_supersedes_are_found_by_the_url_index(
    db: Database,
) -> None:
    """The enqueue finds the older versions' rows through sink_outbox_url_idx, not by
    reading the whole outbox (which, behind a sink that is down, grows by every document
    fetched): with sequential scans off, the planner would still read all of the sink's
    rows when the index could not be searched by url_hash."""
    rows = [["hook"], ["k"], [raw(1).url_hash], ["write"], ["{}"]]
    async with db.transaction() as tx:
        await tx.execute("SET LOCAL enable_seqscan = off")
        plan = await tx.fetch("EXPLAIN " + load("sink_outbox")["enqueue"], *rows)
    assert "(url_hash = new_1.h)" in "\n".join(row[0] for row in plan)  # the index's key


class Recorder:
    """An optional sink that keeps what the outbox hands it: as prepared JSON (`prepared`
    True, the webhook's way) or as documents."""

    name = "recorder"

    def __init__(self) -> None:
        self.items: list[Prepared] = []
        self.documents: list[RawDocument] = []

    async def write(self, documents: Sequence[RawDocument]) -> None:
        self.documents.extend(documents)

    async def delete(self, url_hashes: Sequence[str]) -> None:
        """Nothing to delete."""

    async def close(self) -> None:
        """Nothing to close."""


class PreparedRecorder(Recorder):
    async def write_prepared(self, items: Sequence[Prepared]) -> None:
        self.items.extend(items)


def recording(*sinks: Recorder) -> dict[str, Callable[[], Awaitable[Sink]]]:
    def opener(sink: Recorder) -> Callable[[], Awaitable[Sink]]:
        async def open_it() -> Sink:
            return cast(Sink, sink)

        return open_it

    return {f"s{i}": opener(sink) for i, sink in enumerate(sinks)}


# A date with an offset (kept as declared in the document, given back in UTC by
# PostgreSQL) and a detected language's confidence (a `real` column).
OFFSET = timezone(timedelta(hours=2))


def full(i: int, source_id: UUID | None = None, **changes: Any) -> RawDocument:
    published = datetime(2026, 11, 20, 11, 30, 15, 123456, tzinfo=OFFSET)
    values = {"published_at": published, "language_confidence": 0.9731, **changes}
    return full_document(i, source_id, **values)


async def test_rows_without_payload_deliver_the_bytes_rows_with_one_do(db: Database) -> None:
    """With PostgreSQL required, the rows hold no payload: the delivery reads the documents
    from raw_content, one statement a batch, and the sink gets the same key and the same
    JSON text as from a row that holds the payload (and the same document)."""
    from frontier.sinks.postgres import PostgresSink

    city = await SourceRepository(db).create(
        parse_config({"name": "city", "feed_url": "https://h0.example/rss"})
    )
    documents = [full(1, city.id), full(2), full(3, published_at=None, language_confidence=None)]
    await PostgresSink(db).write(documents)
    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["s0", "s2"], documents)
    await outbox.enqueue_documents(["s1", "s3"], documents, with_payload=False)
    assert await db.fetchval(
        "SELECT array_agg(DISTINCT sink ORDER BY sink) FROM sink_outbox WHERE payload IS NULL"
    ) == ["s1", "s3"]
    sinks = [PreparedRecorder(), PreparedRecorder(), Recorder(), Recorder()]
    delivery = OutboxDelivery(outbox, recording(*sinks), "w", OutboxPolicy())
    assert await delivery.drain() == 12
    with_payload, without = sinks[0].items, sinks[1].items
    keys = sorted(delivery_key(d.url_hash, d.content_hash) for d in documents)
    assert [i.key for i in without] == keys
    assert without == with_payload
    by_hash = sorted(documents, key=lambda d: d.url_hash)
    assert sinks[3].documents == sinks[2].documents == by_hash
    published = {json.loads(i.payload)["published_at"] for i in without}
    assert published == {"2026-11-20T09:30:15.123456+00:00", None}
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 0


async def test_a_row_without_payload_whose_document_went_or_changed(db: Database) -> None:
    """A payload-less row of a document deleted from raw_content since is delivered as
    nothing and goes (not tried again); one whose URL holds a newer version now delivers
    that version, under that version's key."""
    from frontier.sinks.postgres import PostgresSink

    stored = PostgresSink(db)
    gone, changed = full(1), full(2)
    await stored.write([gone, changed])
    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["s0", "s1"], [gone, changed], with_payload=False)
    newer = replace(changed, title="Newer", content_hash="e" * 64)
    await stored.write([newer])
    await db.execute("DELETE FROM raw_content WHERE url_hash = $1", gone.url_hash)
    sinks = [PreparedRecorder(), Recorder()]
    delivery = OutboxDelivery(outbox, recording(*sinks), "w", OutboxPolicy())
    assert await delivery.drain() == 4
    [item] = sinks[0].items
    assert item.key == delivery_key(newer.url_hash, newer.content_hash)
    assert json.loads(item.payload) == json.loads(json.dumps(document_payload(newer)))
    assert sinks[1].documents == [newer]
    assert await db.fetchval("SELECT count(*) FROM sink_outbox") == 0
    assert await delivery.drain() == 0


async def test_the_outbox_holds_payloads_only_without_postgres_required(
    db: Database, settings: Settings, receiver: Receiver, tmp_path: Any
) -> None:
    jsonl = {"name": "jsonl", "options": {"path": str(tmp_path)}}
    cases = [({"name": "postgres"}, False), (jsonl, True)]
    for required, payloads in cases:
        configured = with_sinks(settings, required, hook_entry(receiver))
        opened = await open_sinks(configured, db, installed())
        await opened.required.close()
        assert opened.outbox_payloads is payloads, required
