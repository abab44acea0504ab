"""The offline demo behind `frontier up --demo`: four small news sites generated on the
fly and served on loopback addresses (127.0.0.2-5), registered as sources, so a first run
shows the whole pipeline (poll, spider, fetch, extract, sink) without the internet.

Modules:

- `content`  the articles and the documents about them: HTML pages, RSS, Atom, a sitemap,
             robots.txt (pure functions, no I/O)
- `sites`    the four sites (what each serves, its redirect, 404 and duplicate) and the
             aiohttp servers that serve them
- `profile`  the demo's settings (private networks allowed, short delays), its own data
             directory, and the sources it registers

Errors (all `DemoError`, a `FrontierError`):

    DemoError
    └── DemoBusy       another demo is using the demo data directory (permanent until it stops)
"""

from frontier.errors import FrontierError


class DemoError(FrontierError):
    """The demo cannot start."""


class DemoBusy(DemoError):
    """Another `frontier up --demo` holds the demo data directory."""
