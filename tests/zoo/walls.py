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


# -- challenges and interstitials of each vendor (fetcher/verdict.py reads their markers) --

# DataDome's block page: the captcha (or device check) is an iframe from
# geo.captcha-delivery.com. docs.datadome.co "Handle API Response": on a 401/403 the module
# outputs the HTML the API returned; `X-DataDome: protected` is on every response.
DATADOME_BLOCK = """<html><head><title>news.example</title><style>#cmsg{animation: A 1.5s;}
</style></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad
blocker</p><script data-cfasync="false">var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2013457',
't':'fe','s':43337,'e':'ab12','host':'geo.captcha-delivery.com'}</script>
<script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script>
</body></html>"""

# Imperva (Incapsula): the JavaScript challenge page, which loads its script from
# /_Incapsula_Resource and carries the incident ID (support.incapsula.com, "How do Bot
# Checks work?": a cookie test, JavaScript, then CAPTCHA).
IMPERVA_CHALLENGE = """<html><head><META NAME="robots" CONTENT="noindex,nofollow">
<script src="/_Incapsula_Resource?SWJIYLWA=5074a744e2e3d891814e9a2dace20bd4">
</script><body><iframe id="main-iframe"
src="/_Incapsula_Resource?CWUDNSAI=9&xinfo=1-2-3&incident_id=0-123&edet=12"
frameborder=0 width="100%" height="100%">Request unsuccessful. Incapsula incident ID:
0-12345678901234</iframe></body></html>"""

# PerimeterX / HUMAN's block page with its press-and-hold captcha (the template of
# HumanSecurity/perimeterx-python-wsgi, block_template.mustache).
PERIMETERX_BLOCK = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Access to this page has been denied.</title></head><body><div class="container">
<div class="page-title-wrapper"><h1 class="page-title">Access to this page has been denied.
</h1></div><div class="content-wrapper"><p>Press &amp; Hold to confirm you are a human (and not
a bot).</p><div id="px-captcha"></div></div></div><script>window._pxAppId = 'PXabc123';
window._pxJsClientSrc = '/abc123/init.js';</script>
<script src="https://captcha.px-cdn.net/PXabc123/captcha.js?a=c&m=0"></script></body></html>"""

# Sucuri's website firewall JavaScript challenge: a script that computes the
# sucuri_cloudproxy_js cookie and reloads (docs.sucuri.net, Website Firewall).
SUCURI_CHALLENGE = """<html><title>You are being redirected...</title>
<noscript>Javascript is required. Please enable javascript before you are allowed to see
this page.</noscript><script>var s={},u,c,U,r,i,l=0,a,e=eval,w=String.fromCharCode,
sucuri_cloudproxy_js='',S='cz0iMHNlYyIuc3Vic3RyKDAsMSk7';L=S.length;
document.cookie='sucuri_cloudproxy_uuid_0=1;path=/;max-age=86400';location.reload();
</script></html>"""

# Akamai Bot Manager's crypto challenge (sec-cpt): an interstitial that polls
# /_sec/cp_challenge/ before the page is let through.
AKAMAI_CRYPTO_CHALLENGE = """<!DOCTYPE html><html><head><title>Challenge Validation</title>
<script src="/_sec/cp_challenge/sec-4-4.js"></script></head><body>
<div id="sec-if-cpt-container"><div id="sec-text-container"><h1>Powered and protected by
Akamai</h1><p>Checking your browser before accessing the site.</p></div></div>
<script>window.addEventListener('load',function(){cp_clge_done();});</script></body></html>"""


def interstitial(
    site: LocalSite,
    paths: Iterable[str],
    page: str,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> None:
    """A challenge or interstitial `page` in front of `paths` (robots.txt answers 404:
    allow all), answered with `status`: a 2xx from an edge that shows the challenge in
    place of the article (AWS WAF's 202, a Sucuri or DataDome page behind a 200 from a
    misconfigured origin), or 403/429/503 as the vendors send them."""

    async def handler(_request: web.Request) -> web.StreamResponse:
        return web.Response(
            status=status,
            text=page,
            content_type="text/html",
            charset="utf-8",
            headers=headers or {},
        )

    for path in paths:
        site.route(path, handler)


LOGIN_PAGE = """<!doctype html><html><head><title>Log In &lsaquo; Daily News</title></head>
<body class="login"><h1>Log in to continue reading</h1><form name="loginform" method="post"
action="/wp-login.php"><p><label>Username or Email Address<input name="log"></label></p>
<p><label>Password<input type="password" name="pwd"></label></p><p>Subscribers get every
article, the newsletter and the archive. Not a subscriber yet? Choose a plan that suits
you and read on today; cancel at any time from your account page, no questions asked.</p>
<p>Forgot your password? Enter your email address and we will send you a link to reset it,
valid for one hour, together with the steps to choose a new password for your account.</p>
<input type="submit" value="Log In"></form></body></html>"""


def login_redirect(site: LocalSite, path: str, login: str = "/wp-login.php") -> None:
    """An article for subscribers only, sending everyone else to the login form with the
    way back in `redirect_to`, as WordPress's auth_redirect() does (developer.wordpress.org,
    auth_redirect: "redirects to the login page ... wp_login_url( $redirect )") and
    membership plugins do for members-only posts. The login page itself answers 200 with
    enough text to be stored, were it queued."""
    site.serve(path, "", status=302, headers={"Location": f"{login}?redirect_to={site.url(path)}"})
    site.serve(login, LOGIN_PAGE)
