"""Text from outside (source names, URLs, feed titles, error messages) on a terminal or in
a log line.

A source name or a server's error text may hold escape sequences (`\\x1b]0;...`, `\\x1b[2J`,
a bare `\\r`, a bidi override) that rewrite the operator's screen or title bar. Everything
the CLI prints that came from outside goes through `printable`, which shows each such
character as a Python escape (`\\x1b`, `\\r`, `\\u202e`) and leaves the rest as it is;
so does every log line (frontier.log_setup: `printable` for text, `json_text` for JSON).

Hand-written: `repr()` would also quote the text and escape every non-ASCII letter under
some locales' rules; what is wanted is only "no character the terminal acts on".
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

# Control (Cc), format (Cf: bidi overrides, zero-width), line/paragraph separators,
# surrogates, private use and unassigned: everything `str.isprintable` refuses, except
# the spaces (Zs), which are harmless.
_KEEP_CATEGORIES = frozenset({"Zs"})


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """`text` as one safe string: control and format characters escaped, `\\n` too unless
    `keep_newlines` (for multi-line output the CLI composed itself)."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(_escape(ch, keep_newlines) for ch in value)


def _escape(ch: str, keep_newlines: bool) -> str:
    if ch.isprintable() or (keep_newlines and ch == "\n"):
        return ch
    if unicodedata.category(ch) in _KEEP_CATEGORIES:
        return ch
    code = ord(ch)
    if code < 0x100:
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\x{code:02x}")
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """`value` as (indented) JSON that keeps non-ASCII letters readable (`ensure_ascii=False`)
    yet holds no character a terminal acts on: `json` escapes only U+0000-U+001F, so C1
    controls (U+0080-U+009F, `\\x9b` is a CSI), bidi overrides and the other characters
    `printable` escapes are written as JSON `\\uXXXX` escapes (still the same JSON value)."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    return "".join(_json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    if ch.isprintable() or ch == "\n" or unicodedata.category(ch) in _KEEP_CATEGORIES:
        return ch
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # JSON spells astral characters as a pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
