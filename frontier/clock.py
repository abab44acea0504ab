"""The platform's notion of now; time-dependent code takes an optional `now` for tests."""

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
