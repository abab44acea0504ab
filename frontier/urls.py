"""URL normalisation: one spelling, and one hash, per page the frontier may fetch.

Public API:

- `normalize_url(url, base=None, *, keep_trailing_slash=False) -> str`
- `url_hash(normalized) -> str`: SHA-256 of the normalised URL, 64 lowercase hex digits
- `url_host(normalized) -> str`: the politeness key, ``host`` or ``host:port``
- `InvalidURL`: raised, with a `reason`, for anything unfit for the frontier
- `request_spelling(url, base=None) -> str`: the URL as discovered, to request (below)
- `same_identity(a, b) -> bool`: whether two spellings name one frontier entry

`normalize_url` applies these rules, in this order (summarised in docs/architecture.md, "Identity"):

1. Leading and trailing C0 controls and spaces are stripped, as browsers do. Any other
   control character (C0, DEL, C1), anywhere, is refused; so is a URL (or base) longer
   than `MAX_URL_LENGTH` characters, before or after normalisation.
2. A backslash before the query is read as ``/``, as browsers read it in http(s) URLs.
3. A relative URL is resolved against `base` (RFC 3986 section 5, `urllib.parse.urljoin`),
   which must itself be a valid http(s) URL; without a base it is refused. As in browsers,
   ``http:foo`` is relative when the base is also http, and any number of slashes may
   stand between ``http:`` (or a scheme-relative start) and the host: ``http:/x``,
   ``http:x`` (without an http base) and ``///x`` all name host ``x``.
4. Only ``http`` and ``https`` with a non-empty host are accepted; the scheme is lowercased.
5. Userinfo is dropped: the frontier, its logs and its dashboard must never hold
   credentials. Two URLs differing only in credentials therefore share one entry.
6. The host is lowercased, percent-decoded, IDNA-encoded (UTS #46 mapping, IDNA 2008 via
   the ``idna`` package), stripped of a trailing dot, and IPv4/IPv6 literals are put in
   canonical form; a bad host is refused. See `frontier.hostnames`.
7. The port must be 0-65535; the default one (80 for http, 443 for https) is dropped, an
   empty one (``example.com:``) too, and leading zeros go.
8. In the path and the query, percent-escapes are uppercased, escapes of unreserved
   characters (``A-Z a-z 0-9 - . _ ~``) are decoded, escapes of everything else stay
   (``%2F``, ``%3B``, ``%23``, ``%25``, ``%20``...), a ``%`` that starts no escape becomes
   ``%25``, and every character RFC 3986 does not allow raw (space, ``"<>[]^`{|}\\``,
   non-ASCII as UTF-8) is percent-encoded, so the result is pure ASCII.
   This runs before rule 9 so that ``%2E%2E`` is a dot segment (the URL Standard treats
   it as one), which normalisation must see for ``normalize_url`` to be idempotent.
9. Session path parameters (``;jsessionid=...`` and the like; `frontier.session_ids`)
   are dropped, then dot segments are resolved (RFC 3986 section 5.2.4); an empty path
   becomes ``/``.
   Repeated slashes are kept: ``/a//b`` may be a different resource (web archives put a
   whole URL in the path).
10. Trailing slashes of a non-root path are removed (all of them, so the rule is
    idempotent) unless `keep_trailing_slash` is set for the source.
11. The query loses its empty, tracking and session parameters, keeps blank values as written
    (``a=`` and ``a`` stay distinct), and is sorted stably by parameter name; an empty
    query loses its ``?``. See `frontier.url_query`.
12. The fragment is dropped.

`normalize_url(normalize_url(u)) == normalize_url(u)` holds for every accepted `u`, and
nothing but `InvalidURL` is ever raised.

Identity and request spelling are two things (docs/fetching.md): the normalised URL is the
identity, used for dedup and nothing else; `request_spelling` is what is requested, the
URL as discovered with its path and query exactly as written (no slash removed, no
parameter dropped or reordered, no escape decoded, a session identifier kept for the
server that needs it) and only the fragment dropped. Its
scheme and authority are the normalised ones (credentials never enter the frontier), and
it is resolved against `base` as a browser resolves a link. A site that wants `/a/` and
redirects `/a` back to it is then asked for `/a/`, the spelling it linked.
"""

import hashlib
import re
from functools import lru_cache
from urllib.parse import urljoin

from frontier.errors import FrontierError
from frontier.hostnames import normalize_host
from frontier.session_ids import strip_path_sessions
from frontier.url_query import clean_query

__all__ = [
    "MAX_URL_LENGTH",
    "InvalidURL",
    "normalize_url",
    "request_spelling",
    "same_identity",
    "url_hash",
    "url_host",
]

MAX_URL_LENGTH = 4096

_DEFAULT_PORTS = {"http": 80, "https": 443}
_C0_OR_SPACE = "".join(chr(i) for i in range(0x21))
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# RFC 3986 appendix B after "scheme://", minus the fragment (which is dropped).
_AFTER_SCHEME = re.compile(r"([^/?#]*)([^?#]*)(?:\?([^#]*))?")
# Characters allowed raw in a normalised path or query: unreserved, sub-delims, ":@/?".
_NOT_RAW = re.compile(r"[^A-Za-z0-9._~!$&'()*+,;=:@/?-]")
_ESCAPE_OR_NOT_RAW = re.compile(r"%[0-9A-Fa-f]{2}|%|[^A-Za-z0-9._~!$&'()*+,;=:@/?%-]+")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_BYTE_ESCAPES = [f"%{b:02X}" for b in range(256)]
# What a browser percent-encodes in a path or query it requests: escapes stay as written.
_NOT_SENDABLE = re.compile(r"[^A-Za-z0-9._~!$&'()*+,;=:@/?%-]+")


def _escape_table() -> dict[str, str]:
    table = {"%": "%25"}
    for b in range(256):
        char = chr(b)
        canonical = char if char in _UNRESERVED else _BYTE_ESCAPES[b]
        upper = f"{b:02X}"
        for spelling in {
            upper,
            upper.lower(),
            upper[0] + upper[1].lower(),
            upper[0].lower() + upper[1],
        }:
            table["%" + spelling] = canonical
    return table


_ESCAPES = _escape_table()


class InvalidURL(FrontierError, ValueError):
    """A URL unfit for the frontier; `reason` says why in a few words."""

    def __init__(self, reason: str, url: object = None) -> None:
        self.reason = reason
        self.url = url
        super().__init__(reason if url is None else f"{reason}: {url!r:.200}")


def normalize_url(url: str, base: str | None = None, *, keep_trailing_slash: bool = False) -> str:
    """Return the normalised form of `url` (resolved against `base`), or raise `InvalidURL`."""
    if not isinstance(url, str):
        raise InvalidURL(f"not a string but {type(url).__name__}")
    url = _clean(url)
    match = _SCHEME.match(url)
    if match is None:  # a relative reference
        if base is None:
            raise InvalidURL("relative URL without a base", url)
        url = _resolve(url, base)
        match = _SCHEME.match(url)
        if match is None:  # cannot happen: a normalised base has a scheme
            raise InvalidURL("relative URL without a usable base", url)
    scheme = match.group(1)
    if scheme != "http" and scheme != "https":
        scheme = scheme.lower()
        if scheme != "http" and scheme != "https":
            raise InvalidURL(f"scheme {scheme!r} is not http or https", url)
    rest = url[match.end() :]
    if rest[:2] != "//" and base is not None and _scheme_of(base) == scheme:
        # "http:foo" against an http base is relative, as browsers read it.
        url = _resolve(rest, base)
        rest = url[match.end() :]
    # Browsers skip any number of slashes (backslashes are slashes by now) before the
    # authority of an http(s) URL: "http:/x", "http:x" and "http:///x" all mean "http://x".
    parts = _AFTER_SCHEME.match(rest.lstrip("/"))
    if parts is None:  # cannot happen: every group of the pattern may be empty
        raise InvalidURL("unparsable URL", url)
    netloc, path, query = parts.groups()
    try:
        authority = _authority(scheme, netloc)
        if path:
            if _NOT_RAW.search(path) is not None:
                path = _ESCAPE_OR_NOT_RAW.sub(_fix_escape, path)
            if ";" in path:
                path = strip_path_sessions(path)
            if "/." in path:
                path = _remove_dot_segments(path)
            if not keep_trailing_slash:
                path = _path_without_trailing_slash(path)
        else:
            path = "/"
        if query:
            if _NOT_RAW.search(query) is not None:
                query = _ESCAPE_OR_NOT_RAW.sub(_fix_escape, query)
            query = clean_query(query)
    except UnicodeEncodeError:
        raise InvalidURL("character not encodable as UTF-8 (lone surrogate)", url) from None
    except ValueError as exc:
        raise InvalidURL(str(exc), url) from None

    if query:
        normalized = f"{scheme}://{authority}{path}?{query}"
    else:
        normalized = f"{scheme}://{authority}{path}"
    if len(normalized) > MAX_URL_LENGTH:
        raise InvalidURL("normalised URL too long", url)
    return normalized


def request_spelling(url: str, base: str | None = None) -> str:
    """The spelling of `url` (resolved against `base`) to request: its path and query as
    written, only the fragment dropped, characters no request may carry raw (space,
    non-ASCII) percent-encoded as a browser does, dot segments resolved. The scheme and
    authority are `normalize_url`'s. Raises `InvalidURL` for what `normalize_url` refuses;
    a spelling too odd to send as written (``http:/x``) falls back to the normalised URL
    with its trailing slash kept."""
    return _spelling(url, base, normalize_url(url, base, keep_trailing_slash=True))


# A URL `normalize_url` returns unchanged (and `request_spelling` too), recognised by one
# match. `identity_and_spelling` is the bulk import's hottest work (`prepare_urls` calls it
# per line), and nearly every line of a bulk list is already in normal form; on
# `bench.submit.build_urls`, whose lines match but for those with a query, the general path
# (`_clean` and its regexes, `_authority`, the slash rule, `_spelling`) cost several times
# what this match costs, per URL and per line of `prepare_urls` (bench/RESULTS.md, the
# submit figures). Each part accepts only what the general path provably leaves as it is; anything
# else (IDNA, IPv4 or IPv6 hosts, escapes, dot segments, queries...) takes the general path,
# which stays the reference (`tests/unit/test_urls_fast_path.py` holds the two to agree):
# - scheme: lowercase ``http`` or ``https``, then exactly two slashes (rules 3, 4); no
#   userinfo, space, control character or backslash anywhere (rules 1, 2, 5);
# - host (rule 6, `normalize_host`): labels of ``a-z 0-9 - _`` (ASCII labels, kept as
#   written) of 1-63 characters, 253 at most in all, none empty (so no trailing dot), none
#   starting ``xn--`` (an A-label is checked), the last one starting with a letter (so the
#   host is never read as an IPv4 address);
# - port (rule 7): 1-65535 without a leading zero, and neither 80 nor 443, whatever the scheme;
# - path (rules 8-10): present, of characters allowed raw only (so no ``%``), no ``.`` or
#   ``..`` segment, no ``;`` (a session path parameter is dropped), and in `_FIXED_POINT`
#   no trailing slash unless it is the root;
# - no query and no fragment (rules 11, 12). The length limit is checked apart.
# The quantifiers are possessive (``*+``): nothing here needs backtracking, which had a cost.
_FIXED_START = (
    r"https?://"
    r"(?=[a-z0-9_.-]{1,253}+[:/])(?:(?!xn--)[a-z0-9_-]{1,63}+\.)*+(?!xn--)[a-z][a-z0-9_-]{0,62}+"
    r"(?::(?!80/|443/)"
    r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
)
_FIXED_SEGMENT = r"/(?!\.\.?(?:/|\Z))[A-Za-z0-9._~!$&'()*+,=:@-]*+"
_FIXED_POINT = re.compile(rf"{_FIXED_START}(?:(?:{_FIXED_SEGMENT})++(?<!/)|/)")
_FIXED_POINT_KEEPING_SLASH = re.compile(rf"{_FIXED_START}(?:{_FIXED_SEGMENT})++")


def identity_and_spelling(
    url: str, base: str | None = None, *, keep_trailing_slash: bool = False
) -> tuple[str, str]:
    """`normalize_url(url, base, keep_trailing_slash=...)` and `request_spelling(url, base)`
    with one normalisation instead of two (the bulk submit path's hottest work): the
    identity is the spelling's normalised form with the path's trailing slashes dropped,
    exactly what `normalize_url` drops. A URL already in normal form is both, at once."""
    if (
        base is None
        and type(url) is str
        and len(url) <= MAX_URL_LENGTH
        and (_FIXED_POINT_KEEPING_SLASH if keep_trailing_slash else _FIXED_POINT).fullmatch(url)
        is not None
    ):
        return url, url
    return _identity_and_spelling_slow(url, base, keep_trailing_slash=keep_trailing_slash)


def _identity_and_spelling_slow(
    url: str, base: str | None = None, *, keep_trailing_slash: bool = False
) -> tuple[str, str]:
    """`identity_and_spelling` without its fast path (kept apart so tests compare the two)."""
    kept = normalize_url(url, base, keep_trailing_slash=True)
    return (kept if keep_trailing_slash else _url_without_trailing_slash(kept)), _spelling(
        url, base, kept
    )


def _url_without_trailing_slash(kept: str) -> str:
    """A URL normalised with its trailing slash kept, as `normalize_url` writes it without."""
    start = kept.index("/", kept.index("//") + 2)  # the path, always there and non-empty
    end = kept.find("?", start)
    if end < 0:
        end = len(kept)
    path = kept[start:end]
    dropped = _path_without_trailing_slash(path)
    return kept if dropped is path else kept[:start] + dropped + kept[end:]


def _path_without_trailing_slash(path: str) -> str:
    """A path's trailing slashes dropped, the root's own slash kept (`/a/b//` -> `/a/b`)."""
    return (path.rstrip("/") or "/") if len(path) > 1 and path[-1] == "/" else path


def _spelling(url: str, base: str | None, kept: str) -> str:
    """`request_spelling` of `url` once its normalised form `kept` (slash kept) is known."""
    if url == kept:  # the common case: a normalised URL is requested as it is
        return kept
    text = _clean(url)
    match = _SCHEME.match(text)
    if match is None or (text[match.end() : match.end() + 2] != "//" and base is not None):
        text = _resolve(text, base) if base is not None else text
        match = _SCHEME.match(text)
    rest = text[match.end() :] if match is not None else ""
    parts = _AFTER_SCHEME.match(rest[2:]) if rest[:2] == "//" and rest[2:3] != "/" else None
    if parts is None:
        return kept
    _netloc, path, query = parts.groups()
    if path and "/." in path:
        path = _remove_dot_segments(path)
    target = path or "/"
    if query is not None:
        target += "?" + query
    if _NOT_SENDABLE.search(target) is not None:
        try:
            target = _NOT_SENDABLE.sub(_escape_all, target)
        except UnicodeEncodeError:
            return kept
    spelling = kept[: kept.index("/", kept.index("//") + 2)] + target
    return spelling if len(spelling) <= MAX_URL_LENGTH else kept


def same_identity(a: str, b: str) -> bool:
    """Whether two spellings are one page for the frontier: equal once normalised with the
    trailing slash dropped (so ``/a`` and ``/a/`` match even for a source that keeps it).
    An unusable URL is nobody's identity."""
    try:
        return normalize_url(a) == normalize_url(b)
    except InvalidURL:
        return False


def url_hash(normalized: str) -> str:
    """SHA-256 of the UTF-8 normalised URL: 64 lowercase hex digits."""
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def url_host(normalized: str) -> str:
    """The politeness key of a normalised URL: its host, plus ``:port`` if not the default.

    A non-default port is kept because ``example.com:8080`` is usually a different server
    process from ``example.com`` and is limited on its own. `normalized` must come from
    `normalize_url`; anything without an http(s) authority raises `InvalidURL`.
    """
    if not isinstance(normalized, str):
        raise InvalidURL(f"not a string but {type(normalized).__name__}")
    scheme, sep, rest = normalized.partition("://")
    host = rest.partition("/")[0]
    if not sep or scheme not in _DEFAULT_PORTS or not host:
        raise InvalidURL("not a normalised http(s) URL", normalized)
    return host


def host_key(value: str) -> str:
    """The politeness key (`url_host`) of a host name, a ``host:port`` or a URL, as the
    frontier stores it (lowercase, IDNA); raises `InvalidURL`."""
    candidate = value.strip() if "://" in value else f"http://{value.strip()}/"
    return url_host(normalize_url(candidate))


def _clean(url: str) -> str:
    """Strip, bound and check a URL or base as it arrives (rules 1 and 2)."""
    if len(url) > MAX_URL_LENGTH:
        raise InvalidURL("URL too long", url)
    url = url.strip(_C0_OR_SPACE)
    if _CONTROL.search(url) is not None:
        raise InvalidURL("control character in URL", url)
    if "\\" in url:
        end = len(url)
        for delimiter in "?#":
            index = url.find(delimiter)
            if 0 <= index < end:
                end = index
        url = url[:end].replace("\\", "/") + url[end:]
    return url


def _scheme_of(base: str) -> str | None:
    match = _SCHEME.match(base.lstrip(_C0_OR_SPACE)) if isinstance(base, str) else None
    return match.group(1).lower() if match is not None else None


def _resolve(reference: str, base: str) -> str:
    """Resolve a relative `reference` against `base`, which must be a valid http(s) URL."""
    if not isinstance(base, str):
        raise InvalidURL(f"base is not a string but {type(base).__name__}")
    try:
        absolute_base = _normalized_base(base)
    except InvalidURL as exc:
        raise InvalidURL(f"bad base URL ({exc.reason})", base) from None
    if reference[:2] == "//":  # scheme-relative
        return absolute_base.partition(":")[0] + ":" + reference
    try:
        return urljoin(absolute_base, reference)
    except ValueError as exc:
        raise InvalidURL(f"cannot resolve against base: {exc}", reference) from None


@lru_cache(maxsize=1024)
def _normalized_base(base: str) -> str:
    # Resolving against the normalised base gives the same result as against the raw one
    # (RFC 3986 merging removes dot segments anyway), and all links of a page share one.
    return normalize_url(base, keep_trailing_slash=True)


@lru_cache(maxsize=16384)
def _authority(scheme: str, netloc: str) -> str:
    """``host`` or ``host:port`` for a raw authority; raises `ValueError` with the reason."""
    hostport = netloc.rpartition("@")[2]  # userinfo is dropped (see the module docstring)
    if " " in netloc:
        raise ValueError("space in authority")
    if hostport.startswith("["):
        close = hostport.find("]") + 1
        if close == 0:
            raise ValueError("unclosed IPv6 literal")
        raw_host, port = hostport[:close], hostport[close:]
        if port and port[0] != ":":
            raise ValueError("junk after IPv6 literal")
        port = port[1:]
    else:
        raw_host, _, port = hostport.partition(":")
    host = normalize_host(raw_host)
    if not port:
        return host
    if not (port.isascii() and port.isdigit()):
        raise ValueError(f"bad port {port!r}")
    number = int(port)
    if number > 65535:
        raise ValueError(f"port out of range {port!r}")
    if number == _DEFAULT_PORTS[scheme]:
        return host
    return f"{host}:{number}"


def _fix_escape(match: re.Match[str]) -> str:
    text = match.group()
    fixed = _ESCAPES.get(text)
    if fixed is not None:
        return fixed
    return "".join([_BYTE_ESCAPES[b] for b in text.encode("utf-8")])


def _escape_all(match: re.Match[str]) -> str:
    return "".join([_BYTE_ESCAPES[b] for b in match.group().encode("utf-8")])


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")
    out: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)
