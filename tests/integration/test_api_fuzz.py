"""Hypothesis over every API body, against a real server (`uvicorn_config`, as `frontier
serve` runs it) on a real PostgreSQL: sources create and patch, the import as JSON, NDJSON
and text, and the manual fire. Inputs are larger and deeper than schemathesis sends:
near-valid source forms with values of the wrong kind, NUL characters and odd timestamps;
nesting up to 5,000 deep; strings up to 200 KB; arbitrary bytes. The property: never a 5xx,
every refusal in the one error shape, and no error logged by the server."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import poller.service
from frontier.api.app import create_app
from frontier.api.server import uvicorn_config
from frontier.db import Database
from frontier.settings import Settings

TOKEN = "fuzz-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


@contextmanager
def live_server(dsn: str, home: Path) -> Iterator[str]:
    """`frontier serve`'s app and uvicorn configuration in a thread of its own (its own
    event loop and pool), so the Hypothesis tests below can be plain functions."""
    config = Settings.load(database_url=dsn, home=home, api_token=TOKEN, _env_file=None)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from here on, so no wait for start-up is needed
    holder: dict[str, uvicorn.Server] = {}
    ready = threading.Event()

    async def main() -> None:
        db = await Database.connect(dsn, max_size=4)
        try:
            app = create_app(config, db, fire=poller.service.fire)
            holder["server"] = uvicorn.Server(uvicorn_config(app, config))
            ready.set()
            await holder["server"].serve(sockets=[sock])
        finally:
            ready.set()
            await db.close()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    ready.wait(60)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        if "server" in holder:
            holder["server"].should_exit = True
        thread.join(60)
        sock.close()


# -- strategies ------------------------------------------------------------------------

ODD_TEXT = st.sampled_from(
    [
        "\u0000",
        "a\u0000b",
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
        "http://x.example/\u0000",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | ODD_TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=40,
)
SOURCE_KEYS = [
    "name",
    "base_url",
    "feed_url",
    "sitemap_url",
    "ingestion_mode",
    "priority",
    "feed_poll_interval_minutes",
    "rate_limit_ms",
    "fetchprotection",
    "selectors",
    "article_url_patterns",
    "url_filters",
    "min_published_at",
    "enabled",
    "keep_trailing_slash",
    "adaptive_interval",
    "spider_interval_minutes",
]


@st.composite
def deep(draw: st.DrawFn) -> bytes:
    """Nesting up to 5,000 deep, closed or not, inside or outside an object."""
    depth = draw(st.integers(1, 5_000))
    opener = draw(st.sampled_from([b"[", b'{"a":', b'[{"url":']))
    closer = {b"[": b"]", b'{"a":': b"}", b'[{"url":': b"}]"}[opener]
    inner = opener * depth + b"1" + (closer * depth if draw(st.booleans()) else b"")
    return draw(
        st.sampled_from(
            [inner, b'{"urls": [' + inner + b"]}", b'{"name": "d", "selectors": ' + inner + b"}"]
        )
    )


@st.composite
def source_forms(draw: st.DrawFn) -> bytes:
    form: dict[str, Any] = {"name": draw(st.text(min_size=1, max_size=30) | ODD_TEXT)}
    for key in draw(st.lists(st.sampled_from(SOURCE_KEYS), max_size=6)):
        form[key] = draw(JSON_VALUES)
    if draw(st.booleans()):  # a well-typed field holding an odd value
        key = draw(st.sampled_from(["min_published_at", "feed_url", "selectors"]))
        odd = draw(ODD_TEXT)
        form[key] = {"title": odd} if key == "selectors" else odd
    return json.dumps(form).encode()


def big_string() -> st.SearchStrategy[bytes]:
    return st.integers(1_000, 200_000).map(
        lambda n: b'{"urls": ["http://big.example/' + b"a" * n + b'"]}'
    )


JSON_BODIES = (
    source_forms()
    | deep()
    | big_string()
    | JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=2_000)
)
NDJSON_BODIES = st.lists(
    JSON_VALUES.map(json.dumps) | deep().map(lambda b: b.decode()), max_size=8
).map(lambda lines: "\n".join(lines).encode())
TEXT_BODIES = st.lists(st.text(max_size=80) | st.just("http://ok.example/\u0000"), max_size=20).map(
    lambda lines: "\n".join(lines).encode()
)


def assert_no_server_error(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fields"}


@pytest.fixture
def live(fresh_dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[str]:
    with caplog.at_level(logging.ERROR), live_server(fresh_dsn, tmp_path) as base:
        yield base
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


def test_fuzz_sources_bodies(live: str) -> None:
    with httpx.Client(base_url=live, headers=AUTH, timeout=60) as client:
        created = client.post("/api/v1/sources", json={"name": "fuzz-target"})
        assert created.status_code == 201, created.text
        target = created.json()["id"]

        @FUZZ
        @given(body=JSON_BODIES, patch=st.booleans(), token=st.booleans())
        def check(body: bytes, patch: bool, token: bool) -> None:
            headers = {"Content-Type": "application/json", **(AUTH if token else {})}
            if patch:
                response = client.patch(f"/api/v1/sources/{target}", content=body, headers=headers)
            else:
                response = client.post("/api/v1/sources", content=body, headers=headers)
            if not token:
                client.headers.pop("Authorization", None)
            assert_no_server_error(response)
            client.headers.update(AUTH)

        check()


def test_fuzz_import_bodies(live: str) -> None:
    with httpx.Client(base_url=live, headers=AUTH, timeout=60) as client:

        @FUZZ
        @given(
            kind=st.sampled_from(["application/json", "application/x-ndjson", "text/plain"]),
            data=st.data(),
        )
        def check(kind: str, data: st.DataObject) -> None:
            strategy = {
                "application/json": JSON_BODIES,
                "application/x-ndjson": NDJSON_BODIES,
                "text/plain": TEXT_BODIES,
            }[kind]
            body = data.draw(strategy)
            response = client.post("/api/v1/import", content=body, headers={"Content-Type": kind})
            assert_no_server_error(response)

        check()


def test_fuzz_fire_with_bodies_and_parameters(live: str) -> None:
    with httpx.Client(base_url=live, headers=AUTH, timeout=60) as client:
        manual = next(
            s["id"] for s in client.get("/api/v1/sources").json() if s["name"] == "manual"
        )

        @FUZZ
        @given(body=JSON_BODIES, dry_run=st.sampled_from(["true", "false", "x", "\u0000"]))
        def check(body: bytes, dry_run: str) -> None:
            response = client.post(
                f"/api/v1/sources/{manual}/fire", content=body, params={"dry_run": dry_run}
            )
            assert_no_server_error(response)  # "manual" has nothing to poll: 422

        check()
