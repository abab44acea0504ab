"""One schema of a document (frontier.sinks.schema, issue 33 item 5): everything that holds
or carries a document is checked against it, and this test fails when one drifts:

- `RawDocument`'s fields, in order;
- the PostgreSQL table `raw_content` of a migrated database (information_schema): each
  column's type and nullability;
- the index definition the Elasticsearch and OpenSearch sinks create, and the file
  raw_content.json (deploy/compose.yaml mounts it);
- every JSON form of a document (JSON_FORMS: add a new one there), validated by its JSON
  Schema, `json_schema()`, which names exactly the fields the form must hold.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

from frontier.db import Database
from frontier.documents import DocumentFilter, ExportQuery, export_fields
from frontier.export import ndjson
from frontier.sinks import RawDocument
from frontier.sinks.elasticsearch import load_index_definition
from frontier.sinks.payload import document_payload, fields_payload
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from frontier.sinks.schema import BY_NAME, FIELD_NAMES, FIELDS, index_definition, json_schema
from tests.full_documents import full_document

END = datetime(2100, 1, 1, tzinfo=UTC)


def test_raw_document_has_the_schema_fields_in_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(RawDocument)) == FIELD_NAMES


async def test_the_table_matches_the_schema(db: Database) -> None:
    columns = await db.fetch(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'raw_content'"
    )
    table = {c["column_name"]: (c["data_type"], c["is_nullable"] == "NO") for c in columns}
    declared = {f.name: (f.pg, f.required) for f in FIELDS}
    assert table == declared


@pytest.mark.parametrize(
    ("server", "major"),
    [("elasticsearch", 8), ("elasticsearch", 9), ("opensearch", 2), ("opensearch", 3)],
)
def test_the_index_mapping_is_the_schema(server: str, major: int) -> None:
    definition = index_definition(server, major)
    assert list(definition["mappings"]["properties"]) == list(FIELD_NAMES)
    assert definition["mappings"]["dynamic"] == "strict"
    assert load_index_definition() == index_definition()  # the file compose mounts


async def _as_json(db: Database, doc: RawDocument) -> list[dict[str, Any]]:
    return [doc.as_json()]


async def _exported(db: Database, doc: RawDocument, with_body: bool) -> list[dict[str, Any]]:
    await PostgresSink(db).write([doc])
    query = ExportQuery(DocumentFilter(), until=END, with_body=with_body)
    return [json.loads(line) for page in [p async for p in PostgresDocuments(db).export(query)]
            for line in ndjson(page).decode().splitlines()]  # fmt: skip


async def _exported_with_body(db: Database, doc: RawDocument) -> list[dict[str, Any]]:
    return await _exported(db, doc, True)


async def _exported_without_body(db: Database, doc: RawDocument) -> list[dict[str, Any]]:
    return await _exported(db, doc, False)


async def _webhook_payload(db: Database, doc: RawDocument) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(document_payload(doc)))]  # as it is sent


async def _payload_from_table(db: Database, doc: RawDocument) -> list[dict[str, Any]]:
    """The payload the outbox builds from raw_content (rows without one)."""
    sink = PostgresSink(db)
    await sink.write([doc])
    stored = await sink.stored([doc.url_hash])
    return [json.loads(json.dumps(fields_payload(row))) for row in stored.values()]


# A JSON form of a document: its name, the fields it holds, and how to get it from a
# document (given the test database). A new form (the webhook's payload, ...) goes here.
JsonForm = Callable[[Database, RawDocument], Awaitable[list[dict[str, Any]]]]
JSON_FORMS: list[tuple[str, tuple[str, ...], JsonForm]] = [
    ("RawDocument.as_json (the search and jsonl sinks' source)", FIELD_NAMES, _as_json),
    ("export, --with-body (jsonl, GET /api/v1/export)", export_fields(True), _exported_with_body),
    ("export (jsonl, GET /api/v1/export)", export_fields(False), _exported_without_body),
    ("document_payload (the webhook's body, the outbox's copy)", FIELD_NAMES, _webhook_payload),
    ("document_payload of raw_content's copy (the outbox's keys-only rows)", FIELD_NAMES,
     _payload_from_table),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fields", "form"), JSON_FORMS, ids=[f[0] for f in JSON_FORMS])
@pytest.mark.parametrize("nulls", [False, True], ids=["full", "nulls"])
async def test_json_forms_match_the_schema(
    db: Database, name: str, fields: tuple[str, ...], form: JsonForm, nulls: bool
) -> None:
    doc = full_document(1)
    if nulls:  # every field that may be null, null
        empty = {f.name: None for f in FIELDS if not f.required}
        doc = dataclasses.replace(doc, **empty)
    documents = await form(db, doc)
    assert documents, f"{name}: no document"
    for document in documents:
        jsonschema.validate(document, json_schema(fields))
        assert list(document) == list(fields), f"{name}: fields out of the schema's order"


def test_a_drift_is_caught() -> None:
    """The check fails on a form with a field of the wrong type or one too many."""
    document = full_document(1).as_json()
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "word_count": "5"}, json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "extra": 1}, json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "fetched_at": None}, json_schema())  # NOT NULL
    assert BY_NAME["fetched_at"].required


async def test_each_document_keeps_its_own_paragraphs_in_a_batch(db: Database) -> None:
    # One array of every document's paragraphs, cut by counts: none, one, and paragraphs
    # with what JSON or a separator would have to escape, and a rewrite of a stored one.
    lists = [
        (),
        ("Only one.",),
        ('"Quoted", \\ back-slashed,', "line\nbroken", "", "\u00e9t\u00e9 \U0001f600"),
        (),
        tuple(f"p{i}" for i in range(40)),
    ]
    docs = [full_document(i, paragraphs=p) for i, p in enumerate(lists)]
    sink = PostgresSink(db)
    await sink.write(docs[:2])
    await sink.write([dataclasses.replace(docs[1], paragraphs=("Rewritten.", "Twice.")), *docs[2:]])
    stored = [await sink.get(doc.url_hash) for doc in docs]
    assert [tuple(row["paragraphs"]) for row in stored if row] == [
        (),
        ("Rewritten.", "Twice."),
        *lists[2:],
    ]
