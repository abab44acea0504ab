"""Sources: where URLs come from. The built-in `manual` source receives imports and
submissions that name no source.

`SourceRepository` is the one owner of every write to `sources` (SQL in
`frontier/sql/sources.sql`): create and update from the one schema
(`frontier.source_schema`), remove, and the poller's two writes (a feed URL that moved, a
feed that is gone). It owns a source's whole configuration, including the options kept
in the poller's and the spider's rows (`adaptive_interval`, the `spider_*` options); the
poller and the spider own the state columns of those rows and write them themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from frontier.db import Database
from frontier.errors import FrontierError
from frontier.queue_values import SourceRef
from frontier.source_kinds import DEFAULT_KIND, KindRegistry
from frontier.source_schema import (
    InvalidSource,
    PatchForm,
    SourceConfig,
    parse_config,
)
from frontier.sql import load
from frontier.states import IngestionMode

SQL = load("sources")

MANUAL = "manual"
DISCOVERED = "discovered"  # the built-in source of external links the spider finds
BUILT_IN = frozenset({MANUAL, DISCOVERED})  # made by the migrations; never pruned

__all__ = [
    "BUILT_IN",
    "DISCOVERED",
    "MANUAL",
    "InvalidSource",
    "Source",
    "SourceRepository",
    "UnknownSource",
]

# The schema's fields kept in spider_state (the rest: sources, and feed_state's
# adaptive_interval). Written only when given, so a service without rights on
# spider_state (the poller seeding its defaults) never touches it.
SPIDER_OPTIONS = frozenset(name for name in SourceConfig.model_fields if name.startswith("spider_"))


class UnknownSource(FrontierError):
    """No source has that name or id."""


@dataclass(frozen=True, slots=True)
class Source:
    """A stored `sources` row (the read model; the rules are the schema's)."""

    id: UUID
    name: str
    base_url: str | None
    feed_url: str | None
    sitemap_url: str | None
    ingestion_mode: IngestionMode
    feed_poll_interval_minutes: int
    priority: int
    rate_limit_ms: int | None
    fetchprotection: int
    selectors: Any
    article_url_patterns: list[str] | None
    url_filters: Any
    min_published_at: datetime | None
    keep_trailing_slash: bool
    enabled: bool
    created_at: datetime
    updated_at: datetime
    kind: str = DEFAULT_KIND
    config: Any = None  # the kind's options (a JSON object)
    revisit: list[int] | None = None  # seconds between revisits (frontier.revisits)
    politeness_key: str | None = (
        None  # host, domain, ip (frontier.politeness_key); None: the setting
    )
    languages: list[str] | None = None  # articles detected in others are not stored
    access: Any = None  # credentials, headers, cookies by reference (frontier.source_access)
    proxy: Any = None  # its proxy, the password by reference (frontier.source_access)
    render: str = "never"  # never, auto, always (fetcher.render_signs)

    @classmethod
    def from_record(cls, record: asyncpg.Record) -> Source:
        values = dict(record)
        values["ingestion_mode"] = IngestionMode(values["ingestion_mode"])
        return cls(**values)

    @property
    def ref(self) -> SourceRef:
        return SourceRef(self.id, self.priority, self.keep_trailing_slash, self.rate_limit_ms)

    def as_json(self) -> dict[str, Any]:
        return {
            name: (str(value) if isinstance(value, UUID | datetime) else value)
            for name, value in ((n, getattr(self, n)) for n in self.__slots__)
        }


COLUMNS = frozenset(Source.__slots__)


class SourceRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- reads ------------------------------------------------------------------------

    async def get(self, name: str) -> Source:
        record = await self._db.fetchrow(SQL["by_name"], name)
        if record is None:
            raise UnknownSource(f"no source named {name!r} (see `frontier sources list`)")
        return Source.from_record(record)

    async def get_by_id(self, source_id: UUID) -> Source:
        record = await self._db.fetchrow(SQL["by_id"], source_id)
        if record is None:
            raise UnknownSource(f"no source with id {source_id}")
        return Source.from_record(record)

    async def id_of(self, name_or_id: str) -> UUID:
        """The id of the source named `name_or_id`, or `name_or_id` itself when it is a
        UUID (not looked up); UnknownSource when no source has that name."""
        try:
            return UUID(name_or_id)
        except ValueError:
            return (await self.get(name_or_id)).id

    async def get_many(self, source_ids: Sequence[UUID]) -> list[Source]:
        """The sources among `source_ids` that exist (in no particular order)."""
        records = await self._db.fetch(SQL["by_ids"], list(source_ids))
        return [Source.from_record(r) for r in records]

    async def list(self) -> list[Source]:
        return [Source.from_record(r) for r in await self._db.fetch(SQL["list"])]

    async def options(self, source_ids: Sequence[UUID]) -> dict[UUID, dict[str, Any]]:
        """The options each source sets outside `sources` (adaptive_interval and the
        spider_* options), the schema's defaults where none was stored yet."""
        defaults = SourceConfig.model_construct().model_dump(
            include=set(SPIDER_OPTIONS) | {"adaptive_interval"}
        )
        found: dict[UUID, dict[str, Any]] = {}
        for record in await self._db.fetch(SQL["options"], list(source_ids)):
            values = {k: v for k, v in dict(record).items() if k != "id" and v is not None}
            found[record["id"]] = {**defaults, **values}
        return found

    async def configurations(self, sources: Sequence[Source]) -> dict[UUID, dict[str, Any]]:
        """Each source's configuration as stored: every field of the schema, as JSON
        values (what `create` takes back; `sources export` writes them)."""
        options = await self.options([s.id for s in sources])
        found: dict[UUID, dict[str, Any]] = {}
        for source in sources:
            values = {n: getattr(source, n) for n in SourceConfig.model_fields if n in COLUMNS}
            values.update(options.get(source.id, {}))
            values["config"] = values.get("config") or {}
            found[source.id] = {n: _json_value(v) for n, v in values.items()}
        return found

    async def poll_errors(self, source_ids: Sequence[UUID]) -> dict[UUID, str]:
        """The poller's last error on each of these sources that has one (a feed that
        failed, a kind that is not installed...)."""
        records = await self._db.fetch(SQL["poll_errors"], list(source_ids))
        return {r["source_id"]: r["last_error"] for r in records}

    # -- configuration ----------------------------------------------------------------

    async def create(self, config: SourceConfig) -> Source:
        """Store a new source from its create form (validated by the schema)."""
        values = config.values()
        spider = {k: v for k, v in values.items() if k in config.model_fields_set & SPIDER_OPTIONS}

        async def work(tx: Database) -> Source:
            try:
                record = await tx.fetchrow(SQL["insert"], values)
            except asyncpg.CheckViolationError as exc:
                raise InvalidSource(f"{_constraint_field(exc)}: value out of range") from None
            if record is None:
                raise InvalidSource(f"name: a source named {config.name!r} already exists")
            source = Source.from_record(record)
            if spider:
                await _set_spider_options(tx, source.id, spider)
            return source

        return await self._db.run_transaction(work)

    async def add(
        self,
        name: str,
        *,
        base_url: str | None = None,
        feed_url: str | None = None,
        sitemap_url: str | None = None,
        mode: IngestionMode = IngestionMode.FEED,
        priority: int = 5,
        interval_minutes: int = 15,
        rate_limit_ms: int | None = None,
        article_patterns: Sequence[str] | None = None,
    ) -> Source:
        """`create` with keyword arguments for the common fields (validated the same)."""
        return await self.create(
            parse_config(
                {
                    "name": name,
                    "base_url": base_url,
                    "feed_url": feed_url,
                    "sitemap_url": sitemap_url,
                    "ingestion_mode": str(mode),
                    "priority": priority,
                    "feed_poll_interval_minutes": interval_minutes,
                    "rate_limit_ms": rate_limit_ms,
                    "article_url_patterns": None
                    if article_patterns is None
                    else [*article_patterns],
                }
            )
        )

    async def update(
        self, source_id: UUID, patch: PatchForm, *, kinds: KindRegistry | None = None
    ) -> Source:
        """Change the fields `patch` was sent with; the others keep their value. A new
        `kind` or `config` is checked together with the other half as stored."""
        values = patch.values()
        spider = {k: v for k, v in values.items() if k in SPIDER_OPTIONS}
        own = {k: v for k, v in values.items() if k not in SPIDER_OPTIONS}

        async def work(tx: Database) -> Source:
            current = await SourceRepository(tx).get_by_id(source_id)
            if current.name == MANUAL and own.get("name", MANUAL) != MANUAL:
                raise InvalidSource("name: the built-in source 'manual' cannot be renamed")
            if current.name == MANUAL and own.get("enabled") is False:
                raise InvalidSource(
                    "enabled: the built-in source 'manual' cannot be disabled (it is never"
                    " polled; URLs that name no source go to it)"
                )
            if "kind" in own or "config" in own:
                own.update(_kind_and_config(current, own, kinds))
            if not own:  # only spider options: `sources` is not written
                await _set_spider_options(tx, source_id, spider)
                return current
            try:
                record = await tx.fetchrow(SQL["update_by_id"], source_id, own)
            except asyncpg.UniqueViolationError:
                raise InvalidSource(
                    f"name: a source named {own.get('name')!r} already exists"
                ) from None
            except asyncpg.CheckViolationError as exc:
                raise InvalidSource(f"{_constraint_field(exc)}: value out of range") from None
            if record is None:
                raise UnknownSource(f"no source with id {source_id}")
            if "rate_limit_ms" in own and own["rate_limit_ms"] != current.rate_limit_ms:
                for bucket in range(await tx.buckets()):
                    await tx.execute(SQL["apply_rate_limit"], source_id, bucket)
            if spider:
                await _set_spider_options(tx, source_id, spider)
            return Source.from_record(record)

        return await self._db.run_transaction(work)

    async def remove(self, name: str) -> None:
        if name == MANUAL:
            raise InvalidSource("the built-in source 'manual' cannot be removed")
        if await self._db.fetchrow(SQL["delete"], name) is None:
            raise UnknownSource(f"no source named {name!r}")

    async def delete_by_id(self, source_id: UUID) -> None:
        """Delete a source; its URLs stay in the frontier without one."""
        source = await self.get_by_id(source_id)
        if source.name == MANUAL:
            raise InvalidSource("id: the built-in source 'manual' cannot be removed")
        if await self._db.fetchrow(SQL["delete_by_id"], source_id) is None:
            raise UnknownSource(f"no source with id {source_id}")

    # -- what a poll changes ----------------------------------------------------------

    async def set_feed_url(self, source_id: UUID, url: str) -> None:
        """A feed URL found by discovery or moved by a permanent redirect."""
        await self._db.execute(SQL["set_feed_url"], source_id, url)

    async def disable(self, source_id: UUID, reason: str, *, now: datetime | None = None) -> None:
        """The feed is gone (410): stop polling the source and record why."""
        await self._db.execute(SQL["disable"], source_id, reason, now)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value.value if isinstance(value, IngestionMode) else value


def _kind_and_config(
    current: Source, changed: dict[str, Any], kinds: KindRegistry | None
) -> dict[str, Any]:
    """A patch's kind and config checked as one: a new kind with the stored config (or a
    new config with the stored kind) must still be valid together."""
    kind = changed.get("kind", current.kind)
    config = changed.get("config", current.config or {})
    checked = parse_config({"name": current.name, "kind": kind, "config": config}, kinds=kinds)
    return {"kind": checked.kind, "config": checked.config}


async def _set_spider_options(tx: Database, source_id: UUID, options: dict[str, Any]) -> None:
    await tx.execute(SQL["ensure_spider_state"], source_id)
    await tx.execute(SQL["set_spider_options"], source_id, options)


def _constraint_field(exc: asyncpg.CheckViolationError) -> str:
    """The column a CHECK constraint of `sources` guards (e.g. sources_priority_check)."""
    name = getattr(exc, "constraint_name", None) or ""
    return name.removeprefix("sources_").removesuffix("_check") or "source"
