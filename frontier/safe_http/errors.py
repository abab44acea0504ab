"""The safe client's errors, all `HttpError` (a `FrontierError`):

HttpError
├── Refused          permanent: not attempted, or its answer is unusable
│   ├── BlockedAddress   the address is private/loopback/metadata (frontier.safe_http.ssrf)
│   ├── PolicyBlocked    fetchprotection 0
│   ├── BodyTooLarge     over the body cap (frontier.safe_http.caps)
│   └── TooManyRedirects over the redirect cap, or a redirect to a non-http URL
└── FetchFailed      transient: timeout, DNS failure, connection error; retry later
    ├── HostBackingOff   (frontier.host_slots) the host backs off: not requested
    └── ProxyError       the outbound proxy failed, not the target (frontier.proxies)
"""

from __future__ import annotations

from frontier.errors import FrontierError


class HttpError(FrontierError):
    """Root of the safe client's errors."""


class Refused(HttpError):
    """Permanent: the request was not made, or its answer cannot be used."""


class BlockedAddress(Refused):
    pass


class PolicyBlocked(Refused):
    pass


class BodyTooLarge(Refused):
    pass


class TooManyRedirects(Refused):
    pass


class FetchFailed(HttpError):
    """Transient: a timeout, DNS failure or connection error; worth retrying later."""


class ProxyError(FetchFailed):
    """The outbound proxy failed (refused the connection, 407, a CONNECT refused, a 5xx
    of its own): the target was not asked, so nothing counts against its host; retried."""
