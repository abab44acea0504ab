"""`ChainCookies`: the cookies of one fetch chain, never sent where a browser would not."""

from __future__ import annotations

from frontier.chain_cookies import ChainCookies


async def test_a_chain_sends_its_cookies_back_to_their_host_only() -> None:
    jar = ChainCookies()
    assert jar.header("http://127.0.0.2:8000/a") is None
    jar.update(
        "http://127.0.0.2:8000/a/",
        [
            "consent=yes; Path=/; Max-Age=3600",
            "x=1; Domain=evil.example",  # another host's domain: refused
            "gone=1; Max-Age=0",  # expired at once
            "deep=2; Path=/private",
            "not a cookie at all ;;; =",
        ],
    )
    assert jar.header("http://127.0.0.2:8000/b") == "consent=yes"
    assert jar.header("http://127.0.0.2:8000/private/x") == "consent=yes; deep=2"
    assert jar.header("http://127.0.0.3:8000/b") is None


async def test_domain_and_secure_cookies_follow_the_rules() -> None:
    jar = ChainCookies()
    jar.update("https://www.news.example/a", ["sid=abc; Domain=news.example; Secure"])
    assert jar.header("https://news.example/x") == "sid=abc"
    assert jar.header("https://m.news.example/x") == "sid=abc"
    assert jar.header("http://news.example/x") is None  # Secure: https only
    assert jar.header("https://othernews.example/") is None


async def test_two_chains_share_nothing() -> None:
    first, second = ChainCookies(), ChainCookies()
    first.update("https://news.example/a", ["consent=yes; Path=/"])
    assert len(first) == 1 and len(second) == 0
    assert second.header("https://news.example/a") is None


async def test_a_domain_that_is_a_public_suffix_is_refused() -> None:
    """aiohttp's jar alone took `Domain=co.uk` from any host under it, and sent the cookie
    to every other site there (issue 35)."""
    jar = ChainCookies()
    jar.update(
        "https://shop.example.co.uk/a",
        ["wide=1; Domain=co.uk", "dotted=1; Domain=.CO.UK", "own=1; Domain=example.co.uk"],
    )
    jar.update("https://me.github.io/a", ["pages=1; Domain=github.io"])
    assert jar.header("https://other.co.uk/") is None
    assert jar.header("https://you.github.io/") is None
    assert jar.header("https://www.example.co.uk/") == "own=1"
    assert len(jar) == 1


async def test_a_public_suffix_host_keeps_its_own_cookie_host_only() -> None:
    jar = ChainCookies()
    jar.update("https://github.io/a", ["sid=1; Domain=github.io"])
    assert jar.header("https://github.io/b") == "sid=1"
    assert jar.header("https://me.github.io/b") is None
