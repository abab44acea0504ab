"""How long claimed URLs wait while the content sink is down: doubled per outage round
(a failure after the previous wait ran out), not per failed batch, and capped; and how
long claiming pauses. `SinkBackoff` is pure: the clock is passed in."""

from __future__ import annotations

from fetcher.sink_backoff import SinkBackoff


def test_batches_failing_together_share_one_wait_and_rounds_double_it() -> None:
    backoff = SinkBackoff(base_s=2.0, cap_s=10.0)
    # Three batches fail within the first wait: one round, one wait.
    assert [backoff.failed(now=t) for t in (100.0, 100.5, 101.9)] == [2.0] * 3
    # Their URLs come back and fail again: the next round waits twice as long.
    assert [backoff.failed(now=t) for t in (102.0, 105.9)] == [4.0, 4.0]
    assert [backoff.failed(now=t) for t in (106.0, 114.0, 124.0)] == [8.0, 10.0, 10.0]


def test_claiming_pauses_until_the_wait_runs_out() -> None:
    backoff = SinkBackoff(base_s=60.0, cap_s=3600.0)
    assert backoff.paused_for(now=5.0) == 0.0  # never failed: claim
    backoff.failed(now=10.0)
    assert backoff.paused_for(now=10.0) == 60.0
    assert backoff.paused_for(now=40.0) == 30.0
    assert backoff.paused_for(now=70.0) == 0.0  # the wait ran out


def test_a_stored_batch_ends_the_outage() -> None:
    backoff = SinkBackoff(base_s=2.0, cap_s=10.0)
    backoff.failed(now=0.0)
    backoff.failed(now=2.0)  # second round: 4 s
    backoff.stored()
    assert backoff.paused_for(now=3.0) == 0.0  # claiming goes on at once
    assert backoff.failed(now=3.0) == 2.0  # the next outage starts from the base again
