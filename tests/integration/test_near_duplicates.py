"""Near-duplicates end to end (issue 29 item 4; docs/duplicates.md, "Near-duplicates"): a
wire story served by two hosts in different page templates, with a small edit, is stored
twice, the second copy naming the first in `near_duplicate_of`; a different article in
the same template is not linked; one document per cluster reads one of the two copies.
Real PostgreSQL, real local servers (127.0.0.1 and 127.0.0.2), the real extractor."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.extract_quality import BENCHMARK
from bench.near_duplicates_set import BYLINES, _page, _paragraphs
from frontier import near_duplicates as nd
from frontier.db import Database
from frontier.documents import DocumentFilter
from frontier.sinks.near_duplicates import HOLDERS, Fingerprinted, NearDuplicates, Placed
from frontier.sinks.postgres import PostgresDocuments
from frontier.urls import normalize_url, url_hash
from tests.fetch_harness import after, fetcher_for, submit
from tests.local_site import LocalSite


@pytest.fixture(scope="module")
def stories() -> list[list[str]]:
    truth = json.loads((BENCHMARK / "ground-truth.json").read_text(encoding="utf-8"))
    return [_paragraphs(truth[key]["articleBody"]) for key in sorted(truth)[:4]]


async def drain(db: Database) -> None:
    async with fetcher_for(db) as fetcher:
        for _ in range(6):
            if (await fetcher.run_once(now=after(1))).claimed == 0:
                return


async def stored(db: Database) -> dict[str, dict[str, Any]]:
    rows = await db.fetch("SELECT * FROM raw_content")
    return {r["url"]: dict(r) for r in rows}


async def test_a_syndicated_copy_names_the_first_and_another_article_does_not(
    db: Database, local_site: LocalSite, partner_site: LocalSite, stories: list[list[str]]
) -> None:
    wire, other = stories[0], stories[1]
    title = "Wire story"
    local_site.serve("/news/wire-story", _page(0, title, BYLINES[0], wire))
    # The partner's copy: its own template, another byline, a typo fixed, a note added.
    edited = [wire[0].replace(" the ", " teh ", 1), *wire[1:], "Additional reporting by AP."]
    partner_site.serve("/world/wire-story-copy", _page(2, title, BYLINES[1], edited))
    local_site.serve("/news/other-story", _page(0, "Other story", BYLINES[0], other))

    await submit(db, local_site.url("/news/wire-story"))
    await drain(db)
    await submit(
        db, partner_site.url("/world/wire-story-copy"), local_site.url("/news/other-story")
    )
    await drain(db)

    docs = await stored(db)
    first = docs[normalize_url(local_site.url("/news/wire-story"))]
    copy = docs[normalize_url(partner_site.url("/world/wire-story-copy"))]
    different = docs[normalize_url(local_site.url("/news/other-story"))]
    assert len(docs) == 3  # both copies stored, not dropped
    assert first["near_duplicate_of"] is None
    assert copy["near_duplicate_of"] == first["url_hash"]
    assert different["near_duplicate_of"] is None
    assert all(len(d["minhash"]) == 512 for d in docs.values())  # 64 bins of 4 bytes, hex
    assert copy["content_hash"] != first["content_hash"]  # not an exact duplicate

    # A third copy joins the cluster of the earliest, not of the copy it is closest to.
    third = [*edited, "Copyright the partner site."]
    partner_site.serve("/world/wire-story-third", _page(3, title, BYLINES[2], third))
    await submit(db, partner_site.url("/world/wire-story-third"))
    await drain(db)
    again = (await stored(db))[normalize_url(partner_site.url("/world/wire-story-third"))]
    assert again["near_duplicate_of"] == first["url_hash"]

    reader = PostgresDocuments(db)
    every = await reader.page(DocumentFilter(), after=None, limit=10)
    one = await reader.page(DocumentFilter(one_per_cluster=True), after=None, limit=10)
    assert len(every.items) == 4
    assert sorted(i["url_hash"] for i in one.items) == sorted(
        [first["url_hash"], different["url_hash"]]
    )
    assert {i["near_duplicate_of"] for i in every.items} == {None, first["url_hash"]}


async def test_copies_in_one_batch_form_one_cluster(
    db: Database, local_site: LocalSite, partner_site: LocalSite, stories: list[list[str]]
) -> None:
    """Two hosts' copies fetched in the same batch: the second stored names the first."""
    story = stories[2]
    local_site.serve("/a", _page(1, "Story", BYLINES[0], story))
    partner_site.serve("/b", _page(3, "Story", BYLINES[3], [*story, "Updated at noon."]))
    await submit(db, local_site.url("/a"), partner_site.url("/b"))
    await drain(db)
    docs = list((await stored(db)).values())
    assert len(docs) == 2
    heads = [d for d in docs if d["near_duplicate_of"] is None]
    assert len(heads) == 1
    [linked] = [d for d in docs if d["near_duplicate_of"] is not None]
    assert linked["near_duplicate_of"] == heads[0]["url_hash"]
    rows = await db.fetch("SELECT url_hash, cluster FROM near_duplicates")
    assert {r["cluster"] for r in rows} == {heads[0]["url_hash"]}
    assert {r["url_hash"] for r in rows} == {url_hash(d["url"]) for d in docs}


async def test_the_lookup_ignores_the_document_itself_and_forgotten_ones(db: Database) -> None:
    """A revisit is not its own near-duplicate; a document removed (forgotten) is no
    longer anyone's candidate."""
    near = NearDuplicates(db)
    text = " ".join(f"word{i}" for i in range(300))
    fingerprint = nd.minhash(text)
    assert fingerprint is not None
    [first] = await near.assign([Fingerprinted("a" * 64, fingerprint)])
    assert first.near_duplicate_of is None
    await near.record([first])
    [again] = await near.assign([Fingerprinted("a" * 64, fingerprint)])  # a revisit
    assert again.near_duplicate_of is None
    [copy] = await near.assign([Fingerprinted("b" * 64, fingerprint)])
    assert copy.near_duplicate_of == "a" * 64
    await near.forget(["a" * 64])
    [alone] = await near.assign([Fingerprinted("b" * 64, fingerprint)])
    assert alone.near_duplicate_of is None


async def test_the_band_index_takes_new_rows_without_a_pending_list(db: Database) -> None:
    """Migration 0038: the band values are nearly unique, so GIN's pending list only
    doubled the work of each insert (bench/RESULTS.md); a recorded document is in the
    index itself at once."""
    options = await db.fetchval(
        "SELECT reloptions FROM pg_class WHERE relname = 'near_duplicates_bands_idx'"
    )
    assert "fastupdate=off" in (options or [])
    near = NearDuplicates(db)
    fingerprint = nd.minhash("a wire story about the harbour bridge reopening on monday")
    assert fingerprint is not None
    await near.record(await near.assign([Fingerprinted("a" * 64, fingerprint)]))
    pending = await db.fetchval(
        "SELECT gin_clean_pending_list('near_duplicates_bands_idx'::regclass)"
    )
    assert pending == 0


async def test_a_large_group_finds_its_copies_by_their_bands(db: Database) -> None:
    """A group of a hundred documents (as grouped stores make them): each copy names its
    cluster's first, whether that one was stored before or is earlier in the group; of two
    equally close candidates in different clusters, every copy names the same one."""
    near = NearDuplicates(db)

    def fingerprint(words: str) -> bytes:
        value = nd.minhash(" ".join(f"{words}{i}" for i in range(200)))
        assert value is not None
        return value

    stored_story, group_story = fingerprint("harbour"), fingerprint("bridge")
    # Two stored copies of one story in clusters of their own (two processes raced).
    await near.record(
        [
            Placed("a" * 64, stored_story, tuple(nd.bands(stored_story)), "a" * 64),
            Placed("b" * 64, stored_story, tuple(nd.bands(stored_story)), "b" * 64),
        ]
    )
    group = [
        Fingerprinted(
            f"{i:064x}",
            stored_story if i % 10 == 3 else group_story if i % 10 == 5 else fingerprint(f"w{i}-"),
        )
        for i in range(100)
    ]
    placed = await near.assign(group)
    assert [p.url_hash for p in placed] == [d.url_hash for d in group]
    first_in_group = f"{5:064x}"
    for i, place in enumerate(placed):
        if i % 10 == 3:
            assert place.near_duplicate_of in {"a" * 64, "b" * 64}
        elif i % 10 == 5:
            assert place.near_duplicate_of == (None if i == 5 else first_in_group)
        else:
            assert place.near_duplicate_of is None
    # The stored candidates come in one order: every copy of them names the same one.
    assert len({placed[i].near_duplicate_of for i in range(3, 100, 10)}) == 1


async def test_a_band_value_is_held_by_a_bounded_number_of_documents(db: Database) -> None:
    """A story copied a hundred times, in batches as stores make them: every copy names
    the first, no band value is held by more than HOLDERS documents, so a later copy reads
    at most HOLDERS candidates a band whatever the cluster's size; a value only an edit
    made is still held, and found by the next copy with the same edit; a revisit of a
    holder keeps what it holds."""
    near = NearDuplicates(db)
    words = [f"wire{i}" for i in range(400)]

    def fingerprint(text: list[str]) -> bytes:
        value = nd.minhash(" ".join(text))
        assert value is not None
        return value

    story = fingerprint(words)
    copies = [
        Fingerprinted(f"{n:064x}", fingerprint([*words[: 390 + n % 7], f"note{n}"]))
        for n in range(100)
    ]
    for start in range(0, 100, 25):
        await near.record(await near.assign(copies[start : start + 25]))
    clusters = await db.fetch("SELECT url_hash, cluster FROM near_duplicates")
    assert {r["cluster"] for r in clusters} == {f"{0:064x}"}
    holders = await db.fetch(
        "SELECT value, count(*) AS n FROM near_duplicates, unnest(bands) AS value GROUP BY value"
    )
    assert max(r["n"] for r in holders) == HOLDERS  # the bound is reached, and held
    values = sorted(set(nd.bands(story)))
    candidates = await near.candidates(values)
    assert 0 < len(candidates) <= HOLDERS * nd.BANDS
    [late] = await near.assign([Fingerprinted("f" * 64, story)])
    assert late.near_duplicate_of == f"{0:064x}"

    # An edit of its own: its new band values are held, and the next such copy finds it.
    edited = fingerprint([*words[:200], "a correction", *words[200:]])
    [first_edit] = await near.assign([Fingerprinted("e" * 64, edited)])
    fresh = set(nd.bands(edited)) - {r["value"] for r in holders}
    assert fresh and fresh <= set(first_edit.bands)
    await near.record([first_edit])
    [second_edit] = await near.assign([Fingerprinted("d" * 64, edited)])
    assert second_edit.near_duplicate_of == f"{0:064x}"
    # A revisit of a holder does not count itself among the holders.
    [holder] = await near.assign(copies[:1])
    assert set(holder.bands) == set(
        await db.fetchval("SELECT bands FROM near_duplicates WHERE url_hash = $1", f"{0:064x}")
    )
