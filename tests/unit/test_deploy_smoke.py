"""deploy/smoke says why it failed (issue 36, item 17): a command that fails under
`set -e` is reported with its step, line, command and exit status, and again as the last
line after the logs of the failed run. Run with stubs on PATH, no container engine: a
`docker` that fails as one does without a daemon, an `ip` that shows a docker0 address."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "deploy" / "smoke"
DAEMON_DOWN = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."


def stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.fixture
def stubs(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # every docker command fails, as with no daemon (compose too)
    stub(bin_dir, "docker", f'echo "{DAEMON_DOWN}" >&2; exit 1')
    stub(bin_dir, "docker-compose", f'echo "{DAEMON_DOWN}" >&2; exit 1')
    stub(bin_dir, "ip", 'echo "3: docker0    inet 172.17.0.1/16 brd 172.17.255.255 scope global"')
    return bin_dir


def run_smoke(stubs: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "SMOKE_CACHE": str(cache),
    }
    return subprocess.run(
        ["bash", str(SMOKE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_failing_command_is_named_with_its_step_line_and_status(
    stubs: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "bookworm-python.tar").write_bytes(b"a cached base image")  # skip debootstrap
    result = run_smoke(stubs, cache)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    line = next(
        n
        for n, text in enumerate(SMOKE.read_text().splitlines(), 1)
        if text.strip().startswith("docker import")
    )
    failed = [text for text in lines if "FAILED:" in text]
    assert len(failed) == 1, result.stdout
    assert f"FAILED: 1. the base image: line {line}: `docker import" in failed[0]
    assert failed[0].endswith("exited with 1")
    assert DAEMON_DOWN in result.stderr  # the command's own error
    # the last line, after the logs of the failed run, says it again
    assert "logs of the failed run" in result.stdout
    assert lines[-1].endswith(f"FAILED (exit 1) at {failed[0].split('FAILED: ')[1]}"), lines[-1]


def test_a_failure_reported_by_fail_is_the_last_line_too(stubs: Path, tmp_path: Path) -> None:
    # no cached image and no debootstrap on PATH: the script's own `fail`. The system's
    # tools are seen through links, all but debootstrap, wherever it is installed.
    tools = tmp_path / "tools"
    tools.mkdir()
    for directory in (Path("/usr/bin"), Path("/bin")):
        for tool in directory.iterdir():
            link = tools / tool.name
            if tool.name != "debootstrap" and not link.exists():
                link.symlink_to(tool)
    env_path = f"{stubs}:{tools}"
    cache = tmp_path / "cache"
    cache.mkdir()
    result = subprocess.run(
        ["bash", str(SMOKE)],
        env={**os.environ, "PATH": env_path, "SMOKE_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1, result.stdout
    last = result.stdout.strip().splitlines()[-1]
    assert last.endswith(
        "FAILED (exit 1) at 1. the base image: debootstrap is not installed"
        " (apt-get install debootstrap)"
    ), last
