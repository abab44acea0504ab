"""Invariants of the frontier checked after a crash: the maintained counters (the
`frontier_counts` deltas behind `frontier status`, `host_state.pending_count` behind the
claim) agree with a real count of `url_frontier`."""

from __future__ import annotations

from frontier.db import Database


async def assert_counters_agree(db: Database) -> None:
    counted = await db.fetch("SELECT status, count(*) AS n FROM url_frontier GROUP BY 1")
    kept = await db.fetch(
        "SELECT status, sum(n)::bigint AS n FROM frontier_counts GROUP BY 1 HAVING sum(n) <> 0"
    )
    assert {r["status"]: r["n"] for r in kept} == {r["status"]: r["n"] for r in counted}
    mismatched = await db.fetch(
        "SELECT h.host, h.pending_count, count(u.url_hash) AS real FROM host_state h "
        "LEFT JOIN url_frontier u "
        "ON u.bucket = h.bucket AND u.host = h.host AND u.status = 'pending' "
        "GROUP BY h.host, h.pending_count HAVING h.pending_count <> count(u.url_hash)"
    )
    assert [dict(r) for r in mismatched] == []
