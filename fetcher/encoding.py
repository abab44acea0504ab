"""How a page's body is decoded (a BOM, the Content-Type charset, `<meta>`, then
detection; see `decode_html`). Apart from the fetch decisions (`fetcher.decisions`): the
extraction job decodes in the worker processes, which import only what parsing needs
(no HTTP client, no database driver, no settings: each costs a worker's start-up)."""

from __future__ import annotations

import charset_normalizer
from w3lib.encoding import html_body_declared_encoding, html_to_unicode, http_content_type_encoding

DETECT_BYTES = 65_536  # how much of a page without a declared charset detection reads
# What the WHATWG Encoding Standard decodes `iso-8859-1`, `latin1`, `ascii`, `us-ascii`
# (and windows-1252 itself) as; Apache's old `AddDefaultCharset` made it the header of
# many pages written in UTF-8.
_LATIN_DEFAULT = "cp1252"


def decode_html(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(text, encoding) of an HTML body, as a browser reads it, by w3lib (Scrapy's own
    decoder, which follows the WHATWG Encoding Standard): a BOM, then the Content-Type
    charset, then `<meta charset>` / `<meta http-equiv="Content-Type">` (the prescan of
    the first 4 KiB, up to `<body>`), then detection. The issue lists the header before
    the BOM; browsers put the BOM first (Encoding Standard, "decode"), and so does this.
    Labels mean what browsers make of them: `iso-8859-1`, `latin1`, `ascii` decode as
    windows-1252 (its curly quotes and dashes in 0x80-0x9F), `gb2312`/`gbk` as gb18030,
    `x-sjis`/`shift_jis` as cp932. Undecodable bytes are replaced, never an error.

    One departure from browsers: a page declared windows-1252 (or a label decoded as it)
    whose bytes are valid UTF-8 with non-ASCII characters is UTF-8, the classic page
    saved in UTF-8 behind a server default of `charset=iso-8859-1`. A browser shows it as
    mojibake ("cafÃ©"); the stored text should be what the author wrote, and real
    windows-1252 prose is almost never valid multi-byte UTF-8 by accident."""
    encoding, text = html_to_unicode(content_type, body, auto_detect_fun=_detect)
    if encoding == _LATIN_DEFAULT and not body.isascii() and _declared_latin(body, content_type):
        try:
            return body.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    return text, encoding


def _declared_latin(body: bytes, content_type: str | None) -> bool:
    """windows-1252 came from a declaration (header or meta), not from detection."""
    declared = http_content_type_encoding(content_type) or html_body_declared_encoding(body)
    return declared == _LATIN_DEFAULT


def _detect(body: bytes) -> str | None:
    """The encoding of a page that declares none: UTF-8 when it decodes as such (most of
    the web, and detection is slow), else charset_normalizer's best guess."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        best = charset_normalizer.from_bytes(body[:DETECT_BYTES]).best()
        return best.encoding if best else None
    return "utf-8"
