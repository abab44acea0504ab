"""A fetch process (`python -m frontier fetch`) SIGKILLed while it archives: the files it
completed stay readable, no document points into a torn record, and the file it had open
is sealed by the next fetcher's maintenance, cut after its last whole record."""

from __future__ import annotations

import asyncio
import gzip
import signal
from pathlib import Path

from aiohttp import web

from frontier.archive.files import OPEN_SUFFIX, Location
from frontier.archive.reader import read_record
from frontier.db import Database
from tests.conditions import wait_until
from tests.fetch_harness import article, fetcher_for, submit
from tests.integration.test_archive import warcio
from tests.local_site import LocalSite
from tests.processes import frontier_process

DEADLINE_S = 60.0
ROTATE = 64 * 1024  # the smallest rotation size allowed: a few pages per file


async def sites(count: int) -> list[LocalSite]:
    return [await LocalSite(address=f"127.0.0.{30 + i}").start() for i in range(count)]


def pages(site: LocalSite, count: int) -> list[str]:
    """`count` articles of about 20 KB each, every one different (so none is a duplicate
    and each compresses to a few KB)."""

    async def page(request: web.Request) -> web.StreamResponse:
        words = " ".join(f"{request.path}-{request.host}-{i * 7919 % 10007}" for i in range(900))
        body = article(f"page {request.host}{request.path}", word=words)
        return web.Response(text=body, content_type="text/html")

    for i in range(count):
        site.route(f"/p{i}", page)
    return [site.url(f"/p{i}") for i in range(count)]


async def documents(db: Database) -> list[dict[str, object]]:
    return [dict(r) for r in await db.fetch("SELECT * FROM raw_content")]


def pointer(document: dict[str, object]) -> Location:
    return Location(
        str(document["warc_file"]),
        int(document["warc_offset"]),
        int(document["warc_length"]),  # type: ignore[call-overload]
    )


async def test_sigkill_while_archiving_leaves_earlier_files_readable_and_no_torn_pointer(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    hosts = await sites(4)
    try:
        urls = [u for site in hosts for u in pages(site, 25)]
        await submit(db, *urls)

        def complete_files() -> list[Path]:
            return sorted(archive.glob("*.warc.gz")) if archive.exists() else []

        async with frontier_process(
            fresh_dsn,
            tmp_path,
            "fetch",
            "--workers",
            "8",
            FRONTIER_ARCHIVE_DIR=str(archive),
            FRONTIER_ARCHIVE_ROTATE_BYTES=str(ROTATE),
            FRONTIER_DEFAULT_DELAY_MS="0",
            FRONTIER_EXTRACT_PROCESSES="0",
        ) as process:

            async def into_open_file() -> bool:
                if len(complete_files()) < 2:
                    return False
                files = await db.fetch("SELECT DISTINCT warc_file FROM raw_content")
                return any((archive / (r["warc_file"] + OPEN_SUFFIX)).exists() for r in files)

            await wait_until(
                into_open_file,
                process,
                deadline_s=DEADLINE_S,
                tick_s=0.02,
                what="two WARC files completed, and documents pointing into a third, open",
            )
            process.send_signal(signal.SIGKILL)
            await asyncio.wait_for(process.wait(), DEADLINE_S)

        left_open = sorted(archive.glob("*" + OPEN_SUFFIX))
        assert len(left_open) == 1, left_open
        # A kill inside the write of a batch's records leaves a prefix of them: the file's
        # tail as such a kill leaves it (the kill above lands between two writes nearly
        # always, so the torn tail is made here, the way a short write makes it).
        torn = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\n" + b"x" * 4000)
        whole = left_open[0].stat().st_size
        with left_open[0].open("ab") as stream:
            stream.write(torn[: len(torn) // 2])

        earlier = complete_files()
        checked = warcio("check", *map(str, earlier))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        stored = await documents(db)
        assert stored, "the fetcher stored nothing before it was killed"
        in_open_file = 0
        for document in stored:  # every pointer reads back a whole record: its own
            record = read_record(archive, pointer(document))
            assert record.record_id == document["warc_record_id"]
            assert record.headers["WARC-Target-URI"] == document["url"]
            in_open_file += (archive / str(document["warc_file"])).exists() is False
        assert in_open_file, "no document pointed into the file left open"

        # The next fetcher's maintenance seals the file whose writer died.
        async with fetcher_for(db, archive_dir=archive) as fetcher:
            await fetcher.maintain_once()
        assert not list(archive.glob("*" + OPEN_SUFFIX))
        sealed = archive / left_open[0].name.removesuffix(OPEN_SUFFIX)
        assert sealed.stat().st_size == whole  # cut after its last whole record
        everything = complete_files()
        checked = warcio("check", *map(str, everything))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        for document in stored:
            assert read_record(archive, pointer(document)).record_id == document["warc_record_id"]
    finally:
        for site in hosts:
            await site.stop()
