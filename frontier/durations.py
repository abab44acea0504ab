"""Durations as people write them: `90s`, `30m`, `6h`, `2d`, `1w` (`min` for minutes too).
One parser for `--older-than`, `--since` ages and a source's `revisit` schedule."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^(\d{1,6})\s*(s|m|min|h|d|w)$")
UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400, "w": 604_800}
EXAMPLES = "90s, 30m, 6h, 2d, 1w"


def seconds_of(text: str) -> int | None:
    """The seconds `text` names, or None when it is not a duration."""
    match = _DURATION.match(text.strip().lower())
    return int(match[1]) * UNITS[match[2]] if match else None
