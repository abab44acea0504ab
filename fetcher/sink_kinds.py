"""frontier's own content sinks as the entry-point group `frontier.sinks` registers them
(pyproject.toml): `postgres`, the `raw_content` table; `elasticsearch`, the index
FRONTIER_ELASTICSEARCH_URL points at (Elasticsearch 8 or 9); `opensearch`, an OpenSearch
index (its options: url, index, ...; opensearch-py, the extra frontier[opensearch]);
`jsonl`, JSON-lines files in a directory (its options: path, rotate_mb). The fetcher
writes to them, so it registers them; the sinks themselves live in the core
(frontier.sinks.postgres, .elasticsearch, .opensearch, .jsonl), beside the readers the
API uses. A third-party sink registers a kind of the same shape
(frontier.sinks.installed.SinkKind; docs/sinks.md)."""

from __future__ import annotations

from typing import Any

from frontier.db import Database
from frontier.settings import Settings, SettingsError
from frontier.sinks import Sink
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.sinks.installed import NoOptions
from frontier.sinks.jsonl import JsonLinesOptions
from frontier.sinks.opensearch import OpenSearchOptions


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
        # The Elasticsearch client is imported by ElasticClient when it is made: its import
        # is a large share of a command's start-up (`python -X importtime`), which a
        # fetcher on the PostgreSQL sink (the default) should not pay; every kind is
        # loaded to list the installed ones.
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
        return await ready(sink, "FRONTIER_ELASTICSEARCH_URL")


async def ready(sink: ElasticsearchSink, setting: str) -> Sink:
    """The index sink with its index made; a server it does not speak to: SettingsError."""
    from frontier.sinks.search_clients import UnsupportedServer

    try:
        await sink.ensure_index()
    except UnsupportedServer as exc:
        await sink.close()
        raise SettingsError(f"invalid configuration: {setting}: {exc}") from None
    except BaseException:
        await sink.close()  # its client's connections, before the error is reported
        raise
    return sink


class OpenSearchKind:
    name = "opensearch"
    options_model = OpenSearchOptions

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        from frontier.sinks.opensearch import OpenSearchSink
        from frontier.sinks.search_clients import missing_opensearch

        try:
            import opensearchpy  # noqa: F401
        except ImportError:
            raise SettingsError(
                f"invalid configuration: FRONTIER_SINK: {missing_opensearch()}"
            ) from None
        sink = OpenSearchSink(
            options.url,
            index=options.index,
            flush_docs=options.flush_docs,
            flush_interval_s=options.flush_ms / 1000,
        )
        return await ready(sink, "FRONTIER_SINK_OPTIONS url")


class JsonLinesKind:
    name = "jsonl"
    options_model = JsonLinesOptions

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        from frontier.sinks.jsonl import JsonLinesSink

        return JsonLinesSink.open(options)
