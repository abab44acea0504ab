"""Outbound proxies (frontier.proxies) at real servers: a forward proxy started here
(tests/forward_proxy.py, on 127.0.0.1, asking for Proxy-Authorization) carries the
fetcher's requests (robots.txt and pages), the poller's and the spider's, to a site on
127.0.0.2 (the allowed network: the stand-in for a public host). The SSRF guard still
judges the target: a name resolving to a private address not allowed (localhost) is
refused before the proxy is asked. A proxy that fails (dead, 407, a 502 of its own) is a
proxy error: the URL waits and is fetched later, and nothing counts against its host."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest

from fetcher.config import FetcherConfig
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.proxies import PROXY_RETRY_S, route_of
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import BlockedAddress, FetchFailed, ProxyError
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresSink
from frontier.source_schema import parse_config, parse_patch
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from poller.policy import PollPolicy
from poller.scheduler import Poller
from spider.errors import SpiderConfigError
from spider.plan import load_plan
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import UA, after, article, frontier_row, host_row, submit
from tests.forward_proxy import ForwardProxy, running_proxy, running_socks5
from tests.integration.test_poll import rss
from tests.local_site import LocalSite

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)  # after any row's default now()
LOGIN = ("crawler", "pass word")  # the proxy's credentials (a space: percent-encoded)
ALLOWED = ("127.0.0.2/32",)  # the site's address; the proxy's (127.0.0.1) is not listed


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (a dead proxy)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def fetcher_via(db: Database, proxy_url: str | None) -> AsyncIterator[Fetcher]:
    limits = HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=proxy_url)
    config = FetcherConfig(user_agent=UA, worker_id="w-proxy", concurrency=4)
    async with SafeClient(limits) as client:
        yield Fetcher(db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0))


def with_login(proxy: ForwardProxy) -> str:
    return f"http://crawler:pass%20word@127.0.0.1:{proxy.port}"


async def test_fetches_go_through_the_proxy_and_a_private_target_is_refused_before_it(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    partner_site.serve("/robots.txt", "", status=404)
    partner_site.serve("/story", article("through the proxy"))
    local_site.serve("/secret", article("internal"))
    private = f"http://localhost:{local_site.port}/secret"  # a name for 127.0.0.1 and ::1
    await submit(db, partner_site.url("/story"), private)

    async with running_proxy(LOGIN) as proxy, fetcher_via(db, with_login(proxy)) as fetcher:
        await fetcher.run(until_idle=True)

    fetched = await frontier_row(db, partner_site.url("/story"))
    assert fetched["status"] == "fetched", fetched["last_error"]
    assert [(a.method, a.target) for a in proxy.asked] == [
        ("GET", partner_site.url("/robots.txt")),
        ("GET", partner_site.url("/story")),
    ]  # absolute URIs, with the credentials the proxy asks for (else 407)
    assert [seen.path for seen in partner_site.requests] == ["/robots.txt", "/story"]
    # The proxy's credentials never reach the site.
    assert all("Proxy-Authorization" not in seen.headers for seen in partner_site.requests)
    refused = await frontier_row(db, private)
    assert (refused["status"], refused["dead_reason"]) == ("dead", "blocked_by_policy")
    assert "refused by the SSRF guard" in refused["last_error"]
    robots = await db.fetchrow(
        "SELECT outcome, error FROM fetch_log WHERE url = $1",
        f"http://localhost:{local_site.port}/robots.txt",
    )
    assert robots is not None and robots["outcome"] == "refused"
    assert "localhost resolves to non-public addresses" in robots["error"]
    assert all("localhost" not in a.target for a in proxy.asked)  # never asked
    assert local_site.requests == []


@pytest.mark.parametrize("failure", ["dead", "407", "502"])
async def test_a_failing_proxy_defers_the_url_and_leaves_its_host_alone(
    db: Database, partner_site: LocalSite, failure: str
) -> None:
    partner_site.serve("/robots.txt", "", status=404)
    partner_site.serve("/first", article("first"))
    partner_site.serve("/second", article("second"))
    host = f"127.0.0.2:{partner_site.port}"
    async with running_proxy(LOGIN) as proxy:
        await submit(db, partner_site.url("/first"))  # robots.txt and one page, through it
        async with fetcher_via(db, with_login(proxy)) as fetcher:
            await fetcher.run_once()
        await submit(db, partner_site.url("/second"))
        failing = {
            "dead": f"http://127.0.0.1:{closed_port()}",
            "407": proxy.url,  # without the credentials it asks for
        }
        async with running_proxy(answer=502) as broken:  # a 502 with Proxy-Status
            url = failing.get(failure, broken.url)
            async with fetcher_via(db, url) as fetcher:
                assert (await fetcher.run_once(now=after(1))).claimed == 1
        waiting = await frontier_row(db, partner_site.url("/second"))
        assert waiting["status"] == "pending" and waiting["retry_count"] == 0
        assert waiting["last_error"].startswith("proxy error: http://127.0.0.1:")
        assert waiting["next_fetch_at"] >= after(PROXY_RETRY_S - 5)
        state = await host_row(db, host)
        assert state["consecutive_failures"] == 0 and state["backoff_until"] is None
        logged = await db.fetchrow(
            "SELECT outcome, error FROM fetch_log WHERE url = $1", partner_site.url("/second")
        )
        assert logged is not None and logged["error"].startswith("proxy error")
        assert partner_site.hits("/second") == []

        async with fetcher_via(db, with_login(proxy)) as fetcher:  # the proxy is back
            await fetcher.run_once(now=after(PROXY_RETRY_S + 5))
    assert (await frontier_row(db, partner_site.url("/second")))["status"] == "fetched"
    assert len(partner_site.hits("/second")) == 1


async def test_an_https_target_goes_through_connect(partner_site: LocalSite) -> None:
    target = f"https://127.0.0.2:{partner_site.port}/page"  # the site speaks no TLS
    async with running_proxy(LOGIN) as proxy, running_proxy(answer=502) as refusing:
        limits = HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=with_login(proxy))
        async with SafeClient(limits) as client:
            # The tunnel is made (with the proxy's credentials); the TLS handshake with
            # the site then fails: the target's failure, not the proxy's.
            with pytest.raises(FetchFailed) as caught:
                await client.get(target)
            assert not isinstance(caught.value, ProxyError)
        by_name = refusing.url.replace("127.0.0.1", "localhost")  # a private name: allowed
        limits = HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=by_name)
        async with SafeClient(limits) as client:
            with pytest.raises(ProxyError, match="refused the tunnel: 502"):
                await client.get(target)
    assert [(a.method, a.target) for a in proxy.asked] == [
        ("CONNECT", f"127.0.0.2:{partner_site.port}")
    ]
    assert [(a.method, a.target) for a in refusing.asked] == [
        ("CONNECT", f"127.0.0.2:{partner_site.port}")
    ]


async def test_a_direct_source_goes_around_the_operators_proxy(partner_site: LocalSite) -> None:
    partner_site.serve("/page", "direct")
    dead = f"http://127.0.0.1:{closed_port()}"
    own = route_of({"direct": True}, [partner_site.url("/")])  # an intranet source
    async with SafeClient(HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=dead)) as client:
        answer = await client.get(partner_site.url("/page"), proxy=own)
        with pytest.raises(ProxyError, match="cannot connect"):
            await client.get(partner_site.url("/page"))  # anyone else's: the dead proxy
    assert answer.status == 200 and answer.body == b"direct"
    assert len(partner_site.hits("/page")) == 1


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
async def test_a_socks_proxy_carries_requests_and_judges_the_target_first(
    partner_site: LocalSite, local_site: LocalSite, scheme: str
) -> None:
    partner_site.serve("/page", "through socks")
    async with running_socks5(LOGIN) as socks:
        url = f"{scheme}://crawler:pass%20word@127.0.0.1:{socks.port}"
        async with SafeClient(HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=url)) as client:
            answer = await client.get(partner_site.url("/page"))
            with pytest.raises(BlockedAddress, match="localhost resolves to non-public"):
                await client.get(f"http://localhost:{local_site.port}/page")
        wrong = f"{scheme}://crawler:wrong@127.0.0.1:{socks.port}"  # its login refused
        async with SafeClient(HttpLimits(UA, allowed_networks=ALLOWED, proxy_url=wrong)) as client:
            with pytest.raises(ProxyError, match="proxy error: "):
                await client.get(partner_site.url("/page"))
    assert answer.status == 200 and answer.body == b"through socks"
    assert socks.asked == [f"127.0.0.2:{partner_site.port}"]  # the refused login: not asked
    assert local_site.requests == []


async def test_a_poll_goes_through_its_sources_proxy(
    db: Database, partner_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_PROXY_PASSWORD", LOGIN[1])
    partner_site.serve(
        "/feed.xml", rss(partner_site.url("/p/1")), content_type="application/rss+xml"
    )
    sources = SourceRepository(db)
    async with running_proxy(LOGIN) as proxy:
        source = await sources.create(
            parse_config(
                {
                    "name": "proxied",
                    "feed_url": partner_site.url("/feed.xml"),
                    "proxy": {
                        "url": proxy.url,
                        "username": "crawler",
                        "password_env": "TEST_PROXY_PASSWORD",
                    },
                }
            )
        )
        policy = PollPolicy(concurrency=2, per_host=2, lease_s=60)
        async with SafeClient(HttpLimits(UA, allowed_networks=ALLOWED)) as client:
            (summary,) = await Poller(db, client, policy).run_once(now=T0)
        assert summary.ok and summary.items_new == 1, summary.error
        assert [a.target for a in proxy.asked] == [partner_site.url("/feed.xml")]

        # Its proxy gone: a proxy error, the next poll in a minute, the source's errors
        # not counted.
        dead = {"proxy": {"url": f"http://127.0.0.1:{closed_port()}"}}
        await sources.update(source.id, parse_patch(dead))
        later = T0 + timedelta(hours=2)
        async with SafeClient(HttpLimits(UA, allowed_networks=ALLOWED)) as client:
            (summary,) = await Poller(db, client, policy).run_once(now=later)
    assert not summary.ok and summary.error and "proxy error" in summary.error
    state = await db.fetchrow(
        "SELECT consecutive_errors, next_poll_at FROM feed_state f JOIN sources s "
        "ON s.id = f.source_id WHERE s.name = 'proxied'"
    )
    assert state is not None and state["consecutive_errors"] == 0
    assert state["next_poll_at"] == later + timedelta(seconds=PROXY_RETRY_S)
    assert len(partner_site.hits("/feed.xml")) == 1


async def test_the_spider_crawls_through_the_proxy(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite, partner_site: LocalSite
) -> None:
    sources = SourceRepository(db)
    for name, site, base in (
        ("crawled", partner_site, partner_site.url("/")),
        ("internal", local_site, f"http://localhost:{local_site.port}/"),  # 127.0.0.1, ::1
    ):
        site.serve("/robots.txt", "", status=404)
        site.serve("/", f'<html><body><a href="/2024/01/01/{name}">story</a></body></html>')
        site.serve(f"/2024/01/01/{name}", article(name))
        await sources.add(
            name,
            base_url=base,
            mode=IngestionMode.SPIDER,
            rate_limit_ms=0,
            article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
        )
    async with running_proxy(LOGIN) as proxy:
        guarded = settings.model_copy(
            update={
                "allow_private_networks": False,
                "allowed_networks": ",".join(ALLOWED),
                # by name: the resolver lets the proxy's name through, not as a target
                "proxy_url": with_login(proxy).replace("127.0.0.1", "localhost"),
            }
        )
        crawled = await crawl_in_child(job_for(guarded, fresh_dsn, "crawled"))
        refused = await crawl_in_child(job_for(guarded, fresh_dsn, "internal"))

    assert crawled.exit_code == 0, crawled.summary
    assert crawled.summary.pages_crawled == 1 and crawled.summary.articles_found == 1
    assert [a.target for a in proxy.asked] == [
        partner_site.url("/robots.txt"),
        partner_site.url("/"),
    ]
    assert [seen.path for seen in partner_site.requests] == ["/robots.txt", "/"]
    assert all("Proxy-Authorization" not in seen.headers for seen in partner_site.requests)
    # The private target: refused before the proxy is asked, robots.txt included.
    assert refused.summary.blocked >= 1 and refused.summary.pages_crawled == 0
    assert local_site.requests == []


async def test_the_spider_refuses_a_socks_proxy(db: Database, settings: Settings) -> None:
    await SourceRepository(db).create(
        parse_config(
            {
                "name": "socks",
                "base_url": "http://news.example/",
                "ingestion_mode": "spider",
                "proxy": {"url": "socks5://127.0.0.1:1080"},
            }
        )
    )
    with pytest.raises(SpiderConfigError, match="is a SOCKS proxy, which the spider"):
        await load_plan(db, settings, "socks")
    with pytest.raises(SpiderConfigError, match="FRONTIER_PROXY_URL: socks5h://"):
        await SourceRepository(db).update(
            (await SourceRepository(db).get("socks")).id, parse_patch({"proxy": None})
        )
        socks = settings.model_copy(update={"proxy_url": "socks5h://127.0.0.1:1080"})
        await load_plan(db, socks, "socks")
