"""Query-string normalisation for `frontier.urls`: the tracking deny-list and the sort.

A query is split on ``&`` only (``;`` is data: ``?q=tl;dr`` is one parameter). Each
parameter is kept byte for byte, so ``a=`` and ``a`` stay distinct and ``%26``/``%3D``
stay inside their parameter. Parameters are then:

- dropped when empty (``a&&b`` is ``a&b``; a trailing ``&`` goes),
- dropped when their name is a tracking parameter (below),
- dropped when they are a session identifier (`frontier.session_ids`: ``PHPSESSID``,
  ``jsessionid``, a 32-character ``sid``, ColdFusion's ``CFID`` and ``CFTOKEN`` together
  ...), and a session path parameter written inside one (``a=1;jsessionid=...``) goes,
- sorted by name, stably: parameters with the same name keep their input order, because
  ``?tag=b&tag=a`` may well mean something different from ``?tag=a&tag=b``.

Only names on the explicit deny-list are dropped. Names that are sometimes used for
tracking but also carry meaning (``ref``, ``source``, ``id``, ``from``, ``s``) are kept:
dropping a meaningful parameter merges different pages, keeping a tracking one only
costs a duplicate fetch.
"""

from operator import itemgetter

from frontier.session_ids import has_session_pair, is_session_param, strip_path_sessions

# Tracking parameters, compared case-insensitively with the parameter's name (after
# its percent-escapes of unreserved characters are decoded).
TRACKING_PARAMS = frozenset(
    {
        # Google: Ads click ids, Analytics cross-domain linker, Merchant Center
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "_ga",
        "_gl",
        "srsltid",
        # Microsoft / Bing Ads, Yandex, Facebook, Instagram, Twitter/X, TikTok, LinkedIn
        "msclkid",
        "yclid",
        "ysclid",
        "fbclid",
        "igshid",
        "twclid",
        "ttclid",
        "li_fat_id",
        # Mailchimp, HubSpot, Marketo, Olytics, Vero, Klaviyo, Drip, Openstat
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "hsctatracking",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "_kx",
        "__s",
        "_openstat",
        # Matomo / Piwik campaign parameters
        "mtm_campaign",
        "mtm_cid",
        "mtm_content",
        "mtm_group",
        "mtm_keyword",
        "mtm_medium",
        "mtm_placement",
        "mtm_source",
        "pk_campaign",
        "pk_content",
        "pk_keyword",
        "pk_kwd",
        "pk_medium",
        "pk_source",
    }
)
# Prefixes that mark a whole family of tracking parameters (utm_source, utm_medium, ...).
TRACKING_PREFIXES = ("utm_",)

_first = itemgetter(0)


def is_tracking_param(name: str) -> bool:
    """Whether a parameter called `name` is on the tracking deny-list."""
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def clean_query(query: str) -> str:
    """Drop empty, tracking and session parameters and sort the rest stably by name.

    `query` is already escape-normalised and has no leading ``?``; the result may be
    empty, in which case the URL has no query at all.
    """
    if "&" not in query:
        if ";" in query:
            query = strip_path_sessions(query)
        if not query or _dropped(query.partition("=")[0], query):
            return ""
        return query
    named = []
    for param in query.split("&"):
        if ";" in param:
            param = strip_path_sessions(param)
        if param:
            name = param.partition("=")[0]
            if not _dropped(name, param):
                named.append((name, param))
    if len(named) > 1 and has_session_pair({name.lower() for name, _ in named}):
        named = [(name, param) for name, param in named if name.lower() not in _COLDFUSION]
    named.sort(key=_first)
    return "&".join([param for _, param in named])


_COLDFUSION = frozenset({"cfid", "cftoken"})


def _dropped(name: str, param: str) -> bool:
    return is_tracking_param(name) or is_session_param(name, param)
