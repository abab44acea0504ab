"""A submitted batch, encoded: candidates normalised, scored and deduplicated into the rows
of queue.sql `submit` (`PreparedBatch`, `prepare`, `prepare_urls`), and the rows turned
into the statement's columns (`submit_columns`). Pure CPU work, so callers may run it in a
thread while the database ingests an earlier batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frontier.priority import score
from frontier.queue_values import MAX_DISCOVERY_META_BYTES, Candidate, Rejection, SourceRef
from frontier.states import Origin
from frontier.urls import InvalidURL, identity_and_spelling, url_hash, url_host


@dataclass(slots=True)
class PreparedBatch:
    """Normalised, deduplicated rows ready for one submit statement."""

    rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # url_hash -> row
    default_delay_ms: int = 1000  # a new host's delay when none of its sources sets one
    repeated: int = 0
    rejected: list[Rejection] = field(default_factory=list)

    def keep(self, row: tuple[Any, ...]) -> None:
        """Add a row; a URL seen before in the batch keeps its higher priority."""
        known = self.rows.get(row[0])
        if known is not None:
            self.repeated += 1
            if known[_ROW_PRIORITY] >= row[_ROW_PRIORITY]:
                return
        self.rows[row[0]] = row

    def leave_out(self, sent: Iterable[Mapping[str, tuple[Any, ...]]]) -> None:
        """Count as repeated, and leave out, the rows whose URL one of the batches `sent`
        (still in the database) holds at a priority as high: the upsert would leave it as
        that batch makes it, after waiting for that batch's transaction to end, which is
        what an import's batches in flight were waiting on (bench/RESULTS.md)."""
        for rows in sent:
            for key in self.rows.keys() & rows.keys():
                if rows[key][_ROW_PRIORITY] >= self.rows[key][_ROW_PRIORITY]:
                    del self.rows[key]
                    self.repeated += 1


def prepare(candidates: Iterable[Candidate], default_delay_ms: int) -> PreparedBatch:
    """Normalise and score candidates; pure CPU work, so callers may overlap it with I/O."""
    batch = PreparedBatch(default_delay_ms=default_delay_ms)
    for index, candidate in enumerate(candidates):
        try:
            row = _row(candidate)
        except InvalidURL as exc:
            batch.rejected.append(Rejection(index, printable_url(candidate.url), exc.reason))
            continue
        batch.keep(row)
    return batch


def prepare_urls(
    urls: Iterable[str], source: SourceRef, origin: Origin, default_delay_ms: int
) -> PreparedBatch:
    """`prepare` of bare URLs from one source and origin, at depth 0 with nothing else said
    about them (a bulk import): the same rows, with what they share worked out once, since
    this runs per line of an import of millions."""
    batch = PreparedBatch(default_delay_ms=default_delay_ms)
    keep_slash, source_id, delay = source.keep_trailing_slash, source.id, source.rate_limit_ms
    kind, priority = str(origin), score(source.priority, origin, 0)
    for index, raw in enumerate(urls):
        try:
            url, spelling = identity_and_spelling(raw, keep_trailing_slash=keep_slash)
        except InvalidURL as exc:
            batch.rejected.append(Rejection(index, printable_url(raw), exc.reason))
            continue
        batch.keep(_frontier_row(url, spelling, source_id, kind, None, 0, priority, None, delay))
    return batch


def _row(candidate: Candidate) -> tuple[Any, ...]:
    source = candidate.source
    url, spelling = identity_and_spelling(
        candidate.url, candidate.base, keep_trailing_slash=source.keep_trailing_slash
    )
    meta = None
    if candidate.discovery_meta:
        meta = json.dumps(_without_nul(candidate.discovery_meta), default=str, ensure_ascii=False)
        if len(meta) > MAX_DISCOVERY_META_BYTES:
            raise InvalidURL(f"discovery_meta over {MAX_DISCOVERY_META_BYTES} bytes")
    if candidate.depth < 0:
        raise InvalidURL("negative depth")
    priority = candidate.priority or score(source.priority, candidate.origin, candidate.depth)
    return _frontier_row(
        url,
        spelling,
        source.id,
        str(candidate.origin),
        candidate.parent_url,
        candidate.depth,
        priority,
        meta,
        source.rate_limit_ms,
    )


_ROW_PRIORITY = 7  # where `_frontier_row` puts the priority
_ROW_SHARED = 3  # the columns from here on are often the same on every row of a batch
# Host summaries are kept in this many parts (queue.sql `submit`): folds of different parts
# write different hosts, so a large fold runs as one statement a part, at once.
FOLD_PARTS = 4


def _lines(column: tuple[str, ...]) -> str:
    """A column of strings every row has its own of (hash, URL, host) as one text of
    lines, which the statement splits (`string_to_array`): asyncpg sends one value instead
    of checking and encoding each of a batch's elements. A normalised URL, its host and its
    hash hold no newline (control characters are refused); checked all the same, since a
    row shifted by one would store a URL under another's hash."""
    text = "\n".join(column)
    if text.count("\n") != len(column) - 1:
        raise ValueError("a submitted URL, host or hash holds a newline")
    return text


def _array_or_once(column: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """A column of the submit statement as (its array, NULL), or as (an empty array, the
    value) when every row has the same one: the statement reads NULL from the empty array
    and takes the value given once."""
    if column.count(column[0]) == len(column):
        return [], column[0]
    return list(column), None


def submit_columns(rows: Sequence[tuple[Any, ...]]) -> tuple[list[str], list[Any], list[Any]]:
    """The columns of queue.sql `submit` for `rows` (one bucket's): the columns every row
    has its own of as texts of lines, then each other column as (its array, NULL) or (an
    empty array, the value every row shares): `(texts, arrays, once)`."""
    columns = list(zip(*rows, strict=True))
    arrays, once = zip(*map(_array_or_once, columns[_ROW_SHARED:]), strict=True)
    return [_lines(column) for column in columns[:_ROW_SHARED]], list(arrays), list(once)


def _frontier_row(
    url: str,
    spelling: str,
    source_id: Any,
    origin: str,
    parent_url: str | None,
    depth: int,
    priority: int,
    meta: str | None,
    delay_ms: int | None,
) -> tuple[Any, ...]:
    """One submitted URL as the submit statement's row (the order of its arrays)."""
    return (
        url_hash(url),
        url,
        url_host(url),
        source_id,
        origin,
        parent_url,
        depth,
        priority,
        meta,
        delay_ms,
        None if spelling == url else spelling,  # fetch_url; NULL means the same as url
    )


def _without_nul(value: Any) -> Any:
    """`value` with NUL characters dropped from every string in it: jsonb cannot hold
    ``\\u0000``, and one in a feed title must not make the whole feed unusable."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nul(v) for v in value]
    return value


def printable_url(url: object) -> str:
    text = url if isinstance(url, str) else repr(url)
    return text if len(text) <= 200 else text[:200] + "..."
