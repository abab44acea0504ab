"""Whether a name is a public suffix (`co.uk`, `github.io`): a name under which anyone may
register, which no cookie may name as its Domain. From the Public Suffix List snapshot
bundled with tldextract (a dependency already, for fetcher.canonical): no network, no
cache directory, private suffixes included (each `*.github.io` is its own site)."""

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
