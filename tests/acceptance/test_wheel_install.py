"""The wheel, installed as a user installs it: built from a copy of the sources, installed
into a fresh venv with the pip that comes with Python (no upgrade; dependencies at the
versions of requirements.lock), and run from a directory outside the repository with no
PYTHONPATH, so everything it reads at run time must be inside the installed packages.

`frontier fetch --until-idle` then runs three ways: the PostgreSQL sink, Elasticsearch (the
stand-in), and an Elasticsearch address where nothing listens. The first two fetch the page;
the third stops with one line on standard error. None prints a traceback.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frontier.db import Database
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import article, submit
from tests.local_site import LocalSite
from tests.processes import REPO, free_port, frontier_env

DEADLINE_S = 120.0
# What the wheel needs; everything else in the repository stays behind.
LEFT_OUT = (
    ".git",
    ".venv*",
    ".ci",
    "tests",
    "bench",
    "docs",
    "deploy",
    ".frontier",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `frontier` command of a fresh venv holding only the wheel and its dependencies."""
    work = tmp_path_factory.mktemp("wheel")
    source, dist, venv = work / "source", work / "dist", work / "venv"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LEFT_OUT))
    pip = ["-m", "pip", "--quiet", "--disable-pip-version-check"]
    subprocess.run([sys.executable, *pip, "wheel", "--no-deps", "-w", dist, source], check=True)
    (wheel,) = dist.glob("frontier-*.whl")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)  # the stock pip
    # Without PYTHONPATH: a checkout on it (its frontier.egg-info) would count as installed.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [venv / "bin" / "python", *pip, "install", "-c", REPO / "requirements.lock", wheel],
        check=True,
        cwd=work,
        env=clean,
    )
    return venv / "bin" / "frontier"


async def fetch_until_idle(frontier: Path, dsn: str, cwd: Path, **env: str) -> tuple[int, str, str]:
    child_env = {k: v for k, v in frontier_env(dsn, **env).items() if k != "PYTHONPATH"}
    process = await asyncio.create_subprocess_exec(
        frontier,
        "fetch",
        "--until-idle",
        env=child_env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), DEADLINE_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    print(out.decode(), err.decode(), sep="\n")
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def page(db: Database, local_site: LocalSite) -> str:
    url = local_site.url("/story")
    local_site.serve("/story", article("Installed from the wheel"))
    await submit(db, url)
    return url


async def test_the_wheel_fetches_into_postgresql(
    installed: Path, fresh_dsn: str, db: Database, page: str, tmp_path: Path
) -> None:
    code, out, err = await fetch_until_idle(
        installed, fresh_dsn, tmp_path, FRONTIER_HOME=str(tmp_path / "home")
    )
    assert (code, "Traceback" in err) == (0, False), err
    assert out.startswith("fetch: 1 pages")
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_the_wheel_fetches_into_elasticsearch(
    installed: Path, fresh_dsn: str, db: Database, page: str, tmp_path: Path
) -> None:
    standin = await ElasticsearchStandIn().start()
    try:
        code, out, err = await fetch_until_idle(
            installed,
            fresh_dsn,
            tmp_path,
            FRONTIER_ELASTICSEARCH_URL=standin.url,
            FRONTIER_ELASTICSEARCH_FLUSH_MS="20",
            FRONTIER_HOME=str(tmp_path / "home"),
        )
    finally:
        await standin.stop()
    assert (code, "Traceback" in err) == (0, False), err
    assert out.startswith("fetch: 1 pages")
    assert standin.rejected_requests == []  # the mapping shipped in the wheel, as created
    assert [doc["url"] for doc in standin.indices["raw_content"].values()] == [page]
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0


async def test_the_wheel_says_in_one_line_that_elasticsearch_is_unreachable(
    installed: Path, fresh_dsn: str, db: Database, page: str, tmp_path: Path
) -> None:
    nothing = f"http://127.0.0.1:{free_port()}"
    code, out, err = await fetch_until_idle(
        installed,
        fresh_dsn,
        tmp_path,
        FRONTIER_ELASTICSEARCH_URL=nothing,
        FRONTIER_HOME=str(tmp_path / "home"),
    )
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("frontier: Elasticsearch"), err
    assert (
        await db.fetchval("SELECT status::text FROM url_frontier WHERE url = $1", page) == "pending"
    )


def test_the_installed_packages_hold_what_they_read(installed: Path) -> None:
    """The mapping, the SQL, the templates and the migrations come from site-packages."""
    python = installed.parent / "python"
    code = (
        "import frontier.sinks.elasticsearch as es, frontier.sql, migrations, sys; "
        "print(es.load_index_definition()['mappings']['dynamic']); "
        "print(frontier.sql.__file__); print(migrations.__file__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [python, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=installed.parent,
    )
    dynamic, *files = result.stdout.split()
    assert dynamic == "strict"
    assert all("site-packages" in f and str(REPO) not in f for f in files), files
