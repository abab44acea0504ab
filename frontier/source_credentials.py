"""A source's access (frontier.source_access), resolved for its requests: `Credentials`
holds the headers (Authorization, extra headers, Cookie) and the origins they may go to.

Where they go: the **origins** (scheme, host, port) of the source's own URLs, its
`base_url`, `feed_url`, `sitemap_url` and spider listing pages, and nowhere else. That is
HTTP basic authentication's protection space (RFC 7617: the canonical root URI), applied
to the token, the headers and the cookies alike, so that:

- a redirect to another host, even a subdomain, does not carry them (each hop asks again:
  `Credentials.headers_for(url)`), nor a redirect from https to http on the same host
  (the secret would cross the network in clear), nor to another port;
- a source whose pages live on another host (a CDN, an `www.` the feed does not name) sends
  nothing there: name that host in one of the source's URLs.

Secrets are read when a source's credentials are built (each poll; the fetcher's source
cache, every five minutes at most), from the environment variable or the file the
reference names. One that cannot be read (unset variable, missing file) is a
`CredentialsUnavailable`, refused like a blocked request, naming the reference and never
a value. `Credentials` never prints its values (repr masks them).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from frontier.safe_http.errors import Refused

Origin = tuple[str, str, int]
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_SECRET_BYTES = 64 * 1024


class CredentialsUnavailable(Refused):
    """A source's secret cannot be read (an unset variable, a missing file)."""


def origin_of(url: str) -> Origin | None:
    """(scheme, host, port) of `url`, the port made explicit; None when it has no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not parts.hostname or scheme not in DEFAULT_PORTS:
        return None
    return scheme, parts.hostname.rstrip(".").lower(), port or DEFAULT_PORTS[scheme]


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a source's requests carry, and to which origins."""

    origins: frozenset[Origin]
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    cookie: str | None = field(default=None, repr=False)

    def headers_for(self, url: str) -> dict[str, str]:
        """The headers a request to `url` carries: all of them at one of the source's
        origins, none elsewhere."""
        if origin_of(url) not in self.origins:
            return {}
        sent = dict(self.headers)
        if self.cookie:
            sent["Cookie"] = self.cookie
        return sent

    def names(self) -> frozenset[str]:
        """The header names these credentials may set (lower case): what a request that
        leaves the source's origins must not carry."""
        names = {name.lower() for name, _ in self.headers}
        return frozenset(names | ({"cookie"} if self.cookie else set()))


def credentials_of(
    access: Mapping[str, Any] | None,
    urls: Iterable[str | None],
    *,
    environ: Mapping[str, str] | None = None,
) -> Credentials | None:
    """`access` (a stored, validated SourceAccess) resolved for the source's `urls`; None
    when it sets nothing. `environ`: where `*_env` references are read (os.environ).
    Raises CredentialsUnavailable naming a reference that cannot be read."""
    if not access:
        return None
    env = os.environ if environ is None else environ
    headers: list[tuple[str, str]] = []
    password = _secret(access, "password", env)
    token = _secret(access, "token", env)
    if password is not None:
        pair = f"{access['username']}:{password}".encode()
        headers.append(("Authorization", "Basic " + base64.b64encode(pair).decode("ascii")))
    elif token is not None:
        headers.append(("Authorization", f"Bearer {token}"))
    for name, value in (access.get("headers") or {}).items():
        plain = value if isinstance(value, str) else read_secret(value, f"headers.{name}", env)
        headers.append((name, plain))
    cookies = [
        f"{name}={read_secret(ref, f'cookies.{name}', env)}"
        for name, ref in (access.get("cookies") or {}).items()
    ]
    origins = frozenset(filter(None, (origin_of(u) for u in urls if u)))
    if not headers and not cookies:
        return None
    return Credentials(origins, tuple(headers), "; ".join(cookies) or None)


def _secret(access: Mapping[str, Any], key: str, env: Mapping[str, str]) -> str | None:
    ref = {
        kind: access[f"{key}_{kind}"]
        for kind in ("env", "file")
        if access.get(f"{key}_{kind}") is not None
    }
    return read_secret(ref, key, env) if ref else None


def read_secret(ref: Mapping[str, str], what: str, env: Mapping[str, str] | None = None) -> str:
    """The secret a reference names (`{"env": NAME}` or `{"file": PATH}`), read now from
    `env` (None: os.environ) or the file; one trailing newline of a file dropped.
    CredentialsUnavailable naming the reference, never a value, when it cannot be read or
    could break a header (a line break)."""
    env = os.environ if env is None else env
    if ref.get("env"):
        value = env.get(ref["env"])
        if value is None:
            raise CredentialsUnavailable(f"{what}: the variable {ref['env']} is not set")
        where = f"the variable {ref['env']}"
    else:
        path = Path(ref["file"])
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_SECRET_BYTES + 1)
        except OSError as exc:
            raise CredentialsUnavailable(
                f"{what}: cannot read {path}: {exc.strerror or type(exc).__name__}"
            ) from None
        if len(data) > MAX_SECRET_BYTES:
            raise CredentialsUnavailable(f"{what}: {path} is over {MAX_SECRET_BYTES} bytes")
        value = data.decode("utf-8", "replace")
        value = value[:-1] if value.endswith("\n") else value
        value = value[:-1] if value.endswith("\r") else value
        where = str(path)
    if any(c in value for c in "\r\n\x00"):
        raise CredentialsUnavailable(f"{what}: {where} holds a line break")
    return value


class SourceLike(Protocol):
    """What `credentials_for` reads of a source (frontier.sources.Source)."""

    @property
    def access(self) -> Any: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def feed_url(self) -> str | None: ...
    @property
    def sitemap_url(self) -> str | None: ...


def credentials_for(source: SourceLike, *more_urls: str) -> Credentials | None:
    """`source`'s credentials for its own URLs (and `more_urls`: the spider's listing
    pages); None when it has none. Raises CredentialsUnavailable."""
    urls = (source.base_url, source.feed_url, source.sitemap_url, *more_urls)
    return credentials_of(source.access, urls)
