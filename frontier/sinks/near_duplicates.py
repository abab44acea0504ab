"""Which cluster a stored document joins: the near-duplicate lookup of `near_duplicates`
(docs/duplicates.md, "Near-duplicates"; SQL in `frontier/sql/near_duplicates.sql`).

Before a batch of documents is written, `assign` finds each one's candidates (the
documents sharing an LSH band value with it, through the GIN index), keeps those whose
MinHash agrees in at least `THRESHOLD` of its bins, and names the cluster of the most
similar: the url_hash of the earliest document of that cluster. A document of the batch
is also a candidate of the ones after it. Once written, `record` adds them. Two processes
storing near-duplicates of each other at the same moment may each start a cluster: the
link is a hint for readers, not an identity (the exact checks of `document_keys` are).

A band value is held by at most `HOLDERS` documents: a document records only the values
fewer than that held before it. Without the bound, every copy of a story syndicated
thousands of times, or of a page a site serves under thousands of addresses, would read
all the copies before it (its candidates, their rows and their similarity each): the
cost of storing one page would grow with the cluster, and a cluster's whole cost with its
square. With it, a document has at most `HOLDERS` candidates a band (the earliest holders,
of the cluster they name), whatever the cluster's size; a copy's values that no earlier
one shares (an edit) are still held and found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from asyncpg import Record

from frontier import near_duplicates as nd
from frontier.db import Database
from frontier.sql import load

SQL = load("near_duplicates")
HOLDERS = 8  # documents a band value is held by, at most (the module's docstring)


@dataclass(frozen=True, slots=True)
class Fingerprinted:
    """A document to place: its URL's hash and its text's MinHash."""

    url_hash: str
    minhash: bytes


@dataclass(frozen=True, slots=True)
class Placed:
    url_hash: str
    minhash: bytes
    bands: tuple[int, ...]  # the band values it holds: those fewer than HOLDERS held before
    cluster: str  # the earliest document of its cluster: itself when it has none

    @property
    def near_duplicate_of(self) -> str | None:
        return None if self.cluster == self.url_hash else self.cluster


class NearDuplicates:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def assign(self, documents: Sequence[Fingerprinted]) -> list[Placed]:
        """Each document's cluster, in order (see the module's docstring)."""
        if not documents:
            return []
        banded = [(d, tuple(nd.bands(d.minhash))) for d in documents]
        rows = await self.candidates(sorted({v for _, bands in banded for v in bands}))
        # The candidates so far (those stored, then the group's documents placed before
        # the one at hand), and each one's place among them by its band values: a
        # document's candidates are found by its bands, not by a look at every document
        # before it (a group of stores is of up to hundreds of pages); taken in order, so
        # the first of equally similar candidates still wins.
        known: list[Placed] = []
        by_band: dict[int, list[int]] = {}

        def know(place: Placed) -> None:
            for value in place.bands:
                by_band.setdefault(value, []).append(len(known))
            known.append(place)

        for r in rows:
            know(Placed(r["url_hash"], bytes(r["minhash"]), tuple(r["bands"]), r["cluster"]))
        placed: list[Placed] = []
        for document, bands in banded:
            best: tuple[float, str] | None = None
            for i in sorted({i for value in bands for i in by_band.get(value, ())}):
                other = known[i]
                if other.url_hash == document.url_hash:
                    continue
                score = nd.similarity(document.minhash, other.minhash)
                if score >= nd.THRESHOLD and (best is None or score > best[0]):
                    best = (score, other.cluster)
            cluster = best[1] if best is not None else document.url_hash
            held = tuple(  # those fewer hold, this document aside (a revisit holds its own)
                value
                for value in bands
                if sum(known[i].url_hash != document.url_hash for i in by_band.get(value, ()))
                < HOLDERS
            )
            place = Placed(document.url_hash, document.minhash, held, cluster)
            placed.append(place)
            know(place)
        return placed

    async def candidates(self, values: Sequence[int]) -> list[Record]:
        """The stored documents holding any of the band `values` (url_hash, minhash, bands,
        cluster), through the GIN index."""
        async with self._db.transaction() as tx:
            await tx.execute(SQL["gin_only"])
            return await tx.fetch(SQL["candidates"], values)

    async def record(self, placed: Sequence[Placed]) -> None:
        """The documents written: candidates of the documents stored after them."""
        if not placed:
            return
        rows = sorted({p.url_hash: p for p in placed}.values(), key=lambda p: p.url_hash)
        await self._db.execute(
            SQL["record"],
            [p.url_hash for p in rows],
            [p.minhash for p in rows],
            ["{" + ",".join(map(str, p.bands)) + "}" for p in rows],
            [p.cluster for p in rows],
        )

    async def forget(self, url_hashes: Sequence[str]) -> None:
        """These URLs hold no document any more."""
        if url_hashes:
            await self._db.execute(SQL["forget"], sorted(set(url_hashes)))
