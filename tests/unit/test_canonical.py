"""Which URL keeps an article: the canonical link read from a page and trusted or not
(`fetcher.extract.canonical_href`, `fetcher.canonical`), without I/O."""

from __future__ import annotations

import pytest

from fetcher.canonical import canonical_identity, same_site
from fetcher.extract import canonical_href
from frontier.public_suffix import registrable_domain

PAGE = "https://news.example.co.uk/2026/05/story?share=twitter"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("https://news.example.co.uk/2026/05/story/", "https://news.example.co.uk/2026/05/story"),
        ("/2026/05/story", "https://news.example.co.uk/2026/05/story"),  # relative
        ("https://www.example.co.uk/story", "https://www.example.co.uk/story"),  # same site
        ("https://amp.example.co.uk/x", "https://amp.example.co.uk/x"),
        ("  /2026/05/story#comments ", "https://news.example.co.uk/2026/05/story"),
        (PAGE, None),  # itself
        ("https://news.example.co.uk/2026/05/story?share=twitter#x", None),  # itself
        ("http://news.example.co.uk/2026/05/story", None),  # another scheme
        ("https://news.example.co.uk:8443/2026/05/story", None),  # another port
        ("https://partner.example.com/story", None),  # another site (syndication)
        ("https://other.co.uk/story", None),  # shares only the public suffix
        ("https://[::1", None),  # does not parse
        ("https://www.example.co.uk/", None),  # the home page: a template mistake
        ("/", None),
        ("www.example.co.uk/2026/05/story", None),  # an absolute URL missing its scheme
        ("example.co.uk/2026/05/story", None),
        ("story-2", "https://news.example.co.uk/2026/05/story-2"),  # a real relative path
        ("javascript:void(0)", None),
        ("mailto:desk@example.co.uk", None),
        ("", None),
        (None, None),
    ],
)
def test_canonical_identity(href: str | None, expected: str | None) -> None:
    assert canonical_identity(PAGE, href) == expected


def test_a_source_keeping_trailing_slashes_keeps_them_in_the_canonical() -> None:
    assert canonical_identity("http://blog.example/a/?amp=1", "/a/") == "http://blog.example/a/"
    assert canonical_identity("http://blog.example/a?amp=1", "/a/") == "http://blog.example/a"


def test_same_site_uses_the_public_suffix_list_private_part_too() -> None:
    assert registrable_domain("amp.news.example.co.uk") == "example.co.uk"
    assert registrable_domain("127.0.0.1") is None and registrable_domain("co.uk") is None
    assert not same_site("https://alice.github.io/a", "https://bob.github.io/a")
    assert not same_site("http://127.0.0.1/a", "http://127.0.0.2/a")
    assert same_site("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b")


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<head><link rel='canonical' href='/a'></head>", "/a"),
        ('<head><LINK REL="Canonical" HREF="/a"/></head>', "/a"),
        ("<head><link href=/a rel=canonical></head>", "/a"),
        ("<head><link rel='amphtml' href='/a/amp'><link rel='canonical' href='/a'>", "/a"),
        ("<head><link rel='alternate canonical' href='/b'></head>", "/b"),
        ("<head><link rel=canonical href=/a><link rel=canonical href=/a></head>", "/a"),
        ("<head><link rel=canonical href=/a><link rel=canonical href=/b></head>", None),
        ("<html><head></head><body><link rel='canonical' href='/ugc'></body>", None),
        ("<head><link rel='canonical'></head>", None),
        ("<head><meta property='og:url' content='/a'></head>", None),
        ("", None),
    ],
)
def test_canonical_href(html: str, expected: str | None) -> None:
    assert canonical_href(html) == expected
