"""The WARC archive (issue 30 items 1 and 2) against the real database and a local site: a
crawl's files validate with warcio (`warcio check`, `warcio index`) and hold robots.txt, a
redirect hop, a failure with a body, a 304 as a server-not-modified revisit and a
duplicate as an identical-payload-digest revisit of the original; each document's pointer
reads back its own response record."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from frontier.api.metrics import DatabaseCollector
from frontier.archive.files import OPEN_SUFFIX, Location
from frontier.archive.reader import read_record
from frontier.archive.records import IDENTICAL_PAYLOAD, SERVER_NOT_MODIFIED
from frontier.archive.upkeep import Retention
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from tests.browser import IN_CI
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite
from tests.zoo.revisits import NginxStatic

HOUR = 3600


def warcio(*args: str) -> subprocess.CompletedProcess[str]:
    """The warcio command line, on the test's own import path."""
    return subprocess.run(
        [sys.executable, "-c", "from warcio.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )


def index(files: list[Path]) -> list[dict[str, Any]]:
    fields = "warc-type,warc-target-uri,warc-record-id,http:status,warc-profile,warc-refers-to"
    done = warcio("index", "-f", fields, *map(str, files))
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def pointer(document: dict[str, Any]) -> Location:
    return Location(document["warc_file"], document["warc_offset"], document["warc_length"])


async def crawl_until_idle(fetcher: Any, now: Any = None) -> None:
    while (await fetcher.run_once(now=now)).claimed:
        pass


async def test_a_crawl_is_archived_as_warc_that_warcio_reads_and_documents_point_into_it(
    db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    site = local_site
    site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    harbour = article("Harbour reopens")
    page = NginxStatic(site, "/harbour.html", harbour)  # 304 when revisited with its ETag

    async def gzipped(request: web.Request) -> web.StreamResponse:
        response = web.Response(text=article("Bridge closes"), content_type="text/html")
        response.enable_compression(web.ContentCoding.gzip)  # the client decodes it
        return response

    site.route("/bridge", gzipped)
    site.redirect("/bridge/", "/bridge")  # same identity: followed inline, a hop
    site.serve("/copy", harbour)  # the same bytes as /harbour.html: a duplicate
    site.serve("/gone", "<html>gone for good</html>", status=404)

    source = await SourceRepository(db).create(parse_config({"name": "Daily", "revisit": ["1h"]}))
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=0))
    await queue.submit([Candidate(site.url(page.path), source.ref, Origin.FEED)])
    async with fetcher_for(db, archive_dir=archive) as fetcher:
        await crawl_until_idle(fetcher)  # the original first
        await submit(db, site.url("/bridge/"), site.url("/copy"), site.url("/gone"))
        await crawl_until_idle(fetcher)
        await crawl_until_idle(fetcher, now=after(HOUR + 5))  # the revisit: a 304
        assert site.hits(page.path)[-1].headers["If-None-Match"] == page.etag
        await fetcher.close()

    files = sorted(archive.iterdir())
    assert files and all(f.name.endswith(".warc.gz") for f in files), files  # all sealed
    checked = warcio("check", "-v", *map(str, files))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "digest pass" in checked.stdout and "fail" not in checked.stdout

    records = index(files)
    responses = {
        (r["warc-target-uri"], r["http:status"]) for r in records if r["warc-type"] == "response"
    }
    assert {
        (site.url("/robots.txt"), "200"),
        (site.url("/bridge/"), "301"),  # the hop
        (site.url("/bridge"), "200"),
        (site.url("/gone"), "404"),  # a failure with its body
        (site.url(page.path), "200"),
    } <= responses
    revisits = {r["warc-target-uri"]: r for r in records if r["warc-type"] == "revisit"}
    assert revisits[site.url(page.path)]["warc-profile"] == SERVER_NOT_MODIFIED
    assert revisits[site.url(page.path)]["http:status"] == "304"
    duplicate = revisits[site.url("/copy")]
    assert duplicate["warc-profile"] == IDENTICAL_PAYLOAD
    requests = [r for r in records if r["warc-type"] == "request"]
    assert len(requests) == len(records) - len(files) - len(requests)  # one per answer

    documents = {r["url"]: dict(r) for r in await db.fetch("SELECT * FROM raw_content")}
    original = documents[site.url(page.path)]
    assert duplicate["warc-refers-to"] == original["warc_record_id"]
    assert (await frontier_row(db, site.url("/copy")))["dead_reason"] == "duplicate_content"
    assert set(documents) == {site.url(page.path), site.url("/bridge")}
    for url, document in documents.items():
        record = read_record(archive, pointer(document))
        assert record.record_id == document["warc_record_id"]
        assert record.headers["WARC-Type"] == "response"
        assert record.headers["WARC-Target-URI"] == url
        assert record.http_status == 200
    bridge = read_record(archive, pointer(documents[site.url("/bridge")]))
    # The payload is the decoded page; the header that named the coding is kept renamed.
    assert bridge.payload == article("Bridge closes").encode()
    names = dict(bridge.http_headers)
    assert names["X-Archive-Orig-Content-Encoding"] == "gzip"
    assert "Content-Encoding" not in names
    assert int(names["Content-Length"]) == len(bridge.payload)


@contextmanager
def tiny_filesystem(path: Path, size_kib: int) -> Iterator[Path]:
    """A tmpfs of `size_kib` mounted at `path`: a disk that fills up for real."""
    if os.geteuid() != 0 and not IN_CI:  # CI runs as root: there, a mount refused fails
        pytest.skip("mounting a tmpfs needs root (CI and the dev machines run as root)")
    path.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(path)], check=True
    )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


async def test_a_full_disk_defers_the_pages_names_the_error_and_shows_on_metrics(
    db: Database, local_site: LocalSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = local_site
    noise = os.urandom(24_000).hex()  # incompressible: the record does not fit what is left
    site.serve("/big", article("Storm warning") + f"<!-- {noise} -->")
    await submit(db, site.url("/big"))
    with tiny_filesystem(tmp_path / "disk", 64) as disk:
        filler = disk / "filler"
        filler.write_bytes(b"\0" * (64 - 12) * 1024)  # 12 KiB left
        archive = disk / "archive"
        async with fetcher_for(db, archive_dir=archive) as fetcher:
            with caplog.at_level(logging.ERROR):
                await fetcher.run_once()
            row = await frontier_row(db, site.url("/big"))
            # Not stored without its record, not lost: back to pending, no attempt counted.
            assert row["status"] == "pending" and row["retry_count"] == 0
            assert "archive write failed" in row["last_error"] and "ENOSPC" in row["last_error"]
            assert await db.fetchval("SELECT count(*) FROM raw_content") == 0
            assert any("ENOSPC" in r.getMessage() for r in caplog.records)
            assert fetcher.paused_for(time.monotonic()) > 0  # claiming pauses
            metrics = (await DatabaseCollector().scrape(db)).decode()
            assert 'frontier_archive_errors_total{code="ENOSPC"} 1.0' in metrics
            # The refused write left no torn record behind.
            (open_file,) = archive.glob("*" + OPEN_SUFFIX)
            checked = warcio("check", str(open_file))
            assert checked.returncode == 0, checked.stdout + checked.stderr

            filler.unlink()  # space again: the page is fetched once its wait is over
            await fetcher.run_once(now=after(fetcher.config.sink_retry_s + 1))
            assert (await frontier_row(db, site.url("/big")))["status"] == "fetched"
            assert fetcher.paused_for(time.monotonic()) == 0
            (document,) = await db.fetch("SELECT * FROM raw_content")
            record = read_record(archive, pointer(dict(document)))
            assert record.record_id == document["warc_record_id"]
            await fetcher.close()
        checked = warcio("check", *map(str, archive.glob("*.warc.gz")))
        assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_the_maintenance_loop_applies_the_retention_setting(
    db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    local_site.serve("/old", article("Old news"))
    await submit(db, local_site.url("/old"))
    retention = Retention(max_age=timedelta(days=7))
    async with fetcher_for(db, archive_dir=archive, archive_retention=retention) as fetcher:
        await fetcher.run_once()
        await fetcher.close()
        (written,) = archive.glob("*.warc.gz")
        assert await db.fetchval("SELECT count(*) FROM warc_payloads") == 1
        await fetcher.maintain_once()
        assert written.exists()  # younger than the retention
        eight_days_ago = time.time() - 8 * 86400
        os.utime(written, (eight_days_ago, eight_days_ago))
        await fetcher.maintain_once()
    assert not written.exists()
    # Its payloads are no revisit's original any more.
    assert await db.fetchval("SELECT count(*) FROM warc_payloads") == 0
