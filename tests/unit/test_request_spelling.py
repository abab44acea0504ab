"""`request_spelling` and `same_identity`: the spelling to request apart from the identity
(docs/fetching.md "Identity and request spelling")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frontier.urls import InvalidURL, normalize_url, request_spelling, same_identity


@pytest.mark.parametrize(
    ("url", "base", "spelling"),
    [
        ("https://ex.com/2026/01/story/", None, "https://ex.com/2026/01/story/"),
        ("https://ex.com/a/#comments", None, "https://ex.com/a/"),
        ("https://ex.com/a?utm_source=x&b=2&a=1", None, "https://ex.com/a?utm_source=x&b=2&a=1"),
        ("https://ex.com/%7Euser/", None, "https://ex.com/%7Euser/"),  # no decoding
        ("https://ex.com/a?", None, "https://ex.com/a?"),
        ("https://ex.com", None, "https://ex.com/"),
        ("/news/x/", "https://ex.com/feed/", "https://ex.com/news/x/"),
        ("x/", "https://ex.com/feed/", "https://ex.com/feed/x/"),
        ("//cdn.ex.com/a/", "https://ex.com/", "https://cdn.ex.com/a/"),
        ("  https://ex.com/a/\n", None, "https://ex.com/a/"),
        # the authority is the normalised one: case, default port, no credentials
        ("HTTPS://User:pw@Ex.COM:443/A/", None, "https://ex.com/A/"),
        ("https://ex.com/a/b/../c/", None, "https://ex.com/a/c/"),
        ("https://ex.com/café/?q=a b", None, "https://ex.com/caf%C3%A9/?q=a%20b"),
        ("http://[::1]:8080/a/", None, "http://[::1]:8080/a/"),
        ("http:/x/a/", None, "http://x/a/"),  # too odd to send as written: normalised
    ],
)
def test_the_spelling_keeps_path_and_query_as_written(
    url: str, base: str | None, spelling: str
) -> None:
    assert request_spelling(url, base) == spelling


@pytest.mark.parametrize("url", ["ftp://ex.com/a", "/relative", "https://", "http://ex.com/a\x00b"])
def test_what_normalisation_refuses_has_no_spelling(url: str) -> None:
    with pytest.raises(InvalidURL):
        request_spelling(url)


@given(st.text(max_size=60))
def test_a_spelling_is_one_spelling_of_its_identity(path: str) -> None:
    url = "https://ex.com/" + path
    try:
        spelling = request_spelling(url)
    except InvalidURL:
        return
    assert normalize_url(spelling) == normalize_url(url)
    assert "#" not in spelling and spelling.isascii()


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("https://ex.com/a", "https://ex.com/a/", True),
        ("https://ex.com/a/", "https://EX.com/a?utm_source=rss", True),
        ("https://ex.com/a?b=1&a=2", "https://ex.com/a?a=2&b=1", True),
        ("https://ex.com/a", "https://ex.com/a#top", True),
        ("https://ex.com/a", "https://ex.com/b", False),
        ("http://ex.com/a", "https://ex.com/a", False),
        ("https://ex.com/a", "https://www.ex.com/a", False),
        ("https://ex.com/a?id=1", "https://ex.com/a?id=2", False),
        ("https://ex.com/a", "not a url", False),
    ],
)
def test_same_identity(a: str, b: str, same: bool) -> None:
    assert same_identity(a, b) is same
