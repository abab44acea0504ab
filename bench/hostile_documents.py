"""Hostile feeds, sitemaps, robots.txt files and pages (issue 35), for the tests and
`bench.api_abuse`: documents that are cheap to send and dear to parse."""

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


def robots_many_groups(size: int, *, rule_for_all: str) -> str:
    """A robots.txt of `size` characters (past 512 KiB: the most any crawler parses) made
    of one small group per made-up crawler, each with a wildcard rule, and last a group
    for everyone with `rule_for_all`: costly to parse whole, cheap to match."""
    last = f"User-agent: *\nDisallow: {rule_for_all}\n"
    groups = [f"User-agent: bot{i}\nDisallow: /*{i}*\n" for i in range(size // 30)]
    return "".join(groups)[: size - len(last)] + "\n" + last


def robots_many_rules(size: int) -> str:
    """A robots.txt of `size` characters: one group for everyone, of nothing but wildcard
    rules (Protego tries them one by one for each URL)."""
    rules = [f"Disallow: /*{i}x*y\n" for i in range(size // 12)]
    return ("User-agent: *\n" + "".join(rules))[:size]


def line_breaks(mib: float) -> bytes:
    """A page of nothing but `<br>` tags, `mib` MiB long: seconds and hundreds of MiB a
    MiB to extract (issue 35, before the limits: 1 MiB 17 s and 323 MiB, 3 MiB 73 s and
    825 MiB)."""
    return b"<br>" * int(mib * 2**18)
