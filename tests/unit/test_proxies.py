"""The proxy rules without a network (frontier.proxies, the source schema's `proxy`, the
client's reading of a proxy's answers): what a proxy URL may be, that a password is never
taken in clear nor echoed, which requests a source's proxy carries, and which failures are
the proxy's."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from multidict import CIMultiDict

from frontier.proxies import InvalidProxy, Proxy, proxy_of, route_of
from frontier.safe_http.client import SafeClient, proxy_failure, refuse_proxy_answer
from frontier.safe_http.errors import FetchFailed, ProxyError
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings, SettingsError
from frontier.source_credentials import CredentialsUnavailable
from frontier.source_schema import InvalidSource, parse_config

PROXY = Proxy.parse("http://127.0.0.1:3128")


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("http://Proxy.Example:3128/", "http://proxy.example:3128"),
        ("https://proxy.example", "https://proxy.example:443"),
        ("socks5://proxy.example", "socks5://proxy.example:1080"),
        ("socks5h://[fd00::1]:9050", "socks5h://[fd00::1]:9050"),
    ],
)
def test_a_proxy_url_is_read_with_its_default_port(text: str, label: str) -> None:
    assert Proxy.parse(text).label() == label


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("ftp://proxy.example", "is not a proxy's"),
        ("proxy.example:3128", "is not a proxy's"),
        ("http://", "needs a host"),
        ("http://proxy.example/path", "without a path"),
        ("http://u:s3cr3t@proxy.example:99999", "in its host or port"),
    ],
)
def test_an_unusable_proxy_url_is_refused_without_its_password(text: str, problem: str) -> None:
    with pytest.raises(InvalidProxy, match=problem) as caught:
        Proxy.parse(text)
    assert "s3cr3t" not in str(caught.value)


def test_credentials_in_the_url_are_decoded_and_never_printed() -> None:
    proxy = Proxy.parse("http://us%40r:p%3As@proxy.example:3128")
    assert (proxy.username, proxy.password) == ("us@r", "p:s")
    assert "p:s" not in repr(proxy) and "p:s" not in proxy.label()
    assert str(proxy.aiohttp_url()) == "http://us%40r:p%3As@proxy.example:3128"


def test_the_setting_refuses_a_bad_proxy_url_without_echoing_it() -> None:
    with pytest.raises(SettingsError, match="FRONTIER_PROXY_URL") as caught:
        Settings.load(proxy_url="ftp://u:s3cr3t@proxy.example", _env_file=None)
    assert "s3cr3t" not in str(caught.value)
    assert Settings.load(proxy_url="", _env_file=None).proxy_url is None


def test_the_proxy_password_may_come_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "proxy-password"
    secret.write_text("s3cr3t\n")
    settings = Settings.load(
        proxy_url="http://crawler@proxy.example:3128", proxy_password_file=secret, _env_file=None
    )
    limits = HttpLimits.from_settings(settings)
    assert "s3cr3t" not in repr(limits)
    proxy = SafeClient(limits).default_proxy
    assert proxy is not None and (proxy.username, proxy.password) == ("crawler", "s3cr3t")
    for url in ("http://proxy.example:3128", "http://crawler:other@proxy.example:3128", ""):
        with pytest.raises(SettingsError, match="FRONTIER_PROXY_PASSWORD_FILE"):
            Settings.load(proxy_url=url, proxy_password_file=secret, _env_file=None)
    gone = Settings.load(
        proxy_url="http://crawler@p.example", proxy_password_file=tmp_path / "gone", _env_file=None
    )
    with pytest.raises(CredentialsUnavailable, match="FRONTIER_PROXY_PASSWORD_FILE: cannot read"):
        HttpLimits.from_settings(gone)


@pytest.mark.parametrize(
    ("proxy", "problem"),
    [
        ({"url": "http://u:s3cr3t@p.example"}, "never stored in clear: give username and"),
        ({"url": "http://u@p.example"}, "give the user name as username"),
        ({"url": "gopher://p.example"}, "is not a proxy's"),
        ({"url": "http://p.example", "password_env": "PW"}, "needs a username"),
        (
            {
                "url": "http://p.example",
                "username": "u",
                "password_env": "A",
                "password_file": "/b",
            },
            "not both",
        ),
        ({"url": "http://p.example", "password": "s3cr3t"}, "Extra inputs"),
        ({"direct": True, "url": "http://p.example"}, "direct: true takes no url"),
        ({"username": "u"}, "give its url"),
        ({"direct": "yes"}, "valid boolean"),
    ],
)
def test_a_sources_proxy_takes_its_password_by_reference_only(
    proxy: dict[str, str], problem: str
) -> None:
    with pytest.raises(InvalidSource, match=problem) as caught:
        parse_config({"name": "s", "feed_url": "http://news.example/feed", "proxy": proxy})
    assert "s3cr3t" not in str(caught.value)


def test_a_sources_proxy_carries_the_requests_to_its_own_hosts() -> None:
    spec = {"url": "socks5://p.example", "username": "u", "password_env": "PW"}
    urls = ["https://News.Example/feed.xml", None, "http://cdn.example:8080/sitemap.xml"]
    route = route_of(spec, urls, environ={"PW": "s3cr3t"})
    assert route is not None and route.proxy is not None and route.proxy.password == "s3cr3t"
    own = route.proxy
    assert proxy_of(route, "http://news.example/a", PROXY) is own  # any scheme, any port
    assert proxy_of(route, "https://cdn.example/b", None) is own
    assert proxy_of(route, "https://www.news.example/c", PROXY) is PROXY  # not a subdomain
    assert proxy_of(None, "http://news.example/a", PROXY) is PROXY  # a source without one
    direct = route_of({"direct": True}, urls)
    assert proxy_of(direct, "http://news.example/a", PROXY) is None  # its hosts: direct
    assert proxy_of(direct, "http://elsewhere.example/", PROXY) is PROXY
    with pytest.raises(CredentialsUnavailable, match=r"proxy\.password: the variable PW"):
        route_of(spec, urls, environ={})
    assert route_of(None, urls) is None


def test_only_the_proxys_own_answers_are_proxy_errors() -> None:
    def answer(status: int, proxy_status: str | None = None) -> None:
        headers = CIMultiDict({"Proxy-Status": proxy_status} if proxy_status else {})
        refuse_proxy_answer(status, headers, PROXY, "http://news.example/")

    with pytest.raises(ProxyError, match="answered 407"):
        answer(407)
    with pytest.raises(ProxyError, match="proxy_internal_error"):
        answer(502, 'cdn; error=destination_unavailable, "edge"; error=proxy_internal_error')
    answer(502)  # a gateway's: the target's as far as anyone can tell
    answer(502, "edge; error=destination_unavailable")  # the destination's
    answer(503, "edge; error=connection_refused")
    answer(200)


def test_a_refused_tunnel_is_a_proxy_error() -> None:
    info = aiohttp.RequestInfo(
        aiohttp.client.URL("https://news.example/"), "GET", CIMultiDict(), None
    )
    refused = aiohttp.ClientHttpProxyError(info, (), status=502, message="Bad Gateway")
    failure = proxy_failure(refused, PROXY, "https://news.example/")
    assert isinstance(failure, ProxyError) and "refused the tunnel: 502" in str(failure)
    assert proxy_failure(refused, None, "https://news.example/") is None
    unreachable = aiohttp.ClientHttpProxyError(
        info,
        (),
        status=502,
        message="Bad Gateway",
        headers=CIMultiDict({"Proxy-Status": "squid; error=destination_unavailable"}),
    )
    failure = proxy_failure(unreachable, PROXY, "https://news.example/")
    assert type(failure) is FetchFailed and "could not reach the target" in str(failure)
    assert proxy_failure(TimeoutError(), PROXY, "https://news.example/") is None
