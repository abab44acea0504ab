"""The aiohttp versions the safe client accepts, and the resolver seam it checks: pure logic,
with faked version strings and faked aiohttp classes."""

from __future__ import annotations

import logging
import re
import socket
import tomllib

import aiohttp
import pytest

from frontier.safe_http import aiohttp_support
from frontier.safe_http.aiohttp_support import (
    TESTED_FROM,
    UnsupportedAiohttp,
    check_aiohttp,
    judge_version,
    seam_problems,
)
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from tests.processes import REPO


@pytest.mark.parametrize("version", ["3.11.11", "3.11.12", "3.12.0", "3.14.5", "3.14.99"])
def test_a_version_in_the_tested_range_passes(version: str) -> None:
    assert judge_version(version) is None


@pytest.mark.parametrize("version", ["3.15.0", "3.15.0rc1", "3.99.1.dev0"])
def test_a_newer_minor_of_the_tested_major_is_a_warning(version: str) -> None:
    warning = judge_version(version)
    assert warning is not None
    assert f"aiohttp {version} is newer" in warning and "3.11.11 to 3.14.x" in warning


@pytest.mark.parametrize("version", ["3.11.10", "3.10.11", "2.3.10", "4.0.0", "4.0.0a1"])
def test_an_older_version_or_a_newer_major_is_refused(version: str) -> None:
    with pytest.raises(UnsupportedAiohttp) as refused:
        judge_version(version)
    assert f"aiohttp {version} is installed" in str(refused.value)
    assert "tested with aiohttp 3.11.11 to 3.14.x" in str(refused.value)


def test_a_version_that_cannot_be_read_is_refused() -> None:
    with pytest.raises(UnsupportedAiohttp, match=r"'unknown': cannot read its version"):
        judge_version("unknown")


def test_the_check_logs_a_newer_minor_and_raises_on_an_older_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=aiohttp_support.__name__):
        check_aiohttp("3.15.2")
        check_aiohttp("3.14.5")
    assert [r.getMessage()[:29] for r in caplog.records] == ["aiohttp 3.15.2 is newer than "]
    with pytest.raises(UnsupportedAiohttp):
        check_aiohttp("3.10.5")


def test_a_client_is_not_built_on_an_aiohttp_it_was_not_tested_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(aiohttp, "__version__", "4.0.0")
    with pytest.raises(UnsupportedAiohttp, match=r"aiohttp 4\.0\.0 is installed"):
        SafeClient(HttpLimits("frontier-test/1.0"))


def test_the_installed_aiohttp_is_in_the_tested_range() -> None:
    """Fails when aiohttp is upgraded past TESTED_THROUGH: run the tests on it, then raise it."""
    assert judge_version(aiohttp.__version__) is None
    assert seam_problems() == []


def test_the_tested_floor_is_the_floor_pyproject_declares() -> None:
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (floor,) = [m[1] for d in dependencies if (m := re.match(r"aiohttp>=([\d.]+)", d))]
    assert tuple(int(part) for part in floor.split(".")) == TESTED_FROM


class MovedResolver:
    """A resolver ABC as a later aiohttp might have it: `resolve` takes another parameter,
    `close` is gone."""

    async def resolve(
        self, host: str, port: int = 0, family: int = socket.AF_INET, flags: int = 0
    ) -> list[object]:
        return []


class NoHost(dict[str, object]):
    __annotations__ = {"hostname": str, "address": str}


def test_a_resolver_seam_that_moved_is_named() -> None:
    def connector(limit: int = 100) -> None:
        pass

    assert seam_problems(MovedResolver, connector, NoHost) == [
        "MovedResolver.resolve(self, host, port, family, flags), written for "
        "(self, host, port, family)",
        "MovedResolver.close is gone",
        "test_a_resolver_seam_that_moved_is_named.<locals>.connector takes no `resolver`",
        "NoHost has no `host`",
    ]
