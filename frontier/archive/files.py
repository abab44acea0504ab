"""A writer's rotating WARC files, and where a record lies in them.

Each writer (a fetcher process) writes files of its own, named
`{prefix}-{YYYYmmddHHMMSS}-{serial}.warc.gz`: while written, the name ends `.open`, and
the file is held with an exclusive `flock` (so that `upkeep` can tell a file whose writer
died, whose lock went with it). Records are appended whole (each one gzip member) with
unbuffered writes: once `append` returns, the bytes are the kernel's, and a SIGKILL of the
process cannot tear them. A file that reaches the rotation size is fsynced, closed and
renamed to its complete name, and the directory fsynced, before the next one opens.

A `Location` always names the complete file: a reader looks for `name + ".open"` while the
file is still written (`reader.path_of`).

A write the disk refuses (full, a quota, read-only, gone) raises `ArchiveWriteFailed`,
after cutting the file back to its size before the write: no torn record stays behind.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from frontier.archive.records import Built, warcinfo
from frontier.clock import utcnow
from frontier.errors import FrontierError

OPEN_SUFFIX = ".open"
COMPLETE_SUFFIX = ".warc.gz"
SOFTWARE = "frontier (issue 30 archive; FastWARC)"


class ArchiveWriteFailed(FrontierError):
    """The disk refused a WARC write; `code` names the errno (ENOSPC...)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Location:
    """Where one record lies: the complete file's name (relative to the archive
    directory), the offset of its gzip member and the member's length."""

    file: str
    offset: int
    length: int


class WarcFiles:
    """Not thread-safe: one thread appends (`frontier.archive.writer`)."""

    def __init__(
        self,
        directory: Path,
        prefix: str,
        rotate_bytes: int,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.directory = directory
        self.prefix = _safe(prefix)
        self.rotate_bytes = rotate_bytes
        self._clock = clock
        self._fd: int | None = None
        self._name = ""
        self._size = 0
        self._serial = 0

    @property
    def current(self) -> str | None:
        """The complete name of the file being written, if one is open."""
        return self._name if self._fd is not None else None

    def append(self, records: Sequence[Built]) -> list[Location]:
        """Append the records, in order, as one write; returns where each lies. Rotates
        once the file is past the rotation size."""
        if not records:
            return []
        if self._fd is None:
            self._open()
        assert self._fd is not None
        start = self._size
        data = b"".join(r.member for r in records)
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            self._cut_back(start)
            raise _failed(exc, self.directory / (self._name + OPEN_SUFFIX)) from None
        self._size += len(data)
        locations = []
        offset = start
        for record in records:
            locations.append(Location(self._name, offset, len(record.member)))
            offset += len(record.member)
        if self._size >= self.rotate_bytes:
            self.seal()
        return locations

    def seal(self) -> None:
        """Sync, close and rename the open file complete (nothing open: nothing to do)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        path = self.directory / self._name
        try:
            os.fsync(fd)
            os.rename(str(path) + OPEN_SUFFIX, path)
            _fsync_directory(self.directory)
        except OSError as exc:
            raise _failed(exc, path) from None
        finally:
            os.close(fd)  # the lock goes with it

    def close(self) -> None:
        self.seal()

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        now = self._clock()
        while True:
            self._serial += 1
            name = f"{self.prefix}-{now:%Y%m%d%H%M%S}-{self._serial:05d}{COMPLETE_SUFFIX}"
            path = self.directory / (name + OPEN_SUFFIX)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            except FileExistsError:
                continue
            except OSError as exc:
                raise _failed(exc, path) from None
            break
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._fd, self._name, self._size = fd, name, 0
        info = warcinfo(name, now, SOFTWARE)
        try:
            _write_all(fd, info.member)
        except OSError as exc:
            self._fd = None
            os.close(fd)
            path.unlink(missing_ok=True)  # an empty file is no use; the next write retries
            raise _failed(exc, path) from None
        self._size = len(info.member)

    def _cut_back(self, size: int) -> None:
        """After a failed write: the file as it was before it (a partial write would leave
        a torn record, and the next record's offset would be wrong). A file that cannot be
        cut back is left as it is, unlocked, for `upkeep` to seal at its last whole
        record; the next append opens a new one."""
        fd = self._fd
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        try:
            intact = os.fstat(fd).st_size == size
        except OSError:
            intact = False
        if not intact:
            self._fd = None
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _failed(exc: OSError, path: Path) -> ArchiveWriteFailed:
    code = errno.errorcode.get(exc.errno or 0, "EIO") if exc.errno else type(exc).__name__
    reason = exc.strerror or str(exc)
    return ArchiveWriteFailed(f"WARC write to {path} failed: {code} ({reason})", code)


def _safe(prefix: str) -> str:
    """A worker id as a file name part: host:pid:random -> host-pid-random."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in prefix)
