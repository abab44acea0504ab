"""Buckets: every host belongs to one of N buckets, and every statement that locks or
changes rows of `url_frontier` or `host_state` names one bucket.

On Citus the two tables are distributed and co-located by `bucket`, and Citus routes a
locking statement only when it names one value of the distribution column (a cross-bucket
`... ORDER BY ... LIMIT n FOR UPDATE SKIP LOCKED` is refused). On a single PostgreSQL N is
1, every row is in bucket 0, and the statements are the same.

The bucket of a host is the first four bytes of the SHA-256 of its name (UTF-8) read as an
unsigned big-endian integer, modulo N: a fixed function, unlike `hashtext`, whose values
may change between PostgreSQL versions. This module is the one place that computes it;
`frontier_bucket(host, n)` in migration 0018 is the same function in SQL, for re-bucketing
rows in the database (tests/integration/test_buckets.py checks they agree). N lives in the
database (`frontier_buckets`), so every process finds it there.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def bucket_of(host: str, buckets: int) -> int:
    """The bucket of `host` among `buckets` (0 when there is one)."""
    if buckets == 1:
        return 0
    digest = hashlib.sha256(host.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") % buckets


def by_bucket(items: Iterable[T], host: Callable[[T], str], buckets: int) -> dict[int, list[T]]:
    """`items` grouped by the bucket of their host, each group in the input's order."""
    groups: dict[int, list[T]] = defaultdict(list)
    for item in items:
        groups[bucket_of(host(item), buckets)].append(item)
    return dict(groups)


class BucketRotation:
    """The order in which one fetcher tries the buckets: each claim starts one bucket past
    where the previous one started, so fetchers spread over the buckets, and a claim that
    found nothing in a bucket moves on to the next (an idle bucket costs one statement)."""

    def __init__(self, buckets: int, start: int = 0) -> None:
        self.buckets = buckets
        self._next = start % buckets

    def order(self) -> list[int]:
        first = self._next
        self._next = (first + 1) % self.buckets
        return [(first + i) % self.buckets for i in range(self.buckets)]
