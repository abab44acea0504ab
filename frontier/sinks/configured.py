"""The content sink the settings name, and its reader: Elasticsearch when
FRONTIER_ELASTICSEARCH_URL is set, else the PostgreSQL `raw_content` table."""

from __future__ import annotations

from frontier.db import Database
from frontier.documents import DocumentReader
from frontier.settings import Settings
from frontier.sinks import ContentSink


async def open_sink(settings: Settings, db: Database) -> ContentSink:
    """The Elasticsearch sink if FRONTIER_ELASTICSEARCH_URL is set, else PostgreSQL."""
    # Imported here: the Elasticsearch client's import is a large share of a command's
    # start-up (`python -X importtime`), which a fetcher on the PostgreSQL sink (the
    # default) should not pay.
    from frontier.sinks.elasticsearch import ElasticsearchSink
    from frontier.sinks.postgres import PostgresSink

    if settings.elasticsearch_url:
        sink = ElasticsearchSink(
            settings.elasticsearch_url,
            index=settings.elasticsearch_index,
            flush_docs=settings.elasticsearch_flush_docs,
            flush_interval_s=settings.elasticsearch_flush_ms / 1000,
        )
        try:
            await sink.ensure_index()
        except BaseException:
            await sink.close()  # its client's connections, before the error is reported
            raise
        return sink
    return PostgresSink(db)


def open_reader(settings: Settings, db: Database) -> DocumentReader:
    """The reader of the sink `open_sink` writes to. Close it when done."""
    if settings.elasticsearch_url:
        from frontier.sinks.elasticsearch import ElasticsearchDocuments

        return ElasticsearchDocuments(
            settings.elasticsearch_url, index=settings.elasticsearch_index
        )
    from frontier.sinks.postgres import PostgresDocuments

    return PostgresDocuments(db)
