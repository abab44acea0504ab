"""Listings keep what tells rows apart: a URL's host and last path segment."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from frontier.short_text import cut_middle, short_url

SLUGGED = "https://www.example-news.com/2026/11/27/politics/{}-minister-resigns-after-vote.html"


def test_news_urls_that_differ_in_their_slug_stay_apart() -> None:
    one, two = (short_url(SLUGGED.format(word), 60) for word in ("finance", "health"))
    assert one != two
    assert one.startswith("https://www.example-news.com/") and len(one) <= 60
    assert one.startswith("https://www.example-news.com/finance-")
    assert one.endswith("after-vote.html")


def test_the_last_segment_whole_when_it_fits() -> None:
    url = "https://news.example/section/sub/deeper/and-deeper/story-123?page=2"
    short = short_url(url, 50)
    assert short == "https://news.example/section/…/story-123?page=2"


def test_short_enough_is_left_alone() -> None:
    assert short_url("https://a.example/x", 60) == "https://a.example/x"


def test_a_name_is_cut_in_the_middle() -> None:
    assert cut_middle("Regional Broadcasting Corporation", 16) == "Regiona…poration"


@given(st.text(min_size=0, max_size=300), st.integers(min_value=8, max_value=120))
def test_never_longer_than_asked(text: str, width: int) -> None:
    assert len(short_url(text, width)) <= width
    assert len(short_url("https://h.example/" + text, width)) <= width
    assert len(cut_middle(text, width)) <= width
