"""The content sink the settings name, and its reader. `FRONTIER_SINK` names an installed
sink (frontier.sinks.installed); unset, it is `elasticsearch` when
FRONTIER_ELASTICSEARCH_URL is set, else `postgres`, as before sinks were plugins."""

from __future__ import annotations

from pydantic import BaseModel, ValidationError

from frontier.db import Database
from frontier.documents import DocumentReader
from frontier.plugins import validation_reasons
from frontier.settings import Settings, SettingsError
from frontier.sinks import Sink
from frontier.sinks.installed import SinkKind, SinkRegistry, load_sinks

# The built-ins' names: the defaults of FRONTIER_SINK, and the sinks whose documents the
# index reader reads back (any other is read from the PostgreSQL table).
POSTGRES, ELASTICSEARCH, OPENSEARCH = "postgres", "elasticsearch", "opensearch"


def sink_name(settings: Settings) -> str:
    """The name of the sink the settings choose."""
    if settings.sink:
        return settings.sink
    return ELASTICSEARCH if settings.elasticsearch_url else POSTGRES


def chosen_sink(
    settings: Settings, sinks: SinkRegistry | None = None
) -> tuple[SinkKind, BaseModel]:
    """The kind of the sink the settings name, from `sinks` (default: those installed
    now), and its validated options. A name that is not installed, or options its model
    refuses: SettingsError (`frontier up` asks this before it starts anything)."""
    installed = sinks if sinks is not None else load_sinks()
    name = sink_name(settings)
    kind = installed.sinks.get(name)
    if kind is None:
        raise SettingsError(f"invalid configuration: FRONTIER_SINK: {installed.missing(name)}")
    try:
        return kind, kind.options_model.model_validate(settings.sink_options or {})
    except ValidationError as exc:
        reasons = validation_reasons(exc, "options")
        raise SettingsError(
            f"invalid configuration: FRONTIER_SINK_OPTIONS of sink {name!r}: {reasons}"
        ) from None


async def open_sink(settings: Settings, db: Database, sinks: SinkRegistry | None = None) -> Sink:
    """The sink the settings name (`chosen_sink`), opened."""
    kind, options = chosen_sink(settings, sinks)
    return await kind.open(settings, db, options)


def open_reader(settings: Settings, db: Database) -> DocumentReader:
    """The reader of the documents: the index when the sink is `elasticsearch` or
    `opensearch`, else the PostgreSQL table. Close it when done."""
    name = sink_name(settings)
    if name == ELASTICSEARCH and settings.elasticsearch_url:
        from frontier.sinks.elasticsearch import ElasticsearchDocuments

        return ElasticsearchDocuments(
            settings.elasticsearch_url, index=settings.elasticsearch_index
        )
    if name == OPENSEARCH:
        from frontier.sinks.opensearch import OpenSearchOptions, open_reader

        return open_reader(OpenSearchOptions.model_validate(settings.sink_options or {}))
    from frontier.sinks.postgres import PostgresDocuments

    return PostgresDocuments(db)
