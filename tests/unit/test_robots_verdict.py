"""One robots.txt verdict (issue 34, item 2): a table of robots.txt answers asked of the
fetcher's path and of the spider's path, which must give the same verdict, the expected
one.

- The fetcher's path is `fetcher.robots_step`'s: the answer `interpret`ed in a parse
  process into what host_state stores, the stored state's rules built in a parse process
  (`RobotsRules.of`) and matched with the product token of the user agent; a host whose
  robots.txt is unavailable for now (`disallow_all`) has none of its pages fetched.
- The spider's path is Scrapy's robots.txt flow with the crawl's own settings
  (`spider.crawl_settings`): `FrontierRobotsMiddleware` given the answer (or, for no
  answer, the download's error), and its `process_request_2` asked for the page with the
  crawl's ROBOTSTXT_USER_AGENT, as Scrapy asks it.

The user agent has a version and a comment naming other crawlers ("bot", "example"):
rules are matched with its product token alone. Robots files come from the vendored
corpus (tests/corpus/robots/, see its MANIFEST.tsv) or are made here for one rule each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from uuid import uuid4

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from fetcher.robots_step import ROBOTS_MAX_BYTES
from frontier import robots
from frontier.parse_pool import ParsePool
from frontier.queue_values import SourceRef
from frontier.robots_directives import product_token
from frontier.settings import Settings
from frontier.states import RobotsStatus
from spider import robots as spider_robots
from spider.crawl_settings import scrapy_settings
from spider.plan import CrawlLimits, CrawlPlan
from tests.corpus_path import CORPUS
from tests.unit.test_spider_links import CLASSIFIER

UA = "frontier-test/1.0 (+http://example.org/bot)"
HOST = "robots.example"
CRAWLER_COMMONS = CORPUS / "robots" / "crawler-commons"
PROTEGO_REAL = CORPUS / "robots" / "protego-real"
_FILLER = b"# " + b"x" * 97 + b"\n"


@dataclass(frozen=True)
class Case:
    name: str
    status: int | None  # None: no answer (a network error)
    body: bytes
    path: str
    allowed: bool


def _corpus(path: str, *, under: str = "crawler-commons") -> bytes:
    return (CORPUS / "robots" / under / path).read_bytes()


CASES = [
    # from the corpus
    Case("utf-8 BOM, * group", 200, _corpus("robots-with-utf8-bom.txt"), "/login.aspx", False),
    Case("utf-8 BOM, a page left open", 200, _corpus("robots-with-utf8-bom.txt"), "/news", True),
    Case(
        "utf-16 BOM: no rule readable",
        200,
        _corpus("robots-with-utf16le-bom.txt"),
        "/login.aspx",
        True,
    ),
    Case(
        "wikipedia (BOM), * disallows /w/",
        200,
        _corpus("en.wikipedia.org.txt", under="protego-real"),
        "/w/index.php?title=X",
        False,
    ),
    Case(
        "wikipedia (BOM), an article",
        200,
        _corpus("en.wikipedia.org.txt", under="protego-real"),
        "/wiki/Robots_exclusion_standard",
        True,
    ),
    Case(
        "many versioned agents, * group", 200, _corpus("many-user-agents.txt"), "/bot-trap/", False
    ),
    Case("many versioned agents, open", 200, _corpus("many-user-agents.txt"), "/about", True),
    Case(
        "RFC 9309 example, *.gif$",
        200,
        _corpus("rfc9309-example-simple-robots.txt"),
        "/a.gif",
        False,
    ),
    Case(
        "RFC 9309 example, allowed",
        200,
        _corpus("rfc9309-example-simple-robots.txt"),
        "/publications/a.html",
        True,
    ),
    Case("wildcards", 200, _corpus("wildcards.txt"), "/gp/cart", False),
    # made for one rule each
    Case("NUL inside a rule", 200, b"User-agent: *\nDisallow: /pri\x00vate\n", "/private", False),
    Case("truncated BOM", 200, b"\xef\xbbUser-agent: *\nDisallow: /x\n", "/x/1", False),
    Case(
        "our agent's comment names another group",
        200,
        b"User-agent: bot\nDisallow: /\n\nUser-agent: example\nDisallow: /\n\n"
        b"User-agent: *\nAllow: /\n",
        "/a",
        True,
    ),
    Case(
        "a User-agent line with a version",
        200,
        b"User-agent: frontier-test/2.0 (+http://x)\nDisallow: /mine\n\nUser-agent: *\nAllow: /\n",
        "/mine/1",
        False,
    ),
    Case(
        "our group wins over *",
        200,
        b"User-agent: *\nDisallow: /\n\nUser-agent: Frontier-Test\nAllow: /\n",
        "/a",
        True,
    ),
    Case(
        "oversize: a rule within the cap",
        200,
        b"User-agent: *\n" + _FILLER * 4800 + b"Disallow: /late\n" + _FILLER * 2000,
        "/late",
        False,
    ),
    Case(
        "oversize: a rule past the cap is not read",
        200,
        b"User-agent: *\n" + _FILLER * 5400 + b"Disallow: /late\n",
        "/late",
        True,
    ),
    Case(
        "many rules: unavailable for now",
        200,
        b"User-agent: *\n"
        + b"".join(b"Disallow: /r%d/*x$\n" % i for i in range(robots.MAX_GROUP_RULES + 5)),
        "/open",
        False,
    ),
    Case("empty 2xx", 200, b"", "/a", True),
    Case("404: unavailable, allow all", 404, b"User-agent: *\nDisallow: /\n", "/a", True),
    Case("403: unavailable, allow all", 403, b"", "/a", True),
    Case("500: unreachable, disallow all", 500, b"User-agent: *\nAllow: /\n", "/a", False),
    Case("503: unreachable, disallow all", 503, b"", "/a", False),
    Case("no answer: disallow all", None, b"", "/a", False),
]


def test_the_table_says_what_it_means() -> None:
    over = next(c for c in CASES if c.name == "oversize: a rule past the cap is not read")
    assert over.body.index(b"Disallow") > ROBOTS_MAX_BYTES
    within = next(c for c in CASES if c.name == "oversize: a rule within the cap")
    assert within.body.index(b"Disallow") < ROBOTS_MAX_BYTES < len(within.body)
    assert _corpus("robots-with-utf8-bom.txt").startswith(b"\xef\xbb\xbf")
    assert _corpus("en.wikipedia.org.txt", under="protego-real").startswith(b"\xef\xbb\xbf")
    assert b"User-agent: BackDoorBot/1.0" in _corpus("many-user-agents.txt")


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[ParsePool]:
    async with ParsePool() as parse_pool:
        yield parse_pool


async def fetcher_allows(pool: ParsePool, case: Case) -> bool:
    """As `RobotsStep` decides a page: the answer stored, then its rules matched."""
    token = product_token(UA)
    read = partial(
        robots.interpret,
        HOST,
        token=token,
        http_status=case.status,
        body=case.body[: robots.ROBOTS_MAX_BYTES],  # the client reads no more
        error=None if case.status else "connection refused",
        max_crawl_delay_ms=30_000,
    )
    record = await pool.run(read)
    if record.status is RobotsStatus.DISALLOW_ALL:
        return False  # the page waits: robots.txt unavailable for now
    rules = await pool.run(robots.RobotsRules.of, record.status, record.robots_txt, token)
    return rules.status is not RobotsStatus.DISALLOW_ALL and rules.allows(
        f"http://{HOST}{case.path}", token
    )


def crawl_settings() -> dict[str, object]:
    """The robots.txt settings of a real crawl's Scrapy settings."""
    plan = CrawlPlan(
        source_name="s",
        source_id=uuid4(),
        source=SourceRef(None),
        start_urls=(f"http://{HOST}/",),
        classifier=CLASSIFIER,
        limits=CrawlLimits(10, 2, timedelta(hours=24)),
        new_host_delay_ms=0,
        fetchprotection=1,
    )
    settings = Settings.load(user_agent=UA, _env_file=None)
    crawl = scrapy_settings(settings, plan, None, with_pipeline=False)
    return {key: value for key, value in crawl.items() if "ROBOTS" in key or key == "USER_AGENT"}


async def spider_allows(case: Case, monkeypatch: pytest.MonkeyPatch) -> bool:
    """As Scrapy's robots.txt flow decides a page, with the crawl's middleware."""
    # No resolver refused the host (the check would install Twisted's default reactor).
    monkeypatch.setattr(spider_robots, "refused_by_resolver", lambda _host: False)
    crawler = get_crawler(settings_dict=crawl_settings())
    middleware = spider_robots.FrontierRobotsMiddleware(crawler)
    url = f"http://{HOST}{case.path}"
    middleware._parsers[HOST] = Deferred()
    try:
        if case.status is None:
            middleware._robots_error(ConnectionRefusedError("connection refused"), HOST)
        else:
            # the download stops at the cap (`_bytes_received`), so no more comes
            body = case.body[: spider_robots.ROBOTS_DOWNLOAD_CAP]
            answer = Response(f"http://{HOST}/robots.txt", status=case.status, body=body)
            await middleware._parse_robots(answer, HOST, Request(url))
        parser = middleware._parsers[HOST]
        assert not isinstance(parser, Deferred)
        try:
            middleware.process_request_2(parser, Request(url))
        except IgnoreRequest:
            return False
        return True
    finally:
        pool = getattr(middleware, "_pool", None)
        if pool is not None:
            pool.close()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_fetcher_and_spider_give_the_same_verdict(
    case: Case, pool: ParsePool, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdicts = {
        "fetcher": await fetcher_allows(pool, case),
        "spider": await spider_allows(case, monkeypatch),
    }
    assert verdicts == {"fetcher": case.allowed, "spider": case.allowed}


def test_the_spider_parser_is_the_core_verdict() -> None:
    """Scrapy's ROBOTSTXT_PARSER contract: `from_crawler(crawler, body)` then
    `allowed(url, user_agent)` and `crawl_delay(user_agent)`, as the fetcher stores them."""
    settings = crawl_settings()
    assert settings["ROBOTSTXT_PARSER"] == "spider.robots.FrontierRobotParser"
    crawler = get_crawler(settings_dict=settings)
    body = (
        b"User-agent: *\nDisallow: /\n\n"
        b"User-agent: frontier-test/3\nDisallow: /x\nCrawl-delay: 2.5\n"
    )
    parser = spider_robots.FrontierRobotParser.from_crawler(crawler, body)
    assert parser.allowed(f"http://{HOST}/a", UA)
    assert not parser.allowed(f"http://{HOST}/x/1", UA.encode())
    assert parser.crawl_delay(UA) == 2.5
    stored = robots.interpret(
        HOST,
        token=product_token(UA),
        http_status=200,
        body=body,
        error=None,
        max_crawl_delay_ms=30_000,
    )
    assert stored.crawl_delay_ms == 2500
    # another crawler's question gets no rules of ours: refused, not answered wrongly
    assert not parser.allowed(f"http://{HOST}/a", "otherbot/1.0")


def test_one_size_cap() -> None:
    assert spider_robots.ROBOTS_MAX_BYTES is robots.ROBOTS_MAX_BYTES
    assert ROBOTS_MAX_BYTES is robots.ROBOTS_MAX_BYTES
