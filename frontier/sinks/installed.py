"""The sinks installed: the entry-point group `frontier.sinks`. Each entry point names a
`SinkKind` (a class is instantiated): its name, the pydantic model of its options
(`FRONTIER_SINK_OPTIONS`, a JSON object), and `open`, which returns a ready `Sink`
(frontier.sinks). frontier's own, `postgres` and `elasticsearch`, are registered the same
way in its pyproject.toml, by the fetcher, which writes to them; a third-party package
registers its own in its metadata (docs/sinks.md).

`load_sinks()` reads the group when it is called and returns a `SinkRegistry` value; there
is no module-level registry. A sink whose entry point fails to load is not installed; the
registry keeps why, so the setting that names it says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from frontier.plugins import load_group, why_missing

if TYPE_CHECKING:
    from frontier.db import Database
    from frontier.settings import Settings
    from frontier.sinks import Sink

ENTRY_POINT_GROUP = "frontier.sinks"


class NoOptions(BaseModel):
    """The options of a sink that takes none (a built-in reads its FRONTIER_* settings)."""

    model_config = ConfigDict(extra="forbid")


class SinkKind(Protocol):
    """What a sink plugin registers: its name, its options' model, and how to open it."""

    name: str
    options_model: type[BaseModel]

    async def open(self, settings: Settings, db: Database, options: Any) -> Sink:
        """A sink ready to write (its index or file created), given the settings, the
        fetcher's database and the validated options. A setting it cannot work with:
        SettingsError naming it; its store unreachable: SinkUnavailable."""
        ...


@dataclass(frozen=True, slots=True)
class SinkRegistry:
    """The installed sinks by name, and the names whose entry point failed to load."""

    sinks: Mapping[str, SinkKind] = field(default_factory=dict)
    broken: Mapping[str, str] = field(default_factory=dict)

    def missing(self, name: str) -> str:
        """Why `name` cannot be used (FRONTIER_SINK's error names the installed ones)."""
        return why_missing("sink", name, self.sinks, self.broken)


def load_sinks(group: str = ENTRY_POINT_GROUP) -> SinkRegistry:
    """The sinks registered in `group` now (each entry point loaded and instantiated)."""
    sinks, broken = load_group(
        group, "sink", lambda kind: hasattr(kind, "options_model") and hasattr(kind, "open")
    )
    return SinkRegistry(sinks, broken)
