"""The server-rendered pages' one Jinja environment (the overview, the host, source, URL
and article pages, the login form), its filters, and the relative times they show."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape

from frontier.short_text import short_url
from frontier.urls import url_hash

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
# fetch_log.url of a page is the normalised identity, so its hash is the url_hash.
TEMPLATES.filters["story_href"] = lambda url: f"/urls/{url_hash(url)}"
# A URL in a listing: host and last path segment kept, the whole in the cell's title.
TEMPLATES.filters["short_url"] = short_url
TEMPLATES.filters["web_link"] = lambda url: bool(url) and re.match(r"(?i)https?://", url)


def ago(moment: datetime | None, now: datetime) -> str:
    """`moment` relative to `now`: "3 min ago", "in 2 h", "never"."""
    if moment is None:
        return "never"
    seconds = int((now - moment).total_seconds())
    if seconds < 0:
        return f"in {_span(-seconds)}"
    return f"{_span(seconds)} ago"


def due(moment: datetime, now: datetime) -> str:
    """When something scheduled happens: "in 3 min", or "due now" once its time has come
    (a next poll 5 s in the past is waiting for the poller's next look, not history)."""
    seconds = int((moment - now).total_seconds())
    return f"in {_span(seconds)}" if seconds > 0 else "due now"


def _span(seconds: int) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def host_href(host: str) -> str:
    """The host's page (frontier.api.routes.pages)."""
    return f"/hosts/{quote(host, safe='')}"
