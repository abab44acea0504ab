"""The content sinks the settings name, and their reader. `FRONTIER_SINK` names one
installed sink (frontier.sinks.installed), required; unset, it is `elasticsearch` when
FRONTIER_ELASTICSEARCH_URL is set, else `postgres`, as before sinks were plugins.
`FRONTIER_SINKS` names several instead (docs/outputs.md): the required ones are written
together (frontier.sinks.several), the optional ones are fed by the outbox
(frontier.outbox)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from frontier.db import Database
from frontier.documents import DocumentReader
from frontier.outbox import OutboxRepository, SinkBacklog
from frontier.plugins import validation_reasons
from frontier.settings import Settings, SettingsError, SinkEntry
from frontier.sinks import Sink
from frontier.sinks.installed import SinkKind, SinkRegistry, load_sinks

# The built-ins' names: the defaults of FRONTIER_SINK, and the sinks whose documents the
# index reader reads back (any other is read from the PostgreSQL table).
POSTGRES, ELASTICSEARCH, OPENSEARCH = "postgres", "elasticsearch", "opensearch"


def sink_name(settings: Settings) -> str:
    """The name of the sink the settings choose (of FRONTIER_SINKS: the first required
    one's kind, whose documents are read back)."""
    if settings.sinks:
        return next(e.kind_name for e in settings.sinks if e.required)
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


@dataclass(frozen=True, slots=True)
class ChosenSink:
    """One sink of the configuration: its name, kind, validated options, and whether it
    is required."""

    name: str
    kind: SinkKind
    options: BaseModel
    required: bool = True

    async def open(self, settings: Settings, db: Database) -> Sink:
        return await self.kind.open(settings, db, self.options)


def chosen_sinks(settings: Settings, sinks: SinkRegistry | None = None) -> list[ChosenSink]:
    """Every sink the settings name: FRONTIER_SINKS' entries, or FRONTIER_SINK's one
    (`chosen_sink`), required. A kind that is not installed, or options its model
    refuses: SettingsError naming the entry (`frontier up` asks this before it starts)."""
    if not settings.sinks:
        kind, options = chosen_sink(settings, sinks)
        return [ChosenSink(sink_name(settings), kind, options)]
    installed = sinks if sinks is not None else load_sinks()
    return [_entry(entry, installed) for entry in settings.sinks]


def _entry(entry: SinkEntry, installed: SinkRegistry) -> ChosenSink:
    where = f"invalid configuration: FRONTIER_SINKS: entry {entry.name!r}"
    kind = installed.sinks.get(entry.kind_name)
    if kind is None:
        raise SettingsError(f"{where}: {installed.missing(entry.kind_name)}")
    try:
        options = kind.options_model.model_validate(entry.options)
    except ValidationError as exc:
        raise SettingsError(f"{where}: options: {validation_reasons(exc, 'options')}") from None
    return ChosenSink(entry.name, kind, options, entry.required)


@dataclass(slots=True)
class OpenedSinks:
    """The sinks of the configuration: the required ones opened, as one `Sink` (the one
    itself when alone, else frontier.sinks.several.SinkSet), and how to open each
    optional one (the outbox's delivery opens them, and again after a failure)."""

    required: Sink
    optional: dict[str, Callable[[], Awaitable[Sink]]] = field(default_factory=dict)
    # Whether the outbox's rows hold the documents' payloads: not when the PostgreSQL
    # sink is among the required ones (the delivery reads them from raw_content).
    outbox_payloads: bool = True


async def open_sinks(
    settings: Settings, db: Database, sinks: SinkRegistry | None = None
) -> OpenedSinks:
    """The sinks the settings name (`chosen_sinks`): the required ones opened (one that
    fails to open closes those opened before it), the optional ones ready to open."""
    from frontier.sinks.several import SinkSet

    chosen = chosen_sinks(settings, sinks)
    optional = {c.name: _opener(c, settings, db) for c in chosen if not c.required}
    opened: list[Sink] = []
    try:
        for c in chosen:
            if c.required:
                opened.append(await c.open(settings, db))
    except BaseException:
        for sink in opened:
            await sink.close()
        raise
    if len(opened) == 1 and not optional:
        return OpenedSinks(opened[0])
    in_postgres = any(c.required and c.kind.name == POSTGRES for c in chosen)
    return OpenedSinks(
        SinkSet(opened, list(optional), OutboxRepository(db)), optional, not in_postgres
    )


def _opener(chosen: ChosenSink, settings: Settings, db: Database) -> Callable[[], Awaitable[Sink]]:
    async def open_it() -> Sink:
        return await chosen.open(settings, db)

    return open_it


async def open_sink(settings: Settings, db: Database, sinks: SinkRegistry | None = None) -> Sink:
    """The required sinks the settings name (`open_sinks`), opened, as one `Sink`."""
    return (await open_sinks(settings, db, sinks)).required


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


def sinks_status(
    settings: Settings, backlogs: Sequence[SinkBacklog], now: datetime
) -> list[dict[str, Any]]:
    """Each sink's line of `frontier sinks status` and the dashboard: the configured ones
    in their order (a required one has no backlog: it is written before the URL
    completes), then any other the outbox still holds rows for (configured no more)."""
    configured = (
        [(e.name, e.required) for e in settings.sinks]
        if settings.sinks
        else [(sink_name(settings), True)]
    )
    by_name = {b.sink: b for b in backlogs}
    lines = []
    for name, required in configured:
        backlog = by_name.pop(name, None) or SinkBacklog(name, 0, None, 0, None, None)
        lines.append({**backlog.as_json(now), "required": required, "configured": True})
    for backlog in by_name.values():
        lines.append({**backlog.as_json(now), "required": False, "configured": False})
    return lines
