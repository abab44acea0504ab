"""The archive's maintenance step (a fetcher's maintenance loop runs it): files whose
writer died are sealed, and the retention setting is applied.

A file still named `.open` whose lock nobody holds was left by a writer that died (its
`flock` went with the process): it is cut after its last whole record (a SIGKILL in the
middle of a write leaves at most one torn record at the end, never pointed to: a document
is stored only after its record was written) and renamed complete.

Retention: complete files older than the age, then the oldest complete files until the
total is under the size. Only complete files go; a document whose file went keeps its
pointer, which then reads as `RecordUnreadable`.
"""

from __future__ import annotations

import fcntl
import os
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from frontier.archive.files import COMPLETE_SUFFIX, OPEN_SUFFIX

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Retention:
    max_age: timedelta | None = None
    max_bytes: int | None = None


@dataclass(slots=True)
class UpkeepResult:
    sealed: list[str] = field(default_factory=list)  # files of dead writers, made complete
    removed: list[str] = field(default_factory=list)  # complete files retention removed


def upkeep(directory: Path, retention: Retention, *, now: datetime) -> UpkeepResult:
    result = UpkeepResult()
    if not directory.is_dir():
        return result
    for path in sorted(directory.glob("*" + COMPLETE_SUFFIX + OPEN_SUFFIX)):
        if seal_orphan(path):
            result.sealed.append(path.name.removesuffix(OPEN_SUFFIX))
    result.removed = prune(directory, retention, now=now)
    return result


def seal_orphan(path: Path) -> bool:
    """Seal `path` if its writer is gone: cut at the last whole gzip member, rename it
    complete. False when a writer still holds it (or it went meanwhile)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # its writer is alive
        if not path.exists():
            return False  # sealed by its writer between the glob and the lock
        os.ftruncate(fd, whole_members_end(path))
        os.fsync(fd)
        os.rename(path, str(path).removesuffix(OPEN_SUFFIX))
        return True
    finally:
        os.close(fd)


def whole_members_end(path: Path) -> int:
    """The offset just past the last whole gzip member from the start of the file."""
    good = consumed = 0
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            while chunk:
                try:
                    inflate.decompress(chunk, CHUNK)
                    while inflate.unconsumed_tail and not inflate.eof:
                        inflate.decompress(inflate.unconsumed_tail, CHUNK)
                except zlib.error:
                    return good  # garbage: the torn tail
                if inflate.eof:
                    rest = inflate.unused_data
                    consumed += len(chunk) - len(rest)
                    good = consumed
                    chunk = rest
                    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
                else:
                    consumed += len(chunk)
                    chunk = b""
    return good


def prune(directory: Path, retention: Retention, *, now: datetime) -> list[str]:
    files = []
    for path in directory.glob("*" + COMPLETE_SUFFIX):
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        files.append((stat.st_mtime, stat.st_size, path))
    files.sort()
    removed: list[str] = []
    total = sum(size for _, size, _ in files)
    cutoff = (now - retention.max_age).timestamp() if retention.max_age else None
    for mtime, size, path in files:
        too_old = cutoff is not None and mtime < cutoff
        too_big = retention.max_bytes is not None and total > retention.max_bytes
        if not (too_old or too_big):
            continue
        path.unlink(missing_ok=True)
        total -= size
        removed.append(path.name)
    return removed
