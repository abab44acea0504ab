"""Zoo: metadata as CMSes declare it in the page head, for `fetcher.metadata`.

Where the behaviours come from:
- WordPress with Yoast SEO prints one JSON-LD `@graph`: the Article names its author by
  `@id` (a Person node elsewhere in the graph), the WebPage holds `datePublished` in UTC
  with its offset and the primary image by `@id` (developer.yoast.com, "Schema pieces");
  the same dates go into `article:published_time`;
- Ghost's `{{ghost_head}}` prints an Article with author and image as objects and a
  millisecond UTC date, beside OpenGraph tags (TryGhost/SDK, packages/schema-org);
- hand-written theme templates leave a trailing comma after the last JSON-LD member
  (halo-dev/halo-theme-material, structured-data.ftl), which strict JSON refuses;
- an event listing or a scheduled-post template declares a date far in the future.
"""

from __future__ import annotations

import json

from tests.local_site import LocalSite

PARAGRAPH = (
    "<p>The council met on Tuesday evening and agreed, after a long debate about the bridge "
    "repairs, to publish every contract it signs from next spring on, a change residents "
    "had asked for since the flood.</p>"
)


def _page(head: str, title: str) -> str:
    return (
        f"<!doctype html><html lang='en-GB'><head><meta charset='utf-8'>{head}</head><body>"
        "<header><nav><a href='/'>Home</a> <a href='/news/'>News</a></nav></header>"
        f"<main><article><h1>{title}</h1>{PARAGRAPH * 6}</article></main>"
        "<aside><h3>Most read</h3><ul><li><a href='/x/'>Another story</a></li></ul></aside>"
        "<footer>Proudly powered by WordPress</footer></body></html>"
    )


def wordpress_yoast(site: LocalSite, path: str) -> None:
    """WordPress + Yoast SEO: a @graph with references by @id, 08:00 UTC declared."""
    base = site.url("/")
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {
                "@type": "Article",
                "@id": f"{site.url(path)}#article",
                "headline": "Council opens its contracts",
                "author": {"@id": f"{base}#/schema/person/8c1f"},
                "isPartOf": {"@id": site.url(path)},
            },
            {
                "@type": "WebPage",
                "@id": site.url(path),
                "datePublished": "2026-03-04T08:00:00+00:00",
                "primaryImageOfPage": {"@id": f"{site.url(path)}#primaryimage"},
            },
            {
                "@type": "ImageObject",
                "@id": f"{site.url(path)}#primaryimage",
                "url": f"{base}wp-content/uploads/2026/03/bridge.jpg",
            },
            {"@type": "Person", "@id": f"{base}#/schema/person/8c1f", "name": "Jo Bloggs"},
        ],
    }
    head = (
        "<title>Council opens its contracts - Riverside News</title>"
        '<meta property="og:title" content="Council opens its contracts">'
        '<meta property="article:published_time" content="2026-03-04T08:00:00+00:00">'
        f'<script type="application/ld+json" class="yoast-schema-graph">{json.dumps(graph)}'
        "</script>"
    )
    site.serve(path, _page(head, "Council opens its contracts"))


def ghost_with_trailing_comma(site: LocalSite, path: str) -> None:
    """A Ghost-style Article whose theme left a trailing comma in the JSON-LD."""
    head = (
        "<title>Bridge repairs begin</title>"
        '<meta property="og:title" content="Bridge repairs begin">'
        '<script type="application/ld+json">{"@context": "https://schema.org", '
        '"@type": "Article", "headline": "Bridge repairs begin", '
        '"author": {"@type": "Person", "name": "Ana Li"}, '
        '"datePublished": "2026-03-05T17:45:00.000Z", '
        '"image": {"@type": "ImageObject", "url": "https://cdn.example/bridge.png"},}'
        "</script>"
    )
    site.serve(path, _page(head, "Bridge repairs begin"))


def dated_far_ahead(site: LocalSite, path: str) -> None:
    """A page declaring a publication date decades ahead (a template placeholder)."""
    head = (
        "<title>Festival programme</title>"
        '<meta property="og:title" content="Festival programme">'
        '<meta name="author" content="Events desk">'
        '<meta property="article:published_time" content="2099-07-01T10:00:00Z">'
    )
    site.serve(path, _page(head, "Festival programme"))
