"""Is this the article? (fetcher.verdict, frontier.robots_directives, fetcher.decisions):
challenges whatever their status and vendor, login walls reached by redirect, robots rules
as Google reads them, soft 404s and empty pages; and no article of the corpus flagged."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from fetcher.decisions import Action, decide
from fetcher.extract_job import extract_page
from fetcher.verdict import login_wall
from frontier.queue_values import OutcomeKind
from frontier.robots_directives import header_directives, meta_directives, names_for
from tests.corpus_path import CORPUS
from tests.fetch_harness import article
from tests.zoo import walls

NAMES = names_for("frontier-crawler/0.1 (+https://example.org/bot)")
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def verdict_of(html: str, meta: dict[str, str] | None = None) -> OutcomeKind | None:
    done = extract_page(html.encode(), "text/html", "https://news.example/a", None, meta, NAMES)
    return done.verdict.kind if done.verdict else None


# -- challenges --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 202, 403, 429, 503])
@pytest.mark.parametrize(
    "headers",
    [{"cf-mitigated": "challenge"}, {"x-amzn-waf-action": "challenge"}],
    ids=["cloudflare", "aws-waf"],
)
def test_a_challenge_header_is_a_challenge_whatever_the_status(
    status: int, headers: dict[str, str]
) -> None:
    decision = decide(status, headers, b"<html><title>x</title></html>")
    assert (decision.action, decision.kind) == (Action.FINISH, OutcomeKind.CHALLENGE)
    assert decision.error is not None and decision.error.startswith(f"HTTP {status}: challenge")


@pytest.mark.parametrize(
    ("body", "vendor"),
    [
        (walls.CLOUDFLARE_CHALLENGE.format(host="news.example"), "Cloudflare"),
        (walls.DATADOME_BLOCK, "DataDome"),
        (walls.IMPERVA_CHALLENGE, "Imperva"),
        (walls.PERIMETERX_BLOCK, "PerimeterX"),
        (walls.SUCURI_CHALLENGE, "Sucuri"),
        (walls.AKAMAI_CRYPTO_CHALLENGE, "Akamai"),
    ],
)
@pytest.mark.parametrize("status", [200, 403, 429, 503])
def test_each_vendors_challenge_page_is_a_challenge(status: int, body: str, vendor: str) -> None:
    if 200 <= status < 300:
        done = extract_page(body.encode(), "text/html", "https://news.example/a", None, None, NAMES)
        assert done.verdict is not None and done.verdict.kind is OutcomeKind.CHALLENGE
        assert vendor in done.verdict.reason
    else:
        decision = decide(status, {}, body.encode())
        assert decision.kind is OutcomeKind.CHALLENGE and vendor in (decision.error or "")


def test_a_generic_interstitial_is_a_challenge_only_on_a_thin_page() -> None:
    thin = "<html><body><noscript>Enable JavaScript and cookies to continue</noscript></body>"
    assert verdict_of(thin + "</html>") is OutcomeKind.CHALLENGE
    quoted = article("Why sites ask you to enable JavaScript").replace(
        "</article>", "<p>Readers saw 'Enable JavaScript and cookies to continue'.</p></article>"
    )
    assert verdict_of(quoted) is None


def test_a_vendor_sensor_on_an_article_is_not_a_challenge() -> None:
    """Cloudflare's JavaScript Detections and PerimeterX's sensor ride on every page."""
    page = article("A story").replace(
        "</body>",
        "<script src='/cdn-cgi/challenge-platform/scripts/jsd/main.js'></script>"
        "<script>window._pxAppId='PXabc';</script></body>",
    )
    assert verdict_of(page) is None


def test_akamais_access_denied_stays_a_refusal() -> None:
    body = walls.AKAMAI_DENIED.format(url="https://news.example/a", n=1).encode()
    assert decide(403, {"Server": "AkamaiGHost"}, body).kind is OutcomeKind.FORBIDDEN


# -- robots rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "noindex"),
    [
        (["noindex"], True),
        (["none"], True),
        (["NoIndex, nofollow"], True),
        (["frontier-crawler: noindex"], True),
        (["otherbot: noindex, nofollow"], False),
        (["googlebot: noindex", "nosnippet"], False),
        (["max-snippet: 20, noindex"], True),
        (["unavailable_after: 25 Jun 2010 15:00:00 GMT"], True),
        (["unavailable_after: 2099-01-01T00:00:00Z"], False),
        (["index, follow"], False),
    ],
)
def test_x_robots_tag_as_google_reads_it(values: list[str], noindex: bool) -> None:
    assert ("noindex" in header_directives(values, NAMES, now=NOW)) is noindex
    headers = CIMultiDict([("X-Robots-Tag", v) for v in values])
    decision = decide(200, CIMultiDictProxy(headers), b"<html></html>", NOW, NAMES)
    assert (decision.kind is OutcomeKind.NOINDEX) is noindex


def test_meta_robots_for_everyone_and_for_us_only() -> None:
    metas = [("ROBOTS", "index"), ("Frontier-Crawler", "NOINDEX"), ("googlebot", "nofollow")]
    assert meta_directives(metas, NAMES) == {"index", "noindex"}
    assert meta_directives([("robots", "none")], NAMES) == {"noindex", "nofollow"}
    assert meta_directives([("googlebot", "noindex")], NAMES) == frozenset()
    page = article("Hidden").replace("<head>", "<head><meta name='robots' content='noindex'>")
    done = extract_page(page.encode(), "text/html", "https://news.example/a", None, None, NAMES)
    assert "noindex" in done.robots and done.verdict is None


# -- soft 404s and empty pages -------------------------------------------------------------

WORDPRESS_404 = """<!doctype html><html><head><title>Page not found &#8211; Daily News</title>
</head><body class="error404 hfeed"><main><h1 class="page-title">Oops! That page can&rsquo;t
be found.</h1><p>It looks like nothing was found at this location. Maybe try a search?</p>
</main></body></html>"""


@pytest.mark.parametrize(
    "page",
    [
        WORDPRESS_404,
        "<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>",
        "<html><head><title>Nothing Found | Blog</title></head><body><p>Sorry.</p></body></html>",
        "<html><head><title>Seite nicht gefunden</title></head><body>Zur Startseite</body></html>",
        '<html id="__next_error__"><head></head><body><h2>This page could not be found.</h2>'
        "</body></html>",
    ],
)
def test_a_200_that_says_not_found_is_a_soft_404(page: str) -> None:
    assert verdict_of(page) is OutcomeKind.SOFT_404


def test_an_article_about_not_found_is_an_article() -> None:
    page = article("404 Not Found: how a status code shaped the web")
    assert verdict_of(page) is None
    short = "<html><head><title>Not found: the lost city</title></head><body><p>Short.</p>"
    assert verdict_of(short + "</body></html>", {"summary": "A feed summary."}) is None


def test_a_page_with_no_text_is_empty_unless_the_feed_says_something() -> None:
    blank = "<html><head><title>Story</title></head><body><div id='app'></div></body></html>"
    assert verdict_of(blank) is OutcomeKind.EMPTY
    assert verdict_of(blank, {"summary": "What the feed said."}) is None


def test_no_article_of_the_corpus_is_flagged() -> None:
    pages = sorted((CORPUS / "articles").rglob("*.html*"))
    assert len(pages) > 40
    for path in pages:
        data = path.read_bytes()
        body = gzip.decompress(data) if path.suffix == ".gz" else data
        done = extract_page(body, None, f"https://example.org/{path.stem}", None, None, NAMES)
        assert done.verdict is None and "noindex" not in done.robots, path


# -- login walls ---------------------------------------------------------------------------

ARTICLE_URL = "https://news.example/2026/11/27/the-scoop"


@pytest.mark.parametrize(
    "target",
    [
        "https://news.example/login?redirect_to=%2F2026%2F11%2F27%2Fthe-scoop",
        "https://news.example/wp-login.php?redirect_to=https%3A%2F%2Fnews.example%2F2026",
        "https://news.example/subscribe",
        "https://accounts.news.example/account/signin",
        "https://news.example/?return_to=/2026/11/27/the-scoop",
    ],
)
def test_a_redirect_to_a_login_page_is_a_login_wall(target: str) -> None:
    assert login_wall(target, ARTICLE_URL) is not None


@pytest.mark.parametrize(
    "target",
    [
        "https://news.example/2026/11/27/the-scoop-updated",
        "https://www.news.example/2026/11/27/the-scoop",
        "https://consent.news.example/?continue=https://news.example/2026/11/27/the-scoop",
        "https://news.example/news/login-day-for-voters",
    ],
)
def test_an_ordinary_redirect_is_not(target: str) -> None:
    assert login_wall(target, ARTICLE_URL) is None
