"""Is this the article? The verdict on a page before anything is stored
(docs/fetching.md, "Is this the article?"): a CDN's or firewall's challenge, a login or
subscription page reached by redirect, a soft 404 and a page with no body text end with
their own outcome and no document. (`noindex` is `frontier.robots_directives`.)

Every check is cheap: the headers on the event loop (a few dictionary lookups), and, for
an HTML page, substring tests over the decoded text and the parsed tree in the extraction
worker, where the page is parsed already (`page_verdict`). A challenge answered with an
error status has no extraction: its body markers are looked for in its first
`MARKER_BYTES` only, a bounded byte search, not a parse.

Each vendor's markers, and where they are documented:

- Cloudflare: the `cf-mitigated: challenge` header on every challenge page ("challenge is
  the only valid value", developers.cloudflare.com/cloudflare-challenges/challenge-types/
  challenge-pages/detect-response); the page runs `/cdn-cgi/challenge-platform/.../
  orchestrate/chl_page` with `window._cf_chl_opt`, titled "Just a moment...". Not
  `/cdn-cgi/challenge-platform/scripts/jsd/`: JavaScript Detections injects that into every
  page of a site using Bot Management ("How Challenges work").
- AWS WAF: `x-amzn-waf-action: challenge` (202) or `captcha` (405) on the interstitial
  (AWS WAF API reference, ChallengeAction and CaptchaAction).
- DataDome: the block page loads its captcha or device check from
  `geo.captcha-delivery.com` / `ct.captcha-delivery.com` (docs.datadome.co, "Handle API
  Response": a 401/403 returns the API's HTML). `X-DataDome: protected` is on every
  response of a protected site, so it marks nothing by itself.
- Imperva (Incapsula): the JavaScript challenge from `/_Incapsula_Resource` and the block
  page's "Incapsula incident ID" (support.incapsula.com, "How do Bot Checks work?": a
  cookie test, then JavaScript, then CAPTCHA).
- PerimeterX / HUMAN: the block page's `px-captcha` element and its "Access to this page
  has been denied" title (HumanSecurity/perimeterx-python-wsgi, block_template.mustache).
- Akamai Bot Manager: the crypto challenge interstitial served from `/_sec/cp_challenge/`
  (sec-cpt). Akamai's plain "Access Denied" stays a 403 refusal (`forbidden`).
- Sucuri: its firewall's JavaScript challenge sets `sucuri_cloudproxy_js`, and its block
  page names the "Sucuri WebSite Firewall" (docs.sucuri.net, Website Firewall).
- Any vendor: "Enable JavaScript and cookies to continue", "Checking your browser",
  "verify you are human": the generic interstitials, counted only on a page with almost
  no text of its own, since an article may quote them.

A marker a real article can carry on every page (a vendor's sensor script) is never
enough by itself on a 2xx page: the page must also be thin (`THIN_WORDS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from frontier.outcomes import OutcomeKind

MARKER_BYTES = 65_536  # how much of a page the marker search reads
# A page with fewer words of its own text than this is thin: a challenge, an error page.
# The shortest article of the corpus has 93 (tests/corpus); a brief may be shorter, so a
# thin page still needs a marker, a title or a heading that says what it is.
THIN_WORDS = 60

# (vendor, markers in the lowercased page; any one is enough)
_VENDOR_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Cloudflare", ("window._cf_chl_opt", "/orchestrate/chl_page/", "/orchestrate/managed/")),
    ("DataDome", ("captcha-delivery.com",)),
    ("Imperva", ("_incapsula_resource", "incapsula incident id")),
    ("PerimeterX", ("px-captcha", "captcha.px-cdn.net")),
    ("Akamai", ("/_sec/cp_challenge/",)),
    ("Sucuri", ("sucuri_cloudproxy_js", "sucuri website firewall")),
    ("AWS WAF", ("awswafintegration", ".token.awswaf.com")),
)
_GENERIC_MARKERS = (
    "enable javascript and cookies to continue",
    "checking your browser before accessing",
    "checking if the site connection is secure",
    "verify you are human",
    "verifying you are human",
    "please turn javascript on and reload the page",
    "access to this page has been denied",
    "just a moment...",
    "ddos protection by",
)
_HEADER_MARKERS = (
    ("cf-mitigated", "challenge", "Cloudflare"),
    ("x-amzn-waf-action", "challenge", "AWS WAF"),
    ("x-amzn-waf-action", "captcha", "AWS WAF"),
)

# A soft 404's title or heading, one whole part of it ("Page not found | Example News").
# WordPress themes say "Nothing Found" and "Oops! That page can't be found."; the rest
# are the default texts of common themes and frameworks, in the languages of the corpus.
_NOT_FOUND = re.compile(
    r"(?:error\s*)?404(?:\s*error)?(?:\s*page)?(?:\s*[-:!]?\s*(?:page\s+)?not\s+found)?"
    r"|(?:(?:page|article|content|post|story|file|document)\s+)?not\s+found"
    r"|nothing\s+(?:was\s+)?found"
    r"|(?:oops!?\s*)?(?:that|this|the)\s+page\s+(?:can(?:no|')?t|could\s*n[o']t|could\s+not)"
    r"\s+be\s+found"
    r"|(?:the\s+)?page\s+(?:you\s+(?:requested|are\s+looking\s+for)\s+)?"
    r"(?:does\s*n[o']t|does\s+not)\s+exist"
    r"|(?:sorry,?\s*)?we\s+(?:can(?:no|')?t|could\s*n[o']t)\s+find\s+(?:that|this|the)\s+page"
    r"|page\s+introuvable|seite\s+nicht\s+gefunden|p[aá]gina\s+no\s+encontrada"
    r"|pagina\s+non\s+trovata|pagina\s+niet\s+gevonden|p[aá]gina\s+n[aã]o\s+encontrada",
    re.IGNORECASE,
)
# Separators of a title's parts: | - : and the en dash, em dash and middle dot.
_TITLE_PARTS = re.compile("\\s+[|\u2013\u2014\u00b7:-]\\s+|\\s*[|\u2013\u2014\u00b7]\\s*")
# Typographic quotes as the plain ones (WordPress writes "can\u2019t").
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})

# A login, registration or subscription page: a path segment, or the file WordPress uses.
_LOGIN_SEGMENTS = frozenset(
    {
        "login",
        "log-in",
        "signin",
        "sign-in",
        "sign_in",
        "logon",
        "auth",
        "sso",
        "account",
        "accounts",
        "my-account",
        "myaccount",
        "register",
        "registration",
        "signup",
        "sign-up",
        "subscribe",
        "subscription",
        "subscriptions",
        "subscriber",
        "paywall",
        "membership",
        "wp-login.php",
        "login.php",
        "login.aspx",
        "login.jsp",
        "signin.html",
        "login.html",
    }
)
# The query parameters a login page is told where to send the reader back with.
_RETURN_PARAMS = frozenset(
    {
        "redirect_to",
        "redirect",
        "redirect_uri",
        "redirecturl",
        "return_to",
        "returnto",
        "returnurl",
        "return_url",
        "return",
        "next",
        "continue",
        "dest",
        "destination",
        "goto",
        "target",
        "referer",
        "ref_url",
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The page is not the article: how it ends and why."""

    kind: OutcomeKind
    reason: str


# -- challenges -------------------------------------------------------------------------


def header_challenge(headers: Mapping[str, str]) -> str | None:
    """The vendor whose challenge the response headers declare, whatever the status."""
    for name, value, vendor in _HEADER_MARKERS:
        if (headers.get(name) or "").strip().lower() == value:
            return f"{vendor} ({name}: {value})"
    return None


def vendor_marker(text: str) -> str | None:
    """The vendor whose challenge or block page `text` (lowercased) carries, or None."""
    for vendor, markers in _VENDOR_MARKERS:
        for marker in markers:
            if marker in text:
                return f"{vendor} ({marker})"
    return None


def generic_marker(text: str) -> str | None:
    """A generic interstitial's phrase in `text` (lowercased), or None."""
    for marker in _GENERIC_MARKERS:
        if marker in text:
            return f'"{marker}"'
    return None


def error_page_challenge(body: bytes) -> str | None:
    """The challenge an error answer's body (401, 403, 429, 503) carries, from the
    vendors' markers and the generic phrases (an error page has no article to quote them)."""
    text = body[:MARKER_BYTES].decode("utf-8", "replace").lower()
    return vendor_marker(text) or generic_marker(text)


# -- the page's own verdict (in the extraction worker) ----------------------------------


def page_verdict(tree: LexborHTMLParser, html: str, words: int, *, stored: bool) -> Verdict | None:
    """The verdict on an HTML page answered 2xx, from its markup, the number of words of
    its own extracted text (`words`; a feed's summary is not the page's) and whether there
    is any body to store at all (`stored`: the page's text or the feed's summary); None
    when it may be the article. Only a thin page can be a challenge or a soft 404."""
    if words >= THIN_WORDS:
        return None
    head = html[:MARKER_BYTES].lower()
    marker = vendor_marker(head) or generic_marker(head)
    if marker is not None:
        return Verdict(OutcomeKind.CHALLENGE, f"challenge page: {marker}")
    said = _says_not_found(tree, head)
    if said is not None:
        return Verdict(OutcomeKind.SOFT_404, f"soft 404: {said}, {words} words of text")
    if not stored:
        return Verdict(OutcomeKind.EMPTY, "no body text")
    return None


def _says_not_found(tree: LexborHTMLParser, head: str) -> str | None:
    """What on the page says "not found": the title, a heading, or the markers the CMS puts
    on its error template (WordPress's `error404` body class, Next.js's error shell)."""
    body = tree.body
    classes = (body.attributes.get("class") or "").split() if body is not None else []
    if "error404" in classes:
        return "WordPress's error404 template"
    if 'id="__next_error__"' in head:
        return "Next.js's error page"
    title = tree.css_first("title")
    for where, node in (("title", title), *(("heading", h) for h in tree.css("h1"))):
        text = " ".join((node.text() if node is not None else "").split()).translate(_QUOTES)
        if text and any(_NOT_FOUND.fullmatch(p.strip(" .!")) for p in _parts(text)):
            return f'{where} "{text[:100]}"'
    return None


def _parts(title: str) -> list[str]:
    return [title, *(p for p in _TITLE_PARTS.split(title) if p)]


# -- login walls reached by redirect ----------------------------------------------------


def login_wall(target: str, original: str) -> str | None:
    """Why the redirect target `target` of `original` is a login or subscription page (its
    path names one, or it is told to send the reader back to `original`), or None."""
    parts = urlsplit(target)
    segments = [unquote(s).lower() for s in parts.path.split("/") if s]
    for segment in segments:
        if segment in _LOGIN_SEGMENTS:
            return f"redirects to a login or subscription page ({target[:300]})"
    back = urlsplit(original).path.rstrip("/")
    for name, value in parse_qsl(parts.query):
        if name.lower() in _RETURN_PARAMS and back and back in value and "consent" not in target:
            return f"redirects to a login page that returns to the article ({target[:300]})"
    return None
