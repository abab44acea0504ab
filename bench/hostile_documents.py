"""Hostile feeds and sitemaps (issue 35), for the tests and `bench.api_abuse`: documents
that are cheap to send and dear to parse."""

from __future__ import annotations

import zlib


def empty_elements_sitemap(inflated_bytes: int) -> bytes:
    """A gzipped `<urlset>` of nothing but empty non-URL elements, `inflated_bytes` long
    once inflated (a few KiB sent per MiB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"<x/>" * (256 * 1024)  # 1 MiB
    parts = [packer.compress(b"<urlset>")]
    parts += [packer.compress(block) for _ in range(inflated_bytes // len(block))]
    return b"".join(parts) + packer.compress(b"</urlset>") + packer.flush()


def sitemap_index(*locations: str) -> str:
    children = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locations)
    return f'<?xml version="1.0"?><sitemapindex>{children}</sitemapindex>'


def malformed_feed(size: int) -> bytes:
    """An RSS feed of `size` bytes whose items never close: not well-formed, so it goes
    to feedparser's lenient parser, the slowest path."""
    head = b'<?xml version="1.0"?><rss version="2.0"><channel><title>hostile</title>'
    item = b"<item><title>a<b><i>"
    return head + item * max(1, (size - len(head)) // len(item))
