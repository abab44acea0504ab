"""`frontier sources import FILE --sync [--prune]`: make the stored sources match a feeds
spec or OPML file (`frontier.source_specs`), by name.

`plan_sync` compares each entry of the file with the stored source of its name, both as
the schema reads them (a field the file leaves out is its default): a new name is added,
a source whose configuration differs is updated (only the fields that differ), and with
`prune` a source the file does not name is removed. `apply_sync` carries the plan out
through `SourceRepository`, one source at a time (one refusal never stops the others);
`--dry-run` prints the plan only.

Never pruned: the built-in sources `manual` and `discovered` (the spider's external
links; `frontier.sources.BUILT_IN`), and the source of an entry the file names
but that was refused (its entry is an error, its source stays as it is). When a refused
entry has no readable name, nothing is pruned (it could have named any source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frontier.errors import FrontierError
from frontier.source_schema import SourceConfig, parse_config, parse_patch
from frontier.source_specs import ParsedSpecs, SpecError
from frontier.sources import BUILT_IN, Source, SourceRepository


@dataclass(frozen=True, slots=True)
class Change:
    entry: int
    name: str
    fields: dict[str, tuple[Any, Any]]  # field -> (stored, in the file)


@dataclass(slots=True)
class SyncPlan:
    add: list[tuple[int, SourceConfig]] = field(default_factory=list)
    update: list[tuple[Change, Source]] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[SpecError] = field(default_factory=list)
    dry_run: bool = True

    def as_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "added": [spec.name for _, spec in self.add],
            "updated": [
                {
                    "name": c.name,
                    "fields": {k: {"from": a, "to": b} for k, (a, b) in c.fields.items()},
                }
                for c, _ in self.update
            ],
            "removed": self.remove,
            "unchanged": len(self.unchanged),
            "failed": len(self.errors),
            "errors": [e.as_json() for e in self.errors],
        }


def _as_read(config: dict[str, Any]) -> dict[str, Any]:
    """A stored configuration as the schema reads it (what a file entry is compared
    with); as stored when the schema refuses it now (a kind no longer installed)."""
    try:
        return parse_config(config).values()
    except FrontierError:
        return config


async def plan_sync(repository: SourceRepository, parsed: ParsedSpecs, *, prune: bool) -> SyncPlan:
    stored = {s.name: s for s in await repository.list()}
    configurations = await repository.configurations(list(stored.values()))
    plan = SyncPlan(errors=list(parsed.errors))
    named: dict[str, int] = {}  # name -> its entry
    for number, spec in parsed.specs:
        if spec.name in named:
            plan.errors.append(
                SpecError(number, spec.name, f"name: also the name of entry {named[spec.name]}")
            )
            continue
        named[spec.name] = number
        current = stored.get(spec.name)
        if current is None:
            plan.add.append((number, spec))
            continue
        was, wanted = _as_read(configurations[current.id]), spec.values()
        changed = {k: (was.get(k), v) for k, v in wanted.items() if was.get(k) != v}
        if changed:
            plan.update.append((Change(number, spec.name, changed), current))
        else:
            plan.unchanged.append(spec.name)
    if prune:
        refused = {e.name for e in plan.errors}
        if None in refused:
            plan.errors.append(
                SpecError(0, None, "nothing pruned: an entry without a readable name failed")
            )
        else:
            kept = named.keys() | refused | BUILT_IN
            plan.remove = sorted(name for name in stored if name not in kept)
    plan.errors.sort(key=lambda e: e.entry)
    return plan


async def apply_sync(repository: SourceRepository, plan: SyncPlan) -> SyncPlan:
    """Carry `plan` out; what the database refuses becomes a per-entry error and leaves
    the plan's lists (which then say what was done)."""
    plan.dry_run = False
    added = []
    for number, spec in plan.add:
        try:
            await repository.create(spec)
        except FrontierError as exc:
            plan.errors.append(SpecError(number, spec.name, str(exc)))
        else:
            added.append((number, spec))
    updated = []
    for change, source in plan.update:
        try:
            patch = parse_patch({k: new for k, (_, new) in change.fields.items()})
            await repository.update(source.id, patch)
        except FrontierError as exc:
            plan.errors.append(SpecError(change.entry, change.name, str(exc)))
        else:
            updated.append((change, source))
    removed = []
    for name in plan.remove:
        try:
            await repository.remove(name)
        except FrontierError as exc:
            plan.errors.append(SpecError(0, name, str(exc)))
        else:
            removed.append(name)
    plan.add, plan.update, plan.remove = added, updated, removed
    plan.errors.sort(key=lambda e: e.entry)
    return plan
