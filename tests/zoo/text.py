"""Zoo: text as the page means it. Charsets declared in the places real servers and CMSes
put them (or in none), and bodies compressed the ways real servers compress them.

Where the behaviours come from:
- Apache's `AddDefaultCharset` (on in many distribution configs) labels every text/html
  response `charset=ISO-8859-1`, whatever the file's bytes; pages saved in UTF-8 behind it
  are the classic mojibake report (apify/crawlee#2901: a UTF-8 page behind a bogus
  latin-1 header; w3lib's `html_to_unicode` decodes `ISO-8859-1` as cp1252, w3lib#6);
- old CMS templates and static sites declare windows-1252 only in
  `<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">`, often after
  a long head of scripts and styles (WHATWG HTML, "prescan a byte stream");
- IIS sends `Content-Encoding: deflate` as raw DEFLATE without the zlib wrapper
  (rest-client/rest-client#49, dotnet/runtime#38022; RFC 9110 8.4.1.2 says zlib); nginx
  and CDNs send gzip and, with ngx_brotli or Cloudflare, `br` when the request offers it.
"""

from __future__ import annotations

import gzip
import zlib

import brotli
from aiohttp import web

from tests.local_site import LocalSite

# Text whose windows-1252 bytes sit in 0x80-0x9F (curly quotes, dashes, the euro sign):
# ISO-8859-1 would turn them into C1 control characters.
CURLY = (
    "\u201cQuoted\u201d \u2014 it\u2019s the caf\u00e9\u2019s "
    "\u2018na\u00efve\u2019 r\u00e9sum\u00e9\u2026 for 5 \u20ac"
)


def legacy_article(title: str, *, charset_meta: str, padding: int = 1500) -> str:
    """An article whose only charset declaration is a meta tag placed after `padding`
    characters of head (scripts, as old CMS templates have)."""
    script = "<script>var tracking = {" + "'k': 'v', " * (padding // 10) + "};</script>"
    paragraphs = "".join(
        f"<p>{CURLY} Paragraph {i} of the story tells it in full sentences so the "
        f"extractor sees a real article with enough words.</p>"
        for i in range(6)
    )
    return (
        f"<html><head><title>{title}</title>{script}{charset_meta}</head>"
        f"<body><div id='menu'>home news</div><article><h1>{title}</h1>{paragraphs}"
        f"</article></body></html>"
    )


def serve_bytes(site: LocalSite, path: str, body: bytes, headers: dict[str, str]) -> None:
    """Answer `path` with exactly these bytes and headers (no re-encoding by the server)."""

    async def handler(_request: web.Request) -> web.StreamResponse:
        return web.Response(body=body, headers=headers)

    site.route(path, handler)


def windows_1252_meta_only(site: LocalSite, path: str) -> str:
    """A windows-1252 page served as bare `text/html` (no charset parameter), declaring its
    charset only in an http-equiv meta after 1.5 KB of head, attributes in the old order
    and quoting (`CONTENT=` before `HTTP-EQUIV=`, upper case)."""
    meta = '<META CONTENT="text/html; charset=windows-1252" HTTP-EQUIV="Content-Type">'
    page = legacy_article("Legacy “charset” story", charset_meta=meta)
    serve_bytes(site, path, page.encode("cp1252"), {"Content-Type": "text/html"})
    return page


def latin1_label_meta(site: LocalSite, path: str) -> str:
    """The same bytes declared `<meta charset=iso-8859-1>` (unquoted): browsers decode the
    label as windows-1252 (WHATWG Encoding Standard), so the curly quotes survive."""
    page = legacy_article("Latin-1 label story", charset_meta="<meta charset=iso-8859-1>")
    serve_bytes(site, path, page.encode("cp1252"), {"Content-Type": "text/html"})
    return page


def utf8_behind_apache_default(site: LocalSite, path: str, page: bytes) -> None:
    """A UTF-8 page (with its own `<meta charset=utf-8>`) behind Apache's
    `AddDefaultCharset ISO-8859-1`."""
    serve_bytes(site, path, page, {"Content-Type": "text/html; charset=ISO-8859-1"})


def utf8_bom_behind_latin_header(site: LocalSite, path: str, page: str) -> None:
    """A UTF-8 file saved with a BOM (Windows editors) behind a latin-1 header: the BOM
    wins, as in browsers."""
    body = b"\xef\xbb\xbf" + page.encode("utf-8")
    serve_bytes(site, path, body, {"Content-Type": "text/html; charset=iso-8859-1"})


def compressed(site: LocalSite, path: str, page: bytes, coding: str) -> None:
    """`page` compressed with `coding`: gzip, deflate (zlib-wrapped, RFC 9110),
    raw-deflate (what IIS sends as `deflate`) or br."""
    if coding == "gzip":
        body = gzip.compress(page)
    elif coding == "deflate":
        body = zlib.compress(page)
    elif coding == "raw-deflate":
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = packer.compress(page) + packer.flush()
    elif coding == "br":
        body = brotli.compress(page)
    else:
        raise ValueError(coding)
    name = "deflate" if coding == "raw-deflate" else coding
    headers = {"Content-Type": "text/html; charset=utf-8", "Content-Encoding": name}
    serve_bytes(site, path, body, headers)


def gzip_bomb(site: LocalSite, path: str, size: int) -> None:
    """A small gzip body that inflates to `size` bytes of HTML-looking zeros, with an
    honest Content-Length (of the compressed bytes) under any cap."""
    body = gzip.compress(b"<html><body>" + b"0" * size, compresslevel=9)
    serve_bytes(site, path, body, {"Content-Type": "text/html", "Content-Encoding": "gzip"})
