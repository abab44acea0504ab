"""Issue 34, item 4: a source's fields are declared once, in the schema
(`frontier.source_schema.SourceConfig`), and every other place that names them is held to
it here, against the `sources` table of a migrated PostgreSQL: the read model (`Source`),
the API's answer (`SourceOut`), the CLI's flags (`SOURCE_FLAGS`) and the column lists of
sources.sql. A field added in one place and not the others fails one of these tests,
naming it."""

from __future__ import annotations

import dataclasses
import re

from frontier.api.models import SourceOut
from frontier.db import Database
from frontier.source_schema import SourceConfig, SourcePatch
from frontier.sources import Source
from frontier.sql import load
from frontier_cli.sources import SOURCE_FLAGS

SQL = load("sources")
# Set by the database, never sent.
STORED_ONLY = {"id", "created_at", "updated_at"}
# Options a source sets in the poller's and the spider's rows, not in `sources`.
ROW_OPTIONS = {
    "adaptive_interval",
    "spider_interval_minutes",
    "spider_allow_external",
    "spider_listing_urls",
}
SCHEMA = set(SourceConfig.model_fields)


async def columns_of_sources(db: Database) -> set[str]:
    rows = await db.fetch(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = 'sources'"
    )
    return {row["column_name"] for row in rows}


async def test_the_table_and_the_read_model_have_the_same_columns(db: Database) -> None:
    columns = await columns_of_sources(db)
    assert {field.name for field in dataclasses.fields(Source)} == columns


async def test_the_schema_is_the_table_without_what_the_database_sets_plus_the_options(
    db: Database,
) -> None:
    columns = await columns_of_sources(db)
    assert (columns - STORED_ONLY) | ROW_OPTIONS == SCHEMA
    assert set(SourcePatch.model_fields) == SCHEMA  # a patch may change any field


async def test_the_apis_answer_is_the_row_with_its_options(db: Database) -> None:
    columns = await columns_of_sources(db)
    assert set(SourceOut.model_fields) == columns | ROW_OPTIONS | {"last_error"}


def test_the_cli_has_a_flag_for_every_field_but_the_name() -> None:
    flags = [field for _, field, _, _ in SOURCE_FLAGS]
    assert len(flags) == len(set(flags))  # one flag per field
    assert set(flags) == SCHEMA - {"name"}  # the name is `add`'s argument, `update --name`


def test_the_writes_of_sources_sql_name_every_column_the_schema_has() -> None:
    insert = re.search(r"INSERT INTO sources \(([^)]*)\)", SQL["insert"])
    assert insert is not None
    inserted = {name.strip() for name in insert.group(1).split(",")}
    stored = SCHEMA - ROW_OPTIONS
    assert inserted == stored
    of_sources = SQL["update_by_id"].split("state AS")[0]  # not the feed_state update
    updated = set(re.findall(r"^\s+(\w+) = CASE WHEN \$2", of_sources, re.M))
    assert updated == stored
    options = set(re.findall(r" AS (\w+)", SQL["options"])) | {"adaptive_interval"}
    assert options == ROW_OPTIONS
