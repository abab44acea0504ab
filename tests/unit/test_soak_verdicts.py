"""The soak benchmark's verdicts (bench/soak.py): flat and bounded are decided on numbers."""

from __future__ import annotations

from typing import Any

from bench.soak import PROCESSES, TABLES, boundedness, flatness, quarter, slope_per_min

SECONDS = 400.0
TRIGGERS = {"url_frontier": 20_050.0, "host_state": 2_000.0}


def samples(**overrides: Any) -> list[dict[str, Any]]:
    """Steady samples every 10 s; an override maps a column to a function of t (seconds)."""
    out = []
    for t in range(0, int(SECONDS) + 1, 10):
        row: dict[str, Any] = {"t_s": float(t)}
        for name in PROCESSES:
            row.update(
                {
                    f"{name}_rss_mib": 120.0,
                    f"{name}_other_fds": 14,
                    "conns_total": 24,
                    f"{name}_site_sockets": 800,
                    f"{name}_conns": 6,
                }
            )
        for table in TABLES:
            row.update(
                {
                    f"{table}_dead": 1_000 + (t % 60) * 20,
                    f"{table}_live": 1_000_000,
                    f"{table}_autovacuums": t // 10,
                    f"{table}_mib": 200.0,
                }
            )
        for column, value in overrides.items():
            row[column] = value(t)
        out.append(row)
    return out


def test_quarters_split_the_run_and_the_last_keeps_the_final_sample() -> None:
    rows = samples()
    assert [r["t_s"] for r in quarter(rows, SECONDS, 2)] == [
        100,
        110,
        120,
        130,
        140,
        150,
        160,
        170,
        180,
        190,
    ]
    assert quarter(rows, SECONDS, 4)[-1]["t_s"] == SECONDS


def test_steady_processes_are_flat() -> None:
    verdict = flatness(samples(), SECONDS, socket_cap=1_100)
    assert verdict["flat"] is True
    assert verdict["fetch1"]["rss_mib"]["growth"] == 0


def test_rss_growing_past_the_tolerance_is_not_flat() -> None:
    verdict = flatness(samples(fetch2_rss_mib=lambda t: 120 + t * 0.15), SECONDS, 1_100)
    assert verdict["flat"] is False
    assert verdict["fetch2"]["rss_mib"]["ok"] is False
    assert verdict["fetch2"]["rss_mib"]["slope_mib_per_min"] == 9.0
    assert verdict["fetch1"]["rss_mib"]["ok"] is True


def test_leaking_fds_or_connections_over_the_pool_are_not_flat() -> None:
    assert flatness(samples(poll_other_fds=lambda t: 14 + t // 10), SECONDS, 1_100)["flat"] is False
    assert flatness(samples(api_conns=lambda t: 6 + t // 60), SECONDS, 1_100)["flat"] is False
    assert flatness(samples(fetch1_site_sockets=lambda t: 2_000), SECONDS, 1_100)["flat"] is False


def test_a_dead_tuple_sawtooth_is_bounded_and_a_ratchet_is_not() -> None:
    assert boundedness(samples(), SECONDS, TRIGGERS)["bounded"] is True
    ratchet = boundedness(samples(host_state_dead=lambda t: 200 * t), SECONDS, TRIGGERS)
    assert ratchet["bounded"] is False
    assert ratchet["host_state"]["max_dead"] == 80_000
    assert ratchet["url_frontier"]["bounded"] is True


def test_slope_of_a_line() -> None:
    rows = [{"t_s": t, "x": 3.0 * t / 60} for t in (0.0, 60.0, 120.0)]
    assert slope_per_min(rows, "x") == 3.0
