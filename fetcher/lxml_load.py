"""A decoded page parsed as trafilatura's loader parses it (`trafilatura.utils.load_html`),
without that loader's search of the whole page for characters to delete where a faster
check finds none.

`load_html` repairs the text before lxml parses it (`repair_faulty_html`): it deletes the
characters XML forbids (the C0 controls but tab, newline and carriage return, U+FFFE and
U+FFFF) with a regular expression over the whole page, then mends a faulty doctype on the
first line and a self-closed `<html/>` in the first four. The search costs about 2.5 ns a
character: 0.25 ms of a 100 KB page, 6 % of its extraction (bench/RESULTS.md, seventeenth
session), on pages that almost never hold one of those characters. `bytes.translate` and
`str.find` tell that there is none in a sixth of that time on an ASCII page, in about
half on others (the corpus's pages: 0.33 ms against 0.56 on average).

The checks are linear in the page: a few passes at memchr's speed, the line breaks looked
for in the first four lines only. Their worst is about the search's own cost: a 600 KB
CJK page in one line, 1.68 ms against 1.51 (its UTF-8 is three bytes a character); a
1 MB non-ASCII page in four lines 2.23 against 2.64. The doctype's regular expression
(trafilatura's own, on the first line) runs once, as in `load_html`; it and the
self-closed `<html/>` one are trafilatura's, and backtrack quadratically on a crafted
line (a failing doctype line of 400 KB: about 0.2 s), as they did before: the extraction's
time limit (FRONTIER_EXTRACT_TIMEOUT_S) is what bounds them. A page with an XHTML 1.0
doctype (`"-//W3C//DTD ..."`, older WordPress themes) matches that pattern, and goes
through `load_html` as before.

`load` checks that each repair would leave the page as it is, as trafilatura 2.2 and 2.3
would each judge it (2.2 reads the first four lines whole, 2.3 within the first 4,096
characters). Then it parses the page as `load_html` does after its repairs: the same
parser settings (its element classes chosen in C: `_PARSER`), the same fallbacks and
rejection, the same tree. Any other page goes through
`load_html` itself. tests/unit/test_lxml_load.py compares the trees of the two, on the
corpus and on pages made for each repair, with the trafilatura installed (the floors run
2.2).
"""

from __future__ import annotations

import logging

from lxml.etree import ElementDefaultClassLookup
from lxml.html import (
    HtmlComment,
    HtmlElement,
    HtmlEntity,
    HTMLParser,
    HtmlProcessingInstruction,
    fromstring,
)
from trafilatura.utils import DOCTYPE_TAG, fromstring_bytes, is_dubious_html, load_html

log = logging.getLogger(__name__)

# trafilatura's parser (`trafilatura.utils.HTML_PARSER`, the same settings in 2.2 and 2.3),
# with lxml.html's element classes chosen in C. lxml.html's own choice is a Python method
# (`HtmlElementClassLookup.lookup`) called for each element a Python object is made for:
# about 400 times a page on bench.fetch's large pages, 0.15 ms of their extraction of
# 4.7. The only classes it adds are the form controls' (`FormElement`, `InputElement`,
# ...), all of them HtmlElements, whose own methods neither trafilatura, htmldate nor
# frontier call. The trees are the same (tests/unit/test_lxml_load.py).
_PARSER = HTMLParser(
    collect_ids=False,
    default_doctype=False,
    encoding="utf-8",
    remove_comments=True,
    remove_pis=True,
)
_PARSER.set_element_class_lookup(
    ElementDefaultClassLookup(
        element=HtmlElement, comment=HtmlComment, pi=HtmlProcessingInstruction, entity=HtmlEntity
    )
)

# the characters `repair_faulty_html` deletes below U+0080, as UTF-8 bytes (each its own byte)
_FORBIDDEN_ASCII = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
# and the two above
_FORBIDDEN_OTHER = ("\ufffe", "\uffff")
# the line breaks of `str.splitlines` a page without the characters above can hold: ASCII,
# and beyond
_ASCII_BREAKS = ("\n", "\r")
_LINE_BREAKS = (*_ASCII_BREAKS, "\x85", "\u2028", "\u2029")
_HEAD = 4096  # trafilatura 2.3 looks for `<html/>` within the first lines of this much
_LINES = 4  # the lines both versions look in


def load(html: str) -> HtmlElement | None:
    """`trafilatura.utils.load_html(html)`'s tree, or None where it makes none."""
    beginning = html[:50].lower()
    text = _unrepaired(html, beginning)
    if text is None:
        return load_html(html)
    # What load_html does once repaired (the same in trafilatura 2.2 and 2.3)
    fallback = False
    tree: HtmlElement | None = None
    try:
        tree = fromstring(text, parser=_PARSER)
    except ValueError:  # "Unicode strings with encoding declaration are not supported."
        tree = fromstring_bytes(text)
        fallback = True
    except Exception as exc:  # lxml on hostile markup: its bytes are tried, as load_html does
        log.warning("lxml could not parse the page's text, trying its bytes: %s", exc)
    if (tree is None or len(tree) < 1) and not fallback:
        tree = fromstring_bytes(text)
    if tree is not None and is_dubious_html(beginning) and len(tree) < 2:
        return None  # not HTML, as load_html rejects it
    return tree


def _unrepaired(html: str, beginning: str) -> str | None:
    """The text `repair_faulty_html(html, beginning)` returns when it is known without its
    search (the page, or with a newline added: its doctype repair joins the first line
    and the rest with one); None when a repair may change more, or a character it deletes
    may be there."""
    try:
        data = html.encode()
    except UnicodeEncodeError:  # a lone surrogate: not UTF-8, left to load_html
        return None
    if len(data.translate(None, _FORBIDDEN_ASCII)) != len(data):
        return None
    if not html.isascii() and any(other in html for other in _FORBIDDEN_OTHER):
        return None  # (each a `str.find`: a third of the time of looking in the bytes)
    text = html
    if "doctype" in beginning:
        newline = html.find("\n")
        if DOCTYPE_TAG.match(html if newline == -1 else html[:newline]):
            return None
        if newline == -1:
            text = html + "\n"
    return None if _self_closed_html(text) else text


def _self_closed_html(text: str) -> bool:
    """Whether a line `repair_faulty_html` looks at holds `<html` and ends with `/>` (then it
    mends the first such tag): one of the first four lines, read whole (trafilatura 2.2) or
    cut at _HEAD characters (2.3)."""
    breaks = _ASCII_BREAKS if text.isascii() else _LINE_BREAKS
    start = 0
    for _ in range(_LINES):
        end = _line_end(text, start, breaks)
        line = text[start:end]
        in_head = line[: max(_HEAD - start, 0)]
        if "<html" in line and (line.endswith("/>") or in_head.endswith("/>")):
            return True
        if end == len(text):
            return False
        start = end + (2 if text.startswith("\r\n", end) else 1)
    return False


def _line_end(text: str, start: int, breaks: tuple[str, ...]) -> int:
    """Where the line from `start` ends (its break, or the text's end), as `str.splitlines`
    breaks lines in a text without the characters load_html deletes. Each of the `breaks`
    the text may hold is looked for with `str.find`, no further than the nearest found so
    far: a few passes over the first four lines at most, at memchr's speed, where a
    regular expression's search would be ten times slower."""
    end = len(text)
    for brk in breaks:
        found = text.find(brk, start, end)
        if found != -1:
            end = found
    return end
