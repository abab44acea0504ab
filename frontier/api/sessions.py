"""Dashboard sessions: the signed cookie a browser gets from the login form, and the
per-session CSRF token of the dashboard's forms. Pure: no I/O, the clock passed in.

A session is `role.expires.nonce.signature`: the role ("read" or "write"), when it
expires (Unix seconds), 16 random bytes, and an HMAC-SHA256 of the rest under a key
derived from that role's token. The token itself never leaves the server, so a stolen
cookie does not reveal it; changing a token ends every session made with it; a cookie
whose role was edited fails its signature. The server also keeps each session, keyed by
its nonce (frontier.api.session_store): logging out ends it there. (itsdangerous would sign
the same way; it is not a dependency, and the standard library's `hmac` is all this needs.)

The CSRF token of a session is an HMAC of its nonce under the same key: a form posted
from another site carries neither the cookie (SameSite=Strict) nor this token.

A dashboard notice (`?notice=...&sig=...`, the one line an action reports) is signed the
same way under the write token's key: the dashboard shows only notices this server wrote,
never text a link made up (a phishing aid).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

Role = Literal["read", "write"]
COOKIE = "frontier_session"
_CONTEXT = b"frontier dashboard session v1"


@dataclass(frozen=True, slots=True)
class Session:
    role: Role
    expires: int  # Unix seconds
    nonce: str
    csrf: str  # the token the session's forms carry

    @property
    def can_write(self) -> bool:
        return self.role == "write"


def _key(token: str) -> bytes:
    return hmac.new(token.encode(), _CONTEXT, hashlib.sha256).digest()


def _sign(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _csrf(key: bytes, nonce: str) -> str:
    return _sign(key, f"csrf.{nonce}")


def issue(role: Role, token: str, *, now: float, lifetime_s: float) -> str:
    """The cookie value of a new session of `role`, signed with `token` (that role's)."""
    expires = int(now + lifetime_s)
    nonce = secrets.token_hex(16)
    body = f"{role}.{expires}.{nonce}"
    return f"{body}.{_sign(_key(token), body)}"


def verify(value: str, tokens: dict[Role, str | None], *, now: float) -> Session | None:
    """The session `value` holds if it is well formed, signed with its role's current
    token and not expired; else None."""
    parts = value.split(".")
    if len(parts) != 4 or parts[0] not in ("read", "write") or not parts[1].isdigit():
        return None
    role: Role = "write" if parts[0] == "write" else "read"
    token = tokens.get(role)
    if not token:
        return None
    key = _key(token)
    body = ".".join(parts[:3])
    if not hmac.compare_digest(_sign(key, body), parts[3]):
        return None
    expires = int(parts[1])
    if expires <= now:
        return None
    return Session(role, expires, parts[2], _csrf(key, parts[2]))


def csrf_matches(session: Session, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(session.csrf, sent or "")


def role_of_token(sent: str, tokens: dict[Role, str | None]) -> Role | None:
    """Which role `sent` is the token of (the write token first), compared in constant
    time; None for neither."""
    roles: tuple[Role, ...] = ("write", "read")
    for role in roles:
        token = tokens.get(role)
        if token and hmac.compare_digest(sent.encode(), token.encode()):
            return role
    return None


def sign_notice(text: str, token: str) -> str:
    """The signature of a notice the server shows after an action (`token`: the write
    token)."""
    return _sign(_key(token), f"notice.{text}")


def notice_shown(text: str | None, signature: str | None, token: str | None) -> str | None:
    """`text` if the server signed it (with `token`), else None."""
    if not text or not signature or not token:
        return None
    return text if hmac.compare_digest(sign_notice(text, token), signature) else None
