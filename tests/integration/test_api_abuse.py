"""Hostile request bodies and parameters against the API (issue 19): the token is checked
before any body is read, every body has a size cap checked while it streams, nesting is
bounded, and odd inputs (NUL characters, a year-1 timestamp with +14:00, a 5,000-deep JSON
line) answer 4xx with the usual error body, never 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from frontier.db import Database
from tests.integration.test_api import AUTH, assert_error, client_for, make_settings

SOURCES = "/api/v1/sources"
JSON = {**AUTH, "Content-Type": "application/json"}


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with await client_for(make_settings(fresh_dsn, tmp_path), db) as client:
        yield client


def _counting(total: int, chunk: bytes, seen: list[int]) -> AsyncIterator[bytes]:
    """A body of `total` bytes made of `chunk`, counting how much the server pulled."""

    async def chunks() -> AsyncIterator[bytes]:
        sent = 0
        while sent < total:
            seen[0] += len(chunk)
            sent += len(chunk)
            yield chunk

    return chunks()


@pytest.mark.parametrize("method", ["POST", "PATCH"])
async def test_sources_writes_check_the_token_before_reading_the_body(
    api: httpx.AsyncClient, method: str
) -> None:
    url = SOURCES if method == "POST" else f"{SOURCES}/00000000-0000-0000-0000-000000000001"
    seen = [0]
    body = _counting(64 * 1024 * 1024, b"[" * 65_536, seen)
    response = await api.request(
        method, url, content=body, headers={"Content-Type": "application/json"}
    )
    assert_error(response, 401, "unauthorized")
    assert seen[0] <= 65_536  # the body was never read past its first chunk
    bad = await api.request(
        method, url, content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_error(bad, 401, "unauthorized")  # not 422: no token, no parsing


@pytest.mark.parametrize("method", ["POST", "PATCH"])
async def test_sources_bodies_over_the_json_cap_get_413_while_streaming(
    api: httpx.AsyncClient, method: str
) -> None:
    url = SOURCES if method == "POST" else f"{SOURCES}/00000000-0000-0000-0000-000000000001"
    headers = {**AUTH, "Content-Type": "application/json"}
    seen = [0]
    response = await api.request(
        method, url, headers=headers, content=_counting(64 * 1024 * 1024, b" " * 65_536, seen)
    )
    error = assert_error(response, 413, "body_too_large")
    assert "FRONTIER_API_JSON_MAX_BYTES" in error["message"]
    assert seen[0] <= 2 * 1024 * 1024  # stopped near the 1 MiB cap
    big = b" " * (2 * 1024 * 1024)  # refused by its Content-Length
    assert_error(
        await api.request(method, url, headers=headers, content=big), 413, "body_too_large"
    )


async def test_deeply_nested_json_is_refused_early_in_every_body(api: httpx.AsyncClient) -> None:
    headers = {**AUTH, "Content-Type": "application/json"}
    deep = b'{"urls": [' + b"[" * 60_000 + b"]" * 60_000 + b"]}"
    error = assert_error(
        await api.post("/api/v1/import", headers=headers, content=deep), 400, "bad_body"
    )
    assert "nested" in error["message"]
    source = b'{"name": "deep", "feed_url": ' + b"[" * 60_000 + b"]" * 60_000 + b"}"
    error = assert_error(await api.post(SOURCES, headers=headers, content=source), 400, "bad_body")
    assert "nested" in error["message"]


async def test_a_5000_deep_ndjson_line_refuses_the_body(api: httpx.AsyncClient) -> None:
    body = b'"http://fine.example/a"\n' + b"[" * 5_000 + b"\n"
    response = await api.post(
        "/api/v1/import", content=body, headers={**AUTH, "Content-Type": "application/x-ndjson"}
    )
    error = assert_error(response, 400, "bad_body")
    assert error["message"].startswith("line 2: JSON nested too deeply"), error


async def test_nul_characters_answer_422_not_500(api: httpx.AsyncClient) -> None:
    for path in (
        "/api/v1/frontier?source=a%00b",
        "/api/v1/frontier?host=a%00b.example",
        "/api/v1/import?source=a%00b",
    ):
        method = "POST" if "import" in path else "GET"
        response = await api.request(method, path, headers=AUTH, content=b"http://x.example/\n")
        assert_error(response, 422, "validation_error")
    for body in (
        {"name": "nul\u0000name", "feed_url": "http://nul.example/feed"},
        {"name": "nul", "feed_url": "http://nul.example/feed", "selectors": {"title": "a\u0000"}},
        {"name": "nul", "feed_url": "http://nul.example/f\u0000eed"},
    ):
        response = await api.post(SOURCES, headers=AUTH, json=body)
        assert_error(response, 422, "validation_error")
    urls = json.dumps({"urls": ["http://nul.example/a\u0000b"]})
    imported = await api.post("/api/v1/import", headers=JSON, content=urls)
    assert imported.status_code == 200 and imported.json()["rejected"] == 1, imported.text


async def test_a_year_1_timestamp_with_plus_14_answers_422(api: httpx.AsyncClient) -> None:
    body = {
        "name": "old",
        "feed_url": "http://old.example/feed",
        "min_published_at": "0001-01-01T00:00:00+14:00",
    }
    error = assert_error(await api.post(SOURCES, headers=AUTH, json=body), 422, "validation_error")
    assert error["fields"] and error["fields"][0]["field"] == "min_published_at"


async def test_a_64_mib_json_string_in_an_import_is_refused(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    settings = make_settings(fresh_dsn, tmp_path)
    async with await client_for(settings, db) as client:
        seen = [0]

        async def body() -> AsyncIterator[bytes]:
            yield b'{"urls": ["http://long.example/'
            async for chunk in _counting(64 * 1024 * 1024, b"a" * 65_536, seen):
                yield chunk
            yield b'"]}'

        response = await client.post("/api/v1/import", content=body(), headers=JSON)
        error = assert_error(response, 400, "bad_body")
        assert "longer than" in error["message"]
        assert seen[0] <= 1024 * 1024
