"""XML from the web is parsed without entity expansion and without network access.

`refuse_entity_declarations(body)` rejects any document that declares entities (the
billion-laughs and external-entity attacks both need an `<!ENTITY` declaration in a DTD
internal subset) before a parser sees it, in every encoding a parser could read it in
(`frontier.xml_entities`: UTF-7 and EBCDIC hide the declaration from a byte search).
A plain `<!DOCTYPE rss PUBLIC ...>` reference, common in RSS 0.91 feeds, is allowed: no
parser here ever fetches it.

`safe_iterparse(stream)` is lxml configured to never resolve entities, load a DTD or reach
the network; it is what sitemaps and OPML files are read with.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from lxml import etree

from frontier.xml_entities import entity_problem
from poller.errors import DocumentRefused


def refuse_entity_declarations(
    body: bytes, what: str = "document", http_charset: str | None = None
) -> None:
    """Raise `DocumentRefused` if `body` declares XML entities in any encoding a parser could
    read it in (sniffed, declared, or `http_charset`), or declares one we cannot check."""
    problem = entity_problem(body, http_charset)
    if problem is not None:
        raise DocumentRefused(f"{what} {problem}")


def safe_iterparse(
    stream: IO[bytes], events: tuple[str, ...] = ("end",), tag: Any = None
) -> Iterator[tuple[str, Any]]:
    """lxml's iterparse with entities unresolved, no DTD, no network, recover on."""
    return etree.iterparse(
        stream,
        events=events,
        tag=tag,
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        recover=True,
    )
