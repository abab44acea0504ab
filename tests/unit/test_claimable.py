"""The claim loop's room (`fetcher.worker.claimable`): the requests and extractions in
flight up to the concurrency, and the claims held in all, those being stored too, up to
HELD_PER_SLOT times it, while what the pages being stored hold is under its bound."""

from fetcher.worker import HELD_PER_SLOT, claimable


def test_slots_free_while_pages_are_stored_are_claimed_again() -> None:
    # A batch of 32 extracted and being stored: its slots are free for the next claim.
    assert claimable(32, fetching=0, held=32) == 32


def test_the_requests_and_extractions_in_flight_bound_the_claim() -> None:
    assert claimable(32, fetching=20, held=20) == 12
    assert claimable(32, fetching=32, held=32) == 0


def test_claims_stop_once_the_held_ones_reach_their_bound() -> None:
    """Pages waiting on a slow database stop the claims instead of piling up: room for
    five groups being stored behind the slots (bench.fetch's pool run waited on one, and
    at three still stopped a few times a second)."""
    assert HELD_PER_SLOT == 6
    assert claimable(32, fetching=0, held=5 * 32) == 32
    assert claimable(32, fetching=0, held=184) == 8
    assert claimable(32, fetching=0, held=6 * 32) == 0
    assert claimable(10, fetching=5, held=60) == 0


def test_claims_stop_while_the_pages_being_stored_hold_their_bound() -> None:
    assert claimable(32, fetching=0, held=32, full=True) == 0
    assert claimable(32, fetching=0, held=0, full=True) == 0
