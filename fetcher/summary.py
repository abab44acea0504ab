"""`FetchSummary`: what a fetcher did, for one `run_once()` or a whole `run()`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class FetchSummary:
    """Counts of claims and of how the pages ended (`OutcomeKind` values)."""

    batches: int = 0  # batches processed to completion
    claimed: int = 0  # URLs claimed
    outcomes: Counter[str] = field(default_factory=Counter)  # completed pages by outcome
    released: int = 0  # claims given back untried (stopping, or a batch that failed)

    @property
    def pages(self) -> int:
        return sum(self.outcomes.values())

    def add(self, other: FetchSummary) -> None:
        self.batches += other.batches
        self.claimed += other.claimed
        self.outcomes.update(other.outcomes)
        self.released += other.released
