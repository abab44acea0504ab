"""Near-duplicates: the fingerprint's precision and recall, and the candidate lookup at scale.

``python -m bench.near_duplicates --labelled`` reads the labelled set
(``bench/near_duplicates_set.py``: the corpus articles as syndicated copies with small
edits, and different articles in one template or on one story), extracts every page with
``fetcher.extract`` and compares, on its pairs, the candidate fingerprints:

- ``simhash_wN``: a 64-bit SimHash over shingles of N words (Charikar; each shingle's
  hash counted per bit); a pair is the same article when the Hamming distance is at most
  the threshold (0..12 tried);
- ``trafilatura_simhash``: trafilatura's own ``Simhash`` (single words, a bag of words);
- ``minhash_wN``: ``frontier.near_duplicates.minhash`` over shingles of N words; the same
  article when the estimated Jaccard similarity is at least the threshold (0.1..0.9),
  found only when the pair also shares a band (``lsh``: each banding of the 64 bins tried);
- ``jaccard_w3``: the exact Jaccard similarity of the 3-word shingle sets, what a MinHash
  estimates.

For each: precision and recall at each threshold, the threshold with the best recall at
precision >= 0.99, and the microseconds per document (median of 3 passes over the texts).
``chosen`` is the fingerprint, threshold and banding `frontier.near_duplicates` uses, on
the pairs, with the pairs it links of each kind.

``python -m bench.near_duplicates [--quick]`` measures the candidate lookup of
``frontier/sql/near_duplicates.sql`` at 10M documents (``--quick``: 1M): synthetic
fingerprints (their band rows) COPYed into the tables of a migrated database on the
embedded benchmark server, ANALYZE, then 3 rounds of 200 lookups of batches of 32
fingerprints (half of them copies of a stored one with a few bins changed): median ms per
batch, the candidates read per document and the share of planted copies found. Then one
story copied CLUSTER times (``--quick``: a tenth), stored in batches of 32 through
``NearDuplicates.assign`` and ``record`` as the fetcher stores documents, and 200 batches
each holding one more copy: their median ms, the copy's candidates and the most documents
holding one band value (``HOLDERS`` at most).

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from hashlib import blake2b
from typing import Any

import psycopg
from trafilatura.deduplication import Simhash

from bench.near_duplicates_set import load
from bench.server import benchmark_server, emit_result, log, median
from fetcher.extract import extract
from frontier import near_duplicates as nd
from frontier.db import Database
from frontier.sinks.near_duplicates import Fingerprinted, NearDuplicates


def _timed(fn: Callable[[str], Any], texts: list[str]) -> tuple[list[Any], float]:
    rounds = []
    out: list[Any] = []
    for _ in range(3):
        start = time.perf_counter()
        out = [fn(t) for t in texts]
        rounds.append((time.perf_counter() - start) / len(texts) * 1e6)
    return out, statistics.median(rounds)


def _score(pairs: list[tuple[bool, float]], same: Callable[[float], bool]) -> dict[str, float]:
    tp = sum(1 for label, v in pairs if label and same(v))
    fp = sum(1 for label, v in pairs if not label and same(v))
    fn = sum(1 for label, v in pairs if label and not same(v))
    return {
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
    }


_LANE = 16  # SimHash bit counters: 16-bit lanes of one big integer


def _spread(byte: int) -> int:
    return sum(1 << (_LANE * i) for i in range(8) if byte >> i & 1)


_TABLES = tuple(tuple(_spread(b) << (_LANE * 8 * k) for b in range(256)) for k in range(8))


def simhash(text: str, size: int) -> int:
    """A 64-bit SimHash of the shingles of `size` words: each shingle's blake2b hash
    counted per bit (each byte of it indexes a table of its bits spread in 16-bit lanes,
    so a shingle costs one big-integer addition)."""
    grams = nd.shingles(text, size)
    t0, t1, t2, t3, t4, t5, t6, t7 = _TABLES
    total = 0
    for gram in grams:
        d = blake2b(gram.encode(), digest_size=8).digest()
        total += (
            t0[d[0]] + t1[d[1]] + t2[d[2]] + t3[d[3]] + t4[d[4]] + t5[d[5]] + t6[d[6]] + t7[d[7]]
        )
    mask = (1 << _LANE) - 1
    return sum(1 << i for i in range(64) if 2 * (total >> (_LANE * i) & mask) > len(grams))


def _banded(fingerprint: bytes, rows: int) -> set[tuple[int, bytes]]:
    width = 4 * rows
    return {(i, fingerprint[i * width : (i + 1) * width]) for i in range(nd.BINS // rows)}


def labelled() -> dict[str, Any]:
    data = load()
    texts: dict[str, str] = {}
    for pid, page in data["pages"].items():
        texts[pid] = extract(page["html"], f"https://{page['site']}/{pid}").body or ""
    ids = sorted(texts)
    bodies = [texts[i] for i in ids]
    pairs = data["pairs"]
    hamming = list(range(13))
    shares = [x / 10 for x in range(1, 10)]
    candidates: dict[str, Any] = {}
    for name, fn, metric in (
        *((f"simhash_w{n}", partial(simhash, size=n), "hamming") for n in (1, 2, 3, 4, 5)),
        ("trafilatura_simhash", lambda t: Simhash(t).hash, "hamming"),
        *((f"minhash_w{n}", partial(nd.minhash, size=n), "minhash") for n in (1, 2, 3, 4, 5)),
        ("jaccard_w3", nd.shingles, "jaccard"),
    ):
        values, us = _timed(fn, bodies)
        fp = dict(zip(ids, values, strict=True))
        entry: dict[str, Any] = {"us_per_doc": round(us, 1)}
        if metric == "hamming":
            scored = [(s, float((fp[a] ^ fp[b]).bit_count())) for a, b, s, _ in pairs]
            entry["thresholds"] = {str(t): _score(scored, lambda v, t=t: v <= t) for t in hamming}
        elif metric == "jaccard":
            scored = [(s, len(fp[a] & fp[b]) / len(fp[a] | fp[b])) for a, b, s, _ in pairs]
            entry["thresholds"] = {str(t): _score(scored, lambda v, t=t: v >= t) for t in shares}
        else:
            scored = [(s, nd.similarity(fp[a], fp[b])) for a, b, s, _ in pairs]
            entry["thresholds"] = {str(t): _score(scored, lambda v, t=t: v >= t) for t in shares}
            entry["lsh"] = {}
            for rows in (2, 4, 8):
                found = [
                    (s, v if _banded(fp[a], rows) & _banded(fp[b], rows) else 0.0)
                    for (a, b, s, _), (_, v) in zip(pairs, scored, strict=True)
                ]
                entry["lsh"][f"{nd.BINS // rows}x{rows}"] = {
                    str(t): _score(found, lambda v, t=t: v >= t) for t in shares
                }
        ok = [(r["recall"], t) for t, r in entry["thresholds"].items() if r["precision"] >= 0.99]
        entry["best"] = max(ok)[1] if ok else None
        candidates[name] = entry
        log(f"{name}: {us:.0f} us/doc, best {entry['best']}: {entry['thresholds'][entry['best']]}")
    fingerprints = {i: nd.minhash(texts[i]) for i in ids}
    per_kind: dict[str, dict[str, int]] = {}
    linked = []
    for a, b, same, kind in pairs:
        fa, fb = fingerprints[a], fingerprints[b]
        assert fa is not None and fb is not None
        hit = bool(set(nd.bands(fa)) & set(nd.bands(fb))) and nd.similarity(fa, fb) >= nd.THRESHOLD
        linked.append((same, 1.0 if hit else 0.0))
        entry = per_kind.setdefault(kind, {"pairs": 0, "linked": 0})
        entry["pairs"] += 1
        entry["linked"] += hit
    return {
        "pages": len(ids),
        "positives": sum(1 for p in pairs if p[2]),
        "negatives": sum(1 for p in pairs if not p[2]),
        "chosen": {
            "fingerprint": f"minhash_w{nd.SHINGLE}",
            "bins": nd.BINS,
            "bands": f"{nd.BANDS}x{nd.ROWS}",
            "threshold": nd.THRESHOLD,
            **_score(linked, lambda v: v > 0),
            "per_kind": per_kind,
        },
        "candidates": candidates,
    }


PLANTED = 2_000  # real fingerprints among the synthetic rows: the ones copies are made of
BATCH = 32
LOOKUPS = 200
CLUSTER = 50_000  # copies of one story (a wire story, or a page under many addresses)


def _random_minhash(rng: random.Random) -> bytes:
    return rng.randbytes(4 * nd.BINS)


def _edited(fingerprint: bytes, rng: random.Random, bins: int = 4) -> bytes:
    """A copy's fingerprint: `bins` bins changed (about 94% similar)."""
    out = bytearray(fingerprint)
    for b in rng.sample(range(nd.BINS), bins):
        out[4 * b : 4 * b + 4] = rng.randbytes(4)
    return bytes(out)


def load_rows(dsn: str, size: int, planted: list[bytes]) -> float:
    """`size` documents in `near_duplicates`: `planted` with their real band values (COPY),
    the rest synthetic (random band values made inside PostgreSQL); the GIN index built
    afterwards, then ANALYZE. Returns the load time in seconds."""
    start = time.perf_counter()
    values = ", ".join(f"hashtext((g * {nd.BANDS} + {b})::text)" for b in range(nd.BANDS))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP INDEX near_duplicates_bands_idx")
        conn.execute("SET maintenance_work_mem = '1GB'")
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY near_duplicates (url_hash, minhash, bands, cluster) FROM STDIN"
            ) as copy,
        ):
            for n, fingerprint in enumerate(planted):
                key = f"{n:064x}"
                copy.write_row((key, fingerprint, nd.bands(fingerprint), key))
        conn.execute(
            f"""
            INSERT INTO near_duplicates (url_hash, minhash, bands, cluster)
            SELECT h, decode(repeat('00', {4 * nd.BINS}), 'hex'), ARRAY[{values}], h
            FROM generate_series(1, {size - len(planted)}) AS g,
                 LATERAL (SELECT encode(sha256(g::text::bytea), 'hex') AS h) AS x
            """
        )
        conn.execute(  # as migrations 0037 and 0038 make it: no pending list
            "CREATE INDEX near_duplicates_bands_idx ON near_duplicates"
            " USING gin (bands) WITH (fastupdate = off)"
        )
        conn.execute("VACUUM ANALYZE near_duplicates")
    return time.perf_counter() - start


async def _lookups(dsn: str, planted: list[bytes], rng: random.Random) -> dict[str, float]:
    db = await Database.connect(dsn, min_size=1, max_size=1)
    near = NearDuplicates(db)
    try:
        times: list[float] = []
        found = wanted = candidates = 0
        for _ in range(LOOKUPS):
            picks = rng.sample(range(len(planted)), BATCH // 2)
            batch = [Fingerprinted(f"c{n:063x}", _edited(planted[n], rng)) for n in picks] + [
                Fingerprinted(f"f{i:063x}", _random_minhash(rng)) for i in range(BATCH // 2)
            ]
            values = sorted({v for d in batch for v in nd.bands(d.minhash)})
            start = time.perf_counter()
            placed = await near.assign(batch)
            times.append(time.perf_counter() - start)
            candidates += len(await near.candidates(values))
            for n, place in zip(picks, placed, strict=False):
                wanted += 1
                found += place.cluster == f"{n:064x}"
        return {
            "batch_ms": round(median(times) * 1000, 2),
            "per_doc_ms": round(median(times) * 1000 / BATCH, 3),
            "candidates_per_doc": round(candidates / (LOOKUPS * BATCH), 2),
            "found": round(found / wanted, 4),
        }
    finally:
        await db.close()


async def _grown_cluster(dsn: str, copies: int, rng: random.Random) -> dict[str, Any]:
    """One story copied `copies` times and stored as the fetcher stores documents, then
    LOOKUPS batches of BATCH fingerprints holding one more copy each (the others new):
    the batch's median ms, the copy's candidates (median) and whether it joined."""
    db = await Database.connect(dsn, min_size=1, max_size=1)
    near = NearDuplicates(db)
    story = _random_minhash(rng)
    try:
        for start in range(0, copies, BATCH):
            batch = [
                Fingerprinted(f"s{n:063x}", _edited(story, rng))
                for n in range(start, min(start + BATCH, copies))
            ]
            await near.record(await near.assign(batch))
        first = f"s{0:063x}"
        times: list[float] = []
        candidates: list[int] = []
        joined = 0
        for n in range(LOOKUPS):
            copy = _edited(story, rng)
            batch = [Fingerprinted(f"t{n:063x}", copy)] + [
                Fingerprinted(f"u{n:031x}{i:032x}", _random_minhash(rng)) for i in range(BATCH - 1)
            ]
            start_s = time.perf_counter()
            [place, *_] = await near.assign(batch)
            times.append(time.perf_counter() - start_s)
            joined += place.cluster == first
            candidates.append(len(await near.candidates(nd.bands(copy))))
        holders = await db.fetchval(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM near_duplicates, unnest(bands) AS v"
            " GROUP BY v) AS held"
        )
        return {
            "copies": copies,
            "batch_ms": round(median(times) * 1000, 2),
            "candidates_of_a_copy": median(candidates),
            "joined": round(joined / LOOKUPS, 4),
            "most_holders_of_a_value": holders,
        }
    finally:
        await db.close()


def lookup(size: int, dsn: str | None, copies: int) -> dict[str, Any]:
    rng = random.Random(29)
    planted = [_random_minhash(rng) for _ in range(PLANTED)]
    with benchmark_server(dsn) as server:
        database = server.migrated_database("bench_near_duplicates")
        log(f"loading {size:,} documents")
        load_s = load_rows(database, size, planted)
        log(f"loaded in {load_s:.0f}s")
        rounds = [asyncio.run(_lookups(database, planted, rng)) for _ in range(3)]
        with psycopg.connect(database) as conn:
            row = conn.execute(
                "SELECT pg_total_relation_size('near_duplicates'),"
                " pg_relation_size('near_duplicates_bands_idx')"
            ).fetchone()
            assert row is not None
        best = sorted(rounds, key=lambda r: r["batch_ms"])[1]
        log(f"storing {copies:,} copies of one story")
        cluster = asyncio.run(_grown_cluster(database, copies, rng))
        return {
            "documents": size,
            "load_s": round(load_s, 1),
            "table_mib": round(row[0] / 2**20),
            "gin_index_mib": round(row[1] / 2**20),
            "batch": BATCH,
            "lookups_per_round": LOOKUPS,
            **best,
            "rounds_batch_ms": [r["batch_ms"] for r in rounds],
            "cluster": cluster,
            "server_version": server.server_version(),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labelled", action="store_true", help="precision and recall")
    parser.add_argument("--quick", action="store_true", help="1M documents instead of 10M")
    parser.add_argument("--documents", type=int, help="how many documents to load")
    parser.add_argument("--dsn", help="an existing server's superuser DSN (URL form)")
    args = parser.parse_args()
    if args.labelled:
        emit_result(labelled())
        return 0
    size = args.documents or (1_000_000 if args.quick else 10_000_000)
    emit_result(lookup(size, args.dsn, CLUSTER // 10 if args.quick else CLUSTER))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
