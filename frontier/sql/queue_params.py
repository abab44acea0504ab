"""The parameters of queue.sql's two widest statements, `submit` and `complete`, as typed
objects in the statements' order ($1, $2, ...), beside the SQL that reads them: a caller
names each value instead of counting positions, and tests/unit/test_queue_params.py holds
each object to its block (as many values as the block has parameters)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class SubmitParams:
    """`submit`: one bucket's rows (frontier.submit_rows.submit_columns)."""

    texts: Sequence[str]  # $1..$3: hashes, URLs, hosts, each a text of lines
    arrays: Sequence[list[Any]]  # $4..$11: each other column, or [] when given once
    now: datetime | None  # $12 (NULL: the database clock)
    default_delay_ms: int  # $13: a new host's min_delay_ms
    bucket: int  # $14
    once: Sequence[Any]  # $15..$22: the value every row shares, where its array is []
    fold_parts: int  # $23: the parts a host summary is kept in

    def args(self) -> tuple[Any, ...]:
        return (
            *self.texts,
            *self.arrays,
            self.now,
            self.default_delay_ms,
            self.bucket,
            *self.once,
            self.fold_parts,
        )


@dataclass(frozen=True, slots=True)
class OutcomeColumns:
    """`complete`'s $2..$10: parallel, one value per outcome."""

    url_hashes: list[str]
    kinds: list[str]
    http_statuses: list[int | None]
    content_hashes: list[str | None]
    etags: list[str | None]
    last_modified: list[str | None]
    final_urls: list[str | None]
    errors: list[str | None]
    delays_s: list[float | None]  # when a pending URL is due again

    def args(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field.name) for field in fields(self))


@dataclass(frozen=True, slots=True)
class CompleteParams:
    """`complete`: one bucket's outcomes of one worker."""

    worker_id: str  # $1
    outcomes: OutcomeColumns  # $2..$10
    max_retries: int  # $11
    now: datetime | None  # $12
    host_failure_threshold: int  # $13
    forbidden_attempts: int  # $14
    wall_threshold: int  # $15
    recovery_answers: int  # $16: good answers in a row that take a doubling off
    fetch_urls: list[str | None]  # $17: the spelling a same-identity redirect reached
    bucket: int  # $18

    def args(self) -> tuple[Any, ...]:
        return (
            self.worker_id,
            *self.outcomes.args(),
            self.max_retries,
            self.now,
            self.host_failure_threshold,
            self.forbidden_attempts,
            self.wall_threshold,
            self.recovery_answers,
            self.fetch_urls,
            self.bucket,
        )
