"""The safe HTTP client against a real server on 127.0.0.1."""

from __future__ import annotations

import gzip
import socket
import subprocess
import sys

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import (
    BlockedAddress,
    BodyTooLarge,
    FetchFailed,
    PolicyBlocked,
    TooManyRedirects,
)
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.ssrf import address_is_public
from tests.local_site import LocalSite
from tests.processes import REPO

UA = "frontier-test/1.0 (+http://example.org/bot)"


@pytest.fixture
async def client() -> SafeClient:
    async with SafeClient(HttpLimits(UA, allow_private_networks=True, max_body_bytes=100_000)) as c:
        yield c


async def test_get_sends_user_agent_and_conditional_headers(
    client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/page", "<p>hi</p>", headers={"ETag": '"v2"'})
    response = await client.get(
        local_site.url("/page"), etag='"v1"', last_modified="Mon, 01 Jan 2026 00:00:00 GMT"
    )
    assert (response.status, response.body, response.headers["ETag"]) == (200, b"<p>hi</p>", '"v2"')
    seen = local_site.hits("/page")[0].headers
    assert seen["User-Agent"] == UA
    assert seen["If-None-Match"] == '"v1"'
    assert seen["If-Modified-Since"] == "Mon, 01 Jan 2026 00:00:00 GMT"
    assert "Referer" in seen and "Accept-Language" in seen


async def test_fetchprotection_levels(client: SafeClient, local_site: LocalSite) -> None:
    local_site.serve("/", "ok")
    await client.get(local_site.url("/"), fetchprotection=1)
    assert "Referer" not in local_site.requests[-1].headers
    with pytest.raises(PolicyBlocked):
        await client.get(local_site.url("/"), fetchprotection=0)
    assert len(local_site.requests) == 1


async def test_redirects_are_followed_to_the_cap(client: SafeClient, local_site: LocalSite) -> None:
    local_site.redirect("/a", "/b", status=301)
    local_site.redirect("/b", "/c", status=308)
    local_site.serve("/c", "final")
    response = await client.get(local_site.url("/a"))
    assert response.url == local_site.url("/c") and response.body == b"final"
    assert response.permanent_redirect_to == local_site.url("/c")
    local_site.redirect("/loop", "/loop2")
    local_site.redirect("/loop2", "/loop")
    with pytest.raises(TooManyRedirects):
        await client.get(local_site.url("/loop"))
    unfollowed = await client.get(local_site.url("/a"), follow_redirects=False)
    assert (unfollowed.status, unfollowed.headers["Location"]) == (301, "/b")


async def test_body_cap_applies_after_decompression(
    client: SafeClient, local_site: LocalSite
) -> None:
    bomb = gzip.compress(b"\0" * 5_000_000)
    assert len(bomb) < 100_000
    local_site.serve("/bomb", bomb, headers={"Content-Encoding": "gzip"})
    with pytest.raises(BodyTooLarge):
        await client.get(local_site.url("/bomb"))
    local_site.serve("/big", b"x" * 200_000)
    with pytest.raises(BodyTooLarge):
        await client.get(local_site.url("/big"))

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for _ in range(1000):
            await response.write(b"y" * 10_000)
        return response

    local_site.route("/endless", endless)
    with pytest.raises(BodyTooLarge):
        await client.get(local_site.url("/endless"))


async def test_connection_failures_are_transient(client: SafeClient) -> None:
    with pytest.raises(FetchFailed):
        await client.get("http://127.0.0.1:1/")


async def test_slow_responses_time_out(local_site: LocalSite) -> None:
    import asyncio

    release = asyncio.Event()

    async def stall(_request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text="late")

    local_site.route("/slow", stall)
    limits = HttpLimits(UA, allow_private_networks=True, read_timeout_s=0.2, total_timeout_s=1)
    try:
        async with SafeClient(limits) as slow_client:
            with pytest.raises(FetchFailed, match="timed out"):
                await slow_client.get(local_site.url("/slow"))
    finally:
        release.set()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://[::1]:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
async def test_private_addresses_are_refused_by_default(local_site: LocalSite, url: str) -> None:
    local_site.serve("/", "secret")
    async with SafeClient(HttpLimits(UA)) as guarded:
        with pytest.raises(BlockedAddress, match="set FRONTIER_ALLOW_PRIVATE_NETWORKS=true"):
            await guarded.get(url.format(port=local_site.port))
    assert local_site.requests == []


class HostsFile(AbstractResolver):
    """Resolves the names it holds, as /etc/hosts would, and no other (no DNS is asked)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host not in self.names:
            raise OSError(f"{host} is not in the hosts file")
        address = self.names[host]
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": family,
                "proto": 0,
                "flags": 0,
            }
        ]

    async def close(self) -> None:
        pass


async def test_an_injected_connector_factory_opens_the_connections(local_site: LocalSite) -> None:
    """The transport seam: the factory makes the session's connector (once), and its
    connections are the ones used; the default connector still refuses the same site."""
    local_site.serve("/", "through the injected connector")
    made: list[HttpLimits] = []

    def hosts_file_connector(limits: HttpLimits) -> aiohttp.BaseConnector:
        made.append(limits)
        return aiohttp.TCPConnector(resolver=HostsFile({"site.test": "127.0.0.1"}))

    limits = HttpLimits(UA)  # private networks refused: the injected connector answers for them
    url = f"http://site.test:{local_site.port}/"
    async with SafeClient(limits, connector_factory=hosts_file_connector) as injected:
        first = await injected.get(url)
        second = await injected.get(url)
        with pytest.raises(BlockedAddress):  # an IP literal is the client's own rule
            await injected.get(local_site.url("/"))
    assert (first.body, second.status) == (b"through the injected connector", 200)
    assert made == [limits]
    assert [seen.headers["Host"] for seen in local_site.requests] == [
        f"site.test:{local_site.port}"
    ] * 2

    async with SafeClient(limits) as guarded:
        with pytest.raises(BlockedAddress, match="localhost resolves only to non-public"):
            await guarded.get(f"http://localhost:{local_site.port}/")
    assert len(local_site.requests) == 2


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2:{port}/",
        "http://[::1]:{port}/",
        "http://[64:ff9b::7f00:2]:{port}/",  # NAT64 of 127.0.0.2
        "http://[::7f00:2]:{port}/",  # IPv4-compatible 127.0.0.2
    ],
)
async def test_a_redirect_to_a_private_address_is_refused(
    local_site: LocalSite, target: str
) -> None:
    local_site.redirect("/hop", target.format(port=local_site.port))
    limits = HttpLimits(UA, allowed_networks=("127.0.0.1/32",))
    async with SafeClient(limits) as guarded:
        with pytest.raises(BlockedAddress):
            await guarded.get(local_site.url("/hop"))
    assert [seen.path for seen in local_site.requests] == ["/hop"]


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("fe80::1", False),
        ("::1", False),
        ("fc00::1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("100.64.0.1", False),
        ("not-an-ip", False),
        # IPv6 forms that carry an IPv4 address: judged by that address.
        ("::7f00:1", False),
        ("::127.0.0.1", False),
        ("::8.8.8.8", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:8.8.8.8", True),
        ("::ffff:0:7f00:1", False),
        ("::ffff:0:a01:203", False),
        ("::ffff:0:808:808", True),
        ("64:ff9b::7f00:1", False),
        ("64:ff9b::a9fe:a9fe", False),
        ("64:ff9b::808:808", True),
        ("64:ff9b:1::808:808", False),
        ("2002:7f00:1::", False),
        ("2002:a00:1::1", False),
        ("2002:808:808::1", True),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", True),
    ],  # Teredo, client 8.8.8.8
)
def test_address_classification(address: str, public: bool) -> None:
    assert address_is_public(address) is public


def test_the_soft_open_file_limit_is_lifted_to_the_hard_one() -> None:
    """In a child whose soft limit was lowered to 256, as many systems default to 1024."""
    code = (
        "import resource\n"
        "from frontier.safe_http.limits import raise_open_file_limit\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "print(raise_open_file_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    returned, soft, hard = done.stdout.split()
    assert returned == soft == hard != "256"


async def test_a_post_target_is_judged_once_per_authority_and_refused_every_time(
    local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The literal-address verdict depends on the URL's authority and the allowed networks
    only: an authority that passed is not judged again at each POST (a webhook's receiver
    gets thousands), one refused is refused at every POST."""
    import frontier.safe_http.client as client_module

    judged: list[str] = []
    real = client_module.refuse_literal_address

    def counting(url: str, *args: object) -> None:
        judged.append(url)
        real(url, *args)

    async def took(request: web.Request) -> web.Response:
        return web.Response(status=204)

    monkeypatch.setattr(client_module, "refuse_literal_address", counting)
    local_site.route("/hook", took)
    async with SafeClient(HttpLimits(UA, allowed_networks=("127.0.0.1/32",))) as guarded:
        for _ in range(3):
            answer = await guarded.post(local_site.url("/hook"), b"{}", headers={})
            assert (answer.status, answer.body) == (204, b"")
        for _ in range(2):
            with pytest.raises(BlockedAddress):
                await guarded.post("http://127.0.0.2:9/hook", b"{}", headers={})
    assert judged == [local_site.url("/hook")] + ["http://127.0.0.2:9/hook"] * 2
    assert len(local_site.requests) == 3
