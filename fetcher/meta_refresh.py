"""`<meta http-equiv="refresh">` as the redirect it is (pure; docs/fetching.md "Fetch outcomes").

A near-empty page whose refresh fires within `MAX_DELAY_S` and names a URL is a redirect: a
browser shows the target, not the page. Sites use it for consent and JavaScript-check
interstitials and old CMS redirect pages. A refresh that names no URL reloads the page
itself (a live ticker), and a page with real text carries its own content: neither is a
redirect.

`parse_refresh(content)` reads the content attribute as browsers do (the HTML Standard's
"shared declarative refresh steps"): a delay, then `;` or `,` or spaces, then optionally
`url`, `=`, and the URL, optionally quoted (`0;URL='/a'`, `0; url="/a"`, `5,/a`, `0 /a`).
Written by hand because neither lxml nor selectolax parses this attribute.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from frontier.urls import InvalidURL, request_spelling

MAX_DELAY_S = 5.0  # a slower refresh is a page meant to be read first
NEAR_EMPTY_CHARS = 300  # visible text (scripts and styles aside) of an interstitial
HEAD_BYTES = 65_536  # a refresh meta tag sits in the head: look no further
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_WHITESPACE = "\t\n\x0c\r "
_DELAY = re.compile(r"[0-9.]*")


def parse_refresh(content: str) -> tuple[float, str | None] | None:
    """(delay in seconds, URL text or None) of a refresh content attribute; None when it
    is not a valid refresh (no leading delay, junk after it)."""
    text = content.lstrip(_WHITESPACE)
    digits = _DELAY.match(text)
    assert digits is not None  # the pattern matches the empty string
    number = digits.group()
    whole = number.split(".", 1)[0]
    if not whole.isdigit() and not number.startswith("."):
        return None
    delay = float(whole) if whole else 0.0
    rest = text[digits.end() :]
    if rest and rest[0] not in _WHITESPACE + ";,":
        return None
    rest = rest.lstrip(_WHITESPACE)
    if rest[:1] in (";", ","):
        rest = rest[1:].lstrip(_WHITESPACE)
    if not rest:
        return delay, None
    if rest[:3].lower() == "url":
        after = rest[3:].lstrip(_WHITESPACE)
        if after[:1] == "=":
            rest = after[1:].lstrip(_WHITESPACE)
    if rest[:1] in ("'", '"'):
        quote, rest = rest[0], rest[1:]
        end = rest.find(quote)
        if end >= 0:
            rest = rest[:end]
    url = rest.strip(_WHITESPACE)
    return delay, url or None


def refresh_target(body: bytes, content_type: str | None, url: str) -> str | None:
    """The spelling a near-empty HTML page at `url` refreshes to within `MAX_DELAY_S`, or
    None when the page is not such a redirect."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media and media not in _HTML_TYPES:
        return None
    head = body[:HEAD_BYTES]
    if b"refresh" not in head.lower():
        return None  # the common case, decided without parsing
    tree = LexborHTMLParser(head.decode("utf-8", errors="replace"))
    target = None
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attributes.get("http-equiv") or "").strip().lower() != "refresh":
            continue
        parsed = parse_refresh(meta.attributes.get("content") or "")
        if parsed is None:
            continue
        delay, found = parsed
        if found is not None and delay <= MAX_DELAY_S:
            target = found
        break  # browsers act on the first refresh only
    if target is None:
        return None
    tree.strip_tags(["script", "style", "noscript", "template", "title"])
    text = tree.body.text(separator=" ") if tree.body is not None else ""
    if len(" ".join(text.split())) > NEAR_EMPTY_CHARS:
        return None
    try:
        return request_spelling(target, url)
    except InvalidURL:
        return None
