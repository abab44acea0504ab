"""One URL's story against the real database, through `GET /api/v1/urls/{...}` and
`frontier url show`: each cause of "why is it not fetched now" is set up with the queue's
own statements where one exists (claim, complete) and with host_state as the fetcher
leaves it otherwise, and the answer names that cause."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from frontier.api.app import create_app
from frontier.clock import utcnow
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.hosts import HostRepository, KeyBusy
from frontier.politeness_key import KeyRepository
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, Outcome, OutcomeKind, SourceRef, claim_hold
from frontier.settings import Settings
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, Origin
from frontier.urls import normalize_url, url_hash
from tests.processes import frontier_env, frontier_output

HOST = "news.example"
URL = f"https://{HOST}/story/1"


async def submit(db: Database, url: str = URL) -> tuple[QueueRepository, Any]:
    sources = SourceRepository(db)
    source = await sources.create(parse_config({"name": "city", "feed_url": f"https://{HOST}/rss"}))
    queue = QueueRepository(db)
    await queue.submit([Candidate(url, SourceRef(source.id), Origin.FEED)])
    return queue, source


async def host_set(db: Database, assignments: str, *args: Any) -> None:
    await db.execute(f"UPDATE host_state SET {assignments} WHERE host = '{HOST}'", *args)


async def robots_allow_all(db: Database) -> None:
    await host_set(db, "robots_status = 'allow_all', robots_fetched_at = now()")


async def claimed(db: Database, queue: QueueRepository, **kwargs: Any) -> Any:
    await robots_allow_all(db)
    claims = await queue.claim("worker-7", 1, **kwargs)
    assert len(claims) == 1
    return claims[0]


# Each setup returns nothing; the expected cause and a phrase of the sentence follow.
Setup = Callable[[Database, QueueRepository, Any], Awaitable[None]]


async def due_now(db: Database, queue: QueueRepository, source: Any) -> None:
    await robots_allow_all(db)


async def robots_not_fetched(db: Database, queue: QueueRepository, source: Any) -> None:
    pass  # a new host: robots.txt unknown


async def host_delay(db: Database, queue: QueueRepository, source: Any) -> None:
    await robots_allow_all(db)
    await host_set(db, "next_allowed_at = now() + interval '1 hour'")


async def host_backoff(db: Database, queue: QueueRepository, source: Any) -> None:
    await robots_allow_all(db)
    await host_set(db, "backoff_until = now() + interval '2 hours', consecutive_failures = 6")


async def host_leased(db: Database, queue: QueueRepository, source: Any) -> None:
    await host_set(db, "lease_owner = 'robots-worker', lease_until = now() + interval '1 min'")


async def robots_disallows(db: Database, queue: QueueRepository, source: Any) -> None:
    await host_set(
        db,
        "robots_status = 'ok', robots_fetched_at = now(), "
        "robots_txt = E'User-agent: *\\nDisallow: /story/\\n'",
    )


async def robots_unreachable(db: Database, queue: QueueRepository, source: Any) -> None:
    await host_set(
        db,
        "robots_status = 'disallow_all', robots_fetched_at = now(), robots_failures = 1, "
        "robots_error = 'connection refused', robots_retry_at = now() + interval '10 min'",
    )


async def leased(db: Database, queue: QueueRepository, source: Any) -> None:
    await claimed(db, queue)


async def lease_expired(db: Database, queue: QueueRepository, source: Any) -> None:
    claim = await claimed(db, queue, lease_seconds=1)
    # The fetcher died: its lease ran out a minute ago, and no reaper has run since.
    await db.execute(
        "UPDATE url_frontier SET lease_until = now() - interval '1 min' WHERE url_hash = $1",
        claim.url_hash,
    )


async def retry_at(db: Database, queue: QueueRepository, source: Any) -> None:
    claim = await claimed(db, queue)
    await queue.complete(
        "worker-7", [Outcome(claim, OutcomeKind.RETRY, 502, error="HTTP 502 from upstream")]
    )


async def source_disabled(db: Database, queue: QueueRepository, source: Any) -> None:
    await robots_allow_all(db)
    await db.execute("UPDATE sources SET enabled = false WHERE id = $1", source.id)


async def fetched(db: Database, queue: QueueRepository, source: Any) -> None:
    claim = await claimed(db, queue)
    await queue.complete("worker-7", [Outcome(claim, OutcomeKind.FETCHED, 200)])


async def dead(db: Database, queue: QueueRepository, source: Any) -> None:
    claim = await claimed(db, queue)
    await queue.complete("worker-7", [Outcome(claim, OutcomeKind.NOT_FOUND, 404)])


async def failed(db: Database, queue: QueueRepository, source: Any) -> None:
    claim = await claimed(db, queue)
    await queue.complete(
        "worker-7", [Outcome(claim, OutcomeKind.FAILED, 200, error="mapping conflict")]
    )


CASES: list[tuple[Setup, str, str]] = [
    (due_now, "due_now", "waits for a free fetcher"),
    (robots_not_fetched, "robots_not_fetched", "not fetched yet"),
    (host_delay, "host_delay", "next request to news.example may start at"),
    (host_backoff, "host_backoff", "after 6 failed"),
    (host_leased, "host_leased", "held by robots-worker"),
    (robots_disallows, "robots_disallows", "disallows it"),
    (robots_unreachable, "robots_unreachable", "connection refused"),
    (leased, "leased", "leased by worker-7"),
    (lease_expired, "lease_expired", "reaper"),
    (retry_at, "retry_at", "after 1 failed attempt (last error: HTTP 502 from upstream)"),
    (source_disabled, "source_disabled", "Its source city is disabled"),
    (fetched, "fetched", f"frontier urls requeue --status fetched --url {URL}"),
    (dead, "dead", "--reason not_found"),
    (failed, "failed", "mapping conflict"),
]


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, _env_file=None)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings, db)), base_url="http://test"
    ) as client:
        yield client


@pytest.mark.parametrize(("setup", "cause", "phrase"), CASES, ids=[c[1] for c in CASES])
async def test_api_names_each_cause(
    db: Database, api: httpx.AsyncClient, setup: Setup, cause: str, phrase: str
) -> None:
    queue, source = await submit(db)
    await setup(db, queue, source)
    answer = await api.get(f"/api/v1/urls/{url_hash(normalize_url(URL))}")
    assert answer.status_code == 200, answer.text
    why = answer.json()["why"]
    assert (why["cause"], phrase in why["sentence"]) == (cause, True), why


async def test_identity_spelling_fetch_log_and_document(
    db: Database, api: httpx.AsyncClient
) -> None:
    spelled = f"https://{HOST}/story/1/?utm_source=feed"
    queue, source = await submit(db, spelled)
    await fetched(db, queue, source)
    identity = normalize_url(spelled)
    digest = url_hash(identity)
    await FetchLogRepository(db).record(
        [
            LogEntry(FetchKind.PAGE, source.id, identity, LogOutcome.FAILED, 503, error="busy"),
            LogEntry(FetchKind.PAGE, source.id, identity, LogOutcome.OK, 200, elapsed_ms=40),
            LogEntry(FetchKind.PAGE, source.id, f"https://{HOST}/other", LogOutcome.OK, 200),
        ]
    )
    now = utcnow()
    await PostgresSink(db).write(
        [
            RawDocument(
                url_hash=digest, url=identity, final_url=None, source_id=source.id,
                source_name="city", host=HOST, origin="feed", title="Bridge <b>reopens</b>",
                body="Text.", summary=None, author=None, published_at=None, image_url=None,
                language="en", content_hash=None, word_count=1, extractor="generic",
                http_status=200, fetched_at=now,
            )
        ]
    )  # fmt: skip
    # By any spelling of the URL, percent-encoded in the path.
    answer = await api.get("/api/v1/urls/" + quote(f"HTTPS://{HOST.upper()}/story/1", safe=""))
    assert answer.status_code == 200, answer.text
    story = answer.json()
    assert (story["url"], story["url_hash"], story["fetch_url"]) == (
        identity,
        digest,
        spelled.split("#")[0],
    )
    assert [(e["outcome"], e["http_status"]) for e in story["fetch_log"]] == [
        ("ok", 200),
        ("failed", 503),
    ]
    assert story["document"]["title"] == "Bridge <b>reopens</b>"
    assert story["frontier"]["status"] == "fetched" and story["frontier"]["fetch_count"] == 1


async def test_unknown_and_malformed_keys(api: httpx.AsyncClient) -> None:
    unknown = await api.get(f"/api/v1/urls/{'a' * 64}")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    bad = await api.get("/api/v1/urls/" + quote("ftp://x/y", safe=""))
    assert bad.status_code == 422 and "url_hash" in bad.json()["error"]["message"]


async def test_cli_tells_the_story_and_the_reason(db: Database, fresh_dsn: str) -> None:
    queue, source = await submit(db)
    await host_backoff(db, queue, source)
    env = frontier_env(fresh_dsn)
    code, out, err = await frontier_output("url", "show", URL, env=env)
    assert code == 0, err
    assert f"url        {URL}" in out and "Host news.example is backing off until" in out
    code, out, err = await frontier_output("url", "show", URL, "--json", env=env)
    assert code == 0 and json.loads(out)["why"]["cause"] == "host_backoff"
    code, out, err = await frontier_output("url", "show", "mailto:someone", env=env)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "url_hash" in err
    code, out, _err = await frontier_output("url", "show", "https://elsewhere.example/", env=env)
    assert code == 1 and "not in the frontier" in out


async def test_a_url_whose_politeness_key_is_busy_names_the_key(
    db: Database, api: httpx.AsyncClient, fresh_dsn: str
) -> None:
    """As a fetcher leaves it (fetcher.pipeline `_take_keys`): claimed, its key taken by
    another host's request in flight, the claim deferred and its host snoozed."""
    url, key = "https://a.zoo.blogspot.com/story/1", "zoo.blogspot.com"
    sources = SourceRepository(db)
    source = await sources.create(parse_config({"name": "farm", "politeness_key": "domain"}))
    queue = QueueRepository(db)
    await queue.submit([Candidate(url, SourceRef(source.id), Origin.FEED)])
    claim = (await queue.claim("worker-7", 1))[0]
    keys = KeyRepository(db)
    assert (await keys.take(key, "worker-8/other", lease_s=60)).taken  # b.zoo's request
    hold = claim_hold("worker-7", claim.url_hash)
    assert not (await keys.take(key, hold, lease_s=60)).taken
    await HostRepository(db).release_slots(
        {claim.host: hold}, snoozed={claim.host: KeyBusy(key, 30.0)}
    )
    await queue.complete("worker-7", [Outcome(claim, OutcomeKind.DEFERRED, error="key busy")])

    story = (await api.get(f"/api/v1/urls/{claim.url_hash}")).json()
    assert story["politeness_key"] == {"mode": "domain", "key": key}
    assert story["why"]["cause"] == "key_busy"
    assert f"another host of key {key} has a request in flight" in story["why"]["sentence"]
    assert story["frontier"]["fetch_count"] == 0  # a deferral is no attempt
    page = await api.get("/hosts/a.zoo.blogspot.com")
    assert page.status_code == 200 and 'data-testid="busy-key"' in page.text, page.text[:300]
    # The setting names the key of a source without its own.
    await db.execute("UPDATE sources SET politeness_key = NULL")
    env = frontier_env(fresh_dsn, FRONTIER_POLITENESS_KEY="domain")
    code, out, err = await frontier_output("url", "show", url, env=env)
    assert code == 0, err
    assert f"key        domain: {key}" in out and "Key busy" in out
    code, out, err = await frontier_output("url", "show", url, env=frontier_env(fresh_dsn))
    assert code == 0 and "key        " not in out  # host: the host is its own key


async def test_cli_shows_the_whole_text_and_no_past_next_fetch(
    db: Database, fresh_dsn: str
) -> None:
    """docs/operations.md: "the whole article, text included, is in `frontier url show
    URL`". A fetched URL has no next fetch to show (its next_fetch_at is long past)."""
    queue, source = await submit(db)
    await fetched(db, queue, source)
    body = "First paragraph of the story.\n\nSecond one,\nwith a line break.\n\nThe end."
    await PostgresSink(db).write(
        [
            RawDocument(
                url_hash=url_hash(URL), url=URL, final_url=None, source_id=source.id,
                source_name="city", host=HOST, origin="feed", title="Bridge reopens",
                body=body, summary=None, author=None, published_at=None, image_url=None,
                language="en", content_hash=None, word_count=13, extractor="generic",
                http_status=200, fetched_at=utcnow(),
            )
        ]
    )  # fmt: skip
    code, out, err = await frontier_output("url", "show", URL, env=frontier_env(fresh_dsn))
    assert code == 0, err
    text = out.split("\ntext\n", 1)[1]
    assert text.splitlines() == [
        "  First paragraph of the story.",
        "",
        "  Second one,",
        "  with a line break.",
        "",
        "  The end.",
    ]
    assert "next fetch" not in out


async def test_urls_queued_on_one_host_wait_behind_each_other(
    db: Database, api: httpx.AsyncClient
) -> None:
    """Three URLs due on a host whose next request may start at T: only the first can
    start then; the others say how many go before them, and from when they may start."""
    urls = [f"https://{HOST}/story/{i}" for i in range(3)]
    sources = SourceRepository(db)
    source = await sources.create(parse_config({"name": "city", "feed_url": f"https://{HOST}/rss"}))
    await QueueRepository(db).submit(
        [Candidate(u, SourceRef(source.id), Origin.FEED) for u in urls]
    )
    await robots_allow_all(db)
    await host_set(db, "next_allowed_at = now() + interval '1 hour', min_delay_ms = 30000")
    whys = []
    for url in urls:
        answer = await api.get(f"/api/v1/urls/{url_hash(normalize_url(url))}")
        assert answer.status_code == 200, answer.text
        whys.append(answer.json()["why"])
    assert {why["cause"] for why in whys} == {"host_delay"}
    ahead = sorted(whys, key=lambda why: why["until"])
    assert "ahead of it" not in ahead[0]["sentence"]
    assert "1 URL of the host is ahead of it" in ahead[1]["sentence"]
    assert "2 URLs of the host are ahead of it" in ahead[2]["sentence"]
    first, second, third = (datetime.fromisoformat(why["until"]) for why in ahead)
    assert (second - first, third - first) == (timedelta(seconds=30), timedelta(seconds=60))


async def test_a_claim_waiting_for_the_crawl_delay_says_so(
    db: Database, api: httpx.AsyncClient
) -> None:
    """robots.txt came in with a Crawl-delay: the claim waits for it before its request,
    and the answer names that wait, not the lease."""
    queue, _source = await submit(db)
    await claimed(db, queue)
    await host_set(
        db,
        "crawl_delay_ms = 30000, next_allowed_at = date_trunc('second', now()) + interval '30 s'",
    )
    next_allowed = await db.fetchval(
        f"SELECT next_allowed_at FROM host_state WHERE host = '{HOST}'"
    )
    answer = await api.get(f"/api/v1/urls/{url_hash(normalize_url(URL))}")
    why = answer.json()["why"]
    assert why["cause"] == "leased"
    assert f"may start at {next_allowed.isoformat(timespec='seconds')}" in why["sentence"]
    assert "Crawl-delay of 30 s" in why["sentence"]
    assert datetime.fromisoformat(why["until"]) == next_allowed
