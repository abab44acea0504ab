"""The HTTP `Link` header (RFC 8288) as the fetcher reads it for a canonical
(`frontier.link_header`), and how it counts beside the page's `<link rel="canonical">`
(`fetcher.canonical.page_canonical_claim`), without I/O."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict, CIMultiDictProxy

from fetcher.canonical import page_canonical_claim
from frontier.link_header import Link, canonical_from_links, link_values, parse_links

BASE = "https://city.example.org/node/69?page=2"
PAGE = "https://city.example.org/node/69?page=2"


def test_drupal_7_sends_the_canonical_and_the_shortlink_in_one_header() -> None:
    # drupal_add_html_head_link(..., TRUE): relative targets, two links, one header
    links = parse_links(['</news/ferry>; rel="canonical",</node/69>; rel="shortlink"'], BASE)
    assert links == [
        Link("https://city.example.org/news/ferry", ("canonical",), (("rel", "canonical"),)),
        Link("https://city.example.org/node/69", ("shortlink",), (("rel", "shortlink"),)),
    ]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        # several headers, a token rel and a quoted one, relative targets
        (["<https://a.example/p>; rel=canonical"], "https://a.example/p"),
        (["</x>; rel=next", "</p>; rel=canonical"], "https://city.example.org/p"),
        (["<p>; rel=canonical"], "https://city.example.org/node/p"),
        # rel is a token list, in any case
        (['</p>; rel="Canonical shortlink"'], "https://city.example.org/p"),
        (['</p>; REL="prev canonical"'], "https://city.example.org/p"),
        # a ";" or "," inside the target or a quoted parameter is not a separator
        (["</a;jsessionid=1E6F>; rel=canonical"], "https://city.example.org/a;jsessionid=1E6F"),
        (['</p>; title="a; b, <c>"; rel=canonical'], "https://city.example.org/p"),
        (['</p>; title="a \\"q\\"";rel=canonical'], "https://city.example.org/p"),
        # spaces around ";" and "=", none between links
        (["</p> ;rel = canonical,</q>;rel=next"], "https://city.example.org/p"),
        # only the first rel counts (RFC 8288 section 3.3)
        (["</p>; rel=next; rel=canonical"], None),
        # not canonical, several that disagree, or malformed
        (['</p>; rel="canonicalx"'], None),
        (["</p>; rel=canonical", "</q>; rel=canonical"], None),
        (["</p>; rel=canonical, </p>; rel=canonical"], "https://city.example.org/p"),
        (["https://a.example/p; rel=canonical"], None),  # no angle brackets
        (["</p; rel=canonical"], None),  # unclosed
        (["</p>; rel=canonical junk, </q>; rel=canonical"], "https://city.example.org/q"),
        (['garbage "x, y", </q>; rel=canonical'], "https://city.example.org/q"),
        ([""], None),
        ([], None),
    ],
)
def test_canonical_from_links(headers: list[str], expected: str | None) -> None:
    assert canonical_from_links(headers, BASE) == expected


def test_link_values_reads_every_link_header_of_a_multidict() -> None:
    headers = CIMultiDict([("Link", "</a>; rel=next"), ("link", "</b>; rel=canonical")])
    assert link_values(CIMultiDictProxy(headers)) == ("</a>; rel=next", "</b>; rel=canonical")
    assert link_values({"Link": "</b>; rel=canonical"}) == ("</b>; rel=canonical",)
    assert link_values({}) == ()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet='<>;,="\\ \trel=canonicalxp/:ah', max_size=40), max_size=3))
def test_any_header_text_parses_without_an_error(headers: list[str]) -> None:
    for link in parse_links(headers, BASE):
        assert link.target.startswith("https://") or ":" in link.target
        assert all(token == token.lower() for token in link.rel)


@pytest.mark.parametrize(
    ("tag", "header", "expected"),
    [
        (None, None, None),
        (None, "https://city.example.org/news/ferry", "https://city.example.org/news/ferry"),
        ("/news/ferry", None, "https://city.example.org/news/ferry"),
        # both, agreeing once normalised
        (
            "/news/ferry/",
            "https://city.example.org/news/ferry",
            "https://city.example.org/news/ferry",
        ),
        # both, disagreeing: neither is trusted
        ("/news/ferry", "https://city.example.org/news/other", None),
        # the header under the same trust rules as the tag: another site is ignored
        (None, "https://partner.example.com/news/ferry", None),
        ("/news/ferry", "https://partner.example.com/news/ferry", None),
        # a header naming the page itself is its own claim
        (None, PAGE, PAGE),
    ],
)
def test_the_header_counts_like_the_tag(
    tag: str | None, header: str | None, expected: str | None
) -> None:
    assert page_canonical_claim(PAGE, tag, header) == expected
