"""Issue 31, item 3: the politeness key holds the gap across the hosts of one server. One
local server answers several names: subdomains of one registered domain (as *.blogspot.com
are), or names of different domains on one address. Two fetch processes (and, on the
a poller reading a feed on one of them) crawl them at once. Measured at the
server, with the key `domain` (or `ip`), no request arrives while another to any of the
names is in flight, nor sooner than the delay after the previous answer; with the key
`host` the same crawl overlaps its hosts (so the measure can fail). Every article is
fetched once: a claim whose key was busy went back to the queue and came again."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.source_schema import parse_patch
from frontier.sources import SourceRepository
from frontier.states import Origin
from tests.local_site import Answered, Handler, LocalSite
from tests.processes import frontier_process
from tests.zoo.named_hosts import NAMES_VARIABLE, names_value
from tests.zoo.politeness import STAMP_TOLERANCE_S, article_html, precise_stamps

DELAY_MS = 300
ARTICLES_PER_HOST = 4
SUBDOMAINS = ("a.zoo.blogspot.com", "b.zoo.blogspot.com", "c.zoo.blogspot.com")
ONE_ADDRESS = ("news.zoo-one.com", "blog.zoo-two.net", "shop.zoo-three.org")
LAUNCHER = "tests.zoo.named_hosts"

# case -> (names, FRONTIER_POLITENESS_KEY, the sources' own politeness_key)
CASES = {
    "domain": (SUBDOMAINS, "domain", None),
    "ip (the sources' own key)": (ONE_ADDRESS, "host", "ip"),
    "host": (SUBDOMAINS, "host", None),
}


def story(number: int) -> Handler:
    """An article whose text names the host it was asked of (one article per host)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        html = article_html(number).replace("the city council", f"the council of {request.host}")
        return web.Response(text=html, content_type="text/html")

    return handler


def feed(urls: list[str]) -> str:
    items = "".join(
        f"<item><title>Story {n}</title><link>{u}</link></item>" for n, u in enumerate(urls)
    )
    channel = f"<channel><title>Farm</title>{items}</channel>"
    return f'<?xml version="1.0"?><rss version="2.0">{channel}</rss>'


def host_of(answered: Answered) -> str:
    return answered.request.headers["Host"].rsplit(":", 1)[0]


@pytest.mark.parametrize("case", list(CASES))
async def test_the_key_holds_the_gap_across_the_hosts_of_one_server(
    db: Database, fresh_dsn: str, local_site: LocalSite, tmp_path: Path, case: str
) -> None:
    names, setting, own_key = CASES[case]
    origins = [f"http://{name}:{local_site.port}" for name in names]
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    articles = [f"/story-{n}" for n in range(ARTICLES_PER_HOST)]
    for number, path in enumerate(articles):
        local_site.route(path, story(number))
    sources = SourceRepository(db)
    source = await sources.add("farm", rate_limit_ms=DELAY_MS)
    if own_key:
        source = await sources.update(source.id, parse_patch({"politeness_key": own_key}))
    urls = [origin + path for origin in origins for path in articles]
    # its feed lists articles known already: only the feed is new
    local_site.serve("/feed.xml", feed(urls[:2]), content_type="application/rss+xml")
    feed_source = await sources.add(
        "farm-feed", feed_url=origins[0] + "/feed.xml", rate_limit_ms=DELAY_MS
    )
    if own_key:  # the poller keeps to the source's key too
        await sources.update(feed_source.id, parse_patch({"politeness_key": own_key}))
    await QueueRepository(db, QueuePolicy()).submit(
        [Candidate(url, source.ref, Origin.FEED) for url in urls]
    )
    env = {
        NAMES_VARIABLE: names_value(dict.fromkeys(names, local_site.address)),
        "FRONTIER_POLITENESS_KEY": setting,
    }
    fetch = ("fetch", "--until-idle")
    with precise_stamps():
        async with (
            frontier_process(fresh_dsn, tmp_path, *fetch, via=LAUNCHER, **env) as a,
            frontier_process(fresh_dsn, tmp_path, *fetch, via=LAUNCHER, **env) as b,
            frontier_process(fresh_dsn, tmp_path, "poll", "--once", via=LAUNCHER, **env) as poll,
        ):
            codes = await asyncio.wait_for(asyncio.gather(a.wait(), b.wait(), poll.wait()), 180)
    assert set(codes) == {0}

    answers = sorted(local_site.answers, key=lambda answered: answered.request.at)
    assert len(answers) == len(local_site.requests)  # every request was answered
    hosts = {host_of(a) for a in answers}
    assert hosts == set(names)
    for name in names:  # every article fetched, once
        for path in articles:
            hits = [a for a in answers if (host_of(a), a.request.path) == (name, path)]
            assert len(hits) == 1, (name, path)
    statuses = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
    assert {r["status"]: r["count"] for r in statuses} == {"fetched": len(names) * len(articles)}
    assert len(local_site.hits("/feed.xml")) == 1

    # The rule, at the server, over every name of the server: a negative gap is a request
    # that arrived while another was in flight.
    gaps = [
        (
            round((later.request.at - earlier.at) * 1000, 1),
            f"{earlier.request.headers['Host']}{earlier.request.path} -> "
            f"{later.request.headers['Host']}{later.request.path}",
        )
        for earlier, later in itertools.pairwise(answers)
    ]
    too_close = [(gap, which) for gap, which in gaps if gap < DELAY_MS - STAMP_TOLERANCE_S * 1000]
    if case == "host":
        assert too_close, gaps  # each host keeps its own gap; together they overlap
    else:
        assert not too_close, too_close
