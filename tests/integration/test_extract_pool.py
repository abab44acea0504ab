"""Extraction in worker processes (issue 15, item 3): pages are parsed in the pool's
processes, not the fetch process; a worker killed with a page loses nothing; a page that
kills its worker every time ends `failed` with the reason, and so does a page over the
time or memory limit (issue 35, item 2), and the pages behind it do not wait for it;
0 processes extracts in-process.
Real local sites (one host per loopback address: a batch claims one URL per host), the
real queue and the PostgreSQL sink."""

from __future__ import annotations

import asyncio
import ctypes.util
import hashlib
import math
import os
import pickle
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from bench.hostile_documents import line_breaks
from fetcher.allocators import preload_for
from fetcher.config import FetcherConfig, usable_cores
from fetcher.extract_job import Extraction, ExtractionOverLimit
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.service import extraction_for
from frontier.db import Database
from frontier.settings import Settings, SettingsError
from tests import pool_jobs
from tests.conditions import wait_until
from tests.fetch_harness import article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite, running_site
from tests.processes import frontier_env, frontier_output, frontier_process

HOSTS = 6


@asynccontextmanager
async def sites(paths: list[str]) -> AsyncIterator[list[str]]:
    """One site per loopback address, each serving an article at each of `paths`;
    yields every URL."""
    async with AsyncExitStack() as stack:
        urls = []
        for i in range(HOSTS):
            site: LocalSite = await stack.enter_async_context(running_site(f"127.0.0.{20 + i}"))
            for path in paths:
                site.serve(path, article(f"Story {i}{path.replace('/', ' ')}"))
                urls.append(site.url(path))
        yield urls


@pytest.fixture
def markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The directory `pool_jobs` keeps its markers in, named to the workers."""
    monkeypatch.setenv(pool_jobs.MARKERS, str(tmp_path))
    return tmp_path


@pytest.fixture
def gate(markers: Path) -> Iterator[pool_jobs.Gate]:
    """Closed: each page of `pool_jobs.gated` waits until the test opens it."""
    gate = pool_jobs.Gate(markers)
    yield gate
    gate.close()


async def stored_titles(db: Database) -> list[str]:
    return [r["title"] for r in await db.fetch("SELECT title FROM raw_content ORDER BY title")]


async def run_all(db: Database, extraction: ExtractionPool | InProcessExtraction) -> None:
    async with fetcher_for(db, extraction=extraction, concurrency=HOSTS) as fetcher:
        while (await fetcher.run_once()).claimed:
            pass


async def test_pages_are_extracted_in_the_pool_workers(db: Database) -> None:
    pool = ExtractionPool(2, job=pool_jobs.tagged)
    assert pool.worker_pids() == set()  # started with the first page, not before
    try:
        async with sites(["/a", "/b"]) as urls:
            await submit(db, *urls)
            await run_all(db, pool)
        workers = pool.worker_pids()
    finally:
        pool.close()
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]  # exited, reaped
    titles = await stored_titles(db)
    assert len(titles) == len(urls) == 2 * HOSTS
    pids = {pool_jobs.pid_in(t) for t in titles}
    assert os.getpid() not in pids and pids <= workers and len(workers) == 2
    row = await frontier_row(db, urls[0])
    assert row["status"] == "fetched" and row["content_hash"]
    body = await db.fetchval("SELECT body FROM raw_content WHERE url_hash = $1", row["url_hash"])
    assert "Story 0 a paragraph 3: the news of the day" in body


async def test_a_worker_killed_with_a_page_loses_nothing(db: Database, markers: Path) -> None:
    pool = ExtractionPool(2, job=pool_jobs.crashing)
    try:
        async with sites(["/a", "/crash-once"]) as urls:
            await submit(db, *urls)
            await run_all(db, pool)
    finally:
        pool.close()
    assert pool.replaced == 1  # the first /crash-once page killed a worker, once
    assert len(list(markers.iterdir())) == 1  # one marker: the path is the same per host
    titles = await stored_titles(db)
    assert len(titles) == len(urls)
    statuses = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
    assert {r["status"]: r["count"] for r in statuses} == {"fetched": len(urls)}
    logged = await db.fetch("SELECT outcome FROM fetch_log WHERE kind = 'page'")
    assert [r["outcome"] for r in logged] == ["ok"] * len(urls)


async def test_a_page_that_kills_its_worker_every_time_fails_with_the_reason(
    db: Database,
) -> None:
    pool = ExtractionPool(2, job=pool_jobs.crashing)
    try:
        async with sites(["/a"]) as urls, running_site("127.0.0.30") as bad:
            bad.serve("/poison", article("Poison"))
            await submit(db, *urls, bad.url("/poison"))
            await run_all(db, pool)
            poison = await frontier_row(db, bad.url("/poison"))
            assert len(bad.hits("/poison")) == 1  # failed, not fetched again
    finally:
        pool.close()
    assert poison["status"] == "failed"
    assert "extraction crashed: the page killed the extraction process" in poison["last_error"]
    assert len(await stored_titles(db)) == len(urls)  # the pages in flight with it survive


@pytest.mark.parametrize(
    ("limits", "mib", "reason"),
    [
        ({"timeout_s": 2, "memory_mb": 4096}, 2, "over the 2 s time limit"),
        # a worker maps about 70 MiB once warmed up: the page must reach the cap well
        # within the (default) time limit, whatever else runs on the machine
        ({"memory_mb": 448}, 3, "over the 448 MiB memory limit"),
    ],
    ids=["time", "memory"],
)
async def test_a_page_over_a_limit_fails_with_the_reason_and_its_batch_is_stored(
    db: Database, limits: dict[str, int], mib: int, reason: str
) -> None:
    pool = ExtractionPool(1, job=pool_jobs.tagged, **limits)
    try:
        async with sites(["/a"]) as urls, running_site("127.0.0.30") as bad:
            bad.serve("/br", line_breaks(mib))
            await submit(db, bad.url("/br"), *urls)
            fetching = fetcher_for(db, extraction=pool, concurrency=HOSTS, max_body_bytes=2**22)
            async with fetching as fetcher:
                while (await fetcher.run_once()).claimed:
                    pass
            hostile = await frontier_row(db, bad.url("/br"))
            assert len(bad.hits("/br")) == 1  # failed, not fetched again
        after = await pool.extract(*page("/after"))
        workers = pool.worker_pids()
    finally:
        pool.close()
    assert hostile["status"] == "failed"
    assert hostile["last_error"] == f"extraction failed: {reason}"
    assert len(await stored_titles(db)) == len(urls)  # the pages of its batch
    assert pool.replaced == 1  # the worker over the limit, once
    assert pool_jobs.pid_in(str(after.extracted.title)) in workers


async def test_in_process_a_page_over_the_time_limit_fails_and_the_next_has_its_own(
    markers: Path, gate: pool_jobs.Gate
) -> None:
    extraction = InProcessExtraction(job=pool_jobs.gated, timeout_s=1)
    try:
        held = asyncio.ensure_future(extraction.extract(*page("/held")))
        behind = asyncio.ensure_future(extraction.extract(*page("/behind")))
        with pytest.raises(ExtractionOverLimit, match=r"^over the 1 s time limit$"):
            await held
        # A thread cannot be stopped: the page behind waits for the parse to end...
        assert not behind.done() and pool_jobs.started(markers) == {os.getpid(): {"held"}}
        gate.open()
        # ... and its time counts from its turn, not from the wait.
        assert untagged(await behind) == "Page /behind"
    finally:
        extraction.close()


async def test_pages_behind_a_hostile_page_do_not_wait_for_it() -> None:
    """A page that never ends (`pool_jobs.stalling`, as a `<br>` page of a few MiB takes
    seconds to minutes: the test does not hang on how fast this machine parses one) goes
    first to a pool of one worker, four articles after it: three are queued on the worker
    behind it (PAGES_PER_WORKER), the fourth waits for a slot. Every article is extracted
    while the hostile page is still on its worker, before its time-out, once, by the worker
    that took the place of its own, set aside."""
    pool = ExtractionPool(1, job=pool_jobs.stalling, timeout_s=10)
    try:
        hostile = asyncio.ensure_future(pool.extract(*page("/stall")))
        await wait_until(lambda: pool.in_flight == 1, what="the hostile page on the worker")
        [first] = pool.worker_pids()
        paths = [f"/p{i}" for i in range(4)]
        done = await asyncio.gather(*(pool.extract(*page(p)) for p in paths))
        assert not hostile.done()  # the articles did not wait for its end
        with pytest.raises(ExtractionOverLimit, match=r"^over the 10 s time limit$"):
            await hostile
        workers = pool.worker_pids()
    finally:
        pool.close()
    assert [untagged(d) for d in done] == [f"Page {p}" for p in paths]
    by = {pool_jobs.pid_in(str(d.extracted.title)) for d in done}
    assert first not in by and by == workers  # the worker in its place, not one alone
    assert pool.set_aside == 1 and pool.replaced == 1


async def test_more_hostile_pages_than_workers_hold_no_page_behind_them() -> None:
    """Three pages that never end (`pool_jobs.stalling`) go first to a pool of two workers
    (one queued behind another), then four articles. Two workers are set aside with their
    hostile pages and replaced; the third hostile page sets its new worker aside without a
    replacement (the pool stays within twice its processes), and what was queued behind it
    goes to the last worker. Every article is extracted before any hostile page ends."""
    pool = ExtractionPool(2, job=pool_jobs.stalling, timeout_s=10)
    try:
        hostile = [asyncio.ensure_future(pool.extract(*page(f"/stall{i}"))) for i in range(3)]
        await wait_until(lambda: pool.in_flight == 3, what="the hostile pages on the workers")
        paths = [f"/p{i}" for i in range(4)]
        done = await asyncio.gather(*(pool.extract(*page(p)) for p in paths))
        assert not any(h.done() for h in hostile)  # the articles did not wait for them
        for ended in await asyncio.gather(*hostile, return_exceptions=True):
            assert isinstance(ended, ExtractionOverLimit)
    finally:
        pool.close()
    assert [untagged(d) for d in done] == [f"Page {p}" for p in paths]
    assert pool.set_aside == 3


def page(path: str) -> tuple[bytes, str, str, None, None]:
    """`extract`'s arguments for an article at `path`, titled after it."""
    return article(f"Page {path}").encode(), "text/html", f"http://127.0.0.20{path}", None, None


def untagged(done: Extraction) -> str:
    """The title of a page that a `pool_jobs` job extracted, without its pid."""
    return str(done.extracted.title).split(" [pid ")[0]


async def test_a_worker_killed_affects_only_its_own_pages(
    markers: Path, gate: pool_jobs.Gate
) -> None:
    pool = ExtractionPool(2, job=pool_jobs.gated, slow_page_s=math.inf)  # held on purpose
    try:
        paths = [f"/p{i}" for i in range(4)]
        pages = [asyncio.ensure_future(pool.extract(*page(p))) for p in paths]

        def one_in_each() -> dict[int, set[str]]:
            started = pool_jobs.started(markers)
            return started if len(started) == 2 else {}

        started = await wait_until(one_in_each, what="a page being parsed in each worker")
        assert pool.in_flight == 4  # and one more waiting in each worker's pipe
        victim, survivor = started
        os.kill(victim, signal.SIGKILL)
        await wait_until(lambda: pool.replaced == 1, what="the dead worker replaced")
        gate.open()
        done = dict(zip(paths, await asyncio.gather(*pages), strict=True))
        workers = pool.worker_pids()
    finally:
        pool.close()
    assert [untagged(d) for d in done.values()] == [f"Page {p}" for p in paths]
    by = {path: pool_jobs.pid_in(str(d.extracted.title)) for path, d in done.items()}
    on_survivor = {path for path, pid in by.items() if pid == survivor}
    retried = set(paths) - on_survivor
    assert len(on_survivor) == 2 and started[survivor] <= {p[1:] for p in on_survivor}
    assert started[victim] <= {p[1:] for p in retried}  # the page it was parsing, and the next
    assert survivor in workers and victim not in workers and len(workers) == 2
    # Extracted again alone, in a process of their own: neither worker of the pool.
    assert not {by[p] for p in retried} & (workers | {victim})
    assert pool.replaced == 1


async def test_a_worker_collects_again_once_warm_with_its_parsers_frozen() -> None:
    """A worker imports and warms up with the collector off, then freezes what that built
    (the parsers, their tables, the language model: they live as long as it does) and
    collects again: its passes no longer walk them (bench/RESULTS.md, ninth session)."""
    pool = ExtractionPool(1, job=pool_jobs.collector_state)
    try:
        done = await pool.extract(*page("/collector"))
    finally:
        pool.close()
    _, enabled, _, frozen = str(done.extracted.title).split()
    assert enabled == "True"
    assert int(frozen) > 10_000  # the imports' objects, at least


async def test_a_worker_killed_while_idle_is_replaced_for_the_next_page() -> None:
    pool = ExtractionPool(1, job=pool_jobs.tagged)
    try:
        await pool.extract(*page("/first"))
        [victim] = pool.worker_pids()
        os.kill(victim, signal.SIGKILL)
        await wait_until(lambda: not pool.worker_pids(), what="its death seen")
        assert pool.replaced == 0  # not before a page needs it
        done = await pool.extract(*page("/second"))
        [worker] = pool.worker_pids()
    finally:
        pool.close()
    assert pool_jobs.pid_in(str(done.extracted.title)) == worker != victim
    assert pool.replaced == 1


async def test_an_exception_of_the_job_reaches_the_caller_and_the_worker_serves_on() -> None:
    pool = ExtractionPool(1, job=pool_jobs.failing)
    try:
        with pytest.raises(pool_jobs.PageRefused, match=r"no article at .*/fail") as raised:
            await pool.extract(*page("/fail"))
        assert "raise PageRefused" in str(raised.value.__cause__)  # where, in the worker
        [worker] = pool.worker_pids()
        fine = await pool.extract(*page("/fine"))
        assert pool.worker_pids() == {worker} and pool.replaced == 0
    finally:
        pool.close()
    assert fine.extracted.title == f"Page /fine [pid {worker}]"


async def test_a_cancelled_page_leaves_the_pipe_in_step(
    markers: Path, gate: pool_jobs.Gate
) -> None:
    pool = ExtractionPool(1, job=pool_jobs.gated, slow_page_s=math.inf)  # held on purpose
    try:
        cancelled = asyncio.ensure_future(pool.extract(*page("/cancelled")))
        await wait_until(lambda: pool_jobs.started(markers), what="the page being parsed")
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert pool.in_flight == 1  # its worker is still on it: its slot is taken
        following = asyncio.ensure_future(pool.extract(*page("/following")))
        await wait_until(lambda: pool.in_flight == 2, what="the next page behind it")
        gate.open()
        # The cancelled page's answer came first, and was dropped.
        assert untagged(await following) == "Page /following"
        assert pool.in_flight == 0  # both slots free again
        again = await asyncio.gather(*(pool.extract(*page(f"/again{i}")) for i in range(3)))
        assert [untagged(d) for d in again] == [f"Page /again{i}" for i in range(3)]
        assert pool.replaced == 0
    finally:
        pool.close()


async def test_a_page_that_cannot_be_handed_over_gives_its_slot_back() -> None:
    pool = ExtractionPool(1, job=pool_jobs.tagged)
    try:
        for _ in range(3):  # more than the worker's slots
            with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
                unpicklable = pool.extract(b"<p>x</p>", None, "http://a.example/", lambda: 0, None)
                await asyncio.wait_for(unpicklable, timeout=30)
        assert pool.in_flight == 0
        done = await asyncio.wait_for(pool.extract(*page("/after")), timeout=30)
    finally:
        pool.close()
    assert untagged(done) == "Page /after"


async def test_a_body_of_several_mib_goes_there_and_back() -> None:
    bodies = [
        b"".join(b"word%07d %d " % (i, n) for i in range(400_000)) for n in range(2)
    ]  # 5.8 MiB each, two in flight at once on the one worker
    assert len(bodies[0]) > 5 * 2**20
    pool = ExtractionPool(1, job=pool_jobs.echoed)
    try:
        done = await asyncio.gather(
            *(
                pool.extract(b, "text/plain", f"http://127.0.0.20/{n}", None, None)
                for n, b in enumerate(bodies)
            )
        )
    finally:
        pool.close()
    for body, result in zip(bodies, done, strict=True):
        assert result.content_hash == hashlib.sha256(body).hexdigest()
        assert result.word_count == len(body) and result.extracted.body == body.decode()


TCMALLOC = preload_for("auto")  # make installs it (Debian's libtcmalloc-minimal4)
needs_tcmalloc = pytest.mark.skipif(TCMALLOC is None, reason="tcmalloc is not installed")


def mapped(pid: int) -> str:
    """The files process `pid` has mapped (its shared libraries among them)."""
    return Path(f"/proc/{pid}/maps").read_text()


@needs_tcmalloc
async def test_workers_run_on_the_allocator_given_and_the_fetch_process_does_not() -> None:
    assert TCMALLOC is not None
    on_tcmalloc = ExtractionPool(1, job=pool_jobs.tagged, preload=TCMALLOC)
    on_libc = ExtractionPool(1, job=pool_jobs.tagged)
    try:
        done = [await pool.extract(*page("/a")) for pool in (on_tcmalloc, on_libc)]
        [preloaded], [plain] = on_tcmalloc.worker_pids(), on_libc.worker_pids()
        assert "libtcmalloc_minimal" in mapped(preloaded)
        assert "libtcmalloc_minimal" not in mapped(plain)
    finally:
        on_tcmalloc.close()
        on_libc.close()
    assert "libtcmalloc_minimal" not in mapped(os.getpid())  # for the workers alone
    assert [untagged(d) for d in done] == ["Page /a", "Page /a"]


def test_the_allocator_setting_auto_system_or_a_library(tmp_path: Path) -> None:
    assert preload_for("system") is None
    found = ctypes.util.find_library("tcmalloc_minimal")
    assert preload_for("auto") == found  # None where the system has no tcmalloc
    library = tmp_path / "libfast.so"
    library.touch()
    assert preload_for(str(library)) == str(library)
    assert Settings.load(extract_allocator=str(library), _env_file=None).extract_allocator
    config = FetcherConfig.from_settings(Settings.load(extract_allocator="system", _env_file=None))
    assert config.extract_preload is None
    with pytest.raises(SettingsError, match=r"FRONTIER_EXTRACT_ALLOCATOR.*no such file"):
        Settings.load(extract_allocator="/nowhere/libfast.so", _env_file=None)
    with pytest.raises(SettingsError, match="FRONTIER_EXTRACT_ALLOCATOR"):
        Settings.load(extract_allocator="tcmalloc", _env_file=None)  # a name, not a path


async def test_zero_processes_extracts_in_the_fetch_process(db: Database) -> None:
    config = FetcherConfig.from_settings(Settings.load(extract_processes=0, _env_file=None))
    assert config.extract_processes == 0
    assert isinstance(extraction_for(config), InProcessExtraction)
    async with sites(["/a"]) as urls:
        await submit(db, *urls)
        await run_all(db, InProcessExtraction(job=pool_jobs.tagged))
    titles = await stored_titles(db)
    assert len(titles) == HOSTS and {pool_jobs.pid_in(t) for t in titles} == {os.getpid()}


def test_the_limits_are_settings_handed_to_the_pool() -> None:
    config = FetcherConfig.from_settings(Settings.load(_env_file=None))
    assert (config.extract_timeout_s, config.extract_memory_mb) == (30, 1024)
    settings = Settings.load(extract_timeout_s=5, extract_memory_mb=2048, _env_file=None)
    config = FetcherConfig.from_settings(settings, extract_processes=1)
    assert (config.extract_timeout_s, config.extract_memory_mb) == (5, 2048)
    pool = extraction_for(config)
    try:
        assert isinstance(pool, ExtractionPool)
        assert (pool.timeout_s, pool.memory_mb) == (5, 2048)
    finally:
        pool.close()
    in_process = extraction_for(replace(config, extract_processes=0))
    assert isinstance(in_process, InProcessExtraction) and in_process.timeout_s == 5
    with pytest.raises(SettingsError, match="FRONTIER_EXTRACT_MEMORY_MB"):
        Settings.load(extract_memory_mb=100, _env_file=None)  # a worker needs more to start
    with pytest.raises(SettingsError, match="FRONTIER_EXTRACT_TIMEOUT_S"):
        Settings.load(extract_timeout_s=0, _env_file=None)


def test_the_default_is_one_process_per_usable_core() -> None:
    config = FetcherConfig.from_settings(Settings.load(_env_file=None))
    assert config.extract_processes == usable_cores() == len(os.sched_getaffinity(0))
    pool = extraction_for(config)
    try:
        assert isinstance(pool, ExtractionPool) and pool.processes == usable_cores()
    finally:
        pool.close()
    off = FetcherConfig.from_settings(Settings.load(_env_file=None), extract=False)
    assert isinstance(extraction_for(off), InProcessExtraction)  # nothing to extract


def children(pid: int) -> set[int]:
    """The live extraction workers of `pid` (zombies left to a reaper are not alive; the
    parse pool's fork server and multiprocessing's resource tracker are children too, and
    not among them)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found |= {int(c) for c in task.read_text().split()}
    return {c for c in found if _alive(c) and b"fetcher.extract_worker" in _cmdline(c)}


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_sigterm_stops_the_pool_with_the_fetch_process(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    async with sites(["/a"]) as urls:
        await submit(db, *urls)
        async with frontier_process(
            fresh_dsn, tmp_path, "fetch", FRONTIER_EXTRACT_PROCESSES="2"
        ) as child:

            async def fetched() -> bool:
                return bool(await db.fetchval("SELECT count(*) FROM raw_content"))

            workers = await wait_until(
                lambda: len(children(child.pid)) >= 2 and children(child.pid),
                child,
                what="the pool's workers",
            )
            await wait_until(fetched, child, what="a page stored")
            if TCMALLOC:  # the default allocator, where the system has it
                assert all("libtcmalloc_minimal" in mapped(w) for w in workers)
            assert "libtcmalloc_minimal" not in mapped(child.pid)
            child.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(child.wait(), 60)
    assert code == 0
    await wait_until(lambda: not any(_alive(w) for w in workers), what="the workers' exit")


async def test_until_idle_ends_with_its_workers(db: Database, fresh_dsn: str) -> None:
    async with sites(["/a"]) as urls:
        await submit(db, *urls)
        code, out, err = await frontier_output(
            "fetch", "--until-idle", "--extract-processes", "2", env=frontier_env(fresh_dsn)
        )
    assert code == 0, err
    assert f"fetch: {HOSTS} pages (fetched {HOSTS})" in out
    assert len(await stored_titles(db)) == HOSTS
    # Its workers carry the environment, DSN included.
    await wait_until(lambda: not processes_with(fresh_dsn), what="every child's exit")


def processes_with(text: str) -> list[Path]:
    """The live processes whose environment holds `text`."""
    return [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _alive(int(p.name)) and text.encode() in _environ(p)
    ]


def _environ(process: Path) -> bytes:
    try:
        return (process / "environ").read_bytes()
    except OSError:
        return b""


def test_a_negative_number_of_processes_is_refused_in_one_line(fresh_dsn: str) -> None:
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "frontier", "fetch", "--extract-processes", "-1"],
        env=frontier_env(fresh_dsn),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "--extract-processes" in run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "frontier", "fetch", "--until-idle"],
        env=frontier_env(fresh_dsn, FRONTIER_EXTRACT_PROCESSES="many"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "FRONTIER_EXTRACT_PROCESSES" in bad.stderr


def test_a_worker_whose_fetch_process_is_done_before_it_is_ready_exits_quietly() -> None:
    """`fetch --until-idle` can finish before a worker has warmed up: the worker finds the
    pipe closed when it says it is ready, and exits 0 without a traceback (one showed on
    standard error)."""
    import subprocess

    from fetcher.extract_worker import worker_command

    ours, theirs = socket.socketpair()
    worker = subprocess.Popen(
        worker_command(theirs.fileno(), 512),
        pass_fds=(theirs.fileno(),),
        stderr=subprocess.PIPE,
        text=True,
    )
    theirs.close()
    ours.close()  # done before the worker could be ready (it imports the extractors first)
    _, err = worker.communicate(timeout=120)
    assert (worker.returncode, err) == (0, "")
