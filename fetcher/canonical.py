"""Which URL keeps an article reached under several (pure): a page's `<link rel="canonical">`,
or its response's `Link: <...>; rel="canonical"` header (`frontier.link_header`; Drupal
sends both), names the identity its document is stored under, when the fetcher can trust
it. The header and the tag count alike; when both are there and disagree, neither does.

Trusted: a canonical on the same site as the page, that is the same scheme and either the
same host or another host under the same registrable domain (the Public Suffix List's
"eTLD+1": `amp.example.co.uk` and `www.example.co.uk` are one site, `a.github.io` and
`b.github.io` are not), on the same port. That covers what CMSes write: WordPress core
(rel=canonical since 2.9) names the permalink on every view of a post, whatever query
string it was reached with; its AMP plugin's `/amp/` and `?amp=1` views, and AMP pages in
general (`<html amp>`, which the AMP validator refuses without a canonical), name the
regular page; Drupal and news CMSes name the clean URL of pages reached with parameters
the normalisation keeps on purpose (`?ref=`, `?share=`) and of `/node/123` under its path
alias.

Ignored, never an error: no canonical, one that does not parse, one naming another scheme
or site, and mistakes that would merge distinct articles: an absolute URL written without
its scheme (`example.com/a`, read as a relative path; one of Google's "5 common mistakes
with rel=canonical", 2013, with several disagreeing canonicals, see `canonical_href`), and
a page naming the home page (a template printing the site URL on every page). A
cross-site canonical is what syndication writes (a partner's copy naming the original):
a hint about where the article came from, not a claim we can check; that copy stays under
its own URL (content-hash dedup still catches byte-identical text).
"""

from __future__ import annotations

from frontier.public_suffix import registrable_domain
from frontier.urls import InvalidURL, normalize_url, url_host


def canonical_identity(page_url: str, href: str | None) -> str | None:
    """The normalised identity `page_url`'s document belongs under, when its canonical
    `href` (resolved against the page) is trusted and differs from the page's own; else
    None. `page_url` is a normalised frontier identity; a page stored with its trailing
    slash (a source that keeps them) has its canonical normalised the same way."""
    target = canonical_claim(page_url, href)
    return None if target == page_url else target


def canonical_claim(page_url: str, href: str | None) -> str | None:
    """The trusted canonical identity the page names, itself included; None when it
    names none that can be trusted."""
    if not href or not href.strip():
        return None
    href = href.strip()
    if _host_written_as_path(href, url_host(page_url)):
        return None
    keep_slash = _keeps_trailing_slash(page_url)
    try:
        target = normalize_url(href, page_url, keep_trailing_slash=keep_slash)
    except InvalidURL:
        return None
    if target == page_url:
        return target
    if not same_site(page_url, target) or _is_root(target):
        return None
    return target


def page_canonical_claim(page_url: str, tag: str | None, header: str | None) -> str | None:
    """`canonical_claim` of what a response names: its `<link rel="canonical">` href
    (`tag`) and its HTTP `Link: <...>; rel="canonical"` target (`header`), which count
    alike (RFC 6596 section 3). Both given and naming different identities: neither is
    trusted, as with several tags that disagree."""
    if header is None:
        return canonical_claim(page_url, tag)
    from_header = canonical_claim(page_url, header)
    if tag is None or not tag.strip():
        return from_header
    return from_header if canonical_claim(page_url, tag) == from_header else None


def same_site(first: str, second: str) -> bool:
    """Both normalised URLs have one scheme, one port, and one host or registrable
    domain (IP literals: one address)."""
    if first.partition("://")[0] != second.partition("://")[0]:
        return False
    host_a, host_b = url_host(first), url_host(second)
    if host_a == host_b:
        return True
    name_a, _, port_a = host_a.rpartition(":") if _has_port(host_a) else (host_a, "", "")
    name_b, _, port_b = host_b.rpartition(":") if _has_port(host_b) else (host_b, "", "")
    if port_a != port_b:
        return False
    domain = registrable_domain(name_a)
    return domain is not None and domain == registrable_domain(name_b)


def site_of(host: str) -> str:
    """A host's site: its registrable domain, or the host itself (an IP literal, a
    public suffix), without the port."""
    name = host.rpartition(":")[0] if _has_port(host) else host
    return registrable_domain(name) or name


def _has_port(host: str) -> bool:
    return not host.endswith("]") and ":" in host


def _is_root(url: str) -> bool:
    """The home page (a page that is not would never be a duplicate of it)."""
    return url.partition("://")[2].partition("/")[2] == ""


def _host_written_as_path(href: str, page_host: str) -> bool:
    """`www.example.com/a` or `example.com/a` on a page of that site: an absolute URL
    missing its scheme, which would resolve to a page that does not exist."""
    if "://" in href or href.startswith(("/", ".", "?", "#")):
        return False
    first = href.partition("/")[0].partition("?")[0].lower()
    name = page_host.rpartition(":")[0] if _has_port(page_host) else page_host
    domain = registrable_domain(name) or name
    return "." in first and (first in (name, domain) or first.endswith("." + domain))


def _keeps_trailing_slash(url: str) -> bool:
    path = url.partition("://")[2].partition("/")[2].partition("?")[0]
    return len(path) > 0 and path.endswith("/")
