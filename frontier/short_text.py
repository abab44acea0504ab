"""Long text cut for a listing so that what tells the rows apart stays: a URL keeps its
host and the end of its path (news URLs differ in their slug, at the end), and anything
else is cut in the middle. The one helper of every listing (the dashboard's tables through
a Jinja filter, the CLI's); where a listing cuts, the whole text goes in a title or stays
one command away."""

from __future__ import annotations

from urllib.parse import urlsplit

ELLIPSIS = "…"


def cut_middle(text: str, width: int) -> str:
    """`text`, or its start and end around an ellipsis, `width` characters in all."""
    if len(text) <= width:
        return text
    keep = max(width - 1, 2)
    return text[: keep // 2] + ELLIPSIS + text[len(text) - (keep - keep // 2) :]


def short_url(url: str, width: int = 60) -> str:
    """`url` in at most `width` characters: scheme and host whole, then as much of the
    path's start as fits (whole segments), an ellipsis, and its last segment (with the
    query) whole, or that segment's start and end when it alone is too long; a host too
    long for that is cut in the middle with the rest."""
    if len(url) <= width:
        return url
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = ""
    head = url[: url.find(netloc) + len(netloc)] if netloc else ""
    rest = url[len(head) :]
    if not head or len(head) + 12 > width:
        return cut_middle(url, width)
    cut = rest.rstrip("/").rfind("/")
    tail = rest[cut:] if cut > 0 else rest
    room = width - len(head) - 1
    if len(tail) >= room:  # the last segment alone is too long: its start and its end
        return head + "/" + cut_middle(tail[1:], room)
    kept = rest[: len(rest) - len(tail)][: room - len(tail)]
    if "/" in kept[1:]:
        kept = kept[: kept.rfind("/") + 1]  # whole segments
    return head + kept + ELLIPSIS + tail
