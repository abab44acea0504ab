"""`prepare_urls`, the bulk import's way to prepare rows, against `prepare` of the same URLs
as candidates: the same rows, repeats and refusals, for every kind of source."""

from uuid import UUID

import pytest

from frontier.queue_values import Candidate, SourceRef
from frontier.states import Origin
from frontier.submit_rows import prepare, prepare_urls

URLS = [
    "https://example.com/a/",
    "https://Example.com/a/?utm_source=x",  # the same page as the first
    "https://example.com/a",  # the same page too, unless the source keeps the slash
    "https://example.com/b c?q=é#frag",  # requested as spelt, identity escaped
    "https://example.com/b%20c?q=%C3%A9",
    "ftp://example.com/x",  # refused
    "not a url",  # refused
    "http://[::1",  # refused
    "https://example.com:8080/./x/../y/",
    "https://example.com/a/",  # an exact repeat
]

SOURCES = [
    SourceRef(None),
    SourceRef(UUID(int=7), priority=9, keep_trailing_slash=True, rate_limit_ms=2500),
    SourceRef(UUID(int=8), priority=1),
]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("origin", list(Origin))
def test_prepare_urls_is_prepare_of_candidates(source: SourceRef, origin: Origin) -> None:
    fast = prepare_urls(URLS, source, origin, 1234)
    slow = prepare([Candidate(url, source, origin) for url in URLS], 1234)
    assert fast.rows == slow.rows
    assert list(fast.rows) == list(slow.rows)
    assert (fast.repeated, fast.rejected, fast.default_delay_ms) == (
        slow.repeated,
        slow.rejected,
        slow.default_delay_ms,
    )
    assert len(fast.rejected) == 3
    assert fast.repeated >= 2


def test_a_column_sent_as_lines_refuses_a_value_holding_a_newline() -> None:
    """The submit statement splits hash, URL and host columns on newlines: a value holding
    one would shift every row after it, so it is refused before it is sent."""
    from frontier.submit_rows import _lines

    assert _lines(("https://a.example/1", "https://a.example/%0A")) == (
        "https://a.example/1\nhttps://a.example/%0A"
    )
    with pytest.raises(ValueError, match="newline"):
        _lines(("https://a.example/1", "https://a.example/\n2"))


def test_rows_a_batch_still_in_the_database_holds_as_high_are_left_out() -> None:
    source = SourceRef(UUID(int=7), priority=5)
    sent = prepare_urls(["https://a.example/1", "https://a.example/2"], source, Origin.MANUAL, 1)
    low = prepare_urls(["https://a.example/3"], SourceRef(UUID(int=7), priority=1), Origin.FEED, 1)
    batch = prepare_urls(
        ["https://a.example/1", "https://a.example/2?utm_source=x", "https://a.example/9"],
        source,
        Origin.MANUAL,
        1,
    )
    higher = prepare_urls(["https://a.example/3"], SourceRef(None, priority=9), Origin.MANUAL, 1)
    batch.rows.update(higher.rows)

    batch.leave_out([sent.rows, low.rows])

    # /1 and /2 are held at the same priority, /3 at a lower one, which this batch raises.
    assert sorted(row[1] for row in batch.rows.values()) == [
        "https://a.example/3",
        "https://a.example/9",
    ]
    assert batch.repeated == 2
