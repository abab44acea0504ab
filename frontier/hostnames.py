"""Host normalisation for `frontier.urls`: DNS names (IDNA), IPv4 and IPv6 literals.

`normalize_host(raw)` turns the host part of an authority (userinfo and port already split
off) into the one spelling the frontier stores, or raises `ValueError` with the reason
(`frontier.urls` re-raises it as `InvalidURL`). The result is pure ASCII and is one of:

- a DNS name: lowercase labels of ``a-z 0-9 - _`` joined by dots, each 1-63 characters,
  253 at most in all, with no trailing dot (``www.example.org.`` becomes
  ``www.example.org``: the same DNS name, and crawler-commons normalises it the same way);
- an IPv4 address in dotted decimal (browser forms such as ``0x7f.1`` or ``2130706433``
  are parsed as the WHATWG URL Standard does, so they become ``127.0.0.1``);
- a bracketed IPv6 address, compressed as the WHATWG URL Standard serialises it.

Rules, mirroring the URL Standard's host parser where it is safe to:

1. percent-escapes in a DNS name are decoded as UTF-8 (``example%2Ecom`` is ``example.com``);
2. a non-ASCII name is mapped with UTS #46 (non-transitional, ``UseSTD3ASCIIRules=false``)
   and every non-ASCII label is encoded with IDNA 2008 by the ``idna`` package, which
   refuses what IDNA 2008 disallows (symbols such as ``≠``, joiners out of context, labels
   breaking the Bidi rule, labels starting or ending with a hyphen). Nothing falls back to
   the laxer IDNA 2003 codec of the standard library;
3. ASCII labels are not run through IDNA 2008, so real-world names that it would refuse
   but that resolve (``r3---sn-abc.googlevideo.com``, ``my_host.example.com``, ``-x.example``)
   are kept; an ASCII label starting ``xn--`` must be a valid, canonical A-label;
4. a name whose last label is numeric is an IPv4 address and must parse as one
   (``192.168.0.257`` and ``foo.09`` are refused, as browsers refuse them);
5. anything else (empty labels, ``%``, spaces, ``*``, ``:`` and so on) is refused: the
   frontier only stores hosts it could resolve.
"""

import ipaddress
import re
from functools import lru_cache

import idna

MAX_HOST_LENGTH = 253  # RFC 1035 limit on a DNS name, without the trailing dot
_DNS_NAME = re.compile(r"[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*")
_HEX_DIGITS = frozenset("0123456789abcdef")
_OCTAL_DIGITS = frozenset("01234567")
_IPV6_CHARS = re.compile(r"[0-9A-Fa-f:.]+")


@lru_cache(maxsize=16384)
def normalize_host(raw: str) -> str:
    """Return the canonical ASCII form of `raw` or raise `ValueError` with the reason.

    Cached: hosts repeat far more than URLs do, and the IDNA work is the costly part.
    """
    if not raw:
        raise ValueError("empty host")
    if raw[0] == "[":
        return _ipv6(raw)
    host = raw
    if "%" in host:
        host = _percent_decode(host)
    host = _to_ascii(host) if not host.isascii() else host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise ValueError("empty host")
    if len(host) > MAX_HOST_LENGTH or _DNS_NAME.fullmatch(host) is None:
        raise ValueError(f"bad host {host!r}")
    if "xn--" in host:
        _check_a_labels(host)
    last_label = host.rpartition(".")[2]
    if _ends_in_number(last_label):
        return _ipv4(host)
    return host


def _percent_decode(host: str) -> str:
    parts = host.split("%")
    out = bytearray(parts[0].encode("utf-8"))
    for part in parts[1:]:
        escape = part[:2]
        if len(escape) < 2 or not all(c in "0123456789abcdefABCDEF" for c in escape):
            raise ValueError("bad percent-escape in host")
        out.append(int(escape, 16))
        out += part[2:].encode("utf-8")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("percent-escapes in host are not UTF-8") from None


def _to_ascii(host: str) -> str:
    """UTS #46 mapping, then IDNA 2008 A-labels for the labels that are not ASCII."""
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        labels = []
        for label in mapped.split("."):
            if label.isascii():
                labels.append(label.lower())
            elif label.startswith("xn--"):
                raise ValueError("A-label with non-ASCII characters")
            else:
                labels.append(idna.alabel(label).decode("ascii"))
    except idna.IDNAError as exc:
        raise ValueError(f"invalid IDNA host: {exc}") from None
    return ".".join(labels)


def _check_a_labels(host: str) -> None:
    for label in host.split("."):
        if not label.startswith("xn--"):
            continue
        try:
            ulabel = idna.ulabel(label)
            canonical = idna.alabel(ulabel).decode("ascii")
        except idna.IDNAError as exc:
            raise ValueError(f"invalid A-label {label!r}: {exc}") from None
        if ulabel.isascii() or canonical != label:
            raise ValueError(f"non-canonical A-label {label!r}")


def _ends_in_number(label: str) -> bool:
    if label.isdigit():  # `label` is ASCII here
        return True
    return label.startswith("0x") and all(c in _HEX_DIGITS for c in label[2:])


def _ipv4_number(part: str) -> int:
    """One part of an IPv4 host, in the URL Standard's decimal, octal or hex notation."""
    if part.startswith("0x"):
        digits, base, allowed = part[2:], 16, _HEX_DIGITS
    elif len(part) > 1 and part[0] == "0":
        digits, base, allowed = part[1:], 8, _OCTAL_DIGITS
    else:
        digits, base, allowed = part, 10, None
    if not digits:
        if base == 10:
            raise ValueError("empty IPv4 part")
        return 0
    if allowed is None:
        if not digits.isdigit():
            raise ValueError(f"bad IPv4 part {part!r}")
    elif not all(c in allowed for c in digits):
        raise ValueError(f"bad IPv4 part {part!r}")
    return int(digits, base)


def _ipv4(host: str) -> str:
    parts = host.split(".")
    if len(parts) > 4:
        raise ValueError(f"bad IPv4 address {host!r}")
    numbers = [_ipv4_number(part) for part in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError(f"IPv4 address out of range {host!r}")
    address = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        address += n << (8 * (3 - i))
    return ".".join(str((address >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def _ipv6(raw: str) -> str:
    inner = raw[1:-1]
    if raw[-1] != "]" or _IPV6_CHARS.fullmatch(inner) is None:
        raise ValueError(f"bad IPv6 literal {raw!r}")
    try:
        packed = ipaddress.IPv6Address(inner).packed
    except ValueError:
        raise ValueError(f"bad IPv6 literal {raw!r}") from None
    pieces = [int.from_bytes(packed[i : i + 2], "big") for i in range(0, 16, 2)]
    # Compress the first longest run of two or more zero pieces, as the URL Standard does.
    best_start, best_len, start = -1, 1, -1
    for i, piece in enumerate([*pieces, 1]):
        if piece == 0:
            if start < 0:
                start = i
        elif start >= 0:
            if i - start > best_len:
                best_start, best_len = start, i - start
            start = -1
    hexes = [format(piece, "x") for piece in pieces]
    if best_start < 0:
        return "[" + ":".join(hexes) + "]"
    head = ":".join(hexes[:best_start])
    tail = ":".join(hexes[best_start + best_len :])
    return f"[{head}::{tail}]"
