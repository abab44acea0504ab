"""The archive's files without the fetcher: rotation names a file complete only once it is
synced and closed; a file whose writer died is sealed after its last whole record, one
whose writer lives is left alone; retention removes complete files by age, then the
oldest by total size."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from frontier.archive.files import OPEN_SUFFIX, WarcFiles
from frontier.archive.reader import read_record
from frontier.archive.records import exchange_records
from frontier.archive.upkeep import Retention, prune, seal_orphan, upkeep
from frontier.archive.writer import ArchiveWriter
from frontier.safe_http.responses import Exchange

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def exchange(n: int, size: int = 2000) -> Exchange:
    body = os.urandom(size // 2).hex().encode()  # incompressible: sizes are predictable
    return Exchange(
        url=f"http://news.example/{n}",
        started=NOW,
        request_headers=(("Host", "news.example"),),
        version="1.1",
        status=200,
        reason="OK",
        headers=(("Content-Type", "text/html"),),
        body=body,
    )


def test_files_rotate_past_the_size_and_only_complete_files_lose_the_open_suffix(
    tmp_path: Path,
) -> None:
    files = WarcFiles(tmp_path, "host:12:ab", rotate_bytes=5000, clock=lambda: NOW)
    locations = [files.append(list(exchange_records(exchange(n))))[0] for n in range(6)]
    complete = sorted(p.name for p in tmp_path.glob("*.warc.gz"))
    still_open = sorted(p.name for p in tmp_path.glob("*" + OPEN_SUFFIX))
    assert len(complete) >= 2 and len(still_open) <= 1
    assert all(name.startswith("host-12-ab-20261127120000-") for name in complete)
    for n, location in enumerate(locations):  # each pointer names the complete file
        record = read_record(tmp_path, location)
        assert record.headers["WARC-Target-URI"] == f"http://news.example/{n}"
    files.close()
    assert not list(tmp_path.glob("*" + OPEN_SUFFIX))


def test_a_dead_writers_file_is_cut_after_its_last_whole_record_and_a_live_one_is_kept(
    tmp_path: Path,
) -> None:
    live = WarcFiles(tmp_path / "live", "live", rotate_bytes=1 << 20)
    live.append(list(exchange_records(exchange(1))))
    (open_file,) = (tmp_path / "live").glob("*" + OPEN_SUFFIX)
    assert not seal_orphan(open_file)  # its writer holds the lock

    dead = WarcFiles(tmp_path / "dead", "dead", rotate_bytes=1 << 20)
    kept = dead.append(list(exchange_records(exchange(2))))
    (orphan,) = (tmp_path / "dead").glob("*" + OPEN_SUFFIX)
    whole = orphan.stat().st_size
    torn = exchange_records(exchange(3))[0].member
    with orphan.open("ab") as stream:
        stream.write(torn[: len(torn) // 2])
    os.close(dead._fd)  # type: ignore[arg-type]  # the process died: its lock went with it
    assert seal_orphan(orphan)
    sealed = tmp_path / "dead" / orphan.name.removesuffix(OPEN_SUFFIX)
    assert sealed.stat().st_size == whole
    assert read_record(tmp_path / "dead", kept[0]).headers["WARC-Target-URI"].endswith("/2")
    result = upkeep(tmp_path / "live", Retention(), now=NOW)
    assert result.sealed == [] and open_file.exists()


def test_retention_removes_files_past_the_age_then_the_oldest_past_the_size(
    tmp_path: Path,
) -> None:
    for n, age_days in enumerate((40, 20, 10, 1)):
        path = tmp_path / f"w-{n}.warc.gz"
        path.write_bytes(b"x" * 1000)
        moment = (NOW - timedelta(days=age_days)).timestamp()
        os.utime(path, (moment, moment))
    (tmp_path / "w-9.warc.gz.open").write_bytes(b"x" * 5000)  # being written: never removed
    assert prune(tmp_path, Retention(max_age=timedelta(days=30)), now=NOW) == ["w-0.warc.gz"]
    assert prune(tmp_path, Retention(max_bytes=2000), now=NOW) == ["w-1.warc.gz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "w-2.warc.gz",
        "w-3.warc.gz",
        "w-9.warc.gz.open",
    ]


async def test_the_writer_seals_its_file_once_however_often_it_is_closed(tmp_path: Path) -> None:
    writer = ArchiveWriter(tmp_path, "w", rotate_bytes=1 << 20)
    (archived,) = await writer.write([(exchange(1), None)])
    await writer.close()
    await writer.close()  # a test's close, then the process's
    assert [p.name for p in tmp_path.iterdir()] == [archived.location.file]
