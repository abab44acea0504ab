"""A source's credentials resolved (frontier.source_credentials): to which URLs they go
(the origins of the source's URLs: not another host, port or scheme), how references are
read, and that nothing prints a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontier.source_credentials import CredentialsUnavailable, credentials_of

SOURCE_URLS = ("https://wiki.example/", "https://feeds.example:8443/wiki.xml", None)
ENV = {"WIKI_TOKEN": "t0ken-value"}


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("https://wiki.example/a/page?x=1", True),
        ("https://WIKI.example./b", True),  # the same host, spelt otherwise
        ("https://wiki.example:443/c", True),  # the default port, explicit
        ("https://feeds.example:8443/other.xml", True),
        ("http://wiki.example/a", False),  # https to http: the secret would go in clear
        ("https://wiki.example:8443/a", False),  # another port
        ("https://www.wiki.example/a", False),  # a subdomain is another host
        ("https://feeds.example/wiki.xml", False),  # 443, not the source's 8443
        ("https://evil.example/?u=https://wiki.example/", False),
        ("not a url", False),
    ],
)
def test_they_go_to_the_origins_of_the_sources_urls_only(url: str, sent: bool) -> None:
    credentials = credentials_of({"token_env": "WIKI_TOKEN"}, SOURCE_URLS, environ=ENV)
    assert credentials is not None
    expected = {"Authorization": "Bearer t0ken-value"} if sent else {}
    assert credentials.headers_for(url) == expected


def test_references_are_read_from_the_environment_and_files(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("pa:ss\n")
    (tmp_path / "cookie").write_text("abc\r\n")
    access = {
        "username": "alice",
        "password_file": str(tmp_path / "password"),
        "headers": {"X-Tenant": "newsroom", "X-Api-Key": {"env": "WIKI_TOKEN"}},
        "cookies": {"s": {"file": str(tmp_path / "cookie")}, "t": {"env": "WIKI_TOKEN"}},
    }
    credentials = credentials_of(access, SOURCE_URLS, environ=ENV)
    assert credentials is not None
    assert credentials.headers_for("https://wiki.example/") == {
        "Authorization": "Basic YWxpY2U6cGE6c3M=",  # alice:pa:ss
        "X-Tenant": "newsroom",
        "X-Api-Key": "t0ken-value",
        "Cookie": "s=abc; t=t0ken-value",
    }
    assert "t0ken-value" not in repr(credentials) and "abc" not in repr(credentials)
    assert credentials.names() == {"authorization", "x-tenant", "x-api-key", "cookie"}


@pytest.mark.parametrize(
    ("access", "said"),
    [
        ({"token_env": "UNSET_TOKEN"}, "token: the variable UNSET_TOKEN is not set"),
        ({"token_file": "/nonexistent/token"}, "token: cannot read /nonexistent/token"),
        ({"cookies": {"s": {"env": "BROKEN"}}}, "cookies.s: the variable BROKEN holds a line"),
    ],
)
def test_an_unreadable_or_unusable_secret_is_refused_naming_its_reference(
    access: dict[str, object], said: str
) -> None:
    with pytest.raises(CredentialsUnavailable) as caught:
        credentials_of(access, SOURCE_URLS, environ={"BROKEN": "a\r\nX-Injected: 1"})
    assert said in str(caught.value) and "Injected" not in str(caught.value)


def test_no_access_is_no_credentials() -> None:
    assert credentials_of(None, SOURCE_URLS) is None
    assert credentials_of({}, SOURCE_URLS) is None
