"""Bulk export (frontier.export, issue 33 item 4): every matching document once, oldest
first, across pages and rotated files; the three formats re-read by their own readers
(jq for JSON lines, pyarrow for Parquet, the csv module for CSV); `frontier export` and
`GET /api/v1/export`."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.documents import BadDocumentQuery, DocumentFilter, ExportQuery, export_fields
from frontier.export import check_language, run_export
from frontier.settings import Settings
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from tests.full_documents import BASE, full_document
from tests.processes import frontier_env, frontier_output

END = BASE.replace(year=2027)
COUNT = 12


@pytest.fixture
async def stored(db: Database) -> list[RawDocument]:
    """COUNT documents, oldest first: the odd ones of source `city`; 5 and 7 near-duplicates
    of 3."""
    city = await SourceRepository(db).create(
        parse_config({"name": "city", "feed_url": "https://h0.example/rss"})
    )
    docs = [full_document(i, city.id if i % 2 else None) for i in range(COUNT)]
    docs[5] = replace(docs[5], near_duplicate_of=docs[3].url_hash)
    docs[7] = replace(docs[7], near_duplicate_of=docs[3].url_hash)
    await PostgresSink(db).write(docs[::-1])
    return docs


def jq(*args: str, path: Path) -> str:
    """jq's output (tests/CI install it: the Makefile's `jq` target)."""
    assert shutil.which("jq"), "jq is needed: make jq (apt-get install jq)"
    done = subprocess.run(["jq", *args, str(path)], capture_output=True, text=True, check=True)
    return done.stdout


async def test_every_document_once_oldest_first_in_rotated_files(
    db: Database, stored: list[RawDocument], tmp_path: Path
) -> None:
    query = ExportQuery(DocumentFilter(), until=END)
    result = await run_export(
        PostgresDocuments(db), query, "jsonl", f"{tmp_path}/out/", rows_per_file=5, page_rows=3
    )
    assert result.rows == COUNT
    assert [Path(f).name for f in result.files] == [
        "documents-000001.jsonl", "documents-000002.jsonl", "documents-000003.jsonl"
    ]  # fmt: skip
    hashes = [line for f in result.files for line in jq("-r", ".url_hash", path=Path(f)).split()]
    assert hashes == [d.url_hash for d in stored]  # 5 + 5 + 2, oldest first
    first = json.loads(Path(result.files[0]).read_text().splitlines()[0])
    assert list(first) == list(export_fields(with_body=False))  # no body without --with-body
    assert first["tags"] == ["harbour", "t0"] and first["fetched_at"] == BASE.isoformat()


@pytest.mark.parametrize(
    ("filters", "language", "wanted"),
    [
        ({"host": "h1.example"}, None, [1, 4, 7, 10]),
        ({"since": BASE.replace(minute=9)}, None, [9, 10, 11]),
        ({"one_per_cluster": True}, None, [0, 1, 2, 3, 4, 6, 8, 9, 10, 11]),
        ({}, "EN", [0, 2, 3, 5, 6, 8, 9, 11]),  # detected en, else declared en-GB
        ({"host": "h2.example"}, "de", []),
    ],
)
async def test_filters(
    db: Database,
    stored: list[RawDocument],
    tmp_path: Path,
    filters: dict[str, Any],
    language: str | None,
    wanted: list[int],
) -> None:
    where = DocumentFilter(**filters)
    lang = check_language(language) if language else None
    query = ExportQuery(where, until=END, language=lang)
    result = await run_export(
        PostgresDocuments(db), query, "jsonl", str(tmp_path / "out.jsonl"), page_rows=2
    )
    lines = Path(result.files[0]).read_text().splitlines()
    assert [json.loads(line)["url_hash"] for line in lines] == [stored[i].url_hash for i in wanted]


async def test_by_source_and_until(db: Database, stored: list[RawDocument], tmp_path: Path) -> None:
    query = ExportQuery(DocumentFilter(source_id=stored[1].source_id), until=stored[7].fetched_at)
    result = await run_export(PostgresDocuments(db), query, "jsonl", str(tmp_path / "out.jsonl"))
    hashes = jq("-r", ".url_hash", path=Path(result.files[0])).split()
    assert hashes == [stored[i].url_hash for i in (1, 3, 5, 7)]


async def test_parquet_and_csv_hold_every_field(
    db: Database, stored: list[RawDocument], tmp_path: Path
) -> None:
    query = ExportQuery(DocumentFilter(), until=END, with_body=True)
    await run_export(
        PostgresDocuments(db), query, "parquet", str(tmp_path / "d.parquet"), page_rows=5
    )
    table = pq.read_table(tmp_path / "d.parquet")
    assert table.column_names == list(export_fields(with_body=True))
    rows = table.to_pylist()
    assert [r["url_hash"] for r in rows] == [d.url_hash for d in stored]
    for row, doc in zip(rows, stored, strict=True):
        expected = doc.as_json()
        assert row["fetched_at"] == doc.fetched_at and row["published_at"] == doc.published_at
        assert row["tags"] == expected["tags"] and row["paragraphs"] == expected["paragraphs"]
        assert row["source_id"] == expected["source_id"] and row["body"] == doc.body
        assert row["warc_offset"] == doc.warc_offset and row["paywalled"] is doc.paywalled

    await run_export(PostgresDocuments(db), query, "csv", str(tmp_path / "d.csv"))
    with (tmp_path / "d.csv").open(newline="", encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert len(read) == COUNT and list(read[0]) == list(export_fields(with_body=True))
    assert read[3]["title"] == stored[3].title and read[3]["body"] == stored[3].body
    assert json.loads(read[3]["tags"]) == list(stored[3].tags)
    assert read[3]["paywalled"] == "true" and read[0]["source_id"] == ""


async def test_refusals(db: Database, tmp_path: Path) -> None:
    query = ExportQuery(DocumentFilter(), until=END)
    with pytest.raises(BadDocumentQuery, match="format: 'xml' is not one of"):
        await run_export(PostgresDocuments(db), query, "xml", str(tmp_path / "x"))
    with pytest.raises(BadDocumentQuery, match="parquet is not written to standard output"):
        await run_export(PostgresDocuments(db), query, "parquet", "-")
    with pytest.raises(BadDocumentQuery, match="output: no directory"):
        await run_export(PostgresDocuments(db), query, "csv", str(tmp_path / "nowhere" / "x.csv"))
    with pytest.raises(BadDocumentQuery, match="language: 'e n' is not a language code"):
        check_language("e n")
    empty = await run_export(PostgresDocuments(db), query, "csv", str(tmp_path / "empty.csv"))
    assert empty.rows == 0 and (tmp_path / "empty.csv").read_text().startswith("url_hash,url,")


async def test_cli_exports_to_stdout(stored: list[RawDocument], fresh_dsn: str) -> None:
    env = frontier_env(fresh_dsn)
    code, out, err = await frontier_output(
        "export", "--with-body", "--host", "h0.example", "--one-per-cluster", env=env
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["url_hash"] for d in lines] == [stored[i].url_hash for i in (0, 3, 6, 9)]
    assert lines[0]["body"] == stored[0].body and "exported 4 documents" in err and "rows/s" in err
    code, _out, err = await frontier_output("export", "--format", "xml", env=env)
    assert code == 2 and "format: 'xml' is not one of jsonl, csv, parquet" in err


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings.load(
        database_url=fresh_dsn,
        home=tmp_path,
        api_read_token="r" * 32,
        api_read_auth=True,
        _env_file=None,
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(settings, db)), base_url="http://test"
    ) as client:
        yield client


async def test_api_streams_ndjson_behind_the_read_token(
    api: httpx.AsyncClient, stored: list[RawDocument], tmp_path: Path
) -> None:
    assert (await api.get("/api/v1/export")).status_code == 401
    headers = {"Authorization": "Bearer " + "r" * 32}
    async with api.stream(
        "GET", "/api/v1/export", params={"language": "de", "with_body": "true"}, headers=headers
    ) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/x-ndjson"
        (tmp_path / "api.jsonl").write_bytes(b"".join([c async for c in answer.aiter_bytes()]))
    assert jq("-r", ".url_hash", path=tmp_path / "api.jsonl").split() == [
        stored[i].url_hash for i in (1, 4, 7, 10)
    ]
    assert jq("-r", ".body", path=tmp_path / "api.jsonl").startswith(stored[1].body or "")
    bad = await api.get("/api/v1/export", params={"since": "yesterday-ish"}, headers=headers)
    assert bad.status_code == 422 and "since" in bad.text
