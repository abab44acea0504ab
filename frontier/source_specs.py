"""Sources in bulk: a YAML feeds spec or an OPML file, parsed into validated
`SourceSpec`s with per-entry errors, and imported one by one (one bad entry never stops
the others).

YAML: a top-level `sources:` list whose keys are the `sources` column names (plus the
poller's `adaptive_interval`):

    sources:
      - name: Example News
        feed_url: https://example.com/feed.xml
        base_url: https://example.com/
        priority: 7
        feed_poll_interval_minutes: 30
        url_filters: {exclude: ["/sponsored/"]}

OPML: every `<outline>` with an `xmlUrl` (nested category outlines are walked); `text`
or `title` names it, `htmlUrl` is its `base_url`. OPML is read with lxml, entities
unresolved, no DTD, no network.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit

import yaml

from frontier.errors import FrontierError
from frontier.states import IngestionMode
from frontier.urls import InvalidURL, normalize_url


class UnusableSpec(FrontierError, ValueError):
    """The file as a whole cannot be read as a YAML feeds spec or OPML."""


# Keys a YAML entry may carry: the `sources` columns a spec may set.
SPEC_KEYS = frozenset({
    "name", "base_url", "feed_url", "sitemap_url", "ingestion_mode",
    "feed_poll_interval_minutes", "priority", "rate_limit_ms", "fetchprotection",
    "selectors", "article_url_patterns", "url_filters", "min_published_at",
    "keep_trailing_slash", "enabled", "adaptive_interval",
})  # fmt: skip
FILTER_KEYS = frozenset({"include", "exclude", "keywords", "exclude_keywords", "most_recent"})
MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceSpec:
    name: str
    base_url: str | None = None
    feed_url: str | None = None
    sitemap_url: str | None = None
    ingestion_mode: IngestionMode = IngestionMode.FEED
    feed_poll_interval_minutes: int = 15
    priority: int = 5
    rate_limit_ms: int | None = None
    fetchprotection: int | None = None
    selectors: dict[str, Any] | None = None
    article_url_patterns: list[str] | None = None
    url_filters: dict[str, Any] | None = None
    min_published_at: datetime | None = None
    keep_trailing_slash: bool | None = None
    enabled: bool | None = None
    adaptive_interval: bool | None = None


@dataclass(frozen=True, slots=True)
class SpecError:
    entry: int  # 1-based position in the file
    name: str | None
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "name": self.name, "reason": self.reason}


@dataclass(slots=True)
class ParsedSpecs:
    specs: list[tuple[int, SourceSpec]] = field(default_factory=list)  # (entry, spec)
    errors: list[SpecError] = field(default_factory=list)


def parse_specs(data: bytes, filename: str = "") -> ParsedSpecs:
    """OPML if the file name says so or it starts with XML, else YAML."""
    if len(data) > MAX_FILE_BYTES:
        raise UnusableSpec(f"file over {MAX_FILE_BYTES} bytes")
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:200].lower()
    if filename.lower().endswith((".opml", ".xml")) or head.startswith((b"<?xml", b"<opml")):
        return parse_opml(data)
    return parse_yaml(data)


def parse_yaml(data: bytes) -> ParsedSpecs:
    try:
        document = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise UnusableSpec(f"not valid YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("sources"), list):
        raise UnusableSpec("a feeds spec needs a top-level `sources:` list")
    parsed = ParsedSpecs()
    for number, raw in enumerate(document["sources"], start=1):
        name = raw.get("name") if isinstance(raw, dict) else None
        try:
            parsed.specs.append((number, spec_from_mapping(raw)))
        except ValueError as exc:
            parsed.errors.append(SpecError(number, name if isinstance(name, str) else None,
                                           str(exc)))  # fmt: skip
    return parsed


def parse_opml(data: bytes) -> ParsedSpecs:
    from lxml import etree

    if re.search(rb"<!ENTITY", data.replace(b"\x00", b""), re.IGNORECASE):
        raise UnusableSpec("OPML declares XML entities (refused: entity expansion)")
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True,
                             huge_tree=False, recover=True)  # fmt: skip
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
        if not feed:
            continue
        number += 1
        name = (outline.get("text") or outline.get("title") or "").strip() or _host(feed)
        raw = {"name": name, "feed_url": feed}
        if outline.get("htmlUrl"):
            raw["base_url"] = outline.get("htmlUrl")
        try:
            parsed.specs.append((number, spec_from_mapping(raw)))
        except ValueError as exc:
            parsed.errors.append(SpecError(number, name, str(exc)))
    if number == 0:
        raise UnusableSpec("OPML lists no feeds (no <outline xmlUrl=...>)")
    return parsed


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


def spec_from_mapping(raw: object) -> SourceSpec:
    """Validate one entry; `ValueError` names the field and what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("an entry must be a mapping of column names to values")
    unknown = sorted(set(raw) - SPEC_KEYS)
    if unknown:
        raise ValueError(f"unknown keys: {', '.join(map(str, unknown))}")
    name = raw.get("name")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 200:
        raise ValueError("name: required, 1 to 200 characters")
    values: dict[str, Any] = {"name": name.strip()}
    for key in ("base_url", "feed_url", "sitemap_url"):
        if raw.get(key) is not None:
            values[key] = _url(key, raw[key])
    mode = raw.get("ingestion_mode", "feed")
    try:
        values["ingestion_mode"] = IngestionMode(mode)
    except ValueError:
        raise ValueError(f"ingestion_mode: {mode!r} is not one of feed, spider, both") from None
    if not any(values.get(k) for k in ("base_url", "feed_url", "sitemap_url")):
        raise ValueError("needs at least one of feed_url, base_url, sitemap_url")
    values["feed_poll_interval_minutes"] = _int(raw, "feed_poll_interval_minutes", 1, 43_200, 15)
    values["priority"] = _int(raw, "priority", 1, 10, 5)
    values["rate_limit_ms"] = _int(raw, "rate_limit_ms", 0, 3_600_000, None)
    values["fetchprotection"] = _int(raw, "fetchprotection", 0, 2, None)
    for key in ("keep_trailing_slash", "enabled", "adaptive_interval"):
        if raw.get(key) is not None:
            if not isinstance(raw[key], bool):
                raise ValueError(f"{key}: must be true or false")
            values[key] = raw[key]
    if raw.get("selectors") is not None:
        if not isinstance(raw["selectors"], dict):
            raise ValueError("selectors: must be a mapping")
        values["selectors"] = raw["selectors"]
    if raw.get("article_url_patterns") is not None:
        values["article_url_patterns"] = _regexes("article_url_patterns",
                                                  raw["article_url_patterns"])  # fmt: skip
    if raw.get("url_filters") is not None:
        values["url_filters"] = _filters(raw["url_filters"])
    if raw.get("min_published_at") is not None:
        values["min_published_at"] = _datetime(raw["min_published_at"])
    return SourceSpec(**values)


def _url(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{key}: must be a URL string")
    try:
        return normalize_url(value, keep_trailing_slash=True)
    except InvalidURL as exc:
        raise ValueError(f"{key}: {exc.reason}") from None


def _int(raw: dict[str, Any], key: str, low: int, high: int, default: int | None) -> int | None:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{key}: must be an integer from {low} to {high}")
    return value


def _regexes(key: str, values: object) -> list[str]:
    if not isinstance(values, list):
        raise ValueError(f"{key}: must be a list of regexes")
    for value in values:
        try:
            re.compile(str(value))
        except re.error as exc:
            raise ValueError(f"{key}: bad regex {value!r}: {exc}") from None
    return [str(v) for v in values]


def _filters(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("url_filters: must be a mapping")
    unknown = sorted(set(value) - FILTER_KEYS)
    if unknown:
        raise ValueError(f"url_filters: unknown keys {', '.join(map(str, unknown))}")
    for key in ("include", "exclude"):
        if key in value:
            _regexes(f"url_filters.{key}", value[key])
    for key in ("keywords", "exclude_keywords"):
        if key in value and not isinstance(value[key], list):
            raise ValueError(f"url_filters.{key}: must be a list of words")
    k = value.get("most_recent")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise ValueError("url_filters.most_recent: must be a positive integer")
    return dict(value)


def _datetime(value: object) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"min_published_at: {value!r} is not an ISO 8601 date") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValueError("min_published_at: must be an ISO 8601 date or datetime")


@dataclass(slots=True)
class ImportSummary:
    added: list[str] = field(default_factory=list)
    errors: list[SpecError] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"added": len(self.added), "failed": len(self.errors),
                "errors": [e.as_json() for e in self.errors]}  # fmt: skip


async def import_specs(db: Any, parsed: ParsedSpecs) -> ImportSummary:
    """Add each spec as a source; a spec that cannot be stored becomes a per-entry error."""
    from frontier.db import Database
    from frontier.sources import SourceRepository
    from frontier.sql import load

    assert isinstance(db, Database)
    statements = load("feeds")
    summary = ImportSummary(errors=list(parsed.errors))
    for number, spec in parsed.specs:
        try:
            await _add_one(db, SourceRepository, statements["set_options"], spec)
        except FrontierError as exc:
            summary.errors.append(SpecError(number, spec.name, str(exc)))
            continue
        summary.added.append(spec.name)
    summary.errors.sort(key=lambda e: e.entry)
    return summary


async def _add_one(db: Any, repository: Any, set_options: str, spec: SourceSpec) -> None:
    async def work(tx: Any) -> None:
        source = await repository(tx).add(
            spec.name, base_url=spec.base_url, feed_url=spec.feed_url,
            sitemap_url=spec.sitemap_url, mode=spec.ingestion_mode, priority=spec.priority,
            interval_minutes=spec.feed_poll_interval_minutes,
            rate_limit_ms=spec.rate_limit_ms, article_patterns=spec.article_url_patterns,
        )  # fmt: skip
        await tx.execute(
            set_options, source.id, spec.url_filters, spec.min_published_at, spec.selectors,
            spec.fetchprotection, spec.keep_trailing_slash, spec.enabled,
            spec.adaptive_interval,
        )  # fmt: skip

    await db.run_transaction(work)
