"""Text from structured data (issue 29 item 3): the body from schema.org `articleBody`
(JSON-LD, `@graph`, arrays, microdata) when the HTML's text is thin beside it, and the
`paywalled` flag of a page declaring its article not free (`isAccessibleForFree`, the
`hasPart` cssSelector form), without I/O (`fetcher.extract`, `fetcher.metadata`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser

from fetcher.extract import TEASER_WORDS, extract
from fetcher.metadata import MAX_JSON_LD_CHARS, microdata_body, read_metadata

URL = "https://news.example.com/2026/05/ferry"
SENTENCE = (
    "The harbour authority approved the new ferry timetable after a long consultation "
    "with residents, commuters and the two operators that share the pier."
)
PARAGRAPHS = [f"Paragraph {i}. {SENTENCE}" for i in range(12)]
WHOLE = "\n\n".join(PARAGRAPHS)
DESCRIPTION = "The new ferry timetable is approved."


def page(*scripts: Any, body: str = "", head: str = "") -> str:
    """A client-rendered page: an empty app shell unless `body` says otherwise."""
    ld = "".join(
        f'<script type="application/ld+json">{s if isinstance(s, str) else json.dumps(s)}</script>'
        for s in scripts
    )
    return (
        f"<!doctype html><html lang='en'><head><title>Ferry timetable approved</title>"
        f"<meta name='description' content='{DESCRIPTION}'>{head}{ld}</head>"
        f"<body><div id='__next'>{body or '<p>Loading…</p>'}</div>"
        f"<script id='__NEXT_DATA__' type='application/json'>{{}}</script></body></html>"
    )


def article(**fields: Any) -> dict[str, Any]:
    return {"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Ferry", **fields}


@pytest.mark.parametrize(
    "ld",
    [
        article(articleBody=WHOLE),
        # inside @graph, Yoast-style, beside a WebPage
        {
            "@context": "https://schema.org",
            "@graph": [
                {"@type": "WebPage", "@id": "#page", "name": "Ferry"},
                {"@type": "NewsArticle", "isPartOf": {"@id": "#page"}, "articleBody": WHOLE},
            ],
        },
        # a list at the top level, the article second
        [{"@type": "Organization", "name": "City Desk"}, article(articleBody=WHOLE)],
        # articleBody as a list of paragraphs
        article(articleBody=PARAGRAPHS),
        # markup left inside articleBody
        article(articleBody="".join(f"<p>{p}</p>" for p in PARAGRAPHS)),
    ],
)
def test_a_client_rendered_page_takes_its_body_from_json_ld(ld: Any) -> None:
    result = extract(page(ld), URL)
    assert result.body is not None
    for paragraph in PARAGRAPHS:
        assert paragraph in result.body
    assert result.extractor == "generic" and not result.paywalled
    assert result.word_count > 200


def test_microdata_article_body_is_read_when_the_html_around_it_is_thin() -> None:
    hidden = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html = page(
        body=(
            "<div itemscope itemtype='https://schema.org/NewsArticle'>"
            "<h1 itemprop='headline'>Ferry</h1>"
            f"<div itemprop='text articleBody' hidden>{hidden}</div></div>"
        )
    )
    assert microdata_body(LexborHTMLParser(html)) == "\n".join(PARAGRAPHS)
    result = extract(html, URL)
    assert result.body is not None and all(p in result.body for p in PARAGRAPHS)
    on_meta = page(head=f"<meta itemprop='articleBody' content='{WHOLE}'>")
    assert PARAGRAPHS[-1] in (extract(on_meta, URL).body or "")


def test_a_page_whose_html_holds_the_article_keeps_its_own_text() -> None:
    html_body = "<article><h1>Ferry</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    html_body += "<p>An update added after the structured data was written.</p></article>"
    result = extract(page(article(articleBody=PARAGRAPHS[0]), body=html_body), URL)
    assert result.body is not None and "An update added" in result.body


def test_a_short_article_body_does_not_replace_a_longer_html_text() -> None:
    html_body = "<article>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:6]) + "</article>"
    result = extract(page(article(articleBody=DESCRIPTION), body=html_body), URL)
    assert result.body is not None and PARAGRAPHS[5] in result.body


TEASER = f"<article><h1>Ferry</h1><p>{SENTENCE}</p><p>Subscribe to keep reading.</p></article>"


@pytest.mark.parametrize("value", [False, "False", "false", [False]])
def test_a_page_declared_not_free_with_a_teaser_is_paywalled(value: Any) -> None:
    result = extract(page(article(isAccessibleForFree=value), body=TEASER), URL)
    assert result.paywalled
    assert result.body is not None and SENTENCE in result.body  # the teaser, flagged


def test_the_has_part_form_flags_a_page_whose_gated_part_is_missing() -> None:
    ld = article(
        isAccessibleForFree=False,
        hasPart={
            "@type": "WebPageElement",
            "isAccessibleForFree": False,
            "cssSelector": ".paywall",
        },
    )
    assert read_metadata(LexborHTMLParser(page(ld))).gated == (".paywall",)
    flagged = extract(page(ld, body=TEASER + "<div class='paywall'></div>"), URL)
    assert flagged.paywalled
    # The gated part served whole (as to Googlebot): the article is whole.
    whole = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    served = extract(
        page(ld, body=f"<article>{TEASER}<div class='paywall'>{whole}</div></article>"), URL
    )
    assert not served.paywalled


def test_a_page_declared_not_free_but_whole_is_not_flagged() -> None:
    whole = "<article>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + "</article>"
    assert len(WHOLE.split()) > TEASER_WORDS
    assert not extract(page(article(isAccessibleForFree=False), body=whole), URL).paywalled
    # whole in its JSON-LD though the HTML shows a teaser: the body is the article
    result = extract(page(article(isAccessibleForFree=False, articleBody=WHOLE), body=TEASER), URL)
    assert not result.paywalled and PARAGRAPHS[-1] in (result.body or "")


def test_free_pages_and_bad_selectors_are_not_flagged() -> None:
    assert not extract(page(article(isAccessibleForFree=True), body=TEASER), URL).paywalled
    assert not extract(page(article(), body=TEASER), URL).paywalled
    ld = article(
        hasPart={"@type": "WebPageElement", "isAccessibleForFree": False, "cssSelector": "[[["}
    )
    assert extract(page(ld, body=TEASER), URL).paywalled  # declared; its part not found


def test_json_ld_is_bounded() -> None:
    huge = json.dumps(article(articleBody="word " * (MAX_JSON_LD_CHARS // 5 + 10)))
    assert len(huge) > MAX_JSON_LD_CHARS
    assert read_metadata(LexborHTMLParser(page(huge))).article_body is None
    deep = "[" * 100_000 + "]" * 100_000  # deeper than Python's JSON parser goes
    result = extract(page(deep, article(articleBody=WHOLE)), URL)
    assert result.body is not None and PARAGRAPHS[-1] in result.body
