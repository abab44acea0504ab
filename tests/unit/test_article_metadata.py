"""The metadata of issue 29 items 5 and 6 on corpus pages whose metadata is known (read in
their markup): modified date, section, tags and keywords, the lead image, the body as
paragraphs and as Markdown, the detected language beside the declared one, and the
language filter's decision."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta, timezone

import pytest
from lxml import etree

from fetcher.encoding import decode_html
from fetcher.extract import Extracted, extract, markdown_of
from fetcher.language import MAX_CHARS, MIN_CONFIDENCE, detect, other_language
from tests.corpus_path import CORPUS

BENCHMARK = CORPUS / "articles" / "article-extraction-benchmark" / "html"
EVAL = CORPUS / "articles" / "trafilatura-eval" / "html"
# The Wall Street Journal (2019): `article:modified_time`, `article.section` meta tags and a
# `keywords` meta of companies and topics; JSON-LD NewsArticle with its image.
WSJ = "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856"
# Vox (2019): JSON-LD with `dateModified` and `articleSection`, `article:tag`s, four <h3>
# sections in the body.
VOX = "16c30add7e96315e9cc957d85aa876ccb6b70055f0ddab51547a586117cc1f56"
# A German WordPress/Yoast page (erfolg-magazin.de): `article:section`, `article:tag`,
# `article:modified_time`, `<html lang="de-DE">`.
GERMAN = "erfolg-magazin.de.konfliktkultur.html"


def _benchmark(key: str, url: str) -> Extracted:
    html = decode_html(gzip.decompress((BENCHMARK / f"{key}.html.gz").read_bytes()), None)[0]
    return extract(html, url)


def test_a_news_page_s_modified_date_section_tags_and_lead_image() -> None:
    found = _benchmark(WSJ, "https://www.wsj.com/articles/x")
    assert found.modified_at == datetime(2019, 11, 19, 13, 3, tzinfo=UTC)
    assert found.section == "Tech"
    assert found.tags[:4] == ("Electronic Arts", "EA", "Microsoft", "MSFT")
    assert "technology" in found.tags and len(found.tags) == len(set(found.tags))
    # the lead image: the article's, not a logo or an icon
    assert found.image_url == "https://images.wsj.net/im-128022?width=1280&size=1"
    assert (found.language, found.detected_language) == ("en-US", "en")


def test_a_body_with_headings_is_kept_as_markdown_and_paragraphs() -> None:
    found = _benchmark(VOX, "https://www.vox.com/x")
    assert found.modified_at == datetime(
        2019, 11, 13, 10, 28, 18, tzinfo=timezone(timedelta(hours=-5))
    )
    assert found.section == "Science & Health"
    assert "Future Perfect" in found.tags
    assert found.markdown is not None
    headings = [line for line in found.markdown.splitlines() if line.startswith("### ")]
    assert headings[0] == "### Why Delhi\u2019s air pollution gets so bad this time of year"
    assert len(headings) == 4
    # the Markdown is the body's text with its structure (and Markdown's escapes, `\[`):
    # no word lost or added
    words = found.markdown.replace("### ", "").replace("\\", "").split()
    assert words == (found.body or "").split()
    assert len(found.paragraphs) > 40
    assert all(p.strip() == p and p for p in found.paragraphs)
    assert "\n".join(found.paragraphs) == found.body


def test_a_german_page_is_detected_german_beside_its_declared_tag() -> None:
    html = decode_html((EVAL / GERMAN).read_bytes(), None)[0]
    found = extract(html, "https://erfolg-magazin.de/konfliktkultur/")
    assert (found.language, found.detected_language) == ("de-DE", "de")
    assert found.language_confidence is not None and found.language_confidence > 0.9
    assert found.section == "Einstellung" and found.tags == ("Konfliktkultur",)
    assert found.modified_at is not None
    assert found.markdown is None  # no headings or lists in its text


def test_tags_from_keywords_lists_and_repeated_article_tags() -> None:
    head = (
        '<meta property="article:tag" content="Ferries">'
        '<meta property="article:tag" content="Harbour">'
        '<meta property="article:tag" content="ferries">'
        '<meta name="keywords" content="not, these">'
    )
    body = (
        "<article><p>"
        + "The ferry terminal closes for repairs next month. " * 20
        + "</p></article>"
    )
    found = extract(f"<html><head>{head}</head><body>{body}</body></html>", "https://x.example/a")
    assert found.tags == ("Ferries", "Harbour")  # the first spelling of each, in order
    listed = (
        '<script type="application/ld+json">'
        '{"@type": "NewsArticle", "keywords": ["A", "B"]}</script>'
    )
    found = extract(f"<html><head>{listed}{head}</head><body>{body}</body></html>", None)
    assert found.tags == ("A", "B")


def test_detection_is_bounded_and_says_nothing_of_too_little_text() -> None:
    assert detect("") is None and detect("Hallo") is None
    german = "Die Regierung hat am Dienstag neue Regeln für den Hafen beschlossen. " * 200
    found = detect("x" * 10 + german)
    assert found is not None and found.language == "de"
    # only the first MAX_CHARS characters are read: English after them changes nothing
    assert detect(german[:MAX_CHARS] + " The government agreed new rules." * 500) == detect(
        german[:MAX_CHARS]
    )


@pytest.mark.parametrize(
    ("detected", "confidence", "languages", "kept"),
    [
        ("de", 0.99, {"en"}, False),
        ("de", 0.99, {"en", "de"}, True),
        ("de", MIN_CONFIDENCE - 0.01, {"en"}, True),  # unsure: kept
        (None, None, {"en"}, True),  # no text to tell
        ("de", 0.99, None, True),  # the source keeps any language
    ],
)
def test_the_language_filter_drops_only_confident_other_languages(
    detected: str | None, confidence: float | None, languages: set[str] | None, kept: bool
) -> None:
    page = Extracted(body="...", detected_language=detected, language_confidence=confidence)
    reason = other_language(page, frozenset(languages) if languages else None)
    assert (reason is None) is kept
    if not kept:
        assert (
            reason == "language: the text is in de (detected, confidence 0.99); the source keeps en"
        )


def test_markdown_marks_headings_at_their_level_and_escapes_block_syntax() -> None:
    tree = etree.fromstring(
        '<body><head rend="h3">What <hi>changes</hi></head><list><item>a</item></list></body>'
    )
    text = "Intro\n# not a heading\n1. not a list\nWhat changes\n- one\n- two\n  - nested\nEnd"
    assert markdown_of(text, tree) == (
        "Intro\n\n\\# not a heading\n\n1\\. not a list\n\n### What changes\n\n"
        "- one\n- two\n  - nested\n\nEnd"
    )
    assert markdown_of("Just text", etree.fromstring("<body><p>Just text</p></body>")) is None


def test_markdown_finds_a_heading_whatever_its_spacing_and_only_the_heading() -> None:
    """A line is looked up as a heading only when its ends are a heading's: one with
    other white space inside is still found, one with the same ends but other words is
    not."""
    tree = etree.fromstring('<body><head rend="h2">Big \t news</head><p>x</p></body>')
    text = "Big\u00a0  news\nBig and no news\nBig news."
    assert markdown_of(text, tree) == "## Big\u00a0  news\n\nBig and no news\n\nBig news."


_PARAGRAPHS = "".join(
    f"<p>Paragraph {n} of the harbour story, with enough words to be read as text.</p>"
    for n in range(6)
)


def _headline_page(extra: str = "") -> str:
    return (
        "<html><head><title>Harbour bridge reopens | City News</title></head><body><article>"
        f"<h1>Harbour bridge reopens</h1>{_PARAGRAPHS}{extra}</article></body></html>"
    )


def test_a_headline_the_body_drops_leaves_the_markdown_too() -> None:
    """The readings keep the page's <h1>, which the body drops as the title's: the Markdown
    drops it too, and with no other heading or list it is none (the body holds the text);
    with another heading it keeps that one, word for word the body's text."""
    alone = extract(_headline_page(), "https://example.org/story/1")
    assert alone.body and alone.body.startswith("Paragraph 0")
    assert alone.markdown is None
    sections = extract(
        _headline_page(f"<h2>What changes for drivers</h2>{_PARAGRAPHS}"),
        "https://example.org/story/2",
    )
    assert sections.markdown is not None
    assert "## What changes for drivers" in sections.markdown.splitlines()
    assert "Harbour bridge reopens" not in sections.markdown
    words = sections.markdown.replace("## ", "").split()
    assert words == (sections.body or "").split()
