"""Names of the plugin interface the poller renamed (issue 34: names that serve every
source kind, not feeds only), still importable from their old place for the kinds
written against them. Each old name warns (`DeprecationWarning`) and will be removed in
a later release; docs/sources.md "Writing a kind" names the new ones."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

RENAMED: Mapping[str, Mapping[str, str]] = {
    "poller.entries": {"FeedEntry": "Entry"},
    "poller.errors": {"FeedRefused": "DocumentRefused", "FeedUnavailable": "DocumentUnavailable"},
}


def old_name(module: str, names: Mapping[str, Any], name: str) -> Any:
    """`name` looked up in `module` (whose globals are `names`): the new value of a renamed
    name, with a warning; else `AttributeError`, as for any missing name."""
    new = RENAMED.get(module, {}).get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} is deprecated: use {module}.{new}", DeprecationWarning, stacklevel=3
    )
    return names[new]
