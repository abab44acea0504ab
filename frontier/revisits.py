"""Revisits: a source may ask for its fetched articles to be fetched again on a schedule
(`revisit: [1h, 6h, 24h]` in its configuration, none by default), to catch corrections
and updates. The fetcher revisits with the validators it stored (ETag, Last-Modified):
a 304 or an unchanged text writes nothing; a changed text replaces the document (same id).

Each step is counted from the fetch before it, not from the first: `[1h, 6h, 24h]`
fetches an article again 1 h after its first fetch, 6 h after that revisit, and 24 h after
that one (so about 31 h after the first), then never again. Counting from the fetch before
keeps each step's spacing when a fetcher was stopped for a while: a late revisit does not
make the next one due at once. `url_frontier.revisit_step` counts the steps taken
(migration 0022).
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_STEP_S = 60  # a minute: a shorter one would be polling a page, not revisiting it
MAX_STEP_S = 31_536_000  # a year
MAX_STEPS = 20


def next_revisit_s(schedule: Sequence[int] | None, step: int) -> int | None:
    """Seconds from now until the next revisit of a URL fetched for the `step`-th time
    after its first fetch (0: this was its first fetch), or None when the schedule is done
    (or there is none)."""
    if not schedule or step >= len(schedule):
        return None
    return schedule[step]
