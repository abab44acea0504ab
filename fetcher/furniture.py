"""A template's furniture (navigation, footers, menus, asides, `<noscript>`, SVG,
iframes) taken out of the page before trafilatura's precise reading, which would delete it
itself: on a heavy template (bench.fetch's large set: a mega-menu and a footer of links) every XPath
trafilatura runs over the raw tree before its own cleaning (`prune_unwanted_nodes`, seven
a page) walks nodes the reading then throws away.

Why it is the same reading. The precise reading (`favor_precision`, comments off, fast)
reads the raw tree only to (1) decide whether the page is a forum thread, from its JSON-LD
scripts, (2) prune XPaths over it (infinite-scroll containers `not(.//h1)`, comment
sections: the others test an element's own attributes), then (3) cleans a copy of it
(`tree_cleaning`), deleting every element whose tag is in its MANUALLY_CLEANED, tails
kept, and extracts from what is left. Everything after (3) reads only the cleaned tree.
Every tag deleted here is in MANUALLY_CLEANED, and deleting elements with their tails
kept (as `delete_element` does, here and in trafilatura) gives the same tree whatever the
order: each deletion splices the element's tail into the text before it, so the text
keeps its order and the same elements are left. An element is left in place when taking
it out early could change a decision made before (3), or which elements (3) deletes:

- it holds a script (the JSON-LD the forum test reads: the other scripts are gone by
  then, `without_scripts`), or an `<h1>` (the infinite-scroll prune's `not(.//h1)`);
- it holds a `<table>` under a `<figure>` (the cleaning turns a figure holding a table
  into a `<div>`, which it keeps; without the table the figure would be deleted);
- it, or an element in it whose tag the cleaning deletes, sits inside an element of the
  same tag: the cleaning deletes while iterating (`for e in tree.iter(tag):
  delete_element(e)`), and lxml's iteration, once it has deleted an element holding
  another of the same tag, walks into the detached copy and stops: the later elements of
  that tag stay in trafilatura's reading. Such a page keeps all its elements of a nested
  tag here, and every element a nesting runs through.

trafilatura's other readings (the default balance: `main_reading`'s recall reading) also
measure the raw page (`baseline`, the escalation's `html2txt`): they get the page as
parsed, not this one. Checked on the corpus and bench.fetch's pages
(bench.extract_identity) and by tests/unit/test_furniture.py.
"""

from __future__ import annotations

from lxml.html import HtmlElement
from trafilatura.settings import MANUALLY_CLEANED
from trafilatura.xml import delete_element

# trafilatura deletes all of them in its cleaning (MANUALLY_CLEANED), with their content.
# <aside> too: it changed a corpus page (fitforfun.de) only when the recall reading, which
# reads the raw page, got the page without it.
FURNITURE = ("nav", "footer", "menu", "noscript", "svg", "iframe", "aside")
_CLEANED = frozenset(MANUALLY_CLEANED)
# What, inside a piece of furniture, keeps it in place (see the module's docstring)
_WATCHED = tuple(sorted(_CLEANED | {"h1", "table"}))


def without_furniture(page: HtmlElement | None) -> HtmlElement | None:
    """`page` without the furniture that trafilatura's precise reading deletes anyway
    (FURNITURE), changed in place, tails kept; furniture whose early deletion could
    change the reading stays (the module's docstring)."""
    if page is None:
        return page
    found = list(page.iter(*FURNITURE))
    nested = {node.tag for node in found if next(node.iterancestors(node.tag), None) is not None}
    for node in found:
        if node.tag not in nested and _safe_to_drop(node):
            delete_element(node, keep_tail=True)
    return page


def _safe_to_drop(node: HtmlElement) -> bool:
    """Whether deleting `node` now leaves trafilatura's precise reading as it is (its own
    tag's nesting is checked by the caller: an element without children is safe)."""
    if not len(node):
        return True
    under_figure: bool | None = None
    for inner in node.iter(*_WATCHED):
        tag = inner.tag
        if tag in ("h1", "script"):
            return False
        if tag == "table":
            if under_figure is None:
                under_figure = next(node.iterancestors("figure"), None) is not None
            if under_figure:
                return False
        if tag in _CLEANED and next(inner.iterancestors(tag), None) is not None:
            return False
    return True
