"""The JSON-lines content sink (`FRONTIER_SINK=jsonl`): documents appended to files in a
directory, one line per document (`RawDocument.as_json()`, the fields of
frontier.sinks.schema), for pipelines that read files.

- Files are `documents-000001.jsonl`, `documents-000002.jsonl`, ...: a new one when the
  current one reaches `rotate_mb`, and at each start (numbering goes on from the highest
  in the directory: a file is never rewritten, so a reader may take every file but the
  newest).
- Each batch is written, flushed and fsync'd before `write()` returns: durable on return,
  as the contract wants. The file work runs in a thread (the event loop is the fetcher's);
  batches are written one at a time.
- A URL written again is a new line: the newest line of a url_hash is its document. A
  document removed (a duplicate of another URL's) is a line of `deletions.jsonl` in the
  same directory, `{"url_hash": ..., "deleted_at": ...}`, so the documents' files hold
  documents only.
- It does not read back (`get` is None): the fetcher then treats a changed text as new.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field

from frontier.export import ndjson
from frontier.sinks import RawDocument, SinkUnavailable

_NUMBERED = re.compile(r"^documents-(\d{6,})\.jsonl$")


class JsonLinesOptions(BaseModel):
    """FRONTIER_SINK_OPTIONS of the jsonl sink."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, description="The directory (created when absent).")
    rotate_mb: float = Field(256, gt=0, description="A new file past this size.")


class JsonLinesSink:
    name = "jsonl"

    def __init__(self, directory: Path, *, rotate_bytes: int) -> None:
        self.directory = directory
        self._rotate = rotate_bytes
        self._lock = asyncio.Lock()
        self._file: IO[bytes] | None = None
        numbers = [int(m[1]) for p in directory.iterdir() if (m := _NUMBERED.match(p.name))]
        self._number = max(numbers, default=0)

    @classmethod
    def open(cls, options: JsonLinesOptions) -> JsonLinesSink:
        directory = Path(options.path).expanduser()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkUnavailable(f"jsonl: cannot create {directory}: {exc}") from None
        return cls(directory, rotate_bytes=int(options.rotate_mb * 1024 * 1024))

    def _current(self) -> IO[bytes]:
        if self._file is not None and self._file.tell() >= self._rotate:
            self._file.close()
            self._file = None
        if self._file is None:
            self._number += 1
            path = self.directory / f"documents-{self._number:06d}.jsonl"
            self._file = path.open("xb")  # never an existing file
        return self._file

    def _append(self, lines: bytes, to_deletions: bool = False) -> None:
        if to_deletions:
            with (self.directory / "deletions.jsonl").open("ab") as deletions:
                deletions.write(lines)
                deletions.flush()
                os.fsync(deletions.fileno())
            return
        file = self._current()
        file.write(lines)
        file.flush()
        os.fsync(file.fileno())

    async def _write(self, lines: bytes, to_deletions: bool = False) -> None:
        async with self._lock:
            try:
                await asyncio.to_thread(self._append, lines, to_deletions)
            except OSError as exc:
                if self._file is not None:  # a file cut short is left; the next is new
                    self._file.close()
                    self._file = None
                raise SinkUnavailable(f"jsonl: cannot write to {self.directory}: {exc}") from None

    async def write(self, documents: Sequence[RawDocument]) -> None:
        if documents:
            await self._write(ndjson(doc.as_json() for doc in documents))

    async def delete(self, url_hashes: Sequence[str]) -> None:
        if url_hashes:
            now = datetime.now(UTC).isoformat()
            rows = ({"url_hash": h, "deleted_at": now} for h in sorted(set(url_hashes)))
            await self._write(ndjson(rows), to_deletions=True)

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        return None

    async def health(self) -> str:
        if not os.access(self.directory, os.W_OK):
            raise SinkUnavailable(f"jsonl: cannot write to {self.directory}")
        return f"JSON lines in {self.directory}"

    async def close(self) -> None:
        async with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
