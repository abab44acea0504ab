"""Zoo: articles whose text is in their structured data, and a paywall that says so
(issue 29 item 3).

Where the behaviours come from:
- Next.js recommends rendering structured data "as a `<script>` tag in your `layout.js`
  or `page.js` components" (nextjs.org/docs/app/guides/json-ld); a client-rendered news
  page (Next.js with client components, Arc XP's Fusion front end) sends an app shell,
  `<div id="__next">` with the headline and standfirst rendered on the server, the body's
  placeholder and its `__NEXT_DATA__` ids, and the article only in the JSON-LD
  `NewsArticle`'s `articleBody`, schema.org's property for "the
  actual body of the article" (schema.org/articleBody), here in Yoast-style `@graph` form.
  What a browser shows once the script has run is that body; the HTML alone holds its
  31-word description.
- Google's paywalled-content markup: the `NewsArticle` says `"isAccessibleForFree":
  false` and names the gated part with `hasPart` `{"@type": "WebPageElement",
  "isAccessibleForFree": false, "cssSelector": ".paywall"}` (developers.google.com/search/
  docs/appearance/structured-data/paywalled-content); a site that does not want browsers
  to have the content "choose[s] a paywall implementation that doesn't serve paywalled
  content to browsers": a reader without a subscription (a crawler) gets the teaser and
  an empty `.paywall`.
"""

from __future__ import annotations

import json

SENTENCES = (
    "The regional rail operator confirmed on Monday that the night trains between the coast "
    "and the capital will run again from March, after a two-year pause for track renewal.",
    "Tickets go on sale next week, and the operator said the sleeper carriages had been "
    "refitted with wider berths, new washrooms and sockets in every compartment.",
    "Passenger groups welcomed the news but asked for a later departure on Fridays, when "
    "most of the demand comes from weekend travellers heading to the mountains.",
)
PARAGRAPHS = [f"{SENTENCES[i % 3]} (Part {i + 1} of the report.)" for i in range(10)]
DESCRIPTION = (
    "Night trains between the coast and the capital return in March after two years of "
    "track renewal, with refitted sleeper carriages, new washrooms and sockets, and tickets "
    "on sale next week."
)  # 31 words: what the HTML alone holds


def nextjs_article(title: str) -> str:
    """A client-rendered article: the shell, the description, the text in JSON-LD."""
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebPage", "@id": "#webpage", "name": title},
            {
                "@type": "NewsArticle",
                "@id": "#article",
                "isPartOf": {"@id": "#webpage"},
                "headline": title,
                "description": DESCRIPTION,
                "datePublished": "2026-05-04T07:30:00Z",
                "author": {"@type": "Person", "name": "Mara Lind"},
                "articleBody": "\n\n".join(PARAGRAPHS),
            },
        ],
    }
    # Next.js escapes "<" in the payload, as its guide says to (XSS).
    ld = json.dumps(graph).replace("<", "\\u003c")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title} | Rail Daily</title>"
        f"<meta name='description' content='{DESCRIPTION}'>"
        f"<meta property='og:description' content='{DESCRIPTION}'>"
        f"<script type='application/ld+json'>{ld}</script></head>"
        "<body><div id='__next'><header><a href='/'>Rail Daily</a>"
        "<nav><a href='/news'>News</a> <a href='/travel'>Travel</a></nav></header>"
        f"<main><article><h1>{title}</h1><p class='standfirst'>{DESCRIPTION}</p>"
        "<p class='byline'>By Mara Lind</p>"
        "<div class='article-body' aria-busy='true'></div></article></main>"
        "<footer>© Rail Daily</footer></div>"
        "<script id='__NEXT_DATA__' type='application/json'>"
        '{"props":{"pageProps":{"articleId":"a8f3"}},"page":"/[section]/[slug]"}</script>'
        "<script src='/_next/static/chunks/main.js' defer></script></body></html>"
    )


def paywalled_article(title: str) -> str:
    """Google's example shape, served to a reader without a subscription."""
    ld = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": title,
        "datePublished": "2026-05-04T07:30:00Z",
        "description": DESCRIPTION,
        "isAccessibleForFree": False,
        "hasPart": {
            "@type": "WebPageElement",
            "isAccessibleForFree": False,
            "cssSelector": ".paywall",
        },
    }
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title} | Rail Daily</title>"
        f"<script type='application/ld+json'>{json.dumps(ld)}</script></head>"
        f"<body><article><h1>{title}</h1>"
        f"<div class='non-paywall'><p>{PARAGRAPHS[0]}</p><p>{PARAGRAPHS[1]}</p></div>"
        "<div class='paywall'></div>"
        "<aside class='subscribe'>Subscribe to Rail Daily to keep reading.</aside>"
        "</article></body></html>"
    )


def paywalled_article_served_whole(title: str) -> str:
    """The same page as the site serves it to a subscriber: the gated part is there."""
    whole = "".join(f"<p>{p}</p>" for p in PARAGRAPHS[2:])
    return paywalled_article(title).replace(
        "<div class='paywall'></div>", f"<div class='paywall'>{whole}</div>"
    )
