"""Zoo: one article under several identities, as servers write them (issue 29 item 2).

Where the behaviours come from:
- Drupal sends the canonical in an HTTP header as well as in the head:
  `drupal_add_html_head_link($attributes, $header = TRUE)` "Also add[s] a HTTP header
  'Link:'" (api.drupal.org, includes/common.inc, function drupal_add_html_head_link, 7.x),
  and `node_page_view()` calls it for the node's `rel="canonical"` and `rel="shortlink"`,
  so `/node/123` answers `Link: </news/alias>; rel="canonical",</node/123>;
  rel="shortlink"`; since 8.7 the targets are absolute (drupal.org/node/3024321, "make
  our canonical links relations (and all others) absolute"). A theme whose page template
  prints its own `<head>` without `$head` (or a page cache serving the header with a
  stripped template) leaves the header as the only canonical; here the head has none.
- Java servlet containers rewrite URLs with the session: "The session ID must be encoded
  as a path parameter in the URL string. The name of the parameter must be jsessionid"
  (Jakarta Servlet specification, "URL Rewriting"; `HttpServletResponse.encodeURL` and
  `encodeRedirectURL`). A client that sends no cookie (a crawler) gets a new session, and
  a new spelling of every link and redirect, on each visit: `/news/story.jsp` redirects to
  `/news/story.jsp;jsessionid=<new id>`.
- PHP's `session.use_trans_sid` ("transparent sid support", php.net/manual/en/
  session.configuration.php) appends `PHPSESSID=<id>` to the relative URLs of a page
  whose visitor sent no session cookie, so each visit lists the same article under a
  new query.
"""

from __future__ import annotations

import secrets

from aiohttp import web

from tests.local_site import LocalSite
from tests.zoo.duplicates import body_text


def drupal_node_without_head_canonical(title: str) -> str:
    """A Drupal node page whose template prints no `<link rel="canonical">`: the
    response's `Link` header is its only canonical."""
    return (
        f"<!DOCTYPE html><html lang='en' dir='ltr'><head><meta charset='utf-8' />"
        f"<title>{title} | City Desk</title></head>"
        f"<body class='path-node page-node-type-article'>"
        f"<div class='region region-content'><article role='article'><h2>{title}</h2>"
        f"<div class='field--name-body'>{body_text(title)}</div></article></div></body></html>"
    )


def serve_drupal_node(site: LocalSite, node: str, alias: str, page: str, *, version: int) -> None:
    """`node` (`/node/123`) and its `alias`, each answering with Drupal's `Link` header:
    relative targets on Drupal 7, absolute ones from 8.7."""
    target = alias if version == 7 else site.url(alias)
    shortlink = node if version == 7 else site.url(node)
    header = f'<{target}>; rel="canonical",<{shortlink}>; rel="shortlink"'
    for path in (node, alias):
        site.serve(path, page, headers={"Link": header})


def new_session_id() -> str:
    return secrets.token_hex(16).upper()  # Tomcat's: 32 hexadecimal digits


def serve_servlet_article(site: LocalSite, path: str, page: str) -> None:
    """A servlet page: without a session it redirects to its URL rewritten with a new
    `;jsessionid=`; with one (in the path) it answers the page. (`LocalSite` routes a
    path with its path parameters dropped, as the container hands the servlet its path.)"""

    async def handler(request: web.Request) -> web.StreamResponse:
        if ";jsessionid=" not in request.path:
            location = f"{path};jsessionid={new_session_id()}"
            return web.Response(status=302, headers={"Location": location})
        return web.Response(text=page, content_type="text/html", charset="utf-8")

    site.route(path, handler)


def jsessionid_spellings(path: str, count: int) -> list[str]:
    """`count` spellings of `path`, as that many cookie-less visits received them."""
    return [f"{path};jsessionid={new_session_id()}" for _ in range(count)]


def serve_trans_sid_article(site: LocalSite, path: str, page: str) -> None:
    """A PHP page reached with `?id=...&PHPSESSID=...` in any order: the session in the
    query is PHP's, the page the same whatever its value."""
    site.serve(path, page)


def trans_sid_links(path: str, query: str, count: int) -> list[str]:
    """`count` visits' spellings of one link under `session.use_trans_sid`: the session
    appended to the query, each visit a new one."""
    return [f"{path}?{query}&PHPSESSID={secrets.token_hex(16)}" for _ in range(count)]
