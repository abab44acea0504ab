"""The schema Alembic builds is the one the code and the data model contract
(docs/architecture.md) expect."""

from __future__ import annotations

import json
import re

import psycopg
import pytest

from frontier import migrate
from frontier.states import (
    DeadReason,
    FetchKind,
    IngestionMode,
    LogOutcome,
    Origin,
    RobotsStatus,
    UrlStatus,
    WebSubState,
)
from tests.processes import REPO

# The contract column names of the data model (docs/architecture.md, "The data model
# contract"; tables may hold more).
CONTRACT = {
    "sources": """id name base_url feed_url sitemap_url ingestion_mode feed_poll_interval_minutes
        priority rate_limit_ms fetchprotection selectors article_url_patterns url_filters
        min_published_at enabled created_at updated_at""",
    "url_frontier": """id url url_hash host source_id origin parent_url depth priority status
        next_fetch_at last_fetched_at fetch_count content_hash etag last_modified retry_count
        last_error discovered_at created_at updated_at claimed_by lease_until discovery_meta
        dead_reason final_url http_status fetch_url""",
    "host_state": """host last_fetch_at min_delay_ms robots_txt robots_fetched_at
        robots_ttl_hours next_allowed_at robots_status crawl_delay_ms backoff_until
        consecutive_failures lease_owner lease_until""",
    "feed_state": """source_id feed_url last_polled_at last_etag last_modified last_item_count
        consecutive_errors last_error next_poll_at sitemap_next_poll_at poll_lease_until""",
    "fetch_log": """id kind source_id url outcome http_status items_seen items_new elapsed_ms
        error at""",
    "seeded_sources": "url",
    "raw_content": """url final_url url_hash source_id source_name host origin title body
        summary author published_at image_url language content_hash word_count extractor
        http_status fetched_at""",
}

# (table, column) -> the enum its CHECK constraint must mirror exactly.
ENUM_CHECKS = {
    ("url_frontier", "status"): UrlStatus,
    ("url_frontier", "origin"): Origin,
    ("url_frontier", "dead_reason"): DeadReason,
    ("sources", "ingestion_mode"): IngestionMode,
    ("host_state", "robots_status"): RobotsStatus,
    ("fetch_log", "kind"): FetchKind,
    ("fetch_log", "outcome"): LogOutcome,
    ("raw_content", "origin"): Origin,
    ("spider_state", "last_outcome"): LogOutcome,
    ("websub_subscriptions", "state"): WebSubState,
}


def columns(dsn: str) -> dict[str, set[str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        ).fetchall()
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(table, set()).add(column)
    return found


def check_values(dsn: str, table: str, column: str) -> set[str]:
    """The string literals in the CHECK constraint on `table.column`."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            """SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
               WHERE c.contype = 'c' AND c.conrelid = %s::regclass AND a.attname = %s
                 AND array_length(c.conkey, 1) = 1""",
            (table, column),
        ).fetchall()
    assert len(rows) == 1, f"expected one CHECK on {table}.{column}, found {rows}"
    return set(re.findall(r"'([^']*)'::text", rows[0][0]))


def test_upgrade_creates_the_contract_tables_and_columns(template_dsn: str) -> None:
    found = columns(template_dsn)
    for table, names in CONTRACT.items():
        assert table in found, f"table {table} is missing"
        missing = set(names.split()) - found[table]
        assert not missing, f"{table} lacks {sorted(missing)}"


def test_the_architecture_page_lists_the_contract() -> None:
    """docs/architecture.md's contract table names each table's contract columns, in the
    order above: the page the code's references cite says what this test holds."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = {
        line.split("`")[1]: re.findall(r"`(\w+)`", line.split("|")[2])
        for line in page.splitlines()
        if line.startswith("| `") and line.count("|") == 3
    }
    for table, names in CONTRACT.items():
        assert rows.get(table) == names.split(), table


@pytest.mark.parametrize(("table", "column"), sorted(ENUM_CHECKS))
def test_check_constraints_mirror_the_enums(template_dsn: str, table: str, column: str) -> None:
    assert check_values(template_dsn, table, column) == {
        e.value for e in ENUM_CHECKS[table, column]
    }


def test_upgrade_downgrade_upgrade_round_trip(empty_dsn: str) -> None:
    migrate.upgrade(empty_dsn)
    first = columns(empty_dsn)
    migrate.upgrade(empty_dsn)  # idempotent
    migrate.downgrade(empty_dsn, "base")
    assert set(columns(empty_dsn)) <= {"alembic_version"}
    migrate.upgrade(empty_dsn)
    assert columns(empty_dsn) == first
    migrate.check_current(empty_dsn)


def test_check_current_refuses_an_unmigrated_database(empty_dsn: str) -> None:
    with pytest.raises(migrate.SchemaOutdated, match="frontier db upgrade"):
        migrate.check_current(empty_dsn)


def test_hot_tables_have_autovacuum_settings(template_dsn: str) -> None:
    with psycopg.connect(template_dsn) as conn:
        rows = dict(
            conn.execute(
                "SELECT relname, reloptions FROM pg_class "
                "WHERE relname IN ('url_frontier', 'host_state')"
            ).fetchall()
        )
    for table in ("url_frontier", "host_state"):
        assert any(opt.startswith("autovacuum_vacuum_scale_factor=") for opt in rows[table])


def test_the_manual_source_exists(template_dsn: str) -> None:
    with psycopg.connect(template_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM sources WHERE name = 'manual'").fetchone() == (1,)


def test_source_kinds_migration_makes_every_existing_source_a_feed(empty_dsn: str) -> None:
    migrate.upgrade(empty_dsn, "0010")  # the revision before source kinds
    with psycopg.connect(empty_dsn) as conn:
        conn.execute("INSERT INTO sources (name, feed_url) VALUES ('old', 'https://o.example/f')")
    migrate.upgrade(empty_dsn)
    with psycopg.connect(empty_dsn) as conn:
        rows = conn.execute("SELECT name, kind, config FROM sources ORDER BY name").fetchall()
        assert ("old", "feed", {}) in rows and len(rows) >= 3  # manual, discovered, old
        assert {(kind, json.dumps(config)) for _, kind, config in rows} == {("feed", "{}")}
        for bad in ("kind = 'Not A Name'", "config = '[1]'::jsonb"):
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute(f"UPDATE sources SET {bad} WHERE name = 'old'")
            conn.rollback()
    migrate.downgrade(empty_dsn, "0010")
    assert {"kind", "config"}.isdisjoint(columns(empty_dsn)["sources"])


def test_search_vectors_migration_makes_stored_documents_searchable(empty_dsn: str) -> None:
    migrate.upgrade(empty_dsn, "0023")  # the revision before stored search vectors
    search = (
        "SELECT r.url FROM raw_content r JOIN raw_content_search s USING (url_hash) "
        "WHERE s.search @@ websearch_to_tsquery('simple', %s)"
    )
    with psycopg.connect(empty_dsn) as conn:
        conn.execute(
            "INSERT INTO raw_content (url_hash, url, host, origin, title, body, fetched_at) "
            "VALUES (repeat('a', 64), 'https://o.example/a', 'o.example', 'manual', "
            "'Harbour Bridge', 'The ferry crossed the river at dawn.', now())"
        )
    migrate.upgrade(empty_dsn)
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute(search, ("harbour ferry",)).fetchall() == [("https://o.example/a",)]
        assert conn.execute(search, ('"crossed the river"',)).fetchall() != []
        assert conn.execute(search, ("bridge -ferry",)).fetchall() == []
        conn.execute("DELETE FROM raw_content")
        assert conn.execute("SELECT count(*) FROM raw_content_search").fetchone() == (0,)
    assert "search" not in columns(empty_dsn)["raw_content"]  # the document's shape, unchanged
    migrate.downgrade(empty_dsn, "0023")
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute("SELECT to_regclass('raw_content_search')").fetchone() == (None,)
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'raw_content_search_idx'"
        ).fetchone()
    assert index is not None and "ON public.raw_content USING gin" in index[0]


def test_the_copies_of_the_text_are_compressed_with_lz4_where_the_server_has_it(
    empty_dsn: str,
) -> None:
    """Migration 0048: raw_content's body, paragraphs and markdown, and the versions'
    bodies, are LZ4-compressed on a server built with LZ4, and keep the default (pglz)
    on one without (the embedded wheel's); a long value reads back the same."""
    migrate.upgrade(empty_dsn)
    columns = ("body", "paragraphs", "markdown")
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        lz4 = conn.execute(
            "SELECT 'lz4' = ANY (enumvals) FROM pg_settings "
            "WHERE name = 'default_toast_compression'"
        ).fetchone()
        methods = dict(
            conn.execute(
                "SELECT c.relname || '.' || a.attname, a.attcompression FROM pg_attribute a "
                "JOIN pg_class c ON c.oid = a.attrelid "
                "WHERE (c.relname = 'raw_content' AND a.attname = ANY (%s)) "
                "OR (c.relname = 'document_versions' AND a.attname = 'body')",
                (list(columns),),
            ).fetchall()
        )
        expected = "l" if lz4 and lz4[0] else ""
        assert methods == {
            **{f"raw_content.{c}": expected for c in columns},
            "document_versions.body": expected,
        }
        text = " ".join(f"word{i % 97} and more" for i in range(2_000))
        conn.execute(
            "INSERT INTO raw_content (url_hash, url, host, origin, body, paragraphs, fetched_at) "
            "VALUES (repeat('a', 64), 'http://example.com/a', 'example.com', 'manual', %s, %s,"
            " now())",
            (text, [text, text]),
        )
        row = conn.execute(
            "SELECT body, paragraphs, pg_column_compression(body) FROM raw_content"
        ).fetchone()
        assert row is not None and row[:2] == (text, [text, text])
        assert row[2] == ("lz4" if expected else "pglz")
    migrate.downgrade(empty_dsn, "0047")
    with psycopg.connect(empty_dsn) as conn:
        kept = conn.execute(
            "SELECT DISTINCT attcompression FROM pg_attribute "
            "WHERE attrelid = 'raw_content'::regclass AND attname = ANY (%s)",
            (list(columns),),
        ).fetchall()
    assert kept == [("",)]


def document_text_storage(dsn: str) -> dict[str, tuple[str, int]]:
    """Each text column's storage and statistics target (-1: the server's default)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT c.relname || '.' || a.attname, a.attstorage::text,"
            " coalesce(a.attstattarget::int, -1) FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid"
            " WHERE (c.relname = 'raw_content' AND a.attname IN ('body', 'paragraphs', 'markdown'))"
            " OR (c.relname = 'raw_content_search' AND a.attname = 'search')"
        ).fetchall()
    return {name: (storage, target) for name, storage, target in rows}


def test_the_search_vector_is_not_compressed_and_the_text_keeps_no_statistics(
    empty_dsn: str,
) -> None:
    """Migration 0050: the search vector is stored out of line without a compression
    attempt (and reads back the same), and ANALYZE keeps no statistics of a document's
    text (no statement filters on it); a downgrade restores both."""
    migrate.upgrade(empty_dsn)
    assert document_text_storage(empty_dsn) == {
        "raw_content.body": ("x", 0),
        "raw_content.paragraphs": ("x", 0),
        "raw_content.markdown": ("x", 0),
        "raw_content_search.search": ("e", -1),
    }
    text = " ".join(f"word{i} and more" for i in range(2_000))
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO raw_content (url_hash, url, host, origin, body, paragraphs, fetched_at) "
            "VALUES (repeat('a', 64), 'http://example.com/a', 'example.com', 'manual', %s, %s,"
            " now())",
            (text, [text]),
        )
        conn.execute(
            "INSERT INTO raw_content_search (url_hash, search) "
            "VALUES (repeat('a', 64), to_tsvector('simple'::regconfig, %s))",
            (text,),
        )
        conn.execute("ANALYZE raw_content")
        row = conn.execute(
            "SELECT search = to_tsvector('simple'::regconfig, %s), pg_column_compression(search),"
            " pg_column_size(search) > 2000 FROM raw_content_search",
            (text,),
        ).fetchone()
        assert row == (True, None, True)
        analysed = conn.execute(
            "SELECT attname FROM pg_stats WHERE tablename = 'raw_content'"
            " AND attname IN ('body', 'paragraphs', 'markdown', 'url')"
        ).fetchall()
        assert analysed == [("url",)]
    migrate.downgrade(empty_dsn, "0049")
    assert document_text_storage(empty_dsn) == {
        "raw_content.body": ("x", -1),
        "raw_content.paragraphs": ("x", -1),
        "raw_content.markdown": ("x", -1),
        "raw_content_search.search": ("x", -1),
    }


def content_hash_indexes(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE '%content_hash%'"
            " ORDER BY indexname"
        ).fetchall()
    return [name for (name,) in rows]


def test_no_index_on_the_content_hash_until_a_downgrade(empty_dsn: str) -> None:
    """Migration 0051: no statement finds a row by its content hash, so neither table
    keeps an index of it; a downgrade makes both again."""
    migrate.upgrade(empty_dsn)
    assert content_hash_indexes(empty_dsn) == []
    migrate.downgrade(empty_dsn, "0050")
    assert content_hash_indexes(empty_dsn) == [
        "raw_content_content_hash_idx",
        "url_frontier_content_hash_idx",
    ]


QUEUE_FUNCTIONS = ["frontier_claim", "frontier_complete", "frontier_reap", "frontier_renew"]


def queue_function_sources(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT proname::text, prosrc FROM pg_proc WHERE proname = ANY (%s)",
            (QUEUE_FUNCTIONS,),
        ).fetchall()
    return dict(rows)


def test_the_queue_functions_run_static_statements_on_a_single_server(empty_dsn: str) -> None:
    """Migration 0049: on a server without Citus the claim and answer functions name their
    tables in statements PL/pgSQL prepares once a session, not in `EXECUTE format(...)`
    parsed and planned at every call; a downgrade makes them dynamic again."""
    migrate.upgrade(empty_dsn)
    sources = queue_function_sources(empty_dsn)
    assert sorted(sources) == QUEUE_FUNCTIONS
    for name, source in sources.items():
        assert "EXECUTE" not in source, name
        assert "FROM url_frontier" in source or "UPDATE url_frontier" in source, name
    migrate.downgrade(empty_dsn, "0048")
    assert all("EXECUTE format(" in s for s in queue_function_sources(empty_dsn).values())
