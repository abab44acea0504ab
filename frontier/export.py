"""Bulk export of the stored documents (issue 33 item 4): `frontier export` and
`GET /api/v1/export`.

Documents are read by the configured sink's reader (`export`), oldest first, in keyset
pages: PostgreSQL's `raw_content` (frontier.sinks.postgres: each page one short statement
on the (fetched_at, url_hash) index, no transaction held open for the export's length;
the next page is read while one is written), or the Elasticsearch / OpenSearch index
(frontier.sinks.elasticsearch: `search_after` on the same order). Memory is a page or two
whatever the count (bench/export.py measures it). The export stops at the moment it
started (`until`): documents written meanwhile are left to the next one, so an export of a
crawl that is running ends.

Formats (the fields of frontier.sinks.schema, in its order; the article's text, `body`,
`paragraphs` and `markdown`, only with `with_body`):

- `jsonl`: one JSON object a line (dates ISO 8601, ids as text, lists as arrays);
- `csv`: a header line, then a row each (the csv module; lists as JSON text, null as an
  empty field, booleans `true`/`false`);
- `parquet`: pyarrow's writer, row groups of 10,000 rows, typed columns (timestamps in UTC
  microseconds, `tags` and `paragraphs` lists of strings). pyarrow is the optional extra
  `frontier[parquet]` (about 170 MB installed, for this format only).

Output: a file, `-` for standard output (jsonl and csv), or a directory (existing, or named
with a trailing `/`): files `documents-000001.<format>`, ... of at most `rows_per_file`.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Protocol
from uuid import UUID

from frontier.documents import BadDocumentQuery, ExportQuery
from frontier.sinks.schema import BY_NAME, DATE_FIELDS

FORMATS = ("jsonl", "csv", "parquet")
PAGE_ROWS = 1000
ROWS_PER_FILE = 1_000_000
ROW_GROUP_ROWS = 10_000  # a Parquet row group: 10 pages
LANGUAGE_MAX_CHARS = 16


def check_language(text: str) -> str:
    """A language filter: a code such as `en` (a region, `en-GB`, is ignored)."""
    value = text.strip().lower().split("-")[0]
    if not (value.isascii() and value.isalpha()) or len(value) > LANGUAGE_MAX_CHARS:
        raise BadDocumentQuery(
            f"language: {text[:40]!r} is not a language code such as 'en' or 'pt-BR'"
        )
    return value


class ExportingReader(Protocol):
    """A sink's reader that exports (frontier.documents.DocumentReader.export)."""

    def export(
        self, query: ExportQuery, *, page_rows: int = ...
    ) -> AsyncIterator[list[dict[str, Any]]]: ...


def native_row(source: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """A document's JSON (an index's `_source`) as the rows the writers take: `fields`
    in order (absent ones None: an index an older release filled lacks the newer ones),
    dates as datetimes."""
    row = {name: source.get(name) for name in fields}
    for name in DATE_FIELDS:
        value = row.get(name)
        if isinstance(value, str):
            row[name] = datetime.fromisoformat(value)
    return row


def _json_value(value: Any) -> Any:
    """What json.dumps cannot write itself: dates as ISO 8601, the source id as text (a
    `default` hook: called for these values only, not for every value of every row)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def ndjson(rows: Iterable[dict[str, Any]]) -> bytes:
    """Rows as JSON lines (UTF-8, a newline after each; lists as arrays)."""
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_json_value).encode
    return "".join(dumps(row) + "\n" for row in rows).encode()


def _csv_converters(fields: tuple[str, ...]) -> list[Callable[[Any], Any] | None]:
    """Per field, how its values are written in CSV (None: as they are; csv writes None as
    an empty field): dates ISO 8601, booleans true/false, lists as JSON arrays."""
    by_type: dict[str, Callable[[Any], Any]] = {
        "timestamp with time zone": lambda v: "" if v is None else v.isoformat(),
        "boolean": lambda v: "" if v is None else ("true" if v else "false"),
        "ARRAY": lambda v: "" if v is None else json.dumps(list(v), ensure_ascii=False),
    }
    return [by_type.get(BY_NAME[name].pg) for name in fields]


class Writer(Protocol):
    def write(self, rows: Sequence[dict[str, Any]]) -> None: ...
    def close(self) -> None: ...


class JsonLinesWriter:
    def __init__(self, stream: IO[bytes], fields: tuple[str, ...]) -> None:
        self._stream = stream

    def write(self, rows: Sequence[dict[str, Any]]) -> None:
        self._stream.write(ndjson(rows))

    def close(self) -> None:
        self._stream.flush()


class CsvWriter:
    def __init__(self, stream: IO[bytes], fields: tuple[str, ...]) -> None:
        self._text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        self._csv = csv.writer(self._text)
        self._csv.writerow(fields)
        self._columns = list(zip(fields, _csv_converters(fields), strict=True))

    def write(self, rows: Sequence[dict[str, Any]]) -> None:
        columns = self._columns
        self._csv.writerows(
            [row[name] if convert is None else convert(row[name]) for name, convert in columns]
            for row in rows
        )

    def close(self) -> None:
        self._text.flush()
        self._text.detach()  # the stream is the caller's


def arrow_schema(fields: tuple[str, ...]) -> Any:
    """The pyarrow schema of these fields (frontier.sinks.schema's column types)."""
    import pyarrow as pa

    types = {
        "text": pa.string(),
        "character": pa.string(),
        "uuid": pa.string(),
        "timestamp with time zone": pa.timestamp("us", tz="UTC"),
        "integer": pa.int32(),
        "smallint": pa.int16(),
        "bigint": pa.int64(),
        "boolean": pa.bool_(),
        "real": pa.float32(),
        "ARRAY": pa.list_(pa.string()),
    }
    return pa.schema(
        [pa.field(name, types[BY_NAME[name].pg], not BY_NAME[name].required) for name in fields]
    )


def need_pyarrow() -> None:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise BadDocumentQuery(
            "format: parquet needs pyarrow, the extra frontier[parquet]: "
            "pip install 'frontier[parquet]'"
        ) from None


class ParquetWriter:
    """Pages gathered into row groups of ROW_GROUP_ROWS, and column statistics (min/max)
    only for the columns that are not text: the file's footer, which the writer keeps in
    memory until the file is closed, holds each row group's statistics, so a row group a
    page with the bodies' min and max grew it by 60 MiB a million rows (bench/export.py)."""

    def __init__(self, stream: IO[bytes], fields: tuple[str, ...]) -> None:
        import pyarrow.parquet as pq

        self._schema = arrow_schema(fields)
        with_stats = [f for f in fields if BY_NAME[f].pg not in ("text", "ARRAY")]
        self._writer = pq.ParquetWriter(
            stream, self._schema, compression="zstd", write_statistics=with_stats
        )
        self._batches: list[Any] = []
        self._rows = 0

    def write(self, rows: Sequence[dict[str, Any]]) -> None:
        import pyarrow as pa

        columns = {
            name: [str(v) if isinstance(v, UUID) else v for v in (row[name] for row in rows)]
            for name in self._schema.names
        }
        self._batches.append(pa.RecordBatch.from_pydict(columns, schema=self._schema))
        self._rows += len(rows)
        if self._rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._batches:
            table = pa.Table.from_batches(self._batches, schema=self._schema)
            self._writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self._batches, self._rows = [], 0

    def close(self) -> None:
        self._flush()
        self._writer.close()


WRITERS: dict[str, Callable[[IO[bytes], tuple[str, ...]], Writer]] = {
    "jsonl": JsonLinesWriter,
    "csv": CsvWriter,
    "parquet": ParquetWriter,
}


@dataclass(frozen=True, slots=True)
class ExportResult:
    rows: int
    files: tuple[str, ...]  # the files written ("-": standard output)
    seconds: float


class Output:
    """Where an export goes: one file, standard output, or rotated files in a directory;
    a writer of the format is opened for each file."""

    def __init__(self, target: str, fmt: str, fields: tuple[str, ...], rows_per_file: int):
        if fmt not in WRITERS:
            raise BadDocumentQuery(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
        if fmt == "parquet":
            need_pyarrow()
            if target == "-":
                raise BadDocumentQuery(
                    "output: parquet is not written to standard output: name a file or directory"
                )
        if rows_per_file < 1:
            raise BadDocumentQuery("rows per file: at least 1")
        path = Path(target)
        self._directory = path if target.endswith("/") or path.is_dir() else None
        if self._directory is not None:
            self._directory.mkdir(parents=True, exist_ok=True)
        elif target != "-" and not path.parent.is_dir():
            raise BadDocumentQuery(f"output: no directory {str(path.parent)!r}")
        self._target, self._fmt, self._fields = target, fmt, fields
        self._rows_per_file = rows_per_file if self._directory is not None else None
        self._stream: IO[bytes] | None = None
        self._writer: Writer | None = None
        self._in_file = 0
        self.files: list[str] = []

    def _open(self) -> Writer:
        if self._target == "-":
            self._stream, name = sys.stdout.buffer, "-"
        else:
            if self._directory is not None:
                path = self._directory / f"documents-{len(self.files) + 1:06d}.{self._fmt}"
            else:
                path = Path(self._target)
            self._stream, name = path.open("wb"), str(path)
        self.files.append(name)
        self._in_file = 0
        return WRITERS[self._fmt](self._stream, self._fields)

    def write(self, rows: Sequence[dict[str, Any]]) -> None:
        while rows:
            if self._writer is None:
                self._writer = self._open()
            room = len(rows) if self._rows_per_file is None else self._rows_per_file - self._in_file
            self._writer.write(rows[:room])
            self._in_file += len(rows[:room])
            rows = rows[room:]
            if self._rows_per_file is not None and self._in_file >= self._rows_per_file:
                self._close_file()

    def _close_file(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._stream is not None and self._stream is not sys.stdout.buffer:
            self._stream.close()
        self._writer = self._stream = None

    def close(self) -> None:
        if self._writer is None and not self.files:
            self._writer = self._open()  # an empty export still writes its file (a header)
        self._close_file()


async def run_export(
    reader: ExportingReader,
    query: ExportQuery,
    fmt: str,
    target: str,
    *,
    rows_per_file: int = ROWS_PER_FILE,
    page_rows: int = PAGE_ROWS,
    progress: Callable[[int], None] | None = None,
) -> ExportResult:
    """Export the documents `query` matches, as `reader` reads them, to `target` (`Output`);
    `progress` is told the rows written so far after each page."""
    started = time.monotonic()
    output = Output(target, fmt, query.fields, rows_per_file)
    rows = 0
    try:
        async for page in reader.export(query, page_rows=page_rows):
            output.write(page)
            rows += len(page)
            if progress is not None:
                progress(rows)
    finally:
        output.close()
    return ExportResult(rows, tuple(output.files), time.monotonic() - started)
