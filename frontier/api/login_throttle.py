"""`LoginThrottle`: how many wrong tokens a client address may send, by the login form or
as a bearer token, before it must wait (issue 35: 200 wrong tries in a second were each
simply answered 401).

After `failures` wrong tokens (5) within `window_s` (60 s) of the first, every attempt from
that address, the right token included (no oracle while held), is answered 429 with
Retry-After until the window ends; then it has `failures` more. A right token does not
clear the count: the read token must not buy more guesses at the write token.

The state lives in the app's context, in the API process, not in PostgreSQL: a flood of
wrong tokens costs no database write, and the throttle holds during an outage. With
several API processes behind a balancer each keeps its own count, so a client gets that
many times the tries; with tokens of at least 32 characters (frontier.settings) guessing
stays hopeless either way. At most `max_clients` addresses are remembered: the expired
windows go first, then the oldest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from frontier.api.errors import RateLimited

FAILURES = 5
WINDOW_S = 60.0
MAX_CLIENTS = 10_000


@dataclass(slots=True)
class LoginThrottle:
    failures: int = FAILURES
    window_s: float = WINDOW_S
    max_clients: int = MAX_CLIENTS
    windows: dict[str, tuple[float, int]] = field(default_factory=dict)  # start, failures

    def check(self, client: str, *, now: float) -> None:
        """Raise RateLimited (429 with Retry-After) while `client` is held."""
        started, failed = self.windows.get(client, (now, 0))
        wait = started + self.window_s - now
        if failed >= self.failures and wait > 0:
            raise RateLimited(
                f"too many wrong tokens from {client}: at most {self.failures} in "
                f"{self.window_s:g} s; try again in {math.ceil(wait)} s",
                headers={"Retry-After": str(math.ceil(wait))},
            )

    def failed(self, client: str, *, now: float) -> None:
        """Count a wrong token from `client`."""
        started, failed = self.windows.pop(client, (now, 0))
        if now - started >= self.window_s:
            started, failed = now, 0
        if len(self.windows) >= self.max_clients:
            self._forget(now)
        self.windows[client] = (started, failed + 1)  # the newest last

    def _forget(self, now: float) -> None:
        expired = [c for c, (started, _) in self.windows.items() if now - started >= self.window_s]
        for client in expired:
            del self.windows[client]
        while len(self.windows) >= self.max_clients:
            del self.windows[next(iter(self.windows))]
