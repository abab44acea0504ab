"""The `frontier` command builds its command's modules with the cyclic collector off and
then leaves them out of its passes (frontier_cli.modules_frozen): the passes over them while
they were imported found almost nothing to free (bench/RESULTS.md, ninth session)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from frontier_cli import modules_frozen


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, afterwards."""
    enabled = gc.isenabled()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
        else:
            gc.disable()


def test_the_modules_are_built_uncollected_then_frozen(collector: None) -> None:
    gc.enable()
    before = gc.get_freeze_count()
    with modules_frozen():
        assert not gc.isenabled()
        built = [[n] for n in range(1000)]  # what an import builds
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(built)


def test_a_collector_switched_off_stays_off(collector: None) -> None:
    gc.disable()
    with modules_frozen():
        pass
    assert not gc.isenabled()
