"""Issue 34, item 5: queue.sql's `submit` and `complete` take typed parameter objects
(frontier/sql/queue_params.py), each held here to its SQL block: as many values as the
block has parameters, so a parameter added to one and not the other fails here."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from frontier.queue_values import SourceRef
from frontier.sql import load
from frontier.sql.queue_params import CompleteParams, OutcomeColumns, SubmitParams
from frontier.states import Origin
from frontier.submit_rows import FOLD_PARTS, prepare_urls, submit_columns

SQL = load("queue")


def parameters_of(block: str) -> int:
    """The highest $n a statement reads."""
    return max(int(n) for n in re.findall(r"\$(\d+)", block))


def test_submit_params_fill_the_statement() -> None:
    batch = prepare_urls(
        ["http://a.example/1", "http://b.example/2"], SourceRef(None), Origin.MANUAL, 1000
    )
    texts, arrays, once = submit_columns(list(batch.rows.values()))
    params = SubmitParams(
        texts=texts,
        arrays=arrays,
        now=None,
        default_delay_ms=1000,
        bucket=0,
        once=once,
        fold_parts=FOLD_PARTS,
    )
    args = params.args()
    assert len(args) == parameters_of(SQL["submit"]) == 23
    assert args[11:14] == (None, 1000, 0)  # $12 now, $13 the delay, $14 the bucket
    assert args[-1] == FOLD_PARTS


def test_complete_params_fill_the_statement() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    outcomes = OutcomeColumns(*([["x"]] * 9))
    params = CompleteParams(
        "w1",
        outcomes,
        max_retries=5,
        now=now,
        host_failure_threshold=4,
        forbidden_attempts=2,
        wall_threshold=3,
        recovery_answers=10,
        fetch_urls=[None],
        bucket=7,
    )
    args = params.args()
    assert len(args) == parameters_of(SQL["complete"]) == 18
    assert (args[0], args[10], args[11], args[12], args[15], args[17]) == ("w1", 5, now, 4, 10, 7)
