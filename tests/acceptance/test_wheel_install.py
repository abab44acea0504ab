"""The wheel, installed as a user installs it: built from a copy of the sources, installed
into a fresh venv with the pip that comes with Python (no upgrade; dependencies at the
versions of requirements.lock), and run from a directory outside the repository with no
PYTHONPATH, so everything it reads at run time must be inside the installed packages.

`frontier fetch --until-idle` then runs three ways: the PostgreSQL sink, Elasticsearch (the
stand-in), and an Elasticsearch address where nothing listens. The first two fetch the page;
the third stops with one line on standard error. None prints a traceback.

The wheel holds every file of the packages' folders that is not Python (templates, static
files, SQL, ...), and the installed `frontier serve` renders every dashboard page in
Debian's headless Chromium: a 200 and the page's heading, and no traceback in its log.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from playwright.async_api import async_playwright

from frontier.db import Database
from frontier.urls import normalize_url, url_hash
from tests.browser import chromium_page, needs_chromium
from tests.conditions import wait_until
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


PACKAGES = ("frontier", "frontier_cli", "poller", "fetcher", "spider", "migrations")
PIP = ["-m", "pip", "--quiet", "--disable-pip-version-check"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built as `pip wheel .` builds it from a copy of the sources."""
    work = tmp_path_factory.mktemp("wheel")
    source, dist = work / "source", work / "dist"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LEFT_OUT))
    subprocess.run([sys.executable, *PIP, "wheel", "--no-deps", "-w", dist, source], check=True)
    (built,) = dist.glob("frontier-*.whl")
    return built


def test_the_wheel_holds_every_file_the_packages_read(wheel: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    data = {path for path in tracked if not path.endswith(".py")}
    assert data >= {"frontier/api/templates/pages/macros.html", "frontier/api/static/pages.css"}
    assert data - set(zipfile.ZipFile(wheel).namelist()) == set()


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `frontier` command of a fresh venv holding only the wheel and its dependencies."""
    work = tmp_path_factory.mktemp("venv")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)  # the stock pip
    # Without PYTHONPATH: a checkout on it (its frontier.egg-info) would count as installed.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [venv / "bin" / "python", *PIP, "install", "-c", REPO / "requirements.lock", wheel],
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


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@needs_chromium
async def test_the_installed_dashboard_renders_every_page(
    installed: Path, fresh_dsn: str, db: Database, page: str, tmp_path: Path
) -> None:
    home = str(tmp_path / "home")
    code, _, err = await fetch_until_idle(installed, fresh_dsn, tmp_path, FRONTIER_HOME=home)
    assert code == 0, err
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    key = url_hash(normalize_url(page))
    host = urlsplit(page).netloc
    pages = {
        "/": "frontier",
        "/documents": "Recent articles",
        f"/documents/{key}": "Installed from the wheel",
        f"/urls/{key}": "URL",
        f"/hosts/{quote(host, safe='')}": f"Host {host}",
        "/sources/manual": "Source manual",
        "/login": "Log in to the dashboard",
    }
    env = frontier_env(fresh_dsn, FRONTIER_HOME=home)
    env.pop("PYTHONPATH", None)  # the installed code only
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        server = await asyncio.create_subprocess_exec(
            installed, "serve", "--port", str(port), env=env, cwd=tmp_path, stdout=log, stderr=log
        )
        try:
            await wait_until(
                lambda: listening(port), server, deadline_s=DEADLINE_S, what="serve", log=log_path
            )
            async with (
                async_playwright() as playwright,
                chromium_page(playwright, tmp_path / "chromium-profile") as browser_page,
            ):
                for path, heading in pages.items():
                    response = await browser_page.goto(base + path)
                    assert response is not None and response.status == 200, path
                    headings = await browser_page.locator("h1, h2").all_inner_texts()
                    assert any(h.startswith(heading) for h in headings), (path, headings)
                    await browser_page.screenshot(path=str(tmp_path / f"page{len(path)}.png"))
                stylesheet = await browser_page.goto(f"{base}/static/pages.css")
                assert stylesheet is not None and stylesheet.status == 200
        finally:
            server.terminate()
            await server.wait()
    served = log_path.read_text(errors="replace")
    print(served)
    assert "Traceback" not in served
