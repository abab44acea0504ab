"""The revisit schedule, its parsing in the source schema and the durations it is written
in: pure, no I/O."""

from __future__ import annotations

import pytest

from frontier.durations import seconds_of
from frontier.revisits import next_revisit_s
from frontier.source_schema import InvalidSource, parse_config


def test_each_step_is_counted_from_the_fetch_before_and_the_schedule_ends() -> None:
    schedule = [3600, 21600, 86400]
    assert [next_revisit_s(schedule, step) for step in range(5)] == [
        3600,
        21600,
        86400,
        None,
        None,
    ]
    assert next_revisit_s(None, 0) is None
    assert next_revisit_s([], 0) is None


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90s", 90),
        ("30m", 1800),
        ("30min", 1800),
        ("6h", 21600),
        ("2d", 172800),
        ("1w", 604800),
        (" 6 H ", 21600),
        ("6", None),
        ("h", None),
        ("-1h", None),
        ("1.5h", None),
        ("1y", None),
    ],
)
def test_durations(text: str, seconds: int | None) -> None:
    assert seconds_of(text) == seconds


def test_the_schema_takes_durations_or_seconds_and_stores_seconds() -> None:
    config = parse_config({"name": "s", "revisit": ["1h", 21600, "1d"]})
    assert config.revisit == [3600, 21600, 86400]
    assert config.values()["revisit"] == [3600, 21600, 86400]
    assert parse_config({"name": "s"}).revisit is None  # none by default


@pytest.mark.parametrize(
    "value, says",
    [
        (["soon"], "revisit.0: 'soon' is not a duration (90s, 30m, 6h, 2d, 1w)"),
        (["30s"], "revisit.0: '30s' is not between a minute and a year"),
        ([400 * 86400], "is not between a minute and a year"),
        ([True], "revisit.0: True is not a duration"),
        ([1.5], "revisit.0: 1.5 is not a duration"),
        ([], "revisit: List should have at least 1 item"),
        (["1h"] * 21, "revisit: List should have at most 20 items"),
        ("1h", "revisit: Input should be a valid list"),
    ],
)
def test_the_schema_refuses_nonsense_with_a_clear_message(value: object, says: str) -> None:
    with pytest.raises(InvalidSource) as refused:
        parse_config({"name": "s", "revisit": value})
    assert says in str(refused.value)
