"""The allocator the processes that extract run on (fetcher.allocators): given in
`LD_PRELOAD` before what was preloaded there, and a fetch process that extracts in a thread
of its own asks to start again on it (frontier_cli.fetch), once."""

from __future__ import annotations

from pathlib import Path

import pytest

from fetcher.allocators import preload_for, preloaded, preloading
from frontier.settings import Settings
from frontier_cli.app import Restart
from frontier_cli.fetch import on_the_extraction_allocator


def test_the_allocator_goes_first_and_what_was_preloaded_stays() -> None:
    environ = {"PATH": "/bin", "LD_PRELOAD": "/opt/lib/libtrace.so"}
    environment = preloading("/opt/lib/libtcmalloc.so", environ)
    assert environment == {
        "PATH": "/bin",
        "LD_PRELOAD": "/opt/lib/libtcmalloc.so /opt/lib/libtrace.so",
    }
    assert environ["LD_PRELOAD"] == "/opt/lib/libtrace.so"  # the caller's mapping is left alone
    assert preloading("libtcmalloc_minimal.so.4", {})["LD_PRELOAD"] == "libtcmalloc_minimal.so.4"


def test_preloaded_matches_whole_entries() -> None:
    assert preloaded("libt.so", {"LD_PRELOAD": "libx.so libt.so"})
    assert not preloaded("libt.so", {"LD_PRELOAD": "libt.so.4"})
    assert not preloaded("libt.so", {})


def test_the_system_allocator_preloads_nothing() -> None:
    assert preload_for("system") is None
    assert preload_for("/opt/lib/libjemalloc.so") == "/opt/lib/libjemalloc.so"


@pytest.fixture
def library(tmp_path: Path) -> str:
    """An allocator's library as the setting names it (an absolute path that exists)."""
    path = tmp_path / "liballoc.so"
    path.write_bytes(b"")
    return str(path)


def settings_for(library: str, processes: int | None) -> Settings:
    return Settings(extract_allocator=library, extract_processes=processes, _env_file=None)


@pytest.mark.parametrize(("setting", "option"), [(0, None), (4, 0), (None, 0)])
def test_a_process_that_extracts_in_a_thread_starts_again_on_the_allocator(
    library: str, monkeypatch: pytest.MonkeyPatch, setting: int | None, option: int | None
) -> None:
    monkeypatch.setenv("LD_PRELOAD", "libtrace.so")
    with pytest.raises(Restart) as restart:
        on_the_extraction_allocator(settings_for(library, setting), option)
    assert restart.value.environment["LD_PRELOAD"] == f"{library} libtrace.so"
    # started again with it, the process goes on
    monkeypatch.setenv("LD_PRELOAD", restart.value.environment["LD_PRELOAD"])
    on_the_extraction_allocator(settings_for(library, setting), option)


@pytest.mark.parametrize(("setting", "option"), [(None, None), (2, None), (0, 2)])
def test_a_process_with_extraction_workers_keeps_its_allocator(
    library: str, monkeypatch: pytest.MonkeyPatch, setting: int | None, option: int | None
) -> None:
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    on_the_extraction_allocator(settings_for(library, setting), option)  # no Restart


def test_the_system_allocator_never_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    settings = Settings(extract_allocator="system", extract_processes=0, _env_file=None)
    on_the_extraction_allocator(settings, None)  # no Restart
