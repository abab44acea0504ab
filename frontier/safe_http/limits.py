"""What bounds the safe client's requests (`HttpLimits`, from the settings at the edge), and
the process's open-file limit a client with many hosts in flight needs."""

from __future__ import annotations

import resource
from dataclasses import dataclass, field
from typing import Any

from frontier.allowed_networks import split_entries
from frontier.proxies import password_from
from frontier.settings import Settings


@dataclass(frozen=True, slots=True)
class HttpLimits:
    user_agent: str
    allow_private_networks: bool = False
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0
    total_timeout_s: float = 60.0
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    max_connections: int = 100
    max_connections_per_host: int = 8
    # An idle keep-alive connection is closed after this long. aiohttp's `limit` counts only
    # connections in use, so idle ones pile up per host fetched within the window: at
    # aiohttp's default of 15 s the soak held ~950 sockets per fetcher over 996 hosts. A
    # host is revisited once per politeness delay (1 s by default), so 5 s keeps the reuse.
    keepalive_s: float = 5.0
    # Networks and host names reachable even though they are not public (an operator's own
    # hosts: FRONTIER_ALLOWED_NETWORKS, the entries of frontier.allowed_networks).
    allowed_networks: tuple[str, ...] = ()
    # The operator's outbound proxy (FRONTIER_PROXY_URL, frontier.proxies); None: direct.
    proxy_url: str | None = None
    proxy_password: str | None = field(default=None, repr=False)  # FRONTIER_PROXY_PASSWORD_FILE's

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> HttpLimits:
        values: dict[str, Any] = {
            "user_agent": settings.user_agent,
            "allow_private_networks": settings.allow_private_networks,
            "allowed_networks": split_entries(settings.allowed_networks),
            "proxy_url": settings.proxy_url,
            "proxy_password": password_from(settings.proxy_password_file),
        }
        values.update(overrides)
        return cls(**values)


def raise_open_file_limit() -> int:
    """Lift this process's soft open-file limit to its hard limit and return it. A fetcher
    with hundreds of hosts in flight, each with a keep-alive socket, passes the common soft
    default of 1024 long before the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft
