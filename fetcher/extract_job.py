"""The extraction job: a page's body in, its `Extraction` out (the article, the canonical
identity, the content hash and word count, the verdict on whether it is the article, the
`<meta>` robots rules, the MinHash), decoding included, so the fetch process does no
parsing. Its arguments are the body bytes and small values, and so is its result: that is
all that crosses to a worker (`fetcher.extract_pool`), or to the thread
(`fetcher.extract_thread`). And the limits every page is held to, with their errors.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from fetcher.canonical import page_canonical_claim
from fetcher.encoding import decode_html
from fetcher.extract import Extracted, canonical_href, extract, hash_and_word_count
from fetcher.render_signs import app_shell_sign
from fetcher.verdict import THIN_WORDS, Verdict, page_verdict
from frontier.errors import FrontierError
from frontier.link_header import canonical_from_links
from frontier.near_duplicates import minhash
from frontier.robots_directives import GENERIC_NAME, meta_directives, meta_selector

TIMEOUT_S = 30.0  # a page's extraction time limit (FRONTIER_EXTRACT_TIMEOUT_S)
ROBOTS_NAMES = frozenset({GENERIC_NAME})  # without a product token: `<meta name="robots">`
MEMORY_MB = 1024  # a worker's address space limit (FRONTIER_EXTRACT_MEMORY_MB)


class ExtractionCrashed(FrontierError):
    """A page killed the process extracting it each time it was tried alone."""


class ExtractionOverLimit(FrontierError):
    """A page's extraction went over its time or memory limit, and was stopped."""


def over_time(timeout_s: float) -> ExtractionOverLimit:
    return ExtractionOverLimit(f"over the {timeout_s:g} s time limit")


@dataclass(frozen=True, slots=True)
class Extraction:
    """What extraction of one page yields, computed where it ran."""

    extracted: Extracted
    canonical: str | None  # the trusted canonical identity, when not the page's own
    content_hash: str | None
    word_count: int
    pid: int  # the process that extracted it
    names_itself: bool = False  # the page's canonical link names the page itself
    verdict: Verdict | None = None  # the page is not the article (`fetcher.verdict`)
    robots: frozenset[str] = frozenset()  # its `<meta name="robots">` rules that apply to us
    minhash: bytes | None = None  # the body's near-duplicate fingerprint (frontier.near_duplicates)
    # a thin page's sign of a client-side app's shell (fetcher.render_signs): render it
    app_shell: str | None = None

    def __reduce__(self) -> tuple[type[Extraction], tuple[Any, ...]]:
        """Its values in field order, as `Extracted` pickles (the answer of every page
        a worker extracts)."""
        return (Extraction, _EXTRACTION_VALUES(self))


_EXTRACTION_VALUES = operator.attrgetter(*Extraction.__slots__)


Job = Callable[..., Extraction]


def extract_page(
    body: bytes,
    content_type: str | None,
    url: str,
    selectors: Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
    links: tuple[str, ...] = (),
    base: str | None = None,
    robots_names: frozenset[str] = ROBOTS_NAMES,
) -> Extraction:
    """Decode the body and extract the article and the identity its document belongs
    under when the page names a trusted canonical other than itself (`fetcher.canonical`),
    in a `<link rel="canonical">` or in the response's `links` (its `Link` header values,
    targets resolved against `base`, the URL that answered: `frontier.link_header`), with
    the verdict on whether it is the article at all (`fetcher.verdict`) and the `<meta>`
    robots rules for the crawler known by `robots_names`, from the same parse; and the
    body's MinHash (its words capped: `frontier.near_duplicates.MAX_WORDS`); and, for a
    thin page, its sign of a client-side app's shell (`fetcher.render_signs`)."""
    html, _encoding = decode_html(body, content_type)
    tree = LexborHTMLParser(html)
    extracted = extract(html, url, selectors=selectors, discovery_meta=meta, tree=tree)
    header = canonical_from_links(links, base or url) if links else None
    claim = page_canonical_claim(url, canonical_href(html), header)
    digest, words = hash_and_word_count(extracted.body)  # one split of the body for both
    own_words = 0 if extracted.extractor == "feed" else words
    metas = (
        (node.attributes.get("name") or "", node.attributes.get("content") or "")
        for node in tree.css(meta_selector(robots_names))
    )
    return Extraction(
        extracted,
        None if claim == url else claim,
        digest,
        words,
        os.getpid(),
        claim == url,
        page_verdict(tree, html, own_words, stored=bool(extracted.body)),
        meta_directives(metas, robots_names),
        minhash(extracted.body) if extracted.body else None,
        app_shell_sign(tree, html) if own_words < THIN_WORDS else None,
    )
