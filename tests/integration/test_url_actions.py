"""Acting on failures against the real database: `frontier urls requeue|purge` and the API
routes, their filters and dry runs, batches, the hosts' pending summaries and the status
counters; `--requeue` on submit and import; a requeued dead URL fetched again, once, by a
real fetcher against a local site."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.imports import Line, import_lines
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, Outcome, OutcomeKind, QueuePolicy
from frontier.settings import Settings
from frontier.states import Origin
from frontier.stats import StatsRepository
from frontier.url_actions import UrlActions, parse_filter
from frontier.urls import normalize_url, url_hash
from frontier.why_waiting import why_url_waits
from tests.fetch_harness import after, article, fetcher_for, frontier_row, manual_ref, submit
from tests.local_site import LocalSite
from tests.processes import clean_env, frontier_output

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POLICY = QueuePolicy(default_delay_ms=0, max_retries=0, lease_seconds=60)
TOKEN = "test-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def end_as(db: Database, outcomes: dict[str, OutcomeKind], *, now: datetime) -> None:
    """Submit the URLs (one host each, so one claim takes them all) and complete each with
    its outcome at `now`."""
    queue = QueueRepository(db, POLICY)
    ref = await manual_ref(db)
    await queue.submit([Candidate(u, ref, Origin.MANUAL) for u in outcomes], now=now)
    claims = await queue.claim("w", len(outcomes), now=now)
    assert len(claims) == len(outcomes)
    by_url = {normalize_url(u): kind for u, kind in outcomes.items()}
    done = [Outcome(c, by_url[c.url], error=f"{by_url[c.url]} here") for c in claims]
    await queue.complete("w", done, now=now)


async def status_of(db: Database, url: str) -> dict[str, Any]:
    row = await frontier_row(db, url)
    return {k: row[k] for k in ("status", "dead_reason", "retry_count", "last_error")}


async def host_summary(db: Database, host: str) -> tuple[int, datetime | None]:
    record = await db.fetchrow(
        "SELECT pending_count, pending_due_at FROM host_state WHERE host = $1", host
    )
    assert record is not None
    return record["pending_count"], record["pending_due_at"]


@pytest.fixture
async def ended(db: Database) -> dict[str, str]:
    """Six URLs on six hosts: two not_found, one gone, one max_retries, one failed, one
    fetched; the not_found ones ended an hour before the rest."""
    urls = {
        "nf1": "http://a.example/1",
        "nf2": "http://b.example/2",
        "gone": "http://c.example/3",
        "retries": "http://d.example/4",
        "failed": "http://e.example/5",
        "fetched": "http://f.example/6",
    }
    await end_as(
        db,
        {urls["nf1"]: OutcomeKind.NOT_FOUND, urls["nf2"]: OutcomeKind.NOT_FOUND},
        now=at(0),
    )
    await end_as(
        db,
        {
            urls["gone"]: OutcomeKind.GONE,
            urls["retries"]: OutcomeKind.RETRY,
            urls["failed"]: OutcomeKind.FAILED,
            urls["fetched"]: OutcomeKind.FETCHED,
        },
        now=at(3600),
    )
    return urls


async def test_requeue_by_reason_resets_the_urls_and_their_hosts(
    db: Database, ended: dict[str, str]
) -> None:
    assert (await status_of(db, ended["nf1"]))["dead_reason"] == "not_found"
    assert await host_summary(db, "a.example") == (0, None)
    now = at(7200)

    result = await UrlActions(db).requeue(parse_filter(reason="not_found", now=now), now=now)

    assert (result.matched, result.changed) == (2, 2)
    assert {row["url"] for row in result.sample} == {ended["nf1"], ended["nf2"]}
    for key in ("nf1", "nf2"):
        assert await status_of(db, ended[key]) == {
            "status": "pending",
            "dead_reason": None,
            "retry_count": 0,
            "last_error": None,
        }
        assert (await frontier_row(db, ended[key]))["next_fetch_at"] == now
    assert await host_summary(db, "a.example") == (1, now)  # the claim can see the host
    assert (await status_of(db, ended["gone"]))["status"] == "dead"  # another reason
    stats = await StatsRepository(db).stats(now=now)
    assert (stats.by_status["pending"], stats.by_status["dead"]) == (2, 2)
    claims = await QueueRepository(db, POLICY).claim("w2", 10, now=now)
    assert {c.url for c in claims} == {ended["nf1"], ended["nf2"]}


async def test_a_dry_run_counts_and_lists_but_changes_nothing(
    db: Database, ended: dict[str, str]
) -> None:
    before = await db.fetch("SELECT * FROM url_frontier ORDER BY url_hash")
    actions = UrlActions(db)
    wanted = parse_filter(now=at(7200))

    requeue = await actions.requeue(wanted, dry_run=True)
    purge = await actions.purge(wanted, dry_run=True)

    assert (requeue.matched, requeue.changed) == (purge.matched, purge.changed) == (5, 0)
    assert requeue.as_json()["requeued"] == 0 and purge.as_json()["purged"] == 0
    assert len(requeue.sample) == 5
    assert await db.fetch("SELECT * FROM url_frontier ORDER BY url_hash") == before


async def test_filters_status_host_source_and_age(db: Database, ended: dict[str, str]) -> None:
    actions = UrlActions(db)
    now = at(7200)

    async def matched(**wanted: Any) -> set[str]:
        result = await actions.requeue(parse_filter(now=now, **wanted), dry_run=True)
        return {row["url"] for row in result.sample}

    assert await matched(status="failed") == {ended["failed"]}
    assert await matched(status="dead") == {ended[k] for k in ("nf1", "nf2", "gone", "retries")}
    assert await matched(host="B.example") == {ended["nf2"]}
    assert await matched(host="http://c.example/x") == {ended["gone"]}
    assert await matched(older_than="90m") == {ended["nf1"], ended["nf2"]}  # ended at T0
    assert await matched(source="manual", reason="max_retries") == {ended["retries"]}
    with pytest.raises(Exception, match="no source named 'nope'"):
        await matched(source="nope")


async def test_large_sets_go_in_batches(db: Database) -> None:
    urls = {f"http://h{i}.example/p": OutcomeKind.NOT_FOUND for i in range(7)}
    await end_as(db, urls, now=at(0))

    result = await UrlActions(db, batch=3, sample=4).requeue(parse_filter(now=at(60)))

    assert (result.matched, result.changed, len(result.sample)) == (7, 7, 4)
    assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'pending'") == 7


async def test_purge_deletes_the_rows_and_the_counts_follow(
    db: Database, ended: dict[str, str]
) -> None:
    result = await UrlActions(db).purge(parse_filter(status="dead", now=at(7200)))

    assert (result.matched, result.changed) == (4, 4)
    left = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert left == {ended["failed"], ended["fetched"]}
    stats = await StatsRepository(db).stats(now=at(7200))
    assert (stats.total, stats.by_status["dead"], stats.by_status["failed"]) == (2, 0, 1)
    # Purged, a URL is new again: submitting it adds it.
    again = await QueueRepository(db, POLICY).submit(
        [Candidate(ended["gone"], await manual_ref(db), Origin.MANUAL)]
    )
    assert again.inserted == 1


async def test_a_url_being_fetched_or_pending_is_never_touched(db: Database) -> None:
    queue = QueueRepository(db, POLICY)
    ref = await manual_ref(db)
    await queue.submit([Candidate(u, ref, Origin.MANUAL) for u in ("http://x.example/a",)])
    await queue.claim("w", 1)
    pending = "http://y.example/b"
    await queue.submit([Candidate(pending, ref, Origin.MANUAL)])
    hashes = [url_hash(normalize_url(u)) for u in ("http://x.example/a", pending)]

    requeued = await queue.requeue_in_bucket(hashes, ["failed", "dead"], bucket=0)

    assert requeued == 0
    assert (await frontier_row(db, "http://x.example/a"))["status"] == "fetching"
    assert (await frontier_row(db, pending))["status"] == "pending"


async def test_submit_with_requeue_revives_and_without_it_answers_duplicate(
    db: Database, ended: dict[str, str]
) -> None:
    queue = QueueRepository(db, POLICY)
    ref = await manual_ref(db)
    lines = [Line(1, ended["nf1"]), Line(2, ended["fetched"]), Line(3, "http://new.example/")]

    plain = await import_lines(queue, iter(lines[:2]), ref)
    assert (plain.accepted, plain.duplicate, plain.requeued) == (0, 2, 0)
    assert (await status_of(db, ended["nf1"]))["status"] == "dead"

    revived = await import_lines(queue, iter(lines), ref, requeue=True)

    assert (revived.accepted, revived.duplicate, revived.requeued) == (1, 1, 1)
    assert (await status_of(db, ended["nf1"]))["status"] == "pending"
    assert (await status_of(db, ended["fetched"]))["status"] == "fetched"  # not failed/dead


async def test_the_cli_requeues_and_purges(
    db: Database, fresh_dsn: str, ended: dict[str, str]
) -> None:
    env = clean_env(fresh_dsn)
    code, out, err = await frontier_output(
        "urls", "requeue", "--reason", "not_found", "--dry-run", "--json", env=env
    )
    assert code == 0, err
    answer = json.loads(out)
    assert (answer["matched"], answer["requeued"], answer["dry_run"]) == (2, 0, True)

    code, out, err = await frontier_output("urls", "requeue", "--status", "failed", env=env)
    assert (code, out.splitlines()[0]) == (0, "requeued 1 of 1 matching URLs"), err
    assert (await status_of(db, ended["failed"]))["status"] == "pending"

    code, out, err = await frontier_output("urls", "purge", "--reason", "gone", env=env)
    assert (code, out.splitlines()[0]) == (0, "purged 1 of 1 matching URLs"), err

    code, out, err = await frontier_output("submit", "--requeue", ended["nf2"], env=env)
    assert (code, out.strip()) == (0, "accepted 0, duplicate 0, rejected 0, requeued 1"), err
    assert (await status_of(db, ended["nf2"]))["status"] == "pending"


@pytest.mark.parametrize(
    "args, says",
    [
        (["--status", "fetching"], "status: fetching URLs are leased"),
        (["--status", "pending"], "status: pending URLs are already queued"),
        (["--status", "done"], "status: 'done' is not one of failed, dead, fetched"),
        (["--reason", "bored"], "reason: 'bored' is not a dead reason"),
        (["--status", "failed", "--reason", "gone"], "reason: failed URLs have no dead reason"),
        (["--older-than", "a while"], "older_than: 'a while' is not a duration"),
        (["--host", "http://"], "host: 'http://' is not a host name"),
        (["--source", "nope"], "no source named 'nope'"),
    ],
)
async def test_the_cli_refuses_a_bad_filter_in_one_line(
    fresh_dsn: str, args: list[str], says: str
) -> None:
    code, out, err = await frontier_output("urls", "requeue", *args, env=clean_env(fresh_dsn))
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and says in err, err


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> Any:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, api_token=TOKEN, _env_file=None)
    transport = httpx.ASGITransport(app=create_app(settings, db))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


async def test_the_api_requeues_and_purges_with_the_write_token(
    db: Database, api: httpx.AsyncClient, ended: dict[str, str]
) -> None:
    body = {"reason": "not_found", "dry_run": True}
    assert (await api.post("/api/v1/urls/requeue", json=body)).status_code == 401

    dry = await api.post("/api/v1/urls/requeue", json=body, headers=AUTH)
    assert dry.status_code == 200, dry.text
    assert {k: dry.json()[k] for k in ("action", "matched", "requeued")} == {
        "action": "requeue",
        "matched": 2,
        "requeued": 0,
    }
    assert "purged" not in dry.json()
    done = await api.post("/api/v1/urls/requeue", json={"host": "a.example"}, headers=AUTH)
    assert (done.json()["matched"], done.json()["requeued"]) == (1, 1)
    assert (await status_of(db, ended["nf1"]))["status"] == "pending"

    purged = await api.post("/api/v1/urls/purge", headers=AUTH)  # no body: every one
    assert (purged.json()["matched"], purged.json()["purged"]) == (4, 4)

    imported = await api.post(
        "/api/v1/import?requeue=true", json={"urls": [ended["nf1"]]}, headers=AUTH
    )
    assert imported.json()["requeued"] == 0  # pending already: nothing to revive


@pytest.mark.parametrize(
    "body, field",
    [
        ({"status": "fetching"}, "status"),
        ({"older_than": "soon"}, "older_than"),
        ({"source": "nope"}, "source"),
        ({"colour": "red"}, "colour"),
        ({"dry_run": "yes"}, "dry_run"),
    ],
)
async def test_the_api_refuses_a_bad_filter_with_422(
    api: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await api.post("/api/v1/urls/purge", json=body, headers=AUTH)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["fields"][0]["field"] == field


async def test_a_requeued_dead_url_is_fetched_again_once(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/story", b"not yet", status=404)
    await submit(db, local_site.url("/story"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        assert (await frontier_row(db, local_site.url("/story")))["dead_reason"] == "not_found"
        local_site.serve("/story", article("Back online"))
        result = await UrlActions(db).requeue(parse_filter(reason="not_found", now=after(0)))
        assert result.changed == 1

        assert (await fetcher.run_once(now=after(5))).claimed == 1
        assert (await fetcher.run_once(now=after(60))).claimed == 0

    row = await frontier_row(db, local_site.url("/story"))
    assert (row["status"], row["fetch_count"]) == ("fetched", 2)
    assert len(local_site.hits("/story")) == 2
    titles = await db.fetch("SELECT title FROM raw_content")
    assert [r["title"] for r in titles] == ["Back online"]


async def test_a_fetched_url_requeued_is_fetched_again_in_full(
    db: Database, local_site: LocalSite
) -> None:
    """`urls requeue --status fetched` (the advice `url show` gives for a fetched URL): the
    URL is fetched again without its validators, and its document replaced."""
    local_site.serve("/story", article("Wrong text"), headers={"ETag": '"v1"'})
    await submit(db, local_site.url("/story"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        assert (await frontier_row(db, local_site.url("/story")))["etag"] == '"v1"'
        local_site.serve("/story", article("Right text"), headers={"ETag": '"v2"'})
        wanted = parse_filter(status="fetched", host=local_site.url("/"), now=after(0))
        result = await UrlActions(db).requeue(wanted)
        assert (result.matched, result.changed) == (1, 1)

        assert (await fetcher.run_once(now=after(5))).claimed == 1

    second = local_site.hits("/story")[1]
    assert "If-None-Match" not in second.headers  # a full fetch, not a 304
    row = await frontier_row(db, local_site.url("/story"))
    assert (row["status"], row["fetch_count"]) == ("fetched", 2)
    titles = await db.fetch("SELECT title FROM raw_content")
    assert [r["title"] for r in titles] == ["Right text"]


async def test_the_advice_of_url_show_for_a_fetched_url_works(
    db: Database, fresh_dsn: str, ended: dict[str, str]
) -> None:
    """The command `url show` names for a fetched URL requeues that URL, not the other
    fetched URLs of its host."""
    other = "http://f.example/7?a=1&b=2"
    await end_as(db, {other: OutcomeKind.FETCHED}, now=at(3600))
    row = await db.fetchrow(
        "SELECT * FROM url_frontier WHERE url_hash = $1", url_hash(normalize_url(other))
    )
    advice = why_url_waits(dict(row), None, now=at(3700)).sentence.split("to fetch it again: ")[1]
    words = shlex.split(advice)
    assert words[:2] == ["frontier", "urls"] and other in words
    code, out, err = await frontier_output(*words[1:], env=clean_env(fresh_dsn))
    assert (code, out.splitlines()[0]) == (0, "requeued 1 of 1 matching URLs"), err
    assert (await status_of(db, other))["status"] == "pending"
    assert (await status_of(db, ended["fetched"]))["status"] == "fetched"  # the same host


async def test_the_api_requeues_fetched_urls_by_name_and_never_purges_them(
    api: httpx.AsyncClient, db: Database, ended: dict[str, str]
) -> None:
    refused = await api.post("/api/v1/urls/purge", json={"status": "fetched"}, headers=AUTH)
    assert refused.status_code == 422, refused.text
    response = await api.post("/api/v1/urls/requeue", json={"status": "fetched"}, headers=AUTH)
    assert response.status_code == 200, response.text
    assert (response.json()["matched"], response.json()["requeued"]) == (1, 1)
    assert (await status_of(db, ended["fetched"]))["status"] == "pending"
