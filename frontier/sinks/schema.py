"""A document's fields, declared once (issue 33 item 5). Everything that holds or carries a
document follows this list, and tests/integration/test_document_schema.py fails when one
drifts from it:

- `RawDocument` (frontier.sinks) and `DOCUMENT_FIELDS`, the fields in this order;
- the Elasticsearch and OpenSearch index definition (`index_definition()`; the file
  `raw_content.json`, which deploy/compose.yaml mounts, must hold the same: the test
  checks it);
- the PostgreSQL table `raw_content`, made by migrations: the test reads its columns from
  information_schema of a migrated database and compares them with `Field.pg`;
- the JSON forms of a document (`RawDocument.as_json()`, the export's rows, ...): each is
  checked against `json_schema()`.

Adding a field: add it here and to `RawDocument`, a migration for the column, and the same
mapping to raw_content.json (`python -m frontier.sinks.schema` prints the definition).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# The index settings (one shard: a single-node search cluster; refresh every 5 s).
INDEX_SETTINGS: dict[str, Any] = {
    "number_of_shards": 1,
    "number_of_replicas": 0,
    "refresh_interval": "5s",
}

# (PostgreSQL's data_type in information_schema.columns, the JSON Schema of a value)
_TEXT = ("text", {"type": "string"})
_HASH = ("character", {"type": "string", "pattern": "^[0-9a-f]{64}$"})  # char(64)
_CHAR = ("character", {"type": "string"})
_TIME = ("timestamp with time zone", {"type": "string", "format": "date-time"})
_INT = ("integer", {"type": "integer"})
_SMALLINT = ("smallint", {"type": "integer"})
_BIGINT = ("bigint", {"type": "integer"})
_BOOL = ("boolean", {"type": "boolean"})
_REAL = ("real", {"type": "number"})
_UUID = ("uuid", {"type": "string", "format": "uuid"})
_TEXTS = ("ARRAY", {"type": "array", "items": {"type": "string"}})

_KEYWORD: dict[str, Any] = {"type": "keyword"}
_URL: dict[str, Any] = {"type": "keyword", "ignore_above": 4096}
_SHORT_KEYWORD: dict[str, Any] = {"type": "keyword", "ignore_above": 512}
_SEARCHED: dict[str, Any] = {"type": "text"}
_STORED_TEXT: dict[str, Any] = {"type": "text", "index": False}
_DATE: dict[str, Any] = {"type": "date"}


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a document: its column, its index mapping and its JSON value."""

    name: str
    column: tuple[str, dict[str, Any]]  # (PostgreSQL data type, JSON Schema of a value)
    index: dict[str, Any]  # the Elasticsearch / OpenSearch mapping of the field
    required: bool = False  # NOT NULL in the table, never null in JSON
    heavy: bool = False  # the article's text: exported only with --with-body
    doc: str = field(default="", compare=False)

    @property
    def pg(self) -> str:
        return self.column[0]

    @property
    def json(self) -> dict[str, Any]:
        value = dict(self.column[1])
        if self.required:
            return value
        return {"anyOf": [value, {"type": "null"}]}


FIELDS: tuple[Field, ...] = (
    Field("url_hash", _HASH, _KEYWORD, required=True, doc="sha256 of the URL: the id"),
    Field("url", _TEXT, _URL, required=True),
    Field("final_url", _TEXT, _URL, doc="after redirects"),
    Field("source_id", _UUID, _KEYWORD),
    Field("source_name", _TEXT, _KEYWORD),
    Field("host", _TEXT, _KEYWORD, required=True),
    Field("origin", _TEXT, _KEYWORD, required=True, doc="feed, sitemap, spider or manual"),
    Field("title", _TEXT, _SEARCHED),
    Field("body", _TEXT, _SEARCHED, heavy=True),
    Field("summary", _TEXT, _SEARCHED),
    Field(
        "author",
        _TEXT,
        {"type": "text", "fields": {"raw": {"type": "keyword", "ignore_above": 512}}},
    ),
    Field("published_at", _TIME, _DATE),
    Field("image_url", _TEXT, {"type": "keyword", "index": False}),
    Field("language", _TEXT, _KEYWORD, doc="as the page or feed declares it"),
    Field("content_hash", _CHAR, _KEYWORD),
    Field("word_count", _INT, {"type": "integer"}),
    Field("extractor", _TEXT, _KEYWORD),
    Field("http_status", _SMALLINT, {"type": "short"}),
    Field("fetched_at", _TIME, _DATE, required=True),
    Field("paywalled", _BOOL, {"type": "boolean"}, required=True),
    Field("warc_file", _TEXT, _KEYWORD),
    Field("warc_offset", _BIGINT, {"type": "long", "index": False}),
    Field("warc_length", _BIGINT, {"type": "long", "index": False}),
    Field("warc_record_id", _TEXT, _KEYWORD),
    Field("detected_language", _TEXT, _KEYWORD),
    Field("language_confidence", _REAL, {"type": "float"}),
    Field("modified_at", _TIME, _DATE),
    Field("section", _TEXT, _SHORT_KEYWORD),
    Field("tags", _TEXTS, _SHORT_KEYWORD, required=True),
    Field("paragraphs", _TEXTS, _STORED_TEXT, required=True, heavy=True),
    Field("markdown", _TEXT, _STORED_TEXT, heavy=True),
    Field("minhash", _TEXT, {"type": "keyword", "index": False, "doc_values": False}),
    Field("near_duplicate_of", _HASH, _KEYWORD),
)

FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
BY_NAME = {f.name: f for f in FIELDS}
# Dates, which JSON carries as ISO 8601 text.
DATE_FIELDS = tuple(f.name for f in FIELDS if f.column is _TIME)
# What an export leaves out unless asked for the article's text (--with-body).
HEAVY_FIELDS = tuple(f.name for f in FIELDS if f.heavy)


def index_definition(server: str = "elasticsearch", major: int = 8) -> dict[str, Any]:
    """The index's settings and mappings for this server and major. Elasticsearch 8 and 9
    and OpenSearch 1-3 take the same definition: every mapping parameter used here
    (`keyword` with `ignore_above`, `text` with `index: false`, multi-fields, `doc_values`,
    `dynamic: strict`) is unchanged across them (docs/sinks.md, "Elasticsearch 8 and 9,
    OpenSearch"). The arguments are where a difference would go."""
    del server, major  # the same definition for each, today
    return {
        "settings": dict(INDEX_SETTINGS),
        "mappings": {"dynamic": "strict", "properties": {f.name: f.index for f in FIELDS}},
    }


def json_schema(fields: tuple[str, ...] = FIELD_NAMES) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a document's JSON form holding exactly `fields`."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {name: BY_NAME[name].json for name in fields},
        "required": list(fields),
        "additionalProperties": False,
    }


if __name__ == "__main__":  # the definition raw_content.json must hold
    print(json.dumps(index_definition(), indent=2))
