"""The root of frontier's exceptions. Each package keeps its own under this root:

    FrontierError
    ├── SettingsError        (frontier.settings; also a ValueError) bad FRONTIER_* value
    ├── DatabaseUnavailable  (frontier.db) cannot reach or use PostgreSQL; retryable
    ├── InvalidURL           (frontier.urls; also a ValueError) a URL unfit for the frontier
    ├── UnknownSource        (frontier.sources) a source name or id that does not exist
    └── RetryLater           refused for now, welcome again after `retry_after_s` (a manual
                             fire too soon: poller.errors.FireRateLimited)

Retryable conditions (the database being down) are kept apart from permanent ones (bad
input), so callers can back off on the first and report the second.
"""


class FrontierError(Exception):
    """Base of every error frontier raises on purpose."""


class DatabaseUnavailable(FrontierError):
    """PostgreSQL cannot be reached, refused us or dropped the connection; the message
    names the host and cause. Retryable: wait (`db.outage.backoff()`) and try again."""


class RetryLater(FrontierError):
    """Refused for now: the same request is welcome again after `retry_after_s` seconds.
    The edge answers it as such (the API: 429 with Retry-After) without knowing which
    service raised it."""

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
