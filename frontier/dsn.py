"""PostgreSQL DSNs in messages and at load time: `describe_dsn` (host:port/database, never
a credential), `redact` (a driver's message with the DSN's password blanked out) and
`check_dsn` (what `Settings` runs on FRONTIER_DATABASE_URL, so a bad port or a DSN in
libpq's key=value form is one line naming the variable, not a traceback from a driver).

The platform's drivers (asyncpg for the pool, psycopg for migrations) are both given the
URL form, `postgresql://user:password@host:port/database?options`; asyncpg does not read
the key=value form, so that is refused with a message saying which form to use.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

SCHEMES = ("postgresql", "postgres")
_KEY_VALUE_PASSWORD = re.compile(r"""password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)""", re.IGNORECASE)


def describe_dsn(dsn: str) -> str:
    """host:port/database of a DSN, without credentials, for messages."""
    if "://" not in dsn:
        return "(not a postgresql:// URL)"  # key=value or garbage: echo none of it
    try:
        parts = urlsplit(dsn)
        query = parse_qs(parts.query)
        host = query.get("host", [parts.hostname or "localhost"])[0]
        port = query.get("port", [str(parts.port or 5432)])[0]
        database = parts.path.lstrip("/") or query.get("dbname", [""])[0] or "(default)"
    except ValueError:
        return "(unparseable DSN)"
    return f"{host}:{port}/{database}"


def passwords(dsn: str) -> list[str]:
    """Every password spelled in `dsn` (URL userinfo, `?password=`, key=value)."""
    found = [m.group(1).strip("'") for m in _KEY_VALUE_PASSWORD.finditer(dsn)]
    if "://" in dsn:
        try:
            parts = urlsplit(dsn)
            if parts.password:
                found += [parts.password, unquote(parts.password)]
            found += parse_qs(parts.query).get("password", [])
        except ValueError:
            userinfo = dsn.partition("://")[2].rpartition("@")[0]
            if ":" in userinfo:
                found.append(userinfo.partition(":")[2])
    return [p for p in found if p]


def redact(text: str, dsn: str) -> str:
    """`text` (a driver's message, say) with every password of `dsn` replaced by `***`."""
    for password in sorted(passwords(dsn), key=len, reverse=True):
        text = text.replace(password, "***")
    return text


def check_dsn(dsn: str) -> None:
    """Raise `ValueError` (whose message holds no part of `dsn`) unless `dsn` is a
    postgresql:// URL whose ports are numbers from 1 to 65535."""
    scheme, sep, _rest = dsn.partition("://")
    if not sep:
        raise ValueError(
            "not a PostgreSQL URL; use postgresql://user:password@host:port/database "
            "(the key=value form is not supported)"
        )
    if scheme.lower() not in SCHEMES:
        raise ValueError("not a PostgreSQL URL: the scheme must be postgresql:// or postgres://")
    try:
        parts = urlsplit(dsn)
        query = parse_qs(parts.query)
    except ValueError:
        raise ValueError("not a valid PostgreSQL URL") from None
    hosts = parts.netloc.rpartition("@")[2]
    ports = [host.rpartition(":")[2] for host in hosts.split(",") if ":" in host.lstrip("[")]
    ports = [p for p in ports if "]" not in p]  # "[::1]" alone has no port
    ports += [p for value in query.get("port", []) for p in value.split(",")]
    for port in ports:
        if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            raise ValueError(f"invalid port {port[:20]!r} (a number from 1 to 65535)")
