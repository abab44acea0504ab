"""A decoded page parsed as trafilatura's loader parses it (`trafilatura.utils.load_html`),
its repairs made in time linear in the page.

`load_html` repairs the text before lxml parses it (`repair_faulty_html`):

1. It deletes the characters XML forbids (the C0 controls but tab, newline and carriage
   return; U+FFFE and U+FFFF) with a regular expression over the whole page: about 2.5 ns
   a character, 0.25 ms of a 100 KB page (6 % of its extraction: bench/RESULTS.md,
   seventeenth session), on pages that almost never hold one.
2. On a page whose first 50 characters say "doctype", it deletes a doctype holding a `/`
   from the first line (`DOCTYPE_TAG`: `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0
   ...">`, as older WordPress themes write it), and joins the rest to that line with a
   newline.
3. When one of the first four lines holds `<html` and ends with `/>`, it mends the page's
   first self-closed `<html .../>` (`FAULTY_HTML`). trafilatura 2.2 reads those lines whole,
   2.3 within the first 4,096 characters (`_LINES_WHOLE`: the installed loader is asked
   once).

Here, (1) is `bytes.translate` and `str.find` telling that there is none (a sixth of the
search's time on an ASCII page, about half on others: on the corpus's pages 0.33 ms
against 0.56), and the loader's own search deleting them where there are some. (2) and
(3) find what trafilatura's two patterns match with `str.find` and friends, each step
linear in the page: the doctype pattern backtracks quadratically on a crafted first line
(40,000 slashes without a `>` took it 1.9 s, a 1 MB line would take minutes: the
extraction's whole time limit, bench/RESULTS.md, eighteenth session). Then
the text is parsed as `load_html` parses it: the same parser settings (its element
classes chosen in C: `_PARSER`), the same fallbacks and rejection, the same tree.
tests/unit/test_lxml_load.py holds the repairs to trafilatura's own (`repair_faulty_html`)
on made and random pages, and the trees to `load_html`'s on the corpus and bench.fetch's
pages, with the trafilatura installed (the floors run 2.2).
"""

from __future__ import annotations

import logging
import re

from lxml.etree import ElementDefaultClassLookup
from lxml.html import (
    HtmlComment,
    HtmlElement,
    HtmlEntity,
    HTMLParser,
    HtmlProcessingInstruction,
    fromstring,
)
from trafilatura.utils import (
    INVALID_XML_CHARS,
    fromstring_bytes,
    is_dubious_html,
    repair_faulty_html,
)

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
# the start of trafilatura's DOCTYPE_TAG (`^< ?! ?DOCTYPE[^>]*/[^<>]*>`, any case), and
# the start of its FAULTY_HTML (`(<html.*?)\s*/>`, any case): literal, so linear
_DOCTYPE_START = re.compile("< ?! ?DOCTYPE", re.IGNORECASE)
_HTML_START = re.compile("<html", re.IGNORECASE)


def _lines_read_whole() -> bool:
    """Whether the installed trafilatura looks for `<html/>` in the first lines read whole
    (2.2), not cut at _HEAD characters (2.3): a first line longer than that tells."""
    probe = "<html" + " x" * _HEAD + "/>"
    return repair_faulty_html(probe, "") != probe


_LINES_WHOLE = _lines_read_whole()


def load(html: str) -> HtmlElement | None:
    """`trafilatura.utils.load_html(html)`'s tree, or None where it makes none."""
    beginning = html[:50].lower()
    text = repaired(html, beginning)
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


def repaired(html: str, beginning: str) -> str:
    """`repair_faulty_html(html, beginning)` (the module's docstring), in linear time; the
    page itself where no repair changes it."""
    text = _without_forbidden(html)
    if "doctype" in beginning:
        newline = text.find("\n")
        end = _faulty_doctype_end(text, len(text) if newline == -1 else newline)
        if newline == -1:  # the first line, joined to an empty rest
            text = text[end:] + "\n"
        elif end:
            text = text[end:]
    return _html_tag_mended(text) if _self_closed_html(text) else text


def _without_forbidden(html: str) -> str:
    """`html` without the characters XML forbids, looked for at memchr's speed first."""
    data = html.encode("utf-8", "surrogatepass")  # a lone surrogate is left as it is
    if len(data.translate(None, _FORBIDDEN_ASCII)) != len(data) or (
        # (each a `str.find`: a third of the time of looking in the bytes)
        not html.isascii() and any(other in html for other in _FORBIDDEN_OTHER)
    ):
        # trafilatura's own search (2.5 ns a character; `str.translate` deleting them takes
        # 45 on a non-ASCII page)
        return INVALID_XML_CHARS.sub("", html)
    return html


def _faulty_doctype_end(text: str, line_end: int) -> int:
    """Where DOCTYPE_TAG's match at the start of the first line (`text[:line_end]`) ends,
    or 0 without one. Its greedy `[^>]*` stops before the line's first `>`, so a match
    ends there: with a `/` before it, and no `<` after the last such `/`."""
    start = _DOCTYPE_START.match(text, 0, line_end)
    if start is None:
        return 0
    close = text.find(">", start.end(), line_end)
    if close == -1:
        return 0
    slash = text.rfind("/", start.end(), close)
    if slash == -1 or text.find("<", slash + 1, close) != -1:
        return 0
    return close + 1


def _self_closed_html(text: str) -> bool:
    """Whether one of the first four lines `repair_faulty_html` reads (whole, or of the
    first _HEAD characters: `_LINES_WHOLE`) holds `<html` and ends with `/>`."""
    scope = text if _LINES_WHOLE else text[:_HEAD]
    breaks = _ASCII_BREAKS if scope.isascii() else _LINE_BREAKS
    start = 0
    for _ in range(_LINES):
        end = _line_end(scope, start, breaks)
        if scope.find("<html", start, end) != -1 and scope.endswith("/>", start, end):
            return True
        if end == len(scope):
            return False
        start = end + (2 if scope.startswith("\r\n", end) else 1)
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


def _html_tag_mended(text: str) -> str:
    """`FAULTY_HTML.sub(r"\\1>", text, count=1)`, in linear time. The pattern matches at the
    first `<html` (any case) followed on its own line by any text, then white space (which
    may run on over line breaks), then `/>`; the white space and the `/` go. Only the first
    `/>` after an `<html` can end its match, the white space before it (`gap`) starting
    before that line ends. The `/>`, the line's end and the gap are found forward only,
    each `<html` reusing what the one before found."""
    close = newline = gap = -1
    for opening in _HTML_START.finditer(text):
        after = opening.end()
        if close < after:
            close = text.find("/>", after)
            if close == -1:
                return text  # no later `<html` has one either
            gap = after + len(text[after:close].rstrip())  # (`\s` is `str.isspace`)
        if newline < after:
            newline = text.find("\n", after)
            if newline == -1:
                newline = len(text)
        if gap <= newline:  # (a later `<html` before the same `/>` is before its gap)
            return text[:gap] + ">" + text[close + 2 :]
    return text
