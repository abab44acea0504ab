"""Outbound proxies: the operator's `FRONTIER_PROXY_URL` and a source's own `proxy`
(frontier.source_access.SourceProxy), resolved for the requests that go through them.

    FRONTIER_PROXY_URL=http://crawler:secret@proxy.internal:3128   # every request
    # or the password in a file (a Docker or Kubernetes secret):
    FRONTIER_PROXY_URL=http://crawler@proxy.internal:3128
    FRONTIER_PROXY_PASSWORD_FILE=/run/secrets/proxy-password
    # a source's own, for the hosts of its URLs (its password by reference):
    proxy: {url: "socks5://proxy.eu.internal:1080", username: crawler,
            password_env: EU_PROXY_PASSWORD}
    # or none for them, whatever FRONTIER_PROXY_URL says (an intranet site):
    proxy: {direct: true}

Schemes: `http` (requests as absolute URIs, https targets through CONNECT), `https` (the
same over TLS to the proxy), `socks5` (the target's name resolved here and its address
sent to the proxy) and `socks5h` (the name sent to the proxy). aiohttp speaks the first
two itself; SOCKS goes through aiohttp-socks (python-socks). Scrapy has no SOCKS: the
spider refuses a SOCKS proxy (spider.plan).

Which proxy a request takes: its source's, when the URL's host is one of the hosts of the
source's own URLs (`base_url`, `feed_url`, `sitemap_url`, the spider's listing pages: the
hosts, any scheme or port, the way frontier.source_credentials matches origins, minus the
scheme and port, which protect a secret sent to the target and a proxy sends none there),
or none for them with `direct: true`; else `FRONTIER_PROXY_URL` when set; else none.
The SSRF guard still judges the target (frontier.safe_http.client: the target's name is
resolved first and refused when any of its addresses is not public), while the proxy's
own address, which the operator chose, is not judged. A proxy that fails is a
`ProxyError` (frontier.safe_http.errors), never counted against the target's host.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from yarl import URL

from frontier.hostnames import normalize_host
from frontier.source_credentials import SourceLike, read_secret

DEFAULT_PROXY_PORTS = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}
SOCKS_SCHEMES = frozenset({"socks5", "socks5h"})
# A request the proxy failed: its URL (its poll) is tried again this much later, nothing
# counted against it or its host.
PROXY_RETRY_S = 60.0


class InvalidProxy(ValueError):
    """A proxy URL that cannot be used (its scheme, host, port, or a path)."""


@dataclass(frozen=True, slots=True)
class Proxy:
    """One proxy: where it is and the credentials it asks for (never printed)."""

    scheme: str
    host: str
    port: int
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, text: str, *, username: str | None = None, password: str | None = None) -> Proxy:
        """`text` (scheme://[user:password@]host[:port][/]); `username` and `password`
        given apart replace the URL's. Raises InvalidProxy, naming no credential."""
        try:
            parts = urlsplit(text.strip())
            port = parts.port
            name = parts.hostname or ""
            host = str(ipaddress.ip_address(name)) if ":" in name else name and normalize_host(name)
        except ValueError as exc:
            # (not the exception's text: it may quote a part holding a password)
            raise InvalidProxy(
                f"not a proxy URL: {type(exc).__name__} in its host or port"
            ) from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PROXY_PORTS:
            raise InvalidProxy(
                f"the scheme {scheme or '(none)'!r} is not a proxy's: give "
                + ", ".join(f"{s}://" for s in DEFAULT_PROXY_PORTS)
            )
        if not host:
            raise InvalidProxy("a proxy URL needs a host")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise InvalidProxy("a proxy URL is scheme://host:port, without a path or a query")
        return cls(
            scheme,
            host,
            port or DEFAULT_PROXY_PORTS[scheme],
            username if username is not None else _unquoted(parts.username),
            password if password is not None else _unquoted(parts.password),
        )

    @property
    def socks(self) -> bool:
        return self.scheme in SOCKS_SCHEMES

    def label(self) -> str:
        """scheme://host:port, for a log line or an error: never the credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def aiohttp_url(self) -> URL:
        """The URL aiohttp's `proxy=` takes (an http or https proxy), its credentials in
        it: aiohttp sends them as Proxy-Authorization, on the CONNECT of an https target
        and on each request of an http one."""
        return URL.build(
            scheme=self.scheme,
            host=self.host,
            port=self.port,
            user=self.username,
            password=self.password,
        )


@dataclass(frozen=True, slots=True)
class ProxyRoute:
    """A source's proxy (None: `direct: true`, no proxy) and the hosts it applies to."""

    proxy: Proxy | None
    hosts: frozenset[str]

    def choose(self, url: str, default: Proxy | None) -> Proxy | None:
        """The proxy of a request to `url` (None: direct): the source's own for one of its
        hosts, else `default` (FRONTIER_PROXY_URL's)."""
        return self.proxy if host_of(url) in self.hosts else default


def proxy_of(route: ProxyRoute | None, url: str, default: Proxy | None) -> Proxy | None:
    """The proxy of a request to `url` for a source with `route` (None: it has none)."""
    return route.choose(url, default) if route is not None else default


def password_from(path: Path | None) -> str | None:
    """The password `FRONTIER_PROXY_PASSWORD_FILE` holds (one trailing newline dropped);
    None without one. Raises CredentialsUnavailable naming the file, never its content."""
    if path is None:
        return None
    return read_secret({"file": str(path)}, "FRONTIER_PROXY_PASSWORD_FILE", {})


def route_of(
    spec: Mapping[str, Any] | None,
    urls: Iterable[str | None],
    *,
    environ: Mapping[str, str] | None = None,
) -> ProxyRoute | None:
    """A source's stored `proxy` (a validated SourceProxy) for the hosts of `urls`; None
    when it has none. Raises CredentialsUnavailable when its password cannot be read."""
    if not spec:
        return None
    env = os.environ if environ is None else environ
    ref = {k: spec[f"password_{k}"] for k in ("env", "file") if spec.get(f"password_{k}")}
    password = read_secret(ref, "proxy.password", env) if ref else None
    proxy = (
        Proxy.parse(spec["url"], username=spec.get("username"), password=password)
        if spec.get("url")
        else None  # direct: true
    )
    hosts = frozenset(filter(None, (host_of(u) for u in urls if u)))
    return ProxyRoute(proxy, hosts)


def route_for(source: SourceLike, *more_urls: str) -> ProxyRoute | None:
    """`source`'s proxy for its own hosts (and those of `more_urls`: the spider's listing
    pages); None when it has none. Raises CredentialsUnavailable."""
    urls = (source.base_url, source.feed_url, source.sitemap_url, *more_urls)
    return route_of(getattr(source, "proxy", None), urls)


def _unquoted(value: str | None) -> str | None:
    return unquote(value) if value is not None else None


def host_of(url: str) -> str | None:
    """`url`'s host name, lower case, without a trailing dot; None when it has none."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None
