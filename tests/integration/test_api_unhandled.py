"""An exception no handler takes: the API answers the 500 of its error shape itself, with
the security headers, and logs it once with one traceback (it does not hand the exception
on to the server, which would log a second one)."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from tests.integration.test_api import assert_error, make_settings


async def test_a_500_is_answered_and_logged_once(
    db: Database, fresh_dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(make_settings(fresh_dsn, tmp_path), db, fire=None)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("a bug")

    # raise_app_exceptions: an exception the app passes on fails the test here.
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=True)
    caplog.set_level(logging.ERROR)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/boom")
    assert_error(response, 500, "internal_error")
    assert response.headers["x-frame-options"] == "DENY"
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert [r.getMessage() for r in tracebacks] == ["unhandled error on GET /boom"]
