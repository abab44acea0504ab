"""The bound on resiliparse's plain text (`fetcher.plain_text_bound`) holds: on every
corpus page, on bench.fetch's pages and on generated markup full of what makes it write
more than a page's text (nested and stray lists, blocks, line breaks, table cells,
preformatted text, entities, whitespace, scripts and styles, SVG and MathML, misnested
and unclosed tags), for its main-content text and for its whole text."""

from __future__ import annotations

import math
from collections.abc import Iterator

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from resiliparse.extract.html2text import extract_plain_text
from selectolax.lexbor import LexborHTMLParser

from bench.extract_identity import pages
from bench.fetch import PAGE_SETS
from fetcher.encoding import decode_html
from fetcher.plain_text_bound import plain_text_bound


def _longest(html: str) -> int:
    """The longer of resiliparse's main-content and whole texts, as main_reading asks."""
    return max(
        len(
            extract_plain_text(
                html, main_content=main, alt_texts=False, links=False, list_bullets=False
            )
        )
        for main in (True, False)
    )


def _holds(html: str) -> None:
    assert plain_text_bound(LexborHTMLParser(html)) >= _longest(html)


def _pages() -> Iterator[tuple[str, str]]:
    """bench.extract_identity's pages (the corpus's articles, bench.fetch's sets), decoded."""
    for name, body, _url in pages():
        yield name, decode_html(body, None)[0]


def test_the_bound_holds_on_every_corpus_and_bench_page() -> None:
    count = 0
    for name, html in _pages():
        bound = plain_text_bound(LexborHTMLParser(html))
        assert bound >= _longest(html), name
        count += 1
    assert count > 50


def test_the_bound_is_close_enough_to_decide_the_large_pages() -> None:
    """On bench.fetch's large pages the bound is under twice the precise reading (their
    text is 18 KB of 100 KB): main_reading decides without resiliparse."""
    html = PAGE_SETS["large"][1](1, 2)
    bound = plain_text_bound(LexborHTMLParser(html))
    assert bound < 2 * 17_000
    assert plain_text_bound(LexborHTMLParser(html), limit=1_000) == math.inf


_TEXTS = st.sampled_from(
    [
        "a",
        "b",
        "xy",
        "word",
        "two words",
        "  spaced \n\t out  ",
        " ",
        "\n",
        "&amp;&lt;&nGt;&#x1F600;&#0;&NotNestedGreaterGreater;",
        "caf\u00e9 \u00fc\u00df \u4e2d\u6587",
        "\u00a0nbsp\u00a0",
        "x\x00y",
        "\r\n",
    ]
)
_BLOCKS = ("div", "p", "h1", "h2", "h4", "h6", "ul", "ol", "li", "pre", "blockquote", "section")
_BLOCKS += ("article", "main", "nav", "footer", "span", "b", "a", "td", "th", "tr", "table")
_BLOCKS += ("dl", "dd", "dt", "textarea", "noscript", "template", "svg", "math", "select")
_BLOCKS += ("option", "figure", "header", "aside", "form", "button", "label", "code", "xmp")
_CLASSES = ("", "article-body", "main-content", "nav", "footer", "comments", "hidden", "sidebar")
_BREAKS = ("<br>", "<br/>", "</br>", "<br><br><br>", "<hr>")
_SKIPPED = (
    "<script>var a = '<p>x</p>';</script>",
    "<style>p { x: y }</style>",
    "<!-- comment -->",
    "<svg><style>s</style><script>t</script></svg>",
    "<math><style>m</style><mi>x</mi></math>",
)
# unclosed, stray and empty elements (an empty one is walked once, at its start)
_STRAY = ("<li>", "</li>", "<p>", "</p>", "<ul>", "</ul>", "<b>", "</b>", "<td>", "<table>")
_STRAY += ("<pre>", "<ul></ul>", "<ol></ol>", "<li></li>", "<pre></pre>", "<p></p>")


@st.composite
def _markup(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.integers(0, 12))
        if kind < 4 or depth >= 6:
            parts.append(draw(_TEXTS))
        elif kind == 4:
            parts.append(draw(st.sampled_from(_BREAKS)))
        elif kind == 5:
            parts.append(draw(st.sampled_from(_SKIPPED)))
        elif kind == 6:
            parts.append(draw(st.sampled_from(_STRAY)))
        else:
            tag = draw(st.sampled_from(_BLOCKS))
            cls = draw(st.sampled_from(_CLASSES))
            attr = f' class="{cls}"' if cls else ""
            parts.append(f"<{tag}{attr}>{draw(_markup(depth + 1))}</{tag}>")
    return "".join(parts)


def _nested_list(depth: int, items: int) -> str:
    return "".join(
        f"<ul><li>item {k} <b>bold</b> tail"
        + (_nested_list(depth - 1, items) if depth else "")
        + "</li></ul>"
        for k in range(items)
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_markup())
@example("<li>stray</li>" + _nested_list(6, 2) + "<p>after</p>" * 3)
@example("<ol>" + "<li>a<br>b<br><br>c</li>" * 20 + "</ol>")
@example("<table><tr>" + "<td>x</td><th>y</th>" * 30 + "</tr></table>")
@example("<b><p>1</b>2</p>" + "<p>x" * 50)
@example("<ul></ul><ol></ol>" * 5 + "<p>after empty lists, indented for ever</p>" * 5)
@example("")  # an empty body (selectolax 0.3.20 crashed on its walk)
def test_the_bound_holds_on_generated_markup(body: str) -> None:
    _holds(f"<html><head><title>t</title></head><body>{body}</body></html>")
    _holds(body)


def test_lists_nested_deeper_than_menus_are_left_to_resiliparse() -> None:
    """A hostile page of lists hundreds deep would have each list's text read once per
    list around it (quadratic): the bound gives up and resiliparse (linear) decides."""
    deep = "<ul><li>x" * 300 + "</li></ul>" * 300
    tree = LexborHTMLParser(f"<html><body><p>{'word ' * 5000}</p>{deep}</body></html>")
    assert plain_text_bound(tree, 10**9) == math.inf
    menu = "<ul><li>a<ul><li>b<ul><li>c</li></ul></li></ul></li></ul>"
    shallow = LexborHTMLParser(f"<html><body>{menu}</body></html>")
    assert plain_text_bound(shallow, 10**9) < math.inf
