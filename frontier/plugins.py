"""Loading an entry-point group of plugins: source kinds (`frontier.source_kinds`) and
content sinks (`frontier.sinks`). Each entry point is loaded when the group is read (a
class is instantiated), checked, and kept under its name; one that fails to import or is
not what the group holds is not installed, and why is kept, so whoever names it is told.
A broken plugin is that plugin's problem only: the others load."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from pydantic import ValidationError

log = logging.getLogger(__name__)


def load_group(
    group: str, what: str, fits: Callable[[Any], bool]
) -> tuple[dict[str, Any], dict[str, str]]:
    """(plugin by name, why by name of those that failed) for the entry points of `group`;
    `fits(plugin)` says whether a loaded object is one (`what` names it in errors)."""
    points = {ep.name: ep for ep in entry_points(group=group)}
    loaded: dict[str, Any] = {}
    broken: dict[str, str] = {}
    for name, point in sorted(points.items()):
        try:
            target = point.load()
            plugin = target() if isinstance(target, type) else target
            if getattr(plugin, "name", None) != name or not fits(plugin):
                raise TypeError(f"{point.value} is not a {what} named {name!r}")
        except Exception as exc:  # a broken plugin is that plugin's problem only
            log.warning("%s %s (%s) not loaded: %s", what, name, point.value, exc)
            broken[name] = f"{type(exc).__name__}: {exc}"
            continue
        loaded[name] = plugin
    return loaded, broken


def why_missing(what: str, name: str, loaded: Mapping[str, Any], broken: Mapping[str, str]) -> str:
    """Why the plugin `name` cannot be used: it failed to load, or it is not installed
    (the installed ones listed)."""
    if name in broken:
        return f"{what} {name!r} failed to load: {broken[name]}"
    installed = ", ".join(sorted(loaded)) or "none"
    return f"{what} {name!r} is not installed (installed: {installed})"


def validation_reasons(exc: ValidationError, whole: str) -> str:
    """A plugin's options refused by its model, as `key: reason; key: reason` (`whole`
    names the value itself when the error is not about one key)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or whole}: {e['msg']}" for e in exc.errors()
    )
