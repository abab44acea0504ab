"""Pages a server answers 200 that are not an article: robots rules saying `noindex`, a
"not found" page served with 200 (a soft 404) and a page with no text at all. Each
function gives a `LocalSite` one behaviour; the sources are in its docstring."""

from __future__ import annotations

from tests.fetch_harness import article
from tests.local_site import LocalSite


def noindex_header(site: LocalSite, path: str, title: str, value: str) -> None:
    """An article sent with `X-Robots-Tag: <value>`: how Google documents keeping a page
    out of its index from the server ("Robots meta tag, data-nosnippet, and X-Robots-Tag
    specifications", developers.google.com/search/docs/crawling-indexing/robots-meta-tag;
    a value may name a crawler first: `X-Robots-Tag: otherbot: noindex`)."""
    site.serve(path, article(title), headers={"X-Robots-Tag": value})


def noindex_meta(site: LocalSite, path: str, title: str, name: str, content: str) -> None:
    """An article whose head says `<meta name="<name>" content="<content>">`, as WordPress
    writes `<meta name='robots' content='noindex, nofollow'>` for a post its editor keeps
    out of search (wp_robots_no_robots(), developer.wordpress.org) and as the same spec
    lets a page address one crawler by its name."""
    tag = f"<meta name='{name}' content='{content}'>"
    site.serve(path, article(title).replace("<head>", "<head>" + tag))


# WordPress's 404 template (Twenty Twenty-One and the themes after it): the `error404`
# body class from body_class() (developer.wordpress.org/reference/functions/body_class),
# "Nothing here" / "It looks like nothing was found at this location." and a search form.
WORDPRESS_NOT_FOUND = """<!doctype html><html lang="en-US"><head><meta charset="UTF-8">
<title>Page not found &#8211; Daily News</title>
<meta name='robots' content='max-image-preview:large'></head>
<body class="error404 wp-embed-responsive is-light-theme"><div id="page" class="site">
<header id="masthead"><p class="site-title"><a href="/">Daily News</a></p>
<nav><ul><li><a href="/politics/">Politics</a></li><li><a href="/sport/">Sport</a></li></ul>
</nav></header><main id="main"><header class="page-header alignwide">
<h1 class="page-title">Nothing here</h1></header><div class="error-404 not-found default-max-width">
<div class="page-content"><p>It looks like nothing was found at this location. Maybe try a
search?</p><form role="search" method="get" action="/"><input type="search" name="s">
<input type="submit" value="Search"></form></div></div></main></div></body></html>"""


def soft_404(site: LocalSite, path: str) -> None:
    """A removed post answered 200 with the theme's "not found" page: what a WordPress
    site behind a cache that stores error pages as 200 (or a theme calling
    `status_header(200)`) sends, and what Google's Search Console reports as a soft 404
    ("Soft 404 errors", developers.google.com/search/docs/crawling-indexing/http-network-errors)."""
    site.serve(path, WORDPRESS_NOT_FOUND)


# A client-rendered page with nothing but its mount point: the text arrives by a script.
EMPTY_SHELL = """<!doctype html><html lang="en"><head><title>Loading…</title>
<script type="module" src="/assets/index-4f2a.js"></script></head>
<body><div id="root"></div></body></html>"""


def empty_page(site: LocalSite, path: str) -> None:
    """A page with no body text of its own and no structured data: a single-page app's
    index.html, as Vite builds it (vitejs.dev/guide/, "index.html and Project Root")."""
    site.serve(path, EMPTY_SHELL)
