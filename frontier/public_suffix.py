"""The Public Suffix List's answers: whether a name is a public suffix (`co.uk`,
`github.io`: a name under which anyone may register, which no cookie may name as its
Domain), and a host's registrable domain (its site, for trusted canonicals). From the
snapshot bundled with tldextract: no network, no cache directory, private suffixes
included (each `*.github.io` is its own site). One extractor for the whole project."""

from __future__ import annotations

from functools import lru_cache

import tldextract

_SUFFIXES = tldextract.TLDExtract(
    suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
)


@lru_cache(maxsize=4096)
def is_public_suffix(name: str) -> bool:
    """`name` (a host name, lowercase, no leading dot) is itself a public suffix."""
    parts = _SUFFIXES(name)
    return bool(parts.suffix) and not parts.domain and not parts.subdomain


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str | None:
    """The host's domain under its public suffix (`news.example.co.uk` ->
    `example.co.uk`); None for an IP literal or a public suffix itself."""
    parts = _SUFFIXES(host)
    if not parts.suffix or not parts.domain:
        return None
    return f"{parts.domain}.{parts.suffix}"
