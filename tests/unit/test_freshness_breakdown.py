"""bench.freshness splits each entry's time into its parts (appeared -> polled ->
submitted -> requested -> stored) and says what the slowest entries' time is made of."""

from __future__ import annotations

from bench.freshness import breakdown, poll_gap_s


def entry(
    appeared: float, polled: float | None, submitted: float, requested: float, stored: float
) -> dict[str, float]:
    marks = {"appeared": appeared, "submitted": submitted, "requested": requested, "stored": stored}
    if polled is not None:
        marks["polled"] = polled
    return marks


def test_each_part_runs_from_the_mark_before_it_and_the_slowest_say_what_their_time_is() -> None:
    marks = [entry(0.0, 10.0, 10.5, 12.0, 12.1) for _ in range(99)]
    marks.append(entry(0.0, 70.0, 70.5, 80.0, 80.1) | {"poll_gap": 120.0})
    parts = breakdown(marks)

    assert parts["appeared_to_polled"]["p50"] == 10.0
    assert parts["appeared_to_polled"]["max"] == 70.0
    assert parts["submitted_to_requested"]["max"] == 9.5
    assert parts["poll_gap"] == {"p50": 120.0, "p99": 120.0, "max": 120.0}
    slowest = parts["slowest_mean_s"]
    assert slowest["entries"] == 5  # at least five, though 1 % is one
    # the four 12.1 s entries and the 80.1 s one: their parts' means add up to their total
    total = sum(
        slowest[p]
        for p in (
            "appeared_to_polled",
            "polled_to_submitted",
            "submitted_to_requested",
            "requested_to_stored",
        )
    )
    assert round(total, 2) == round((4 * 12.1 + 80.1) / 5, 2)


def test_a_pushed_entry_has_no_poll_and_an_unstored_one_no_parts() -> None:
    parts = breakdown([entry(0.0, None, 0.5, 1.0, 1.2), {"appeared": 0.0, "submitted": 3.0}])

    assert set(parts) == {
        "appeared_to_submitted",
        "submitted_to_requested",
        "requested_to_stored",
        "slowest_mean_s",
    }
    assert parts["appeared_to_submitted"]["p50"] == 0.5
    assert parts["slowest_mean_s"]["entries"] == 1


def test_the_poll_gap_is_the_time_since_the_feeds_answer_before() -> None:
    assert poll_gap_s([1.0, 61.0, 125.0], 125.0) == 64.0
    assert poll_gap_s([125.0], 125.0) is None
