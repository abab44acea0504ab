"""How long fetched pages wait, and claiming pauses, while the content sink is down.

A pure object: every method takes `now` (monotonic seconds, `time.monotonic()`), so it is
tested without I/O or a clock.

The wait is `base_s`, doubled per failure *after the previous wait ran out* (capped), not
per failed batch: the batches that fail together in one outage would otherwise double it
many times over, and a one-minute outage would park URLs for the cap (an hour). While a
wait runs, the claim loop does not claim: pages fetched could not be stored, and fetching
them again once the sink is back would spend the sites' politeness twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from frontier.backoff import retry_delay


@dataclass(slots=True)
class SinkBackoff:
    base_s: float
    cap_s: float
    failures: int = 0  # sink outages in a row
    delay_s: float = 0.0  # the current wait
    retry_at: float = 0.0  # when the current wait runs out

    def failed(self, now: float) -> float:
        """The sink failed at `now`: how long the URLs of the failed batch wait."""
        if now >= self.retry_at:
            self.failures += 1
            self.delay_s = retry_delay(
                self.failures, base_s=self.base_s, cap_s=self.cap_s, jitter=0.0
            )
            self.retry_at = now + self.delay_s
        return self.delay_s

    def stored(self) -> None:
        """The sink stored a batch: the outage is over."""
        self.failures, self.retry_at = 0, 0.0

    def paused_for(self, now: float) -> float:
        """Seconds until the claim loop may claim again; 0 when it may claim."""
        return max(0.0, self.retry_at - now)
