"""An upper bound on the length of resiliparse's plain text of a page
(`extract_plain_text`, as `fetcher.extract.main_reading` calls it), from the tree selectolax
has parsed already: when trafilatura's precise reading is at least THIN_SHARE of the bound,
it is at least that share of resiliparse's text too, and the check is decided without
running resiliparse (its own parse of the page and its walk: about 0.9 ms on bench.fetch's
large pages, where the bound costs about 0.1 ms).

Why it bounds. resiliparse (2.0, `resiliparse.extract.html2text`) walks the `<body>` of its
lexbor tree, the same parser selectolax uses, skipping whole subtrees (scripts, styles,
elements that are not main content, ...). It writes the text of the text nodes it visits,
whitespace runs collapsed to one space; each text node's text goes out at one "flush" at
most, after its pending margin (newlines, from the block elements met since the last
flush: at most 2, plus at most 2 for each element a `<br>` made "uncollapsed", a `<br>`
being met at most twice: at its start and its end), or two tabs in a table cell when no
margin is written, and an indent of 2 spaces a level of list: the open `<ul>` and `<ol>`
around it, plus one for each empty `<ul>` or `<ol>` met before (its walk meets an element
without children once, at its start, so that level is never closed), plus one after an
`<li>` met outside any list (never taken back either); no bullets, links or alternative
texts with the options used. So its length is at most

    text of the body's text nodes - text directly in its scripts and styles (skipped)
    + 4 a text node (margin or tabs, and the stray `<li>`'s level)
    + 2 for each text node in each list around it (the indent)
    + 2 for each text node and each empty list in the page (their levels, at the most)
    + 4 a `<br>`

Text nodes are counted from selectolax's text with a separator between them (`_SEP`): a
text holding that character itself is counted as more nodes and less text, one character
of text for each extra node, which only raises the bound. Checked against resiliparse on
the corpus, on bench.fetch's pages and on generated pages (tests/unit/test_plain_text_bound.py);
a resiliparse upgrade that writes more (bullets, say) fails there.
"""

from __future__ import annotations

import math

from selectolax.lexbor import LexborHTMLParser, LexborNode

_SEP = "\x00"  # between two text nodes' texts: never in an HTML page's body text
# The lists' walk (the indent term) reads each list's text: at most this many lists around
# any list (real menus nest three or four), found within this many parent steps a list
MAX_LISTS_AROUND = 8
ANCESTOR_STEPS = 64


def plain_text_bound(tree: LexborHTMLParser, limit: float = math.inf) -> float:
    """At least as long as resiliparse's plain text of the page `tree` holds (the
    module's docstring); infinite without a `<body>`, or as soon as it is known to be
    over `limit` (the lists' walks, a third of the cost, are then not made: on the
    corpus's pages, the text and the scripts decide it for most)."""
    body = tree.body
    if body is None:
        return math.inf
    text = body.text(deep=True, separator=_SEP)
    nodes = text.count(_SEP) + 1
    chars = len(text) - nodes + 1
    lists, breaks, skipped = [], 0, 0
    # An empty <body> has nothing to walk, and selectolax 0.3.20 (the floor; not 1.0)
    # crashes the process on `css` of a node without children
    walked = body.css("script, style, ul, ol, br") if body.child is not None else ()
    for node in walked:  # one walk of the tree
        tag = node.tag
        if tag in ("ul", "ol"):
            lists.append(node)
        elif tag == "br":
            breaks += 1
        else:
            skipped += len(node.text(deep=False))
    bound = chars - skipped + 4 * nodes + 4 * breaks
    if bound > limit:
        return math.inf
    if not _shallow(lists):
        return math.inf  # resiliparse decides, as on any page the bound does not
    listed = sum(node.text(deep=True, separator=_SEP).count(_SEP) + 1 for node in lists)
    empty = sum(1 for node in lists if node.child is None)
    return bound + 2 * listed + 2 * empty * nodes


def _shallow(lists: list[LexborNode]) -> bool:
    """Whether no list sits in more than MAX_LISTS_AROUND others, found within a budget
    of parent steps (ANCESTOR_STEPS a list on average). Each list's text is read once
    for its indent, so a text inside k lists is read k + 1 times: bounded here, that is
    linear in the page; a page of lists nested deeper (a hostile one, hundreds deep),
    or too deep to tell within the budget, is left to resiliparse (which is linear)."""
    budget = ANCESTOR_STEPS * len(lists)
    for node in lists:
        around = 0
        parent = node.parent
        while parent is not None:
            budget -= 1
            if budget < 0:
                return False
            if parent.tag in ("ul", "ol"):
                around += 1
                if around > MAX_LISTS_AROUND:
                    return False
            parent = parent.parent
    return True
