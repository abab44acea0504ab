"""The standard replay tool reads what the fetcher writes: pywb indexes a crawl's WARC files
(`wb-manager init` / `add`), its `wayback` server replays the archived article, and a
headless Chromium shows the article's headline from it (a screenshot is saved in the
test's directory, its path printed).

pywb runs from a virtual environment of its own, `make pywb`'s .venv-pywb (or the `bin`
directory FRONTIER_TEST_PYWB_BIN names): it requires brotlipy, whose `brotli` package would
shadow the runtime dependency Brotli's `brotli` module (another API) in the project's."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aiohttp
import pytest

from frontier.db import Database
from tests.browser import chromium_page, needs_chromium, unless_in_ci
from tests.conditions import wait_until
from tests.fetch_harness import article, fetcher_for, submit
from tests.integration.test_archive import crawl_until_idle, index
from tests.local_site import LocalSite
from tests.processes import REPO, free_port

HEADLINE = "Harbour reopens after the winter storm"


def pywb_bin() -> Path | None:
    for folder in (os.environ.get("FRONTIER_TEST_PYWB_BIN"), REPO / ".venv-pywb" / "bin"):
        if folder and (Path(folder) / "wb-manager").exists():
            return Path(folder)
    return None


PYWB = pywb_bin()
pytestmark = [
    needs_chromium,
    unless_in_ci(
        PYWB is None, reason="pywb is not installed (`make pywb`, or FRONTIER_TEST_PYWB_BIN)"
    ),
]


async def run(*args: str, cwd: Path) -> None:
    child = await asyncio.create_subprocess_exec(
        *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(child.communicate(), timeout=120)
    assert child.returncode == 0, out.decode(errors="replace")


async def test_pywb_replays_an_archived_article_in_chromium(
    db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    async_api = pytest.importorskip("playwright.async_api")
    assert PYWB is not None
    archive = tmp_path / "archive"
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    local_site.serve("/harbour", article(HEADLINE))
    url = local_site.url("/harbour")
    await submit(db, url)
    async with fetcher_for(db, archive_dir=archive) as fetcher:
        await crawl_until_idle(fetcher)
        await fetcher.close()  # the files sealed
    files = sorted(archive.glob("*.warc.gz"))
    records = index(files)
    assert any(  # the article is archived
        r.get("warc-target-uri") == url and r.get("http:status") == "200" for r in records
    )

    root = tmp_path / "pywb"
    root.mkdir()
    await run(str(PYWB / "wb-manager"), "init", "crawl", cwd=root)
    await run(str(PYWB / "wb-manager"), "add", "crawl", *map(str, files), cwd=root)
    port = free_port()
    log = tmp_path / "wayback.log"
    with log.open("wb") as out:
        wayback = await asyncio.create_subprocess_exec(
            str(PYWB / "wayback"),
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            cwd=root,
            stdout=out,
            stderr=out,
        )
    try:
        replay = f"http://127.0.0.1:{port}/crawl/2id_/{url}"  # the capture nearest year 2

        async def answers() -> bool:
            try:
                async with aiohttp.ClientSession() as session, session.get(replay) as resp:
                    return resp.status == 200
            except aiohttp.ClientError:
                return False

        await wait_until(answers, wayback, what="wayback answering", log=log)
        shot = tmp_path / "pywb-replay.png"
        async with (
            async_api.async_playwright() as playwright,
            chromium_page(playwright, tmp_path / "chromium-profile", width=1280) as page,
        ):
            await page.goto(f"http://127.0.0.1:{port}/crawl/{url}", wait_until="load")
            frame = page.frame_locator("iframe#replay_iframe")
            await frame.locator("h1").wait_for(timeout=30_000)
            assert await frame.locator("h1").inner_text() == HEADLINE
            assert HEADLINE in await frame.locator("body").inner_text()
            await page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
        assert len(local_site.hits("/harbour")) == 1  # replayed from the archive, not fetched
    finally:
        wayback.kill()
        await wayback.wait()
