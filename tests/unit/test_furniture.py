"""The furniture taken out before trafilatura's precise reading (`fetcher.furniture`): the
reading is the one trafilatura makes of the whole page, on every corpus page, on
bench.fetch's pages and on generated pages full of the cases its cleaning treats apart
(nested furniture, forum JSON-LD in a footer, an `<h1>` in a nav inside an infinite-scroll
container, a figure holding a table through a nav); and the recall reading still gets the
page as parsed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trafilatura import xpaths
from trafilatura.settings import MANUALLY_CLEANED

from bench.extract_identity import pages
from fetcher.encoding import decode_html
from fetcher.extract import (
    THIN_SHARE,
    Reading,
    _trafilatura_reading,
    lxml_page,
    main_reading,
    without_scripts,
)
from fetcher.furniture import FURNITURE, without_furniture


def _precise(html: str, *, pruned: bool) -> Reading:
    page = without_scripts(lxml_page(html))
    assert page is not None
    return _trafilatura_reading(
        without_furniture(page) if pruned else page, None, favor_precision=True
    )


def _naive(html: str) -> Reading:
    """The precise reading with every piece of furniture deleted, guards or not: what the
    guards are there for."""
    page = without_scripts(lxml_page(html))
    assert page is not None
    for node in list(page.iter(*FURNITURE)):
        node.drop_tree()
    return _trafilatura_reading(page, None, favor_precision=True)


def _pages() -> Iterator[tuple[str, str]]:
    """bench.extract_identity's pages (the corpus's articles, bench.fetch's sets), decoded."""
    for name, body, _url in pages():
        yield name, decode_html(body, None)[0]


def test_furniture_is_what_trafilatura_cleans_anyway() -> None:
    assert set(FURNITURE) <= set(MANUALLY_CLEANED)


def test_the_precise_reading_is_the_same_without_the_furniture_on_every_corpus_page() -> None:
    count = 0
    for name, html in _pages():
        assert _precise(html, pruned=True) == _precise(html, pruned=False), name
        count += 1
    assert count > 50


ARTICLE = "".join(
    f"<p>Paragraph {k} of the article, with enough words in it to be kept by the reading "
    f"that favours precision over recall, and a little more text.</p>"
    for k in range(6)
)

FORUM_JSON_LD = '<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>'


def _page(body: str, head: str = "") -> str:
    return f"<html><head><title>T</title>{head}</head><body>{body}</body></html>"


# Pages whose furniture trafilatura's precise reading does not simply delete: each with a
# text its reading holds, and which deleting every piece of furniture up front loses.
GUARDED = {
    # its cleaning stops deleting <nav>s after one that holds another (lxml walks into the
    # detached copy): the later nav's text is in its reading
    "nested furniture": (
        "<nav><nav>menu</nav>more</nav><main>" + ARTICLE + "<nav><p>Kept by the quirk of "
        "the iteration, a nav after the nested one, with words enough in it to count as "
        "a paragraph of the article's text in the reading.</p></nav></main>",
        "quirk",
    ),
    # a thread-forum's JSON-LD in a footer: a comment list is then content (the precise
    # reading prunes comment lists, <dl> ones after its tag conversion, only on others)
    "forum JSON-LD in a footer": (
        "<main><h1>Thread</h1>" + ARTICLE + "<dl class='comments'><dd>First reply in the "
        "thread, long enough to be a post of its own and kept as the forum's content by "
        "the reading.</dd></dl></main><footer>" + FORUM_JSON_LD + "site footer</footer>",
        "First reply",
    ),
    # the infinite-scroll prune keeps a container holding the page's <h1>
    "a headline in a nav": (
        "<div class='infinite-scroll'><nav><h1>Headline</h1></nav>" + ARTICLE + "</div>",
        "Paragraph 3",
    ),
    # a figure holding a table becomes a division, which the cleaning keeps
    "a table in a nav in a figure": (
        ARTICLE + "<figure><nav><table><tr><td>cell</td></tr></table></nav><p>Figure text "
        "kept because the figure holds a table and becomes a division, long enough to be "
        "a paragraph.</p></figure>",
        "Figure text",
    ),
}


@pytest.mark.parametrize("case", sorted(GUARDED))
def test_furniture_that_could_change_the_reading_stays(case: str) -> None:
    body, held = GUARDED[case]
    html = _page(body)
    whole = _precise(html, pruned=False)
    assert held in (whole.text or "")
    assert _precise(html, pruned=True) == whole
    if case == "a headline in a nav" and not hasattr(xpaths, "RAW_TREE_PRUNE_XPATH"):
        return  # trafilatura before 2.3 (the floor, 2.2) has no infinite-scroll prune
    assert _naive(html) != whole


def test_the_recall_reading_gets_the_page_as_parsed() -> None:
    """A thin precise reading is redone with the default balance, on the whole page (its
    baseline and escalation measure the raw tree), not the one without furniture."""
    html = _page(
        "<nav><a href='/a'>Home</a> <a href='/b'>News</a></nav><div><div>"
        + " ".join(f"Loose text sentence {k} outside any paragraph." for k in range(40))
        + "</div></div><footer>Footer words here</footer>"
    )
    page = without_scripts(lxml_page(html))
    reading = main_reading(html, None, page)
    precise = _precise(html, pruned=False)
    assert len(precise.text or "") < THIN_SHARE * len(html)
    recall = _trafilatura_reading(without_scripts(lxml_page(html)), None, favor_precision=False)
    assert reading == (recall if recall.text else precise)


_TAGS = ("div", "p", "nav", "footer", "aside", "menu", "section", "figure", "table", "h1")
_CLASSES = ("", "comment", "infinite-scroll", "content", "mvp-post-add-box")
_WORDS = st.sampled_from(["alpha", "beta gamma", "delta epsilon zeta", "eta theta iota kappa"])


@st.composite
def _markup(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 9))
        if kind < 3 or depth >= 4:
            words = draw(st.lists(_WORDS, min_size=1, max_size=12))
            parts.append(" ".join(words) + (" " * draw(st.integers(0, 1))))
        elif kind == 3:
            parts.append(FORUM_JSON_LD)
        elif kind == 4:
            parts.append("<table><tr><td>" + draw(_WORDS) + "</td></tr></table>")
        else:
            tag = draw(st.sampled_from(_TAGS))
            cls = draw(st.sampled_from(_CLASSES))
            inner = draw(_markup(depth + 1))
            attr = f" class='{cls}'" if cls else ""
            if tag == "table":
                parts.append(f"<table><tr><td{attr}>{inner}</td></tr></table>")
            else:
                parts.append(f"<{tag}{attr}>{inner}</{tag}>")
    return "".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_markup())
def test_the_precise_reading_is_the_same_on_generated_pages(body: str) -> None:
    html = _page(body + ARTICLE)
    assert _precise(html, pruned=True) == _precise(html, pruned=False)
