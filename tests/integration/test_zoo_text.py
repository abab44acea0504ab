"""The CMS zoo, text: charsets declared where real pages declare them and bodies compressed
as real servers compress them, fetched end to end (local site, queue, safe client,
extraction, PostgreSQL sink). Each article is stored once with its real text, at one
request, and nothing ends `dead` that a browser shows."""

from __future__ import annotations

import json

import pytest

from frontier.db import Database
from tests.corpus_path import CORPUS
from tests.fetch_harness import fetch_stored, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite
from tests.zoo import text as zoo

EVAL = CORPUS / "articles" / "trafilatura-eval"
TDG = "https://www.tdg.ch/suisse/berne-interdit-chlorothalonil/story/18348200"


def corpus_page() -> tuple[bytes, list[str]]:
    """A real UTF-8 news article (French, accents in every sentence) and the snippets its
    extracted text must hold."""
    case = json.loads((EVAL / "evaldata.json").read_text())[TDG]
    return (EVAL / "html" / case["file"]).read_bytes(), case["with"]


async def test_windows_1252_declared_only_in_a_late_meta_keeps_its_quotes(
    db: Database, local_site: LocalSite
) -> None:
    zoo.windows_1252_meta_only(local_site, "/legacy.htm")
    doc = await fetch_stored(db, local_site, "/legacy.htm")
    assert zoo.CURLY in str(doc["body"])
    assert doc["title"] == "Legacy “charset” story"


async def test_a_latin1_label_is_decoded_as_windows_1252(
    db: Database, local_site: LocalSite
) -> None:
    zoo.latin1_label_meta(local_site, "/latin.htm")
    doc = await fetch_stored(db, local_site, "/latin.htm")
    assert zoo.CURLY in str(doc["body"]) and "\x93" not in str(doc["body"])


async def test_utf8_page_behind_apaches_latin1_default_is_read_as_utf8(
    db: Database, local_site: LocalSite
) -> None:
    page, snippets = corpus_page()
    zoo.utf8_behind_apache_default(local_site, "/suisse/chlorothalonil", page)
    doc = await fetch_stored(db, local_site, "/suisse/chlorothalonil")
    body = str(doc["body"])
    assert all(snippet in body for snippet in snippets), body[:300]
    assert "Ã" not in body and "désormais" in str(doc["title"])


async def test_a_bom_wins_over_the_header(db: Database, local_site: LocalSite) -> None:
    page = zoo.legacy_article("BOM story", charset_meta="")
    zoo.utf8_bom_behind_latin_header(local_site, "/bom", page)
    doc = await fetch_stored(db, local_site, "/bom")
    assert zoo.CURLY in str(doc["body"])


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate", "br"])
async def test_compressed_bodies_are_decoded(
    db: Database, local_site: LocalSite, coding: str
) -> None:
    page, snippets = corpus_page()
    zoo.compressed(local_site, "/article", page, coding)
    doc = await fetch_stored(db, local_site, "/article")
    assert all(snippet in str(doc["body"]) for snippet in snippets)
    offered = local_site.hits("/article")[0].headers["Accept-Encoding"]
    assert coding.removeprefix("raw-") in offered


async def test_accept_encoding_offers_only_what_can_be_decoded(
    db: Database, local_site: LocalSite
) -> None:
    page, _snippets = corpus_page()
    zoo.compressed(local_site, "/probe", page, "gzip")
    await fetch_stored(db, local_site, "/probe")
    offered = {
        c.split(";")[0].strip()
        for c in local_site.hits("/probe")[0].headers["Accept-Encoding"].split(",")
    }
    assert {"gzip", "deflate", "br"} <= offered
    # Nothing the client could not decode (aiohttp lists br, zstd only when installed);
    # each of gzip, deflate and br is decoded in test_compressed_bodies_are_decoded.
    assert offered <= {"gzip", "deflate", "br", "zstd"}


async def test_a_decompression_bomb_is_refused_as_unsupported_content(
    db: Database, local_site: LocalSite
) -> None:
    zoo.gzip_bomb(local_site, "/bomb", size=50_000_000)  # the harness caps bodies at 1 MB
    await submit(db, local_site.url("/bomb"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/bomb"))
    assert (row["status"], row["dead_reason"]) == ("dead", "unsupported_content")
    assert "after decompression" in row["last_error"]
    assert len(local_site.hits("/bomb")) == 1
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0
