"""WebSub's pure parts: the X-Hub-Signature check (W3C WebSub section 8) and the discovery
of a feed's hub and topic (section 4: the Link headers first, then the document), on
both feed parsers and JSON Feed."""

from __future__ import annotations

import hashlib
import hmac
from uuid import UUID

import pytest

from frontier.websub import callback_url, new_secret, signature_problem
from poller.feed_fastpath import parse_fast
from poller.feed_parse import parse_feed, parse_with_feedparser

SECRET = "s3cret-s3cret-s3cret-s3cret-s3cret-s3"
BODY = b"<feed>...</feed>"
FEED = "https://news.example/feed.xml"
HUB = "https://hub.example/"


@pytest.mark.parametrize("method", ["sha1", "sha256", "sha384", "sha512"])
def test_each_method_of_the_recommendation_is_checked(method: str) -> None:
    digest = hmac.new(SECRET.encode(), BODY, getattr(hashlib, method)).hexdigest()
    assert signature_problem(f"{method}={digest}", BODY, SECRET) is None
    assert signature_problem(f"{method.upper()}={digest.upper()}", BODY, SECRET) is None
    assert signature_problem(f"{method}={digest}", BODY + b" ", SECRET) == (
        "X-Hub-Signature does not match the body"
    )
    assert signature_problem(f"{method}={digest}", BODY, SECRET + "x") is not None


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (None, "no X-Hub-Signature"),
        ("", "no X-Hub-Signature"),
        ("md5=abc", "unknown X-Hub-Signature method 'md5'"),
        ("sha256", "X-Hub-Signature does not match the body"),
        ("sha256=not-hex", "X-Hub-Signature does not match the body"),
    ],
)
def test_a_missing_or_malformed_signature_says_what_is_wrong(
    header: str | None, problem: str
) -> None:
    assert signature_problem(header, BODY, SECRET) == problem


def test_secrets_are_random_and_callbacks_sit_under_the_public_url() -> None:
    assert new_secret() != new_secret() and len(new_secret()) >= 32
    found = callback_url("https://crawler.example/base/", UUID(int=1))
    assert found == "https://crawler.example/base/websub/00000000-0000-0000-0000-000000000001"


def _atom(links: str) -> bytes:
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        f"<id>urn:t</id>{links}<entry><title>A</title><id>urn:a</id>"
        '<link href="https://news.example/a"/></entry></feed>'
    ).encode()


def _rss(links: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'
        f"<channel><title>T</title>{links}<item><title>A</title>"
        "<link>https://news.example/a</link></item></channel></rss>"
    ).encode()


ATOM_LINKS = f'<link rel="hub" href="{HUB}"/><link rel="self" href="{FEED}"/>'
RSS_LINKS = f'<atom:link rel="hub" href="{HUB}"/><atom:link rel="self" href="{FEED}"/>'


@pytest.mark.parametrize(
    "body", [_atom(ATOM_LINKS), _rss(RSS_LINKS)], ids=["atom", "rss atom:link"]
)
def test_the_hub_and_topic_a_feed_declares_are_found_by_both_parsers(body: bytes) -> None:
    headers = {"content-type": "application/xml", "content-location": "https://news.example/x"}
    fast = parse_fast(body, headers, "https://news.example/x")
    assert fast is not None  # the fast path read it
    parsed = parse_feed(body, {"Content-Type": "application/xml"}, "https://news.example/x")
    slow = parse_with_feedparser(body, headers, "https://news.example/x")
    assert (parsed.hub, parsed.topic) == (slow.hub, slow.topic) == (HUB, FEED)
    assert fast.links == {"hub": HUB, "self": FEED}
    assert [e.url for e in parsed.entries] == ["https://news.example/a"]


def test_the_link_headers_come_before_the_document() -> None:
    headers = {"Link": '<https://hub2.example/>; rel="hub", </feed2>; rel="self"'}
    parsed = parse_feed(_atom(ATOM_LINKS), headers, FEED)
    assert (parsed.hub, parsed.topic) == ("https://hub2.example/", "https://news.example/feed2")


def test_a_hub_without_a_self_link_takes_the_feeds_url_and_no_hub_no_topic() -> None:
    hub_only = parse_feed(_atom(f'<link rel="hub" href="{HUB}"/>'), {}, FEED)
    assert (hub_only.hub, hub_only.topic) == (HUB, FEED)
    plain = parse_feed(_atom(f'<link rel="self" href="{FEED}"/>'), {}, FEED)
    assert (plain.hub, plain.topic) == (None, None)


def test_a_json_feed_declares_its_hub_in_hubs() -> None:
    body = (
        b'{"version": "https://jsonfeed.org/version/1.1", "title": "T",'
        b' "feed_url": "https://news.example/feed.json",'
        b' "hubs": [{"type": "WebSub", "url": "https://hub.example/"}],'
        b' "items": [{"id": "1", "url": "https://news.example/a"}]}'
    )
    parsed = parse_feed(body, {"Content-Type": "application/feed+json"}, FEED)
    assert (parsed.hub, parsed.topic) == (HUB, "https://news.example/feed.json")
