"""Does an XML document declare entities, in whatever encoding a parser would read it?

Entity expansion ("billion laughs") and external entities both need an `<!ENTITY`
declaration. Feeds, sitemaps and OPML files are refused when they hold one, before any
parser sees them. The search must happen in the encoding the parser will use: a document
declared as UTF-7 or EBCDIC (cp037 and friends) hides `<!ENTITY` from a byte search, and
feedparser and libxml2 both honour such declarations. So the encodings a parser could
choose are decided first (the byte-order mark or the XML specification's appendix F
markers, the XML declaration, the HTTP charset), the document is decoded with each one
(other than UTF-8, ASCII, Latin-1, where the byte search is exact) and the text searched.
Decoding rather than classifying encodings as ASCII-compatible: UTF-7 spells `<` as
`+ADw-`, and a table of safe encodings is one more thing to get wrong.

A declared encoding Python cannot decode is refused when libxml2 can read it (it could
not be checked); one neither knows (`encoding="bogus"`, common enough on the web) is
ignored by every parser here too, which fall back to UTF-8 or Latin-1.

Hand-written: no library offers this check without parsing, and parsing is what must not
happen first.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

from lxml import etree

_ENTITY = re.compile(r"<!ENTITY", re.IGNORECASE)
_ENTITY_BYTES = re.compile(rb"<!ENTITY", re.IGNORECASE)
_DECLARED = re.compile(r"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"'<>]{1,64})["']""")
_BYTE_SEARCH_IS_ENOUGH = frozenset({"utf-8", "ascii", "iso8859-1", "cp1252"})
# XML 1.0 appendix F: what the first bytes say (BOMs first, then "<?xm" in each encoding).
_SNIFF = (
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (b"\x00\x00\x00\x3c", "utf-32-be"),
    (b"\x3c\x00\x00\x00", "utf-32-le"),
    (b"\x00\x3c\x00\x3f", "utf-16-be"),
    (b"\x3c\x00\x3f\x00", "utf-16-le"),
    (b"\x4c\x6f\xa7\x94", "cp037"),
)

# XML 1.0's EncName production, bounded.
_ENC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")


def entity_problem(body: bytes, http_charset: str | None = None) -> str | None:
    """Why `body` must be refused (it declares entities, or its declared encoding cannot
    be checked), or None."""
    # UTF-16/32 put NUL bytes between ASCII characters; dropping them makes `<!ENTITY`
    # visible to one byte search whatever the byte order, with or without a BOM.
    if _ENTITY_BYTES.search(body.replace(b"\x00", b"") if b"\x00" in body else body):
        return "declares XML entities (refused: entity expansion)"
    for encoding in candidate_encodings(body, http_charset):
        try:
            codec = codecs.lookup(encoding)
        except LookupError:
            if _libxml2_reads(encoding):
                return f"declares an encoding that cannot be checked ({encoding[:64]!r})"
            continue  # no parser here reads it either: they fall back to UTF-8 or Latin-1
        if codec.name in _BYTE_SEARCH_IS_ENOUGH:
            continue
        if _ENTITY.search(body.decode(codec.name, "replace")):
            return "declares XML entities (refused: entity expansion)"
    return None


def candidate_encodings(body: bytes, http_charset: str | None = None) -> list[str]:
    """Every encoding a parser might read `body` in: sniffed, declared, and from HTTP."""
    found: list[str] = []
    sniffed = next((name for mark, name in _SNIFF if body.startswith(mark)), None)
    head = body[:1024]
    if sniffed is not None:
        found.append(sniffed)
        head_text = head.decode(sniffed, "replace")
    else:
        head_text = head.decode("latin-1")
    declared = _DECLARED.match(head_text.lstrip("\ufeff"))
    if declared:
        found.append(declared.group(1).strip())
    if http_charset:
        found.append(http_charset.strip().strip("\"'"))
    # Only names XML allows (EncName); anything else no parser takes as an encoding.
    return list(dict.fromkeys(name for name in found if _ENC_NAME.fullmatch(name)))


@lru_cache(maxsize=64)
def _libxml2_reads(encoding: str) -> bool:
    """Whether lxml (libxml2, perhaps with iconv) accepts `encoding` in a declaration."""
    probe = f'<?xml version="1.0" encoding="{encoding}"?><a/>'.encode("ascii", "replace")
    try:
        etree.fromstring(probe, etree.XMLParser(recover=False, resolve_entities=False))
    except etree.XMLSyntaxError:
        return False
    return True
