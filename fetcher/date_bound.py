"""A proof, from the page's text alone, that htmldate's `find_date` finds no date in a
page with the settings `fetcher.extract.date_from_markup` gives it (`original_date`,
`extensive_search` off, the default output format and earliest date, any latest date),
so that it need not run: about 0.15-0.3 ms on bench.fetch's standard pages, which declare
a title and an author but no date, where the proof costs about 0.011 ms. A page the proof
does not cover (nearly any page with a date, and some without) goes to htmldate as before.

Derived by reading htmldate 1.11 and 1.10 (`core.find_date`, `extractors`,
`validators`), with trafilatura 2.3 and 2.2's `load_html` (the tree we may hand it) and
libxml2 2.14 behind lxml:

1. What can give a date. With `extensive_search` off, every date `find_date` returns
   comes from one of: the URL (`extract_url_date`: COMPLETE_URL, a 4-digit year, ASCII);
   the `<meta>` elements (their `content` or `datetime` through `try_date_expr`, an
   `og:url` through `extract_url_date`, an `itemprop=copyrightyear` read as a 4-character
   year); JSON-LD scripts (JSON_PUBLISHED: a 4-digit year); `<abbr>` (`data-utime`: any
   integer is a Unix time; the rest through `try_date_expr`); `try_date_expr` on the
   first 52 characters of the text of date-like elements, `<title>`, `<h1>` and `<time>`
   and on their `title` or `datetime` attributes; and on the page re-serialised
   (`tostring` of the tree, after `clean_html` dropped media elements and `<label>`s,
   keeping their tails): TIMESTAMP_PATTERN (`YYYY-M-D` and a time), the og:image URL
   (COMPLETE_URL), `idiosyncrasies_search` (TEXT_PATTERNS), and in 1.11 a last
   TIMESTAMP_LOOSE_PATTERN over the tree's texts. The slow parsers (dateparser, and the
   scans of search_page) only run with `extensive_search`.
2. What `try_date_expr` needs (both versions, `custom_parse`; dateparser is off). A valid
   date comes from: the string starting with 4 characters for which `str.isdigit` holds
   (`YYYYMMDD`, `datetime.fromisoformat`, or dateutil, which can make a date of today
   out of "1230 pm 5": no year needed); 8 digits (YMD_NO_SEP); YMD_PATTERN, whose first
   form has a 4-digit year and whose second, `D[-/.]M[-/.]Y`, a 2-digit year (3 digits
   make a year before 1995, 4 are 4 digits in a row); YM_PATTERN and LONG_TEXT_PATTERN,
   4-digit years. So the string holds 4 digits in a row or `d[-/.]d{1,2}[-/.]dd`
   ("the shapes"; dd.mm.yy and d/m/yy). The same holds for every other reader of step 1:
   COMPLETE_URL, JSON_PUBLISHED and both TIMESTAMP patterns have 4-digit years;
   TEXT_PATTERNS is `d{1,4}[./]d{1,2}[./]d{2,4}` whose year is its first or last
   group, of 4 digits or of 2; the copyright year is 4 characters `int` reads as at
   least 1995. Month names never make a date without a 4-digit year here: "Story 12-345,
   part 3" and "Desk 12" have none of the shapes and give nothing.
3. From the page to those strings. Each string of step 1 is the URL, an attribute value,
   a script's or an element's text, or the serialisation. Their characters are the
   page's, but where: (a) a character reference decodes (`&#50;` is "2"; of the named
   ones only `&period;`, `&sol;` and `&sup1;` to `&sup3;` give a digit or a separator):
   refused; (b) characters vanish: trafilatura's `load_html` deletes the C0 controls but
   tab, line feed and carriage return, and U+FFFE and U+FFFF; libxml2 drops what XML does
   not allow (lone surrogates too): any of them, or DEL, refuses the page; (c) text on
   either side of markup (tags, comments, dropped elements, whitespace-only text libxml2
   leaves out, the line feed after `<pre>`) comes together in an element's text or the
   serialisation: the character before the markup is followed, in the page, by `<` after
   whitespace at most, and the one after it is preceded by `>` and whitespace at most
   (every tag, comment and end tag ends with `>`). Every two neighbours in a shape are
   digits or separators, so a shape made across markup needs a digit or separator before
   a `<` and another after a `>`, wherever they are (the check does not rely on their
   order: libxml2 keeps text in the page's order, but a parser that moves it would not
   matter). The serialiser writes the tree's text and attributes with `&`, `<`, `>` and
   quotes as references; any numeric reference it writes has its digits between `#` or
   `x` and `;`, never by a separator, so none of the shapes step 2 reads is made of them.
   `repair_faulty_html` (both libraries) removes a doctype at the page's start and a `/`
   before a `>`: no two characters come together.
4. So `find_date` returns None when: the URL it is given has no 4-digit year from 1990
   to 2039 (YEAR_RE) followed by `[/_-]` and a digit (or is None: then the canonical
   link's href is read from the page); the page has none of the shapes, where a character
   outside ASCII counts as a digit (`str.isdigit` holds for about 800 of them, and a
   regular expression of them would cost what is saved: such pages go to htmldate), none
   of the characters of (b), no reference of (a), no `data-utime` (any case: the parser
   lowercases), no digit or separator before a `<` while another follows a `>` (c); and
   htmldate would not read the page as a URL to download (a page that starts with "http"
   and holds no space).

Checked against htmldate on the corpus, bench.fetch's pages and generated markup full
of dates and near-dates (tests/unit/test_date_bound.py), under both htmldate versions.
The check translates the page's UTF-8 bytes to character classes (digit, separator, `<`,
`>`, whitespace, vanishing, other) and looks for a few fixed strings in them: linear
(the regular expressions are alternatives of fixed strings, but the URL's, of a fixed
length), a chunk at a time so that a page with a date early stops early; the page is
encoded to bytes once, whole (about 4 microseconds on bench.fetch's small pages, 6 on its
100 KB large ones, 11 on its standard ones).
"""

from __future__ import annotations

import re

# The classes the page's bytes are translated to
_DIGIT, _SEPARATOR, _VANISHING = b"0", b".", b"!"
_VANISHING_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_WHITESPACE = b" \t\n\r"
_CONTINUATION = bytes(range(0x80, 0xC0))  # deleted: a character outside ASCII counts once


def _classes(separator: bytes) -> bytes:
    """The translation of a byte to its class; `separator`: the separators' class."""
    table = bytearray(b"a" * 256)
    for byte in b"0123456789" + bytes(range(0xC0, 0x100)):  # outside ASCII: a digit
        table[byte] = _DIGIT[0]
    for byte in b"./-":
        table[byte] = separator[0]
    for byte in _WHITESPACE:
        table[byte] = ord(" ")
    for byte in _VANISHING_BYTES:
        table[byte] = _VANISHING[0]
    table[ord("<")], table[ord(">")] = ord("<"), ord(">")
    return bytes(table)


_SHAPE_CLASSES = _classes(_SEPARATOR)
# Across markup a digit and a separator are told apart no more (one find instead of two)
_MARKUP_CLASSES = _classes(_DIGIT)
# The shapes (step 2), in classes: 4 digits in a row, d[-/.]d{1,2}[-/.]dd (a regular
# expression of fixed strings: faster than a find for each on the classes, which hold
# many digits and `>`)
_SHAPES = re.compile(rb"0(?:000|\.00?\.00)")
_DIGIT_AFTER_MARKUP = re.compile(rb">0")
# A chunk of the page's bytes at a time (a page with a date early stops early), with
# enough of the next to hold a shape: 7 characters of up to 4 bytes each
CHUNK = 4096
OVERLAP = 28
# Step 4's URL: COMPLETE_URL's year (YEAR_RE), then a separator and the month's digit
_URL_DATE = re.compile(r"(?<![0-9])(?:199|20[0-3])[0-9][/_-][0-9]")
# Step 3 (a): numeric references, and the named ones whose text has a digit or a separator
_REFERENCES = re.compile(r"&(?:#|period;|sol;|sup[123])")


def dateless(html: str, url: str | None) -> bool:
    """True when htmldate's `find_date(html or its lxml tree, url=url, original_date=True,
    extensive_search=False, max_date=...)` is proven to return None (the module's
    docstring); False when not proven (it may or may not find a date)."""
    if url is not None and _URL_DATE.search(url):
        return False
    if html.startswith("http") and " " not in html:
        return False  # htmldate would download it
    try:
        raw = html.encode("utf-8")  # once: every test below reads these bytes
    except UnicodeEncodeError:  # lone surrogates
        return False
    # A chunk may begin inside a character: its continuation bytes are deleted there as
    # anywhere, so no two classes come together that were not together in the page.
    for start in range(0, len(raw), CHUNK):
        classes = raw[start : start + CHUNK + OVERLAP].translate(_SHAPE_CLASSES, _CONTINUATION)
        if _VANISHING in classes or _SHAPES.search(classes):
            return False
    if not html.isascii() and ("\ufffe" in html or "\uffff" in html):
        return False
    if "&" in html and _REFERENCES.search(html):
        return False
    if b"data-utime" in raw.lower():
        return False
    # Step 3 (c), whitespace left out: a digit or separator before `<` and after `>`
    classes = raw.translate(_MARKUP_CLASSES, _CONTINUATION + _WHITESPACE)
    return not (b"0<" in classes and _DIGIT_AFTER_MARKUP.search(classes))
