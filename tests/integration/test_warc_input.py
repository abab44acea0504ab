"""WARC input (`frontier import-warc`, fetcher/warc_input.py): a WARC file written by another
tool (warcio), laid out as Common Crawl's CC-NEWS files are (a warcinfo record, then a
request and a response per page, gzip per record), gives the documents a fetch of the same
pages gives, with no request made; its URLs end `fetched` in the frontier; the filters, the
body cap and a malformed file; a file given by URL through the safe client."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import io
import json
import os
import pty
import sys
from collections.abc import AsyncIterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from fetcher.warc_input import ImportCounts, ImportFilter, WarcImport
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate
from frontier.sinks import DOCUMENT_FIELDS
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from tests.conftest import TEMPLATE, PostgresServer
from tests.fetch_harness import after, article, fetcher_for, frontier_row, manual_ref, submit
from tests.local_site import LocalSite
from tests.processes import frontier_env, frontier_output

_numbers = count()
HOUR = 3600
# What a document is, leaving out when and by which route it was stored (an imported page
# is not archived again: the WARC file it came from holds it), and which document of a
# near-duplicate cluster came first (the order of storing decides it: `clusters` compares
# the clusters themselves).
SAME = [
    f
    for f in DOCUMENT_FIELDS
    if f not in ("url_hash", "fetched_at", "near_duplicate_of") and not f.startswith("warc_")
]


def clusters(documents: dict[str, dict[str, Any]]) -> set[frozenset[str]]:
    """The near-duplicate clusters of `documents` (by URL), whichever of each came first."""
    by_hash = {d["url_hash"]: url for url, d in documents.items()}
    heads: dict[str, set[str]] = {}
    for url, document in documents.items():
        head = document["near_duplicate_of"] or document["url_hash"]
        heads.setdefault(head, set()).add(url)
        if head in by_hash:
            heads[head].add(by_hash[head])
    return {frozenset(urls) for urls in heads.values()}


def cc_news_warc(
    pages: list[tuple[str, int, str, bytes, dict[str, str]]], *, compress: bool = True
) -> bytes:
    """A WARC file as CC-NEWS lays them out, written by warcio: warcinfo, then a request
    and a response record per page, each record a gzip member (`compress`; else none).
    `pages`: URL, status, content type, payload (as sent: gzip'd or chunked when its
    headers say so) and extra headers."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=compress, warc_version="1.0")
    writer.write_record(
        writer.create_warcinfo_record(
            "CC-NEWS-20261127000000-00001.warc.gz",
            {"software": "StormCrawler 2.x", "format": "WARC File Format 1.0"},
        )
    )
    for url, status, content_type, payload, extra in pages:
        path = "/" + url.split("/", 3)[3]
        request = writer.create_warc_record(
            url,
            "request",
            http_headers=StatusAndHeaders(
                f"GET {path} HTTP/1.1", [("Host", url.split("/")[2])], is_http_request=True
            ),
        )
        headers = [
            ("Content-Type", content_type),
            ("Content-Length", str(len(payload))),
            *extra.items(),
        ]
        response = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(payload),
            http_headers=StatusAndHeaders(f"{status} OK", headers, protocol="HTTP/1.1"),
        )
        writer.write_request_response_pair(request, response)
    return out.getvalue()


@pytest.fixture
async def other_db(pg_server: PostgresServer, template_dsn: str) -> AsyncIterator[Database]:
    """A second database with the current schema: where the same pages are fetched."""
    name = f"frontier_warc_{os.getpid()}_{next(_numbers)}"
    dsn = pg_server.create(name, template=TEMPLATE)
    database = await Database.connect(dsn, max_size=8)
    try:
        yield database
    finally:
        await database.close()
        pg_server.drop(name)


async def documents(db: Database) -> dict[str, dict[str, Any]]:
    return {r["url"]: dict(r) for r in await db.fetch("SELECT * FROM raw_content")}


async def import_bytes(
    db: Database, tmp_path: Path, data: bytes, *, name: str = "cc.warc.gz", **options: Any
) -> ImportCounts:
    path = tmp_path / name
    path.write_bytes(data)
    async with fetcher_for(db) as fetcher:
        warcs = WarcImport(
            fetcher,
            await manual_ref(db),
            max_body_bytes=options.pop("max_body_bytes", 1_000_000),
            **options,
        )
        await warcs.import_file(path)
    return warcs.counts


async def test_a_cc_news_style_warc_gives_the_documents_a_fetch_of_the_pages_gives(
    db: Database, other_db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    site = local_site
    html = "text/html; charset=utf-8"
    pages = {
        "/harbour": article("Harbour reopens after storm"),
        "/budget": article("Council passes the budget", word="budget"),
        "/library": article("Library opens on Sundays", word="library"),
        "/harbour-copy": article("Harbour reopens after storm"),  # the same article
    }
    for path, body in pages.items():
        site.serve(path, body)
    site.serve("/data.json", '{"not": "html"}', content_type="application/json")
    site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")

    # The fetch, into the other database: /harbour first (its copy is fetched after it).
    async with fetcher_for(other_db) as fetcher:
        for paths in (["/harbour"], [*pages, "/data.json"]):
            await submit(other_db, *(site.url(p) for p in paths))
            while (await fetcher.run_once()).claimed:
                pass
    fetched = await documents(other_db)
    assert set(fetched) == {site.url(p) for p in ("/harbour", "/budget", "/library")}

    # The same pages as another crawler archived them: one sent gzip'd (the payload as
    # sent, its Content-Encoding kept), and a JSON answer that is not HTML.
    records = []
    for path, body in pages.items():
        if path == "/budget":
            payload = gzip.compress(body.encode())
            records.append((site.url(path), 200, html, payload, {"Content-Encoding": "gzip"}))
        else:
            records.append((site.url(path), 200, html, body.encode(), {}))
    records.append((site.url("/data.json"), 200, "application/json", b'{"not": "html"}', {}))
    requests_before = len(site.requests)
    counts = await import_bytes(db, tmp_path, cc_news_warc(records))

    assert len(site.requests) == requests_before  # no request at all
    assert counts.as_json() | {"bytes": 0} == {
        "records": 11,  # warcinfo, 5 requests, 5 responses
        "html": 4,
        "imported": 3,
        "duplicates": 1,  # /harbour-copy: the article /harbour holds
        "known": 0,
        "filtered": 0,
        "skipped_too_large": 0,
        "errors": 0,
        "bytes": 0,
        "error_messages": [],
    }
    imported = await documents(db)
    assert set(imported) == set(fetched)
    for url, document in imported.items():
        assert {k: document[k] for k in SAME} == {k: fetched[url][k] for k in SAME}, url
    assert clusters(imported) == clusters(fetched)
    for path in pages:  # the URLs end as the fetch left them
        row, fetched_row = (
            await frontier_row(db, site.url(path)),
            await frontier_row(other_db, site.url(path)),
        )
        assert (row["status"], row["dead_reason"], row["content_hash"]) == (
            fetched_row["status"],
            fetched_row["dead_reason"],
            fetched_row["content_hash"],
        ), path
        assert row["origin"] == "manual"
        assert row["discovery_meta"]["warc_file"] == str(tmp_path / "cc.warc.gz")
    assert (await frontier_row(db, site.url("/harbour")))["status"] == "fetched"

    # A later submit of an imported URL is a duplicate; so is importing the file again.
    queue = QueueRepository(db)
    again = await queue.submit([Candidate(site.url("/budget"), await manual_ref(db), Origin.FEED)])
    assert (again.inserted, again.known) == (0, 1)
    counts = await import_bytes(db, tmp_path, cc_news_warc(records), name="again.warc.gz")
    assert (counts.imported, counts.known, counts.duplicates) == (0, 4, 0)


async def test_the_filters_the_body_cap_and_a_malformed_file(db: Database, tmp_path: Path) -> None:
    html = "text/html"
    small = [
        ("https://news.example/2026/11/a", article("Alpha story")),
        ("https://news.example/about", article("About us", word="about")),
        ("https://sub.news.example/2026/11/b", article("Beta story", word="beta")),
        ("https://elsewhere.example/2026/11/c", article("Gamma story", word="gamma")),
    ]
    big = ("https://news.example/2026/11/big", article("Huge story", paragraphs=200))
    records = [(url, 200, html, body.encode(), {}) for url, body in [*small, big]]
    data = cc_news_warc(records)
    accepts = ImportFilter.of(("news.example",), regex=r"/2026/")
    counts = await import_bytes(db, tmp_path, data, max_body_bytes=20_000, accepts=accepts)
    assert len(big[1]) > 20_000 > max(len(b) for _, b in small)
    assert (counts.html, counts.filtered, counts.too_large, counts.imported) == (5, 2, 1, 2)
    assert set(await documents(db)) == {small[0][0], small[2][0]}
    glob = ImportFilter.of(glob="https://elsewhere.example/*")
    counts = await import_bytes(db, tmp_path, data, name="glob.warc.gz", accepts=glob)
    assert (counts.imported, counts.filtered) == (1, 4)

    # Garbage in the middle of a file: the records before it are kept, and the error
    # names the file and where.
    later = [
        (f"https://later.example/{i}", 200, html, article(f"Later {i}", word=f"w{i}").encode(), {})
        for i in range(4)
    ]
    whole = cc_news_warc(later)
    cut = whole.index(b"\x1f\x8b", len(whole) // 2)  # a record's start, past the middle
    counts = await import_bytes(
        db, tmp_path, whole[:cut] + b"\x1f\x8b" + b"not gzip" * 50, name="torn.warc.gz"
    )
    assert counts.errors == 1 and counts.imported >= 1
    message = counts.messages[0]
    assert str(tmp_path / "torn.warc.gz") in message and "malformed WARC data" in message
    assert "offset" in message
    stored = {u for u in await documents(db) if u.startswith("https://later.example/")}
    assert len(stored) == counts.imported


async def test_import_warc_reads_a_file_by_url_through_the_ssrf_guard(
    fresh_dsn: str, db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    url = "https://news.example/2026/11/delta"
    data = cc_news_warc([(url, 200, "text/html", article("Delta story").encode(), {})])
    local_site.serve("/CC-NEWS-1.warc.gz", data, content_type="application/warc")
    location = local_site.url("/CC-NEWS-1.warc.gz")
    env = frontier_env(fresh_dsn, FRONTIER_HOME=str(tmp_path))

    code, out, err = await frontier_output("import-warc", location, "--json", env=env)
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["records"], summary["imported"], summary["errors"]) == (3, 1, 0), summary
    assert summary["bytes"] == len(data)
    assert (await frontier_row(db, url))["status"] == "fetched"

    # Without FRONTIER_ALLOW_PRIVATE_NETWORKS, 127.0.0.1 is refused like any fetch there.
    guarded = {**env, "FRONTIER_ALLOW_PRIVATE_NETWORKS": "false"}
    code, out, err = await frontier_output("import-warc", location, "--json", env=guarded)
    assert code == 1, (out, err)
    summary = json.loads(out)
    assert summary["errors"] == 1 and "not a public address" in summary["error_messages"][0]
    assert len(local_site.hits("/CC-NEWS-1.warc.gz")) == 1  # the second never connected


async def test_import_warc_shows_its_progress_by_bytes_on_a_terminal(
    fresh_dsn: str, tmp_path: Path
) -> None:
    path = tmp_path / "progress.warc.gz"
    path.write_bytes(
        cc_news_warc(
            [
                (f"https://news.example/p/{i}", 200, "text/html", article(f"P{i}").encode(), {})
                for i in range(3)
            ]
        )
    )
    size_mib = f"{path.stat().st_size / (1 << 20):.1f}"
    leader, follower = pty.openpty()  # standard error on a terminal
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "frontier",
            "import-warc",
            str(path),
            env=frontier_env(fresh_dsn, FRONTIER_HOME=str(tmp_path)),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=follower,
        )
        out, _ = await asyncio.wait_for(child.communicate(), timeout=120)
        os.close(follower)
        follower = -1
        shown = b""
        with contextlib.suppress(OSError):  # EIO once the child's end is closed
            while chunk := os.read(leader, 65536):
                shown += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert child.returncode == 0, shown
    text = shown.decode(errors="replace")
    assert f"progress.warc.gz: {size_mib}/{size_mib} MiB (100%), 3 imported" in text, text
    assert out.decode().startswith("import-warc: 7 records, 3 HTML, 3 imported"), out


async def test_imported_urls_are_filed_under_the_source_and_revisited_on_its_schedule(
    db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    body = article("Tram line opens")
    local_site.serve("/tram", body)
    url = local_site.url("/tram")
    wire = await SourceRepository(db).create(parse_config({"name": "Wire", "revisit": ["1h"]}))
    path = tmp_path / "wire.warc.gz"
    path.write_bytes(cc_news_warc([(url, 200, "text/html", body.encode(), {})]))
    async with fetcher_for(db) as fetcher:
        warcs = WarcImport(fetcher, wire.ref, max_body_bytes=1_000_000)
        await warcs.import_file(path)
        assert warcs.counts.imported == 1
        document = (await documents(db))[url]
        assert (document["source_name"], document["source_id"]) == ("Wire", wire.id)
        row = await frontier_row(db, url)
        assert (row["status"], row["revisit_step"], row["source_id"]) == ("pending", 1, wire.id)
        assert not local_site.hits("/tram")

        assert not (await fetcher.run_once()).claimed  # not due before the hour is up
        await fetcher.run_once(now=after(HOUR + 5))  # the revisit: the same text
    assert len(local_site.hits("/tram")) == 1
    row = await frontier_row(db, url)
    assert (row["status"], row["revisit_step"]) == ("fetched", 1)  # the schedule ended
    assert (await documents(db))[url]["content_hash"] == document["content_hash"]


async def test_an_uncompressed_warc_with_a_chunked_payload(db: Database, tmp_path: Path) -> None:
    """A WARC file without gzip (wget's `--no-warc-compression`), holding a payload as the
    server sent it, chunked: the reader undoes the chunking before extraction."""
    body = article("Chunked story").encode()
    cut = body.index(b"paragraph 2") + 4  # a chunk ends inside a sentence
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:cut], body[cut:]))
        + b"0\r\n\r\n"
    )
    url = "https://plain.example/chunked"
    data = cc_news_warc(
        [(url, 200, "text/html", chunked, {"Transfer-Encoding": "chunked"})], compress=False
    )
    assert not data.startswith(b"\x1f\x8b") and data.startswith(b"WARC/1.0")
    counts = await import_bytes(db, tmp_path, data, name="plain.warc")
    assert (counts.imported, counts.errors) == (1, 0), counts.messages
    document = (await documents(db))[url]
    assert document["title"] == "Chunked story"
    assert "Chunked story paragraph 2: the news" in document["body"]
