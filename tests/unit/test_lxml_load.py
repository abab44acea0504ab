"""`fetcher.lxml_load.load` makes the tree trafilatura's own loader makes, with whichever
trafilatura is installed (the floors' run checks 2.2): on the corpus's pages, on
bench.fetch's, and on pages made for each of the loader's repairs and fallbacks."""

from __future__ import annotations

import gzip

import pytest
from lxml import etree
from lxml.html import HtmlElement
from trafilatura.utils import load_html

from bench.fetch import large_page_html, news_page_html, page_html
from fetcher.encoding import decode_html
from fetcher.lxml_load import _unrepaired, load
from tests.corpus_path import CORPUS

ARTICLE = "<p>Ein Satz \u00fcber das Wetter, \u2018quoted\u2019.</p>"
LONG = "<div>" + "x" * 5000 + "</div>"

# (name, page): each one a path through the loader's repairs
MADE = {
    "plain": f"<!DOCTYPE html>\n<html><body>{ARTICLE}</body></html>",
    "one line with a doctype": f"<!doctype html><html><body>{ARTICLE}</body></html>",
    "one line without": f"<html><body>{ARTICLE}</body></html>",
    "a faulty doctype": f'<!DOCTYPE html PUBLIC "x" "y"/>\n<html><body>{ARTICLE}</body></html>',
    "a faulty doctype, one line": f"<!DOCTYPE html/><html><body>{ARTICLE}</body></html>",
    "a self-closed html": f"<!DOCTYPE html>\n<html lang='en'/>\n<body>{ARTICLE}</body>",
    "html and a void tag on the first line": f"<html><head><meta charset='utf-8'/>\n{ARTICLE}",
    "a long first line ending />": f"<html><head>{LONG}<meta charset='utf-8'/>\n{ARTICLE}",
    "a long first line": f"<html><head>{LONG}<meta charset='utf-8'>\n{ARTICLE}</html>",
    "the fifth line": f"<!DOCTYPE html>\n\n\n\n<html lang='en'/>\n<body>{ARTICLE}</body>",
    "crlf lines": f"<!DOCTYPE html>\r\n<html>\r\n<body>{ARTICLE}</body>\r\n</html>",
    "other line breaks": f"<!DOCTYPE html>\x85<html lang='x'/>\u2028<body>{ARTICLE}</body>",
    "a paragraph separator": f"<html>\u2029<head/>\u2029<body>{ARTICLE}</body></html>",
    "a control character": f"<html><body><p>bell\x07 and nul\x00</p>{ARTICLE}</body></html>",
    "a vertical tab": f"<html>\x0b<head/><body>{ARTICLE}</body></html>",
    "a noncharacter": f"<html><body><p>x\ufffey\uffff</p>{ARTICLE}</body></html>",
    "a lone surrogate": f"<html><body><p>x\ud800y</p>{ARTICLE}</body></html>",
    "an encoding declaration": (
        f"<?xml version='1.0' encoding='utf-8'?><html><body>{ARTICLE}</body></html>"
    ),
    "old Mac line breaks": "<!DOCTYPE html>\r<html lang='en'/>\r<body><p>ascii</p></body>",
    "not html": "just some text, no markup at all",
    "a fragment": f"<div>{ARTICLE}</div>",
    "empty": "",
    "only a doctype": "<!DOCTYPE html>",
    "a form": (
        "<html><body><form><label for='q'>Search</label><input id='q' value='x'><select>"
        f"<option>a</option></select><textarea>t</textarea></form>{ARTICLE}</body></html>"
    ),
}


def _same(html: str) -> None:
    expected, tree = load_html(html), load(html)
    if expected is None:
        assert tree is None
    else:
        assert tree is not None
        assert etree.tostring(tree, encoding="unicode") == etree.tostring(
            expected, encoding="unicode"
        )


@pytest.mark.parametrize("name", sorted(MADE))
def test_a_made_page_gets_the_tree_trafilaturas_loader_makes(name: str) -> None:
    _same(MADE[name])


@pytest.mark.parametrize(
    "name",
    [
        "plain",
        "one line with a doctype",
        "one line without",
        "a long first line",
        "crlf lines",
        "a paragraph separator",
    ],
)
def test_a_page_no_repair_changes_is_parsed_without_the_loader(name: str) -> None:
    assert _unrepaired(MADE[name], MADE[name][:50].lower()) is not None


@pytest.mark.parametrize(
    "name",
    [
        "a faulty doctype",
        "a faulty doctype, one line",
        "a self-closed html",
        "html and a void tag on the first line",
        "a long first line ending />",
        "other line breaks",
        "old Mac line breaks",
        "a control character",
        "a vertical tab",
        "a noncharacter",
        "a lone surrogate",
    ],
)
def test_a_page_a_repair_would_change_goes_through_the_loader(name: str) -> None:
    assert _unrepaired(MADE[name], MADE[name][:50].lower()) is None


def test_every_element_is_an_html_element_chosen_without_python() -> None:
    """`load`'s parser chooses lxml.html's element classes in C: each element is an
    HtmlElement, the form controls too (lxml.html's own lookup, a Python method, makes
    them FormElement, InputElement, ...: classes nothing here reads), in the same tree."""
    tree = load(MADE["a form"])
    assert tree is not None
    assert {type(node) for node in tree.iter()} == {HtmlElement}


def test_the_corpus_and_the_bench_pages_get_the_loaders_trees() -> None:
    pages = [page_html(1, 2), news_page_html(3, 4), large_page_html(5, 6)]
    for path in sorted((CORPUS / "articles").glob("*/html/*.html*")):
        raw = path.read_bytes()
        pages.append(decode_html(gzip.decompress(raw) if path.suffix == ".gz" else raw, None)[0])
    assert len(pages) == 3 + 36 + 12
    fast = 0
    for html in pages:
        _same(html)
        fast += _unrepaired(html, html[:50].lower()) is not None
    assert fast > len(pages) // 2  # most real pages need no repair
