"""Redirect and cookie behaviours of the CMSes and servers news sites run, as loopback sites.

Each `install_*` function registers one behaviour on a `LocalSite` for the given article
paths (the path the site treats as canonical) and returns nothing; the article pages are
`tests.fetch_harness.article(title)` with the title `title_of(path)`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from aiohttp import web

from tests.fetch_harness import article
from tests.local_site import LocalSite


def title_of(path: str) -> str:
    return "Story " + path.strip("/").replace("/", " ").replace("-", " ")


def _page(path: str) -> web.Response:
    return web.Response(text=article(title_of(path)), content_type="text/html")


def _moved(location: str, status: int = 301, **headers: str) -> web.Response:
    return web.Response(status=status, headers={"Location": location, **headers})


def install_wordpress(site: LocalSite, paths: Iterable[str]) -> None:
    """WordPress pretty permalinks (`/%year%/%monthnum%/%postname%/`): `redirect_canonical()`
    answers the slashless spelling with a 301 to the absolute, slashed permalink
    (https://developer.wordpress.org/reference/functions/redirect_canonical/;
    wp-includes/canonical.php "trailing slashes", `user_trailingslashit`)."""
    for path in paths:
        slashed = path.rstrip("/") + "/"
        site.route(slashed, lambda _r, p=slashed: _serve(p))
        site.route(slashed.rstrip("/"), lambda _r, p=slashed: _absolute(site, p))


async def _serve(path: str) -> web.Response:
    return _page(path)


async def _absolute(site: LocalSite, path: str, status: int = 301) -> web.Response:
    return _moved(site.url(path), status)


async def _relative(path: str, status: int = 301) -> web.Response:
    return _moved(path, status)


def install_django_append_slash(site: LocalSite, paths: Iterable[str]) -> None:
    """Django's CommonMiddleware with APPEND_SLASH (the default): a URL that matches no
    pattern but would with a slash is answered with a 301 (HttpResponsePermanentRedirect) to
    the path plus `/`, the query kept (https://docs.djangoproject.com/en/stable/ref/settings/#append-slash)."""
    for path in paths:
        slashed = path.rstrip("/") + "/"
        site.route(slashed, lambda _r, p=slashed: _serve(p))
        site.route(slashed.rstrip("/"), lambda _r, p=slashed: _relative(p))


def install_ghost(site: LocalSite, paths: Iterable[str]) -> None:
    """Ghost: post URLs end in `/`, and the slashless spelling is a 301 to it (Ghost's
    `redirect-trailing-slash`-style middleware; https://ghost.org/docs/themes/routing/)."""
    install_django_append_slash(site, paths)  # same wire behaviour, absolute or not


def install_drupal(site: LocalSite, paths: Iterable[str]) -> None:
    """Drupal with the Redirect module's "Remove trailing slash" (global redirect): the
    canonical alias has no slash, `/alias/` is a 301 to `/alias`
    (https://www.drupal.org/docs/contributed-modules/redirect)."""
    for path in paths:
        bare = path.rstrip("/")
        site.route(bare, lambda _r, p=bare: _serve(p))
        site.route(bare + "/", lambda _r, p=bare: _absolute(site, p))


def install_rails(site: LocalSite, paths: Iterable[str]) -> None:
    """Rails routing ignores a trailing slash: both spellings are served, no redirect
    (https://guides.rubyonrails.org/routing.html; `trailing_slash` only shapes URL helpers)."""
    for path in paths:
        bare = path.rstrip("/")
        site.route(bare, lambda _r, p=bare: _serve(p))
        site.route(bare + "/", lambda _r, p=bare: _serve(p))


def install_utm_stripper(site: LocalSite, paths: Iterable[str]) -> None:
    """A CDN or nginx rule that strips `utm_*` with a 301 so caches keep one copy (common
    on news sites: Fastly/Cloudflare "query string sort/strip" recipes)."""

    for path in paths:

        async def handler(request: web.Request, p: str = path) -> web.Response:
            kept = [(k, v) for k, v in request.query.items() if not k.startswith("utm_")]
            if len(kept) != len(request.query):
                query = "&".join(f"{k}={v}" for k, v in kept)
                return _moved(p + ("?" + query if query else ""))
            return _page(p)

        site.route(path, handler)


def install_apache_server_name(site: LocalSite, paths: Iterable[str], server_name: str) -> None:
    """Apache with `UseCanonicalName On` builds its self-referential redirects (mod_dir's
    DirectorySlash 301 from `/dir` to `/dir/`) from `ServerName`, spelt as the admin wrote it,
    capitals included; host names compare without case, so any spelling is served
    (https://httpd.apache.org/docs/2.4/mod/core.html#usecanonicalname, mod_dir DirectorySlash)."""
    for path in paths:
        slashed = path.rstrip("/") + "/"
        site.route(slashed, lambda _r, p=slashed: _serve(p))
        site.route(
            slashed.rstrip("/"),
            lambda _r, p=slashed: _relative(f"http://{server_name}:{site.port}{p}"),
        )


def install_consent_wall(site: LocalSite, paths: Iterable[str]) -> None:
    """A consent wall that records the choice in a cookie and 302s to the same URL; the
    article is served only when the cookie comes back (the pattern behind httpx #821 and
    Scrapy #1225: "redirects to the same location with 302 and Set-Cookie")."""
    for path in paths:

        async def handler(request: web.Request, p: str = path) -> web.Response:
            if request.cookies.get("euconsent") == "granted":
                return _page(p)
            return _moved(p, 302, **{"Set-Cookie": "euconsent=granted; Path=/; Max-Age=31536000"})

        site.route(path, handler)


def install_session_wall(site: LocalSite, paths: Iterable[str]) -> list[str]:
    """A session wall: the first answer opens a server-side session (a random, HttpOnly
    cookie) and 307s to the same URL; only a request carrying an issued session id gets the
    page (PHP `session.use_only_cookies` sites, Akamai/Incapsula session checks). Returns
    the list of session ids issued."""
    issued: list[str] = []
    for path in paths:

        async def handler(request: web.Request, p: str = path) -> web.Response:
            if request.cookies.get("SESSID") in issued:
                return _page(p)
            sid = secrets.token_hex(8)
            issued.append(sid)
            return _moved(p, 307, **{"Set-Cookie": f"SESSID={sid}; Path=/; HttpOnly"})

        site.route(path, handler)
    return issued


def meta_refresh_page(target: str, quote: str = "'") -> str:
    """The interstitial of an old CMS or a JavaScript check: nothing but a refresh."""
    return (
        "<!doctype html><html><head><title>Redirecting</title>"
        f'<meta http-equiv="Refresh" content="0;URL={quote}{target}{quote}">'
        "<script>location.replace('" + target + "')</script></head>"
        f"<body><p>Redirecting to <a href='{target}'>the article</a>.</p></body></html>"
    )


def install_meta_refresh(site: LocalSite, paths: Iterable[str]) -> None:
    """Pages moved by a CMS that writes a meta-refresh stub at the old spelling (Blogger's
    and many static generators' redirect pages: `<meta http-equiv="refresh" content="0;
    url=...">`, https://developer.mozilla.org/docs/Web/HTML/Element/meta#http-equiv)."""
    for path in paths:
        slashed = path.rstrip("/") + "/"
        site.route(slashed, lambda _r, p=slashed: _serve(p))
        site.serve(slashed.rstrip("/"), meta_refresh_page(slashed))


def install_slash_loop(site: LocalSite, path: str) -> None:
    """A misconfiguration seen in the wild (dotCMS #20280, #31989: a vanity URL removing
    the slash while the server adds it): `/a` -> `/a/` -> `/a` forever."""
    bare = path.rstrip("/")
    site.route(bare, lambda _r: _relative(bare + "/"))
    site.route(bare + "/", lambda _r: _relative(bare))
