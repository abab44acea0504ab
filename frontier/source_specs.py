"""Sources in bulk: a YAML feeds spec or an OPML file, each entry validated by the one
source schema (`frontier.source_schema.SourceConfig`) with per-entry errors, and imported
one by one through `SourceRepository` (one bad entry never stops the others).

YAML: a top-level `sources:` list whose keys are the schema's fields (the `sources`
columns, `adaptive_interval` and the `spider_*` options; docs/sources.md):

    sources:
      - name: Example News
        feed_url: https://example.com/feed.xml
        base_url: https://example.com/
        priority: 7
        feed_poll_interval_minutes: 30
        url_filters: {exclude: ["/sponsored/"]}

OPML: every `<outline>` with an `xmlUrl` (nested category outlines are walked); `text`
or `title` names it, `htmlUrl` is its `base_url`; the other fields, in the
`frontier:source` attribute `sources export` writes (`frontier.source_export`), are read
back too (an outline with that attribute and no `xmlUrl` is a source without a feed).
OPML is read with lxml, entities unresolved, no DTD, no network.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

from frontier.errors import FrontierError
from frontier.source_export import OPML_ATTRIBUTE
from frontier.source_kinds import DEFAULT_KIND, load_kinds
from frontier.source_schema import SourceConfig, parse_config
from frontier.sources import SourceRepository
from frontier.xml_entities import entity_problem


class UnusableSpec(FrontierError, ValueError):
    """The file as a whole cannot be read as a YAML feeds spec or OPML (a YAML syntax
    error shows the lines at fault, with a caret under the place)."""

    multiline = True


MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_YAML_DEPTH = 50  # a spec needs about 5 (sources, entry, url_filters, list)


@dataclass(frozen=True, slots=True)
class SpecError:
    entry: int  # 1-based position in the file
    name: str | None
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "name": self.name, "reason": self.reason}


@dataclass(slots=True)
class ParsedSpecs:
    specs: list[tuple[int, SourceConfig]] = field(default_factory=list)  # (entry, spec)
    errors: list[SpecError] = field(default_factory=list)


def parse_specs(data: bytes, filename: str = "") -> ParsedSpecs:
    """OPML if the file name says so or it starts with XML, else YAML."""
    if len(data) > MAX_FILE_BYTES:
        raise UnusableSpec(f"file over {MAX_FILE_BYTES} bytes")
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:200].lower()
    if filename.lower().endswith((".opml", ".xml")) or head.startswith((b"<?xml", b"<opml")):
        return parse_opml(data)
    return parse_yaml(data)


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader without anchors/aliases and with a nesting limit.

    An alias is a reference, so a few hundred bytes of anchors that alias each other
    ("billion laughs") make a document of billions of nodes once anything walks it;
    nothing in a sources spec needs them. PyYAML has no switch for either rule, so the
    composer, which sees every node once as it streams, enforces both (hand-written)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise _Refused("anchors/aliases are not allowed in a sources spec", self.peek_event())
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            raise _Refused("anchors/aliases are not allowed in a sources spec", event)
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_YAML_DEPTH:
            raise _Refused(f"nested deeper than {MAX_YAML_DEPTH} levels", event)
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth


class _Refused(yaml.YAMLError):
    def __init__(self, reason: str, event: Any) -> None:
        mark = getattr(event, "start_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        super().__init__(f"{reason}{where}")
        self.reason = f"{reason}{where}"


def parse_yaml(data: bytes) -> ParsedSpecs:
    try:
        document = yaml.load(data, Loader=_SpecLoader)  # a SafeLoader subclass
    except _Refused as exc:
        raise UnusableSpec(exc.reason) from None
    except yaml.YAMLError as exc:
        # PyYAML's own layout (problem, "line L, column C:", the line and a caret), without
        # the stand-in name it gives a byte string
        where = str(exc).replace('in "<byte string>", ', "")
        raise UnusableSpec(f"not valid YAML: {where}") from None
    if not isinstance(document, dict) or not isinstance(document.get("sources"), list):
        raise UnusableSpec("a feeds spec needs a top-level `sources:` list")
    parsed = ParsedSpecs()
    kinds = None  # the installed source kinds, read once for the file if any entry needs them
    if any(
        isinstance(r, dict) and r.get("kind", DEFAULT_KIND) != DEFAULT_KIND
        for r in document["sources"]
    ):
        kinds = load_kinds()
    for number, raw in enumerate(document["sources"], start=1):
        name = raw.get("name") if isinstance(raw, dict) else None
        try:
            parsed.specs.append((number, parse_config(raw, kinds=kinds)))
        except FrontierError as exc:
            parsed.errors.append(
                SpecError(number, name if isinstance(name, str) else None, str(exc))
            )
    return parsed


def parse_opml(data: bytes) -> ParsedSpecs:
    from lxml import etree

    problem = entity_problem(data)
    if problem is not None:
        raise UnusableSpec(f"OPML {problem}")
    parser = etree.XMLParser(
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False, recover=True
    )
    try:
        root = etree.parse(io.BytesIO(data), parser).getroot()
    except etree.XMLSyntaxError as exc:
        raise UnusableSpec(f"not valid OPML: {exc}") from None
    if root is None or not isinstance(root.tag, str) or root.tag.lower() != "opml":
        raise UnusableSpec("not OPML: the root element is not <opml>")
    parsed = ParsedSpecs()
    number = 0
    for outline in root.iter("outline"):
        feed = outline.get("xmlUrl") or outline.get("xmlurl")
        own = outline.get(OPML_ATTRIBUTE)  # `sources export`'s other fields (JSON)
        if not feed and own is None:
            continue
        number += 1
        name = (outline.get("text") or outline.get("title") or "").strip() or _host(feed or "")
        try:
            raw = {**_exported_fields(own), "name": name}
            if feed:
                raw["feed_url"] = feed
            if outline.get("htmlUrl"):
                raw["base_url"] = outline.get("htmlUrl")
            parsed.specs.append((number, parse_config(raw)))
        except FrontierError as exc:
            parsed.errors.append(SpecError(number, name, str(exc)))
    if number == 0:
        raise UnusableSpec("OPML lists no feeds (no <outline xmlUrl=...>)")
    return parsed


def _exported_fields(text: str | None) -> dict[str, Any]:
    """The `frontier:source` attribute of an outline: a JSON object of fields."""
    if text is None:
        return {}
    try:
        fields = json.loads(text)
    except (ValueError, RecursionError):
        raise UnusableSpec("frontier:source: not valid JSON") from None
    if not isinstance(fields, dict):
        raise UnusableSpec("frontier:source: not a JSON object")
    return fields


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


@dataclass(slots=True)
class SpecImportSummary:
    """What importing a sources spec did: the names added, the entries refused."""

    added: list[str] = field(default_factory=list)
    errors: list[SpecError] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "added": len(self.added),
            "failed": len(self.errors),
            "errors": [e.as_json() for e in self.errors],
        }


async def import_specs(repository: SourceRepository, parsed: ParsedSpecs) -> SpecImportSummary:
    """Add each spec as a source; a spec that cannot be stored becomes a per-entry error."""
    summary = SpecImportSummary(errors=list(parsed.errors))
    for number, spec in parsed.specs:
        try:
            await repository.create(spec)
        except FrontierError as exc:
            summary.errors.append(SpecError(number, spec.name, str(exc)))
            continue
        summary.added.append(spec.name)
    summary.errors.sort(key=lambda e: e.entry)
    return summary
