"""Issue 34, item 10: the fetcher's container health check tests that the worker is alive
(its heartbeat file, fetcher/heartbeat.py), not only that PostgreSQL answers. The file's
age is judged against a pinned clock; the database half is left out (check_database is
replaced by a stand-in answer: it is tested where a real PostgreSQL runs, the smoke)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

from fetcher import heartbeat
from fetcher.heartbeat import BEAT_EVERY_S, STALE_AFTER_S, Heartbeat

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def healthcheck(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("healthcheck", ROOT / "deploy/healthcheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "check_database", lambda: "PostgreSQL reachable")
    return module


def test_the_health_check_and_the_fetcher_agree_on_staleness(healthcheck: ModuleType) -> None:
    assert healthcheck.HEARTBEAT_STALE_S == STALE_AFTER_S
    assert STALE_AFTER_S > 2 * BEAT_EVERY_S


def test_a_fetcher_is_healthy_only_while_its_heartbeat_is_fresh(
    healthcheck: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beat = tmp_path / "beat"
    monkeypatch.setenv("FRONTIER_FETCH_HEARTBEAT_FILE", str(beat))
    fetch = ["frontier", "fetch", "--workers", "20"]
    with pytest.raises(RuntimeError, match="no heartbeat yet"):
        healthcheck.check(fetch, 1_000.0)
    beat.touch()
    os.utime(beat, (1_000.0, 1_000.0))
    assert "heartbeat 30 s old" in healthcheck.check(fetch, 1_030.0)
    with pytest.raises(RuntimeError, match="stopped going round"):
        healthcheck.check(fetch, 1_000.0 + STALE_AFTER_S + 1)
    # the other workers are judged by the database alone
    assert healthcheck.check(["frontier", "poll"], 1_000.0 + STALE_AFTER_S + 1) == (
        "PostgreSQL reachable"
    )


def test_without_a_heartbeat_file_the_database_decides(
    healthcheck: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FRONTIER_FETCH_HEARTBEAT_FILE", raising=False)
    assert "unset" in healthcheck.check(["frontier", "fetch"], 0.0)


def test_the_heartbeat_touches_its_file_at_most_every_beat(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    pulse = Heartbeat(beat)
    pulse.beat(100.0)
    assert beat.exists()
    os.utime(beat, (1.0, 1.0))
    pulse.beat(100.0 + BEAT_EVERY_S / 2)  # too soon: untouched
    assert beat.stat().st_mtime == 1.0
    pulse.beat(100.0 + BEAT_EVERY_S)
    assert beat.stat().st_mtime > 1.0


def test_a_heartbeat_that_cannot_be_written_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pulse = Heartbeat(tmp_path / "missing-directory" / "beat")
    with caplog.at_level("WARNING", logger=heartbeat.__name__):
        pulse.beat(0.0)
        pulse.beat(BEAT_EVERY_S)
    assert len(caplog.records) == 1 and "cannot be touched" in caplog.records[0].message
