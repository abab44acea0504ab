"""The politeness key of a host in each mode (frontier.politeness_key)."""

from __future__ import annotations

import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from frontier.politeness_key import KeyFinder, KeyMode, domain_key


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("a.b.blogspot.com", "b.blogspot.com"),  # blogspot.com is a (private) public suffix
        ("b.blogspot.com", "b.blogspot.com"),
        ("news.example.co.uk", "example.co.uk"),
        ("example.co.uk", "example.co.uk"),
        ("www.example.com:8080", "example.com"),  # the port is not the server's name
        ("alice.substack.com", "substack.com"),
        ("127.0.0.1:8080", None),  # an IP literal is its own key
        ("[::1]:8080", None),
        ("localhost:8080", None),  # under no public suffix: its own key
        ("co.uk", None),  # a public suffix itself
    ],
)
def test_the_domain_key_is_the_registrable_domain(host: str, key: str | None) -> None:
    assert domain_key(host) == key


class Names(AbstractResolver):
    """A resolver answering from a table, counting the lookups."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.lookups: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.lookups.append(host)
        if host not in self.table:
            raise OSError(f"no such name: {host}")
        return [
            ResolveResult(hostname=host, host=a, port=port, family=family, proto=0, flags=0)
            for a in self.table[host]
        ]

    async def close(self) -> None:
        pass


async def test_keys_in_each_mode() -> None:
    names = Names({"a.example": ["2001:db8::1", "192.0.2.7"], "b.example": ["192.0.2.7"]})
    finder = KeyFinder(lambda: names)
    # host: the host's own hold, nothing more
    assert await finder.key("a.example", KeyMode.HOST) is None
    assert await finder.key("x.a.blogspot.com:81", KeyMode.DOMAIN) == "a.blogspot.com"
    # ip: the address (IPv4 first), shared by two names on one server
    assert await finder.key("a.example:8080", KeyMode.IP) == "ip:192.0.2.7"
    assert await finder.key("b.example", KeyMode.IP) == "ip:192.0.2.7"
    assert await finder.key("192.0.2.9:81", KeyMode.IP) == "ip:192.0.2.9"  # a literal
    assert await finder.key("[2001:db8::5]:81", KeyMode.IP) == "ip:2001:db8::5"
    # a name that does not resolve is its own key (its request fails anyway)
    assert await finder.key("gone.example", KeyMode.IP) is None
    # answers are kept: one lookup per name
    assert await finder.key("a.example", KeyMode.IP) == "ip:192.0.2.7"
    assert await finder.key("gone.example", KeyMode.IP) is None
    assert sorted(names.lookups) == ["a.example", "b.example", "gone.example"]
