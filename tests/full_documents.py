"""Documents with every field of frontier.sinks.schema set (a value of its type, not None),
for the tests of what carries a whole document: the export, the schema's JSON forms."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from frontier.sinks import RawDocument
from frontier.urls import url_hash

BASE = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
LANGUAGES = ("en", "de", "en-GB")


def full_document(i: int, source_id: UUID | None = None, **changes: Any) -> RawDocument:
    """Document `i`: fetched `i` minutes after BASE, on host h{i % 3}.example, every field
    set; `changes` replace fields."""
    url = f"https://h{i % 3}.example/story/{i}"
    fetched = BASE + timedelta(minutes=i)
    document = RawDocument(
        url_hash=url_hash(url), url=url, final_url=url + "?amp", source_id=source_id,
        source_name="city" if source_id else None, host=f"h{i % 3}.example", origin="feed",
        title=f"Story {i} «quoted», with \"commas\"", body=f"Body of story {i}.\nSecond line.",
        summary=f"Summary {i}", author="Desk", published_at=fetched - timedelta(hours=1),
        image_url=f"https://h{i % 3}.example/{i}.jpg", language=LANGUAGES[i % 3],
        content_hash=f"{i:064x}", word_count=5 + i, extractor="generic", http_status=200,
        fetched_at=fetched, paywalled=i % 2 == 1, warc_file="frontier-1.warc.gz",
        warc_offset=1000 * i, warc_length=321, warc_record_id=f"<urn:uuid:{UUID(int=i)}>",
        detected_language=None if i % 3 == 2 else LANGUAGES[i % 3][:2],
        language_confidence=0.97, modified_at=fetched - timedelta(minutes=5), section="City",
        tags=("harbour", f"t{i}"), paragraphs=(f"Body of story {i}.", "Second line."),
        markdown=f"# Story {i}\n\nBody.", minhash="ab" * 8, near_duplicate_of=None,
    )  # fmt: skip
    return replace(document, **changes)
