"""frontier's own content sinks as the entry-point group `frontier.sinks` registers them
(pyproject.toml): `postgres`, the `raw_content` table, and `elasticsearch`, the index
FRONTIER_ELASTICSEARCH_URL points at. The fetcher writes to them, so it registers them; the
sinks themselves live in the core (frontier.sinks.postgres, frontier.sinks.elasticsearch),
beside the readers the API uses. A third-party sink registers a kind of the same shape
(frontier.sinks.installed.SinkKind; docs/sinks.md)."""

from __future__ import annotations

from typing import Any

from frontier.db import Database
from frontier.settings import Settings, SettingsError
from frontier.sinks import Sink
from frontier.sinks.installed import NoOptions


class PostgresKind:
    name = "postgres"
    options_model = NoOptions

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        from frontier.sinks.postgres import PostgresSink

        return PostgresSink(db)


class ElasticsearchKind:
    name = "elasticsearch"
    options_model = NoOptions

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        # Imported here: the Elasticsearch client's import is a large share of a command's
        # start-up (`python -X importtime`), which a fetcher on the PostgreSQL sink (the
        # default) should not pay; every kind is loaded to list the installed ones.
        from frontier.sinks.elasticsearch import ElasticsearchSink

        if not settings.elasticsearch_url:
            raise SettingsError(
                "invalid configuration: FRONTIER_SINK=elasticsearch needs "
                "FRONTIER_ELASTICSEARCH_URL"
            )
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
