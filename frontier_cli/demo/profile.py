"""The demo's settings, its data directory and its sources.

The demo never touches the operator's data: it runs on its own embedded PostgreSQL under
`FRONTIER_HOME/demo` (rebuilt at every start, kept after it stops so it can be inspected),
ignores `FRONTIER_DATABASE_URL` and `FRONTIER_ELASTICSEARCH_URL`, seeds no default source
(those would reach the internet) and registers only the demo sites. Settings are a copy of
the operator's with the demo's values; nothing global is changed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from frontier.db import Database
from frontier.settings import Settings
from frontier.source_schema import parse_config
from frontier.source_specs import ParsedSpecs, SpecImportSummary, import_specs
from frontier.sources import SourceRepository
from frontier_cli.demo import DemoBusy

DEMO_DIR = "demo"

DEMO_VALUES: dict[str, Any] = {
    "database_url": None,
    "elasticsearch_url": None,
    "sink": None,  # the demo's documents go to its own database's raw_content
    "sink_options": None,
    "sinks": None,
    "allow_private_networks": True,  # the demo sites live on loopback addresses
    "seed_default_sources": False,
    "default_delay_ms": 200,
    "poll_tick_s": 2.0,
    "up_spider_tick_s": 5.0,
    "up_progress_s": 10.0,
    "spider_max_pages": 50,
    "spider_timeout_s": 10.0,
    "fetch_timeout_s": 10.0,
    "fetch_shutdown_s": 5.0,
    "robots_retry_s": 10.0,
    "sink_retry_s": 5.0,
}


def demo_settings(settings: Settings) -> Settings:
    """The operator's settings with the demo's values (a copy)."""
    return settings.model_copy(update={**DEMO_VALUES, "home": settings.home / DEMO_DIR})


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user (the embedded server's)
        return True
    return True


def reset_home(home: Path) -> None:
    """Remove the previous demo's database so this run starts fresh; refuse while another
    demo's server still runs on it."""
    pgdata = home / "pgdata"
    pid_file = pgdata / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        pid = 0
    if pid and _running(pid):
        raise DemoBusy(f"another demo is running on {pgdata} (PostgreSQL pid {pid}): stop it first")
    shutil.rmtree(pgdata, ignore_errors=True)


async def register(db: Database, sources: Sequence[dict[str, Any]]) -> SpecImportSummary:
    """Add the demo sites as sources, through the same path as `frontier sources import`."""
    parsed = ParsedSpecs(specs=[(n, parse_config(raw)) for n, raw in enumerate(sources, start=1)])
    return await import_specs(SourceRepository(db), parsed)
