"""A fetch process keeps what it built before fetching out of the cyclic collector's full
passes while it fetches (fetcher.service.frozen_heap): they walked all of it again every
few thousand pages, and the outbox's deliveries added such passes (issue 33)."""

from __future__ import annotations

import gc
import weakref

from fetcher.service import YOUNG_THRESHOLD, frozen_heap


class Node:
    me: Node | None = None


def test_the_heap_is_frozen_while_fetching_without_its_garbage() -> None:
    garbage = Node()
    garbage.me = garbage  # a cycle nobody holds: only the collector frees it
    gone = weakref.ref(garbage)
    del garbage
    with frozen_heap():
        assert gone() is None  # collected first, not kept for the whole fetch
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # given back once the fetch is over


def test_the_young_generation_is_collected_less_often_while_fetching() -> None:
    before = gc.get_threshold()
    with frozen_heap():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert before[0] < YOUNG_THRESHOLD
    assert gc.get_threshold() == before
