"""`fetcher.lxml_load.load` makes the tree trafilatura's own loader makes, with whichever
trafilatura is installed (the floors' run checks 2.2): on the corpus's pages, on
bench.fetch's, and on pages made for each of the loader's repairs and fallbacks."""

from __future__ import annotations

import gzip
import random
import re
import sys

import pytest
from lxml import etree
from lxml.html import HtmlElement
from trafilatura.utils import load_html, repair_faulty_html

from bench.fetch import large_page_html, news_page_html, page_html
from fetcher.encoding import decode_html
from fetcher.lxml_load import _LINES_WHOLE, load, repaired
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
        "one line without",
        "a long first line",
        "crlf lines",
        "a paragraph separator",
        "a lone surrogate",
        "a form",
    ],
)
def test_a_page_no_repair_changes_is_left_as_it_is(name: str) -> None:
    assert repaired(MADE[name], MADE[name][:50].lower()) is MADE[name]


# Pages made for each way the two patterns can match or fail, beyond MADE's: (name, page)
EDGES = {
    "a doctype with a slash and no close": "<!DOCTYPE html PUBLIC '//x'\n<html></html>",
    "a < after the doctype's last slash": "<!DOCTYPE a/b <c>\n<html></html>",
    "a < before the doctype's slash": "<!DOCTYPE a<b/c>\n<html></html>",
    "spaces in the doctype's start": "< ! doctype html SYSTEM 'a/b'>\n<html></html>",
    "two spaces in its start": "<  !DOCTYPE a/b>\n<html></html>",
    "an XHTML 1.0 doctype": (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>'
    ),
    "a self-closed HTML in capitals": "<!DOCTYPE html>\n<HTML lang='en' />\n<body/>",
    "its / on the next line after white space": "<html lang='x'\n  \t/>\n<body></body>",
    "its / on the next line after text": "<html lang='x'\nx />\n<html/>",
    "white space then / at the line's end": "<html lang='x'    />\n<p>a</p>",
    "a first <html without a / after it": "<html>\n<body><html x/>\n</body>",
    "no <html before the />": "<head/>\n<body><p>x</p></body>",
    "<html in the fifth line only": "a\nb\nc\nd\n<html x/>",
    "a non-breaking space before the /": "<html lang='x'\u00a0/>\n<p>a</p>",
    "a line break in the white space": "<html lang='x' \r\n />\n<p>a</p>",
}


def test_the_repairs_are_trafilaturas() -> None:
    """`repaired` makes of each page what trafilatura's own repairs make of it, and `load`
    the tree its loader makes (with the trafilatura installed: the floors run 2.2, which
    reads whole lines)."""
    for html in [*MADE.values(), *EDGES.values()]:
        beginning = html[:50].lower()
        assert repaired(html, beginning) == repair_faulty_html(html, beginning), html[:60]
        _same(html)


def test_random_pages_get_trafilaturas_repairs() -> None:
    """Pages strung together at random from the pieces the two patterns and the line
    reading turn on, each repaired as trafilatura repairs it."""
    rng = random.Random(23)
    pieces = [
        "<!DOCTYPE", "< ! doctype", "<html", "<HTML", "/>", "/", ">", "<", " ", "  ", "\t",
        "\n", "\r", "\r\n", "\u2028", "\u00a0", "x", "lang='en'", "\x07", "\ufffe",
    ]  # fmt: skip
    for _ in range(4_000):
        html = "".join(rng.choices(pieces, k=rng.randrange(1, 40)))
        for beginning in (html[:50].lower(), "doctype"):
            assert repaired(html, beginning) == repair_faulty_html(html, beginning), repr(html)


def test_a_long_first_line_is_read_as_the_installed_trafilatura_reads_it() -> None:
    """trafilatura 2.2 reads the first lines whole, 2.3 only their first 4,096 characters:
    a `<html .../>` ending a longer line is mended by the one, not the other."""
    html = MADE["a long first line ending />"]
    assert repaired(html, html[:50].lower()) == repair_faulty_html(html, html[:50].lower())
    assert (repair_faulty_html(html, "") != html) == _LINES_WHOLE


def test_the_white_space_the_tag_pattern_skips_is_str_isspace() -> None:
    """FAULTY_HTML's `\\s` and `str.rstrip` (which finds the white space before the
    `/>`) agree on every character."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert set(re.findall(r"\s", every)) == {char for char in every if not char.rstrip()}


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
        fast += repaired(html, html[:50].lower()) is html
    assert fast > len(pages) // 2  # most real pages need no repair
