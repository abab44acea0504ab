"""frontier's own content sinks as the entry-point group `frontier.sinks` registers them
(pyproject.toml): `postgres`, the `raw_content` table; `elasticsearch`, the index
FRONTIER_ELASTICSEARCH_URL points at (Elasticsearch 8 or 9); `opensearch`, an OpenSearch
index (its options: url, index, ...; opensearch-py, the extra frontier[opensearch]);
`jsonl`, JSON-lines files in a directory (its options: path, rotate_mb); `webhook`, a
receiver's URL (frontier.sinks.webhook). The fetcher writes to them, so it registers
them; the sinks themselves live in the core (frontier.sinks.postgres, .elasticsearch,
.opensearch, .jsonl, .webhook), beside the readers the API uses. A third-party sink
registers a kind of the same shape
(frontier.sinks.installed.SinkKind; docs/sinks.md)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from frontier.db import Database
from frontier.settings import Settings, SettingsError
from frontier.sinks import Sink
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.sinks.installed import NoOptions
from frontier.sinks.jsonl import JsonLinesOptions
from frontier.sinks.opensearch import OpenSearchOptions
from frontier.source_access import SecretRef


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


class WebhookOptions(BaseModel):
    """The options of a `webhook` sink (docs/outputs.md)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(pattern=r"^https?://[^\s]+$", max_length=2000)
    # the signing secret, by reference only: {"env": NAME} or {"file": PATH}
    secret: SecretRef
    batch: int = Field(default=1, ge=1, le=1000)  # documents per POST
    timeout_s: float = Field(default=10.0, gt=0, le=120)
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)


class WebhookKind:
    name = "webhook"
    options_model = WebhookOptions

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        from frontier.safe_http.client import SafeClient
        from frontier.safe_http.limits import HttpLimits
        from frontier.sinks.webhook import WebhookSink, signing_key
        from frontier.source_credentials import CredentialsUnavailable, read_secret

        try:
            secret = read_secret(options.secret.model_dump(exclude_none=True), "secret")
        except CredentialsUnavailable as exc:
            host = urlsplit(options.url).hostname  # not the URL: it may carry a token
            raise SettingsError(f"invalid configuration: webhook to {host}: {exc}") from None
        limits = HttpLimits.from_settings(
            settings,
            total_timeout_s=options.timeout_s,
            max_connections=settings.webhook_max_in_flight,
            max_connections_per_host=settings.webhook_max_in_flight,
        )
        return WebhookSink(
            SafeClient(limits),
            options.url,
            signing_key(secret),
            batch=options.batch,
            timeout_s=options.timeout_s,
            max_body_bytes=options.max_body_bytes,
            max_in_flight=settings.webhook_max_in_flight,
        )
