"""Session identifiers, which `frontier.urls` drops from a URL's identity (docs/architecture.md
"Identity"): a server that cannot rely on a cookie writes the visitor's session into
every link it serves, so each visit spells every page anew. Google, Heritrix and Nutch
drop them from the URL they key a page by; the request spelling (`fetch_url`) keeps them,
since a server may need its session to answer.

What is a session identifier follows the two crawlers' default rules, name for name:

- Nutch's ``urlnormalizer-regex`` default rule (src/plugin/urlnormalizer-regex/sample/
  regex-normalize-default.xml) strips ``;?\\b_?(l|j|bv_)?(sid|phpsessid|sessionid)=...``,
  whatever the value: ``jsessionid`` (the Java Servlet specification's URL-rewriting
  parameter, ``;jsessionid=`` in the path), ``PHPSESSID`` (PHP's default `session.name`,
  added to the query by ``session.use_trans_sid``), ``sessionid``, ``_sessionid``,
  ``bv_sessionid`` (BroadVision) and the like. Here every name of that family but the
  ``sid`` ones is dropped whatever its value, as a path parameter or as a query parameter.
- The ``sid`` names (``sid``, ``_sid``, ``lsid``, ``jsid``, ``bv_sid``) are dropped only
  when the value is 32 letters and digits, as Heritrix's ``StripSessionIDs`` does: a
  ``sid`` is often a story id (Slashdot's ``article.pl?sid=05/01/01/1234``), and dropping
  a meaningful parameter merges different articles, where keeping a session costs a
  second request. Nutch's rule, which drops every ``sid``, is not followed there.
- ``ASPSESSIONIDxxxxxxxx=`` (classic ASP: eight letters in the name, 24 in the value),
  as Heritrix's ``StripSessionIDs``.
- ``CFID`` and ``CFTOKEN`` together (ColdFusion client management), as Heritrix's
  ``StripSessionCFIDs``, which strips the pair and never one of them alone.

Names are compared case-insensitively, after the escapes of unreserved characters are
decoded (`frontier.urls` rule 8 runs first).
"""

import re

__all__ = ["has_session_pair", "is_session_param", "strip_path_sessions"]

# Named sessions, whatever their value (Nutch's family, minus the `sid` names).
_NAMED = r"_?(?:l|j|bv_)?(?:phpsessid|sessionid)"
# The `sid` family: only with a 32-character value of letters and digits (Heritrix).
_SID = r"_?(?:l|j|bv_)?sid"
_SID_VALUE = r"[0-9a-z]{32}"
_ASP = r"aspsessionid[a-z]{8}"
_ASP_VALUE = r"[a-z]{24}"

_NAMED_NAME = re.compile(rf"(?:{_NAMED})\Z", re.IGNORECASE)
_SID_PARAM = re.compile(rf"(?:{_SID})={_SID_VALUE}\Z", re.IGNORECASE)
_ASP_PARAM = re.compile(rf"{_ASP}={_ASP_VALUE}\Z", re.IGNORECASE)

# A path parameter (``;name=value``, the value up to the next ``;``, ``/`` or the end)
# of a session; the same inside a query parameter (``?a=1;jsessionid=...``, which the
# servlet containers of old wrote after a query), where the value ends at ``;`` or ``&``.
_PATH_PARAM = re.compile(
    rf";(?:(?:{_NAMED})=[^;/]*|(?:{_SID})={_SID_VALUE}(?=[;/]|\Z)|{_ASP}={_ASP_VALUE}(?=[;/]|\Z))",
    re.IGNORECASE,
)


def strip_path_sessions(text: str) -> str:
    """`text` (a path, or one query parameter) without its session path parameters."""
    return _PATH_PARAM.sub("", text) if ";" in text else text


def is_session_param(name: str, param: str) -> bool:
    """Whether the query parameter `param` (``name=value`` as written, escapes normalised),
    whose name is `name`, is a session identifier (the CFID/CFTOKEN pair apart)."""
    if _NAMED_NAME.match(name) is not None:
        return True
    return _SID_PARAM.match(param) is not None or _ASP_PARAM.match(param) is not None


def has_session_pair(names: set[str]) -> bool:
    """Whether a query's parameter names (lowercased) hold ColdFusion's CFID and CFTOKEN."""
    return "cfid" in names and "cftoken" in names
