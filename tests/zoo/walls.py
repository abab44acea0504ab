"""Bot walls, logins, legal blocks and rate limits, as CDNs and servers really send them.

Each function gives a `LocalSite` one behaviour on the paths named; the requests the site
records are what the tests count. The sources of each behaviour are in its docstring.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from aiohttp import web

from tests.local_site import LocalSite

# Cloudflare's managed challenge ("Just a moment...") as crawlers receive it: a 403 whose
# HTML runs the challenge script from /cdn-cgi/challenge-platform/.
CLOUDFLARE_CHALLENGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="robots" content="noindex,nofollow">
<link href="/cdn-cgi/styles/challenges.css" rel="stylesheet"></head>
<body class="no-js"><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">{host}</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div id="challenge-error-title">Enable JavaScript and cookies to continue</div></noscript>
</div></div><script>(function(){{window._cf_chl_opt={{cvId: '3',cType: 'managed'}};
var a=document.createElement('script');
a.src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1e2d3c4b5a6978';
document.getElementsByTagName('head')[0].appendChild(a);}}());</script></body></html>"""

# Akamai's edge refusal: a short "Access Denied" page with a reference number.
AKAMAI_DENIED = """<html><head>
<title>Access Denied</title>
</head><body>
<h1>Access Denied</h1>

You don't have permission to access "{url}" on this server.<p>
Reference #18.2f580317.{n}.2b6a23ca
</p></body>
</html>
"""

LEGAL_BLOCK = """<html><head><title>Unavailable For Legal Reasons</title></head><body>
<h1>Unavailable For Legal Reasons</h1><p>This article is not available in your country
following a court order.</p></body></html>"""

PAYWALL = """<!doctype html><html><head><title>Subscribers only</title></head><body>
<h1>Subscribers only</h1><p>Log in to read this article.</p></body></html>"""


def cloudflare_challenge(site: LocalSite, paths: Iterable[str]) -> None:
    """Cloudflare's bot wall in front of every path (robots.txt included, as Bot Fight Mode
    does): 403 with `cf-mitigated: challenge` and `server: cloudflare`. Source:
    developers.cloudflare.com/cloudflare-challenges/.../detect-response (cf-mitigated is
    set on every challenge page, "challenge" its only value)."""
    rays = itertools.count(0x8F1E2D3C4B5A6978)

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(
            status=403,
            text=CLOUDFLARE_CHALLENGE.format(host=request.host),
            content_type="text/html",
            charset="UTF-8",
            headers={
                "Server": "cloudflare",
                "cf-mitigated": "challenge",
                "CF-RAY": f"{next(rays):x}-AMS",
                "Cache-Control": "private, max-age=0, no-store, no-cache, must-revalidate",
                "Cross-Origin-Embedder-Policy": "require-corp",
            },
        )

    for path in ("/robots.txt", *paths):
        site.route(path, handler)


def akamai_access_denied(site: LocalSite, paths: Iterable[str]) -> None:
    """Akamai's edge refusing a client it takes for a bot: 403 "Access Denied" from
    `Server: AkamaiGHost` with a Reference #, on every path robots.txt included. Source:
    the AkamaiGHost fingerprints reported in Ekultek/WhatWaf issues #1162 and #1191."""
    references = itertools.count(1_700_000_000)

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(
            status=403,
            text=AKAMAI_DENIED.format(url=request.url, n=next(references)),
            content_type="text/html",
            headers={"Server": "AkamaiGHost", "Mime-Version": "1.0", "Connection": "close"},
        )

    for path in ("/robots.txt", *paths):
        site.route(path, handler)


def subscriber_only(site: LocalSite, path: str) -> None:
    """A paywalled article behind HTTP authentication: 401 with the challenge a browser
    shows as a login box. Source: RFC 9110 section 11.6.1 (WWW-Authenticate must come with
    every 401)."""
    site.serve(
        path,
        PAYWALL,
        status=401,
        headers={"WWW-Authenticate": 'Basic realm="Subscribers", charset="UTF-8"'},
    )


def legally_blocked(site: LocalSite, path: str) -> None:
    """An article withheld after a legal demand: 451 naming who blocks it in a Link header
    with rel="blocked-by". Source: RFC 7725 section 3."""
    site.serve(
        path,
        LEGAL_BLOCK,
        status=451,
        headers={"Link": '<https://authority.example/takedowns/42>; rel="blocked-by"'},
    )


def rate_limited_first(
    site: LocalSite, path: str, body: str, *, status: int, retry_after: str
) -> None:
    """A CDN rate limit: the first request gets `status` (429, or 503 from an origin
    shedding load) with `Retry-After` (delta-seconds or an HTTP-date); the next gets the
    article. Source: RFC 9110 section 10.2.3 (both forms) and RFC 6585 section 4."""
    answered = itertools.count()

    async def handler(_request: web.Request) -> web.StreamResponse:
        if next(answered) == 0:
            return web.Response(
                status=status,
                text="Too many requests" if status == 429 else "Service temporarily unavailable",
                headers={"Retry-After": retry_after},
            )
        return web.Response(text=body, content_type="text/html", charset="utf-8")

    site.route(path, handler)
