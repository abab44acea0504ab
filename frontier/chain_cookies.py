"""`ChainCookies`: the cookies of one fetch chain, as a browser tab would hold them.

A consent or session wall answers the first request with `Set-Cookie` and a redirect (often
to the same URL), and serves the page only when the cookie comes back. A browser passes it;
a crawler that never sends cookies loops until its hop cap. So the hops of one fetch (its
redirects and meta refreshes) send the cookies that the chain's own responses set, and the
jar is dropped when the fetch ends: nothing is carried to another fetch, another URL of the
frontier or another host. The process-wide session keeps its `DummyCookieJar`.

The matching rules (Domain, Path, Secure, expiry, host-only cookies, refusal of a Domain
that is not the response's own) are aiohttp's `CookieJar`; IP-literal hosts are allowed
(`unsafe`), as host-only cookies, since loopback sites and some real ones are addressed so.
aiohttp does not know the Public Suffix List, so a `Domain` that is a public suffix
(`co.uk`, `github.io`: every site under it would get the cookie) is refused here, as
browsers refuse it; unless it is the response's own host, where the cookie is host-only
(RFC 6265 5.3 step 5).
"""

from __future__ import annotations

from collections.abc import Iterable
from http.cookies import CookieError, SimpleCookie

import aiohttp
from yarl import URL

from frontier.public_suffix import is_public_suffix


class ChainCookies:
    """A cookie jar for one fetch chain; created empty, filled by its responses."""

    __slots__ = ("_jar",)

    def __init__(self) -> None:
        self._jar: aiohttp.CookieJar | None = None  # made on the first Set-Cookie

    def header(self, url: str) -> str | None:
        """The `Cookie` header to send to `url`, or None when no cookie of the chain
        matches it."""
        if self._jar is None:
            return None
        matching = self._jar.filter_cookies(URL(url))
        if not matching:
            return None
        return "; ".join(f"{m.key}={m.coded_value}" for m in matching.values())

    def update(self, url: str, set_cookie: Iterable[str]) -> None:
        """Take the `Set-Cookie` headers of the response from `url`; unreadable ones are
        skipped, as browsers skip them."""
        for value in set_cookie:
            parsed: SimpleCookie = SimpleCookie()
            try:
                parsed.load(value)
            except CookieError:
                continue
            _drop_public_suffix_domains(parsed, URL(url).host or "")
            if not parsed:
                continue
            if self._jar is None:
                self._jar = aiohttp.CookieJar(unsafe=True)
            self._jar.update_cookies(parsed, URL(url))

    def __len__(self) -> int:
        return 0 if self._jar is None else len(self._jar)


def _drop_public_suffix_domains(cookies: SimpleCookie, host: str) -> None:
    """Refuse the cookies whose Domain is a public suffix; one naming the response's own
    host keeps it as a host-only cookie."""
    for name, morsel in list(cookies.items()):
        domain = morsel["domain"].lstrip(".").lower()
        if not domain or not is_public_suffix(domain):
            continue
        if domain == host.lower():
            morsel["domain"] = ""
        else:
            del cookies[name]
