"""Link classification, the article heuristic, the recrawl rule, the host delay and the SSRF
downloader middleware: pure, no I/O."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scrapy import Request

from frontier.queue_values import SourceRef
from spider.errors import SpiderConfigError
from spider.links import ArticleRules, KnownSource, LinkClassifier, LinkKind, looks_like_article
from spider.middlewares import BlockedRequest, SsrfGuardMiddleware
from spider.plan import CrawlLimits, CrawlPlan
from spider.state import PageState

PARTNER = KnownSource("partner", SourceRef(uuid4()), ArticleRules.compile([r"/story/"], "p"))
CLASSIFIER = LinkClassifier(
    domain="news.example",
    rules=ArticleRules.compile([r"/\d{4}/\d{2}/"], "news"),
    known={"partner.example": PARTNER},
)


@pytest.mark.parametrize(
    ("href", "kind", "url"),
    [
        (
            "/2024/05/a-story?utm_source=x#c",
            LinkKind.ARTICLE,
            "http://news.example/2024/05/a-story",
        ),
        ("/world/", LinkKind.LISTING, "http://news.example/world"),
        ("http://www.news.example/page/2", LinkKind.LISTING, "http://www.news.example/page/2"),
        (
            "http://sport.news.example/2024/01/x",
            LinkKind.ARTICLE,
            "http://sport.news.example/2024/01/x",
        ),
        (
            "https://www.partner.example/story/1",
            LinkKind.KNOWN_SOURCE,
            "https://www.partner.example/story/1",
        ),
        ("https://partner.example/about", LinkKind.EXTERNAL, "https://partner.example/about"),
        (
            "https://elsewhere.example/2024/05/x",
            LinkKind.EXTERNAL,
            "https://elsewhere.example/2024/05/x",
        ),
        ("/img/logo.PNG", LinkKind.IGNORED, "http://news.example/img/logo.PNG"),
        ("mailto:desk@news.example", LinkKind.IGNORED, "mailto:desk@news.example"),
        ("javascript:void(0)", LinkKind.IGNORED, "javascript:void(0)"),
    ],
)
def test_classify(href: str, kind: LinkKind, url: str) -> None:
    link = CLASSIFIER.classify(href, "http://news.example/")
    assert (link.kind, link.url) == (kind, url)


def test_listing_links_keep_the_href_as_written_for_the_request() -> None:
    link = CLASSIFIER.classify("/members/#top", "http://news.example/")
    assert (link.url, link.href) == ("http://news.example/members", "http://news.example/members/")


def test_known_source_link_carries_its_source() -> None:
    link = CLASSIFIER.classify("http://partner.example/story/9", "http://news.example/")
    assert link.source is PARTNER


@pytest.mark.parametrize(
    ("url", "article"),
    [
        ("http://a.example/2024/05/17/budget-vote", True),
        ("http://a.example/2024/05/budget", True),
        ("http://a.example/20240517-budget", True),
        ("http://a.example/politics/council-approves-the-new-budget", True),
        ("http://a.example/98765-budget", True),
        ("http://a.example/politics", False),
        ("http://a.example/tag/budget-vote-in-the-council", False),
        ("http://a.example/category/2024/05/", False),
        ("http://a.example/news?page=2", False),
        ("http://a.example/", False),
        ("http://a.example/about-us", False),
    ],
)
def test_heuristic(url: str, article: bool) -> None:
    assert looks_like_article(url) is article


# The slug rule as it was written before it was made linear: the reference it must match.
_BACKTRACKING_SLUG = re.compile(r"/[^/]*[a-z0-9]+(?:[-_][a-z0-9]+){3,}[^/]*/?$", re.I)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="aZ1-_/.!", max_size=40))
def test_the_linear_slug_rule_decides_as_the_backtracking_one_did(path: str) -> None:
    url = "http://a.example/" + path.lstrip("/")
    # Dates, ids and listing paths are other rules; compare where only the slug decides.
    assume(not re.search(r"\d|/(?:page|search|feed|rss|tag)", url.split("/", 3)[3]))
    slug = bool(_BACKTRACKING_SLUG.search("/" + url.split("/", 3)[3].split("?")[0]))
    assert looks_like_article(url) is slug


def test_a_hostile_link_costs_linear_time() -> None:
    """Three 10 KB links of `a-a-a-...`: hours of backtracking for the old slug rule (31 s
    for 2.8 KB ones); run in a child with a deadline so a regression fails, not hangs."""
    code = (
        "from spider.links import looks_like_article\n"
        "for end in ('/x', '/', '!'):\n"
        "    assert looks_like_article('http://a.example/' + 'a-' * 5000 + end) in (True, False)\n"
        "print('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "done"


def test_bad_pattern_is_a_config_error_naming_the_source() -> None:
    with pytest.raises(SpiderConfigError, match=r"'news'.*not a valid regular expression"):
        ArticleRules.compile(["(oops"], "news")


def test_unchanged_pages_are_skipped_for_as_long_as_they_stayed_unchanged() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    plan = CrawlPlan(
        source_name="s",
        source_id=uuid4(),
        source=SourceRef(None),
        start_urls=("http://a/",),
        classifier=CLASSIFIER,
        limits=CrawlLimits(10, 2, timedelta(hours=24)),
        new_host_delay_ms=0,
        fetchprotection=2,
    )

    def state(changed_hours_before_check: float) -> PageState:
        changed = t0 - timedelta(hours=changed_hours_before_check)
        return PageState("http://a/x", None, None, "h", (), t0, changed)

    assert plan.skip_until(state(0)) == t0  # changed at its last check: fetch again
    assert plan.skip_until(state(5)) == t0 + timedelta(hours=5)
    assert plan.skip_until(state(500)) == t0 + timedelta(hours=24)  # capped


@pytest.mark.parametrize(
    ("url", "allow", "blocked"),
    [
        ("http://127.0.0.1:8080/", False, True),
        ("http://[::1]/", False, True),
        ("http://169.254.169.254/latest/meta-data", False, True),
        ("http://10.1.2.3/", False, True),
        ("http://8.8.8.8/", False, False),
        ("http://news.example/", False, False),  # a name: the resolver checks it
        ("http://127.0.0.1:8080/", True, False),
        ("ftp://news.example/", True, True),
    ],
)
def test_ssrf_middleware(url: str, allow: bool, blocked: bool) -> None:
    middleware = SsrfGuardMiddleware(allow_private=allow)
    if blocked:
        with pytest.raises(BlockedRequest):
            middleware.process_request(Request(url))
    else:
        assert middleware.process_request(Request(url)) is None
