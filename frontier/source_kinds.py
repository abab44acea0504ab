"""Source kinds: what a source is polled as. A kind is a Python object registered in the
entry-point group `frontier.source_kinds` under its name (frontier's own `feed`,
`sitemap` and `wordpress` are registered the same way in its pyproject.toml; the core
names none of them, not even as a string: tests/unit/test_layout.py). This module
holds what the core needs of a kind to validate a source: its name and the pydantic
model of its `config`; the polling half of the interface is `poller.kinds`
(docs/sources.md "Source kinds" describes both).

`load_kinds()` reads the group when it is called and returns a `KindRegistry` value: the
edge (the poller, the schema) builds one and passes it down; there is no module-level
registry. A kind whose entry point fails to import is not installed; the registry keeps
why, so the source that names it is told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from frontier.plugins import load_group, validation_reasons, why_missing
from frontier.states import ShippedKind

ENTRY_POINT_GROUP = "frontier.source_kinds"
DEFAULT_KIND = str(ShippedKind.FEED)
KIND_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,49}$"  # the CHECK on sources.kind


class PollOptions(BaseModel):
    """The config keys every kind takes (a kind's config model extends this)."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float | None = Field(
        default=None,
        strict=True,
        gt=0,
        le=600,
        description="Seconds one request of this source may take (unset: the global one).",
    )
    host_header: str | None = Field(
        default=None,
        max_length=253,
        pattern=r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$",
        description="At fetchprotection 2: the Host header sent (Origin and Referer follow).",
    )
    origin: str | None = Field(
        default=None, max_length=2000, description="At fetchprotection 2: the Origin header."
    )
    referer: str | None = Field(
        default=None, max_length=2000, description="At fetchprotection 2: the Referer header."
    )


class KindSpec(Protocol):
    """What the core needs of a kind: its name and the model its config is checked by."""

    name: str
    config_model: type[PollOptions]


@dataclass(frozen=True, slots=True)
class KindRegistry:
    """The installed kinds by name, and the names whose entry point failed to load."""

    kinds: Mapping[str, Any] = field(default_factory=dict)
    broken: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str) -> Any | None:
        return self.kinds.get(name)

    def missing(self, name: str) -> str:
        """Why `name` cannot be used (the message a source naming it is given)."""
        return why_missing("source kind", name, self.kinds, self.broken)


def load_kinds(group: str = ENTRY_POINT_GROUP) -> KindRegistry:
    """The kinds registered in `group` now (each entry point loaded and instantiated)."""
    kinds, broken = load_group(group, "source kind", lambda kind: hasattr(kind, "config_model"))
    return KindRegistry(kinds, broken)


def check_config(kind: KindSpec, config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` validated by `kind`, as the JSON object stored (only the keys given).
    A refusal is a ValueError `key: reason; key: reason`."""
    try:
        model = kind.config_model.model_validate(dict(config))
    except ValidationError as exc:
        raise ValueError(validation_reasons(exc, "config")) from None
    return model.model_dump(mode="json", exclude_unset=True)


def parse_options(kind: KindSpec, config: Mapping[str, Any]) -> Any:
    """The kind's config model for a stored config (already validated when stored)."""
    return kind.config_model.model_validate(dict(config))
