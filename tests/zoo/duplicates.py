"""Zoo: one article under several URLs, as CMSes publish it.

Where the behaviours come from:
- WordPress core prints `<link rel="canonical">` with the post's permalink on single posts
  since 2.9 (`rel_canonical()`, core.trac.wordpress.org changeset 11777), whatever query
  string the request carried, so Jetpack's sharing links (`?share=twitter`) and referral
  tags (`?ref=`) name the permalink;
- the WordPress AMP plugin serves the AMP view at `?amp=1` (transitional mode) or
  `/amp/` (legacy reader mode) as `<html amp>` with its own template (different markup
  and boilerplate) and a canonical naming the regular post, which the AMP validator
  requires ("The mandatory tag 'link rel=canonical' is missing");
- Drupal prints `<link rel="canonical" href="...">` with the node's path alias on
  `/node/123` and on any query string, a PHP session id in the URL (`?PHPSESSID=`,
  `?sessionid=`) included;
- a syndication partner's copy names the original on another site (Google's guidance to
  syndicators): a hint only, stored under its own URL.
"""

from __future__ import annotations

from tests.local_site import LocalSite

STORY = (
    "The harbour authority approved the new ferry timetable on Tuesday after a long "
    "consultation with residents, commuters and the two operators that share the pier."
)


def body_text(title: str, paragraphs: int = 6) -> str:
    return "".join(
        f"<p>{title}, part {i}. {STORY} Part {i} adds the details readers asked for.</p>"
        for i in range(paragraphs)
    )


def wordpress_post(title: str, canonical: str) -> str:
    """A WordPress single post: theme chrome, the canonical link in the head."""
    return (
        f"<!DOCTYPE html><html lang='en-US'><head><meta charset='UTF-8'>"
        f"<title>{title} &#8211; Harbour News</title>"
        f"<link rel='canonical' href='{canonical}' />"
        f"<link rel='shortlink' href='/?p=123' /></head>"
        f"<body class='post-template-default single single-post'>"
        f"<header class='site-header'>Harbour News menu</header>"
        f"<main><article class='post-123 post type-post'><h1 class='entry-title'>{title}</h1>"
        f"<div class='entry-content'>{body_text(title)}</div></article></main>"
        f"<footer class='site-footer'>Proudly powered by WordPress</footer></body></html>"
    )


def wordpress_amp(title: str, canonical: str) -> str:
    """The AMP plugin's view of the same post: `<html amp>`, its own template and
    boilerplate, a shorter sharing footer, the canonical naming the regular post."""
    return (
        f"<!doctype html><html amp lang='en-US'><head><meta charset='utf-8'>"
        f"<link rel='canonical' href='{canonical}'>"
        f"<title>{title} &#8211; Harbour News</title>"
        f"<style amp-boilerplate>body{{visibility:hidden}}</style>"
        f"<script async src='https://cdn.ampproject.org/v0.js'></script></head>"
        f"<body class=''><header class='amp-wp-header'><a href='/'>Harbour News</a></header>"
        f"<article class='amp-wp-article'><h1 class='amp-wp-title'>{title}</h1>"
        f"<div class='amp-wp-article-content'>{body_text(title)}"
        f"<p>Read the full version on Harbour News.</p></div></article>"
        f"<footer class='amp-wp-footer'>Back to top</footer></body></html>"
    )


def drupal_node(title: str, canonical: str) -> str:
    """A Drupal 9 node page: the canonical names the path alias."""
    return (
        f"<!DOCTYPE html><html lang='en' dir='ltr'><head>"
        f'<meta charset=\'utf-8\' /><link rel="canonical" href="{canonical}" />'
        f'<link rel="shortlink" href="/node/123" /><title>{title} | City Desk</title>'
        f"</head><body class='path-node page-node-type-article'>"
        f"<div class='region region-content'><article role='article'><h2>{title}</h2>"
        f"<div class='field--name-body'>{body_text(title)}</div></article></div></body></html>"
    )


def serve_post(site: LocalSite, paths: list[str], page: str) -> None:
    """Serve the same page (same markup, same canonical) at each of `paths`, query
    strings included (WordPress ignores the ones it does not know), with and without the
    trailing slash (redirects between the two spellings are the slash zoo's concern)."""
    for path in paths:
        route, mark, query = path.partition("?")
        other = route[:-1] if route.endswith("/") else route + "/"
        site.serve(path, page)
        site.serve(other + mark + query, page)
