"""The one schema of a source's configuration: every field an operator can set, with its
rule, declared once. The YAML/OPML import (`frontier.source_specs`), the HTTP API
(`POST`/`PATCH /api/v1/sources`) and `frontier sources add` all validate through it, so
the same value is accepted or refused the same way, with the same message, whichever path
it came through.

    SourceConfig   the create form: `name` required, every other field has its default
    SourcePatch    the patch form, derived from SourceConfig: every field optional, and
                   only the fields sent change (null is refused where the column is not
                   nullable)

Most fields are `sources` columns; `adaptive_interval` is kept in the poller's
`feed_state` row and the `spider_*` options in the spider's `spider_state` row. Which
table holds what is `frontier.sources.SourceRepository`'s business, not the schema's.

A refusal is an `InvalidSource` whose message is `field: reason` (several joined by `; `),
fields dotted for nested ones (`url_filters.colour`), exactly as the API's 422 answer
writes pydantic's errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
)
from pydantic_core import PydanticCustomError

from frontier.durations import EXAMPLES, seconds_of
from frontier.errors import FrontierError
from frontier.revisits import MAX_STEP_S, MAX_STEPS, MIN_STEP_S
from frontier.source_access import SourceAccess, SourceProxy
from frontier.source_kinds import (
    DEFAULT_KIND,
    KIND_NAME_PATTERN,
    KindRegistry,
    PollOptions,
    check_config,
    load_kinds,
)
from frontier.states import IngestionMode
from frontier.urls import InvalidURL, normalize_url

MAX_PATTERNS = 200
MAX_URL_CHARS = 4096
MAX_RATE_LIMIT_MS = 3_600_000  # an hour between two requests to one host
MAX_FEED_INTERVAL_MINUTES = 43_200  # 30 days
MAX_SPIDER_INTERVAL_MINUTES = 525_600  # a year


class InvalidSource(FrontierError, ValueError):
    """A source definition that cannot be stored; the message says which field and why
    (`field: reason`, several joined by `; `)."""


# -- one rule per kind of value ---------------------------------------------------------


def _normalised(value: str) -> str:
    try:
        return normalize_url(value, keep_trailing_slash=True)
    except InvalidURL as exc:
        raise PydanticCustomError("url", "{reason}", {"reason": exc.reason}) from None


def _compiled(patterns: list[str]) -> list[str]:
    for index, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise PydanticCustomError(
                "regex",
                "item {index}: {pattern} is not a valid regex ({error})",
                {"index": index, "pattern": repr(pattern), "error": str(exc)},
            ) from None
    return patterns


def _instant(value: object) -> object:
    """An ISO 8601 date or datetime (a date is its midnight); naive means UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError(
                "iso_date", "{value} is not an ISO 8601 date or datetime", {"value": repr(value)}
            ) from None
    if isinstance(value, datetime):
        try:
            value.astimezone(UTC)  # stored as UTC: year 1 at +14:00 is before year 1
        except OverflowError:
            raise PydanticCustomError(
                "iso_date", "{value} is out of range in UTC", {"value": repr(str(value))}
            ) from None
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    raise PydanticCustomError("iso_date", "must be an ISO 8601 date or datetime")


def _language(value: object) -> str:
    """A language code as `fetcher.language` names languages: ISO 639-1 (`en`), or 639-3
    for a language without one (`ceb`); a region is dropped (`en-GB`, `pt_BR`: `en`, `pt`)."""
    code = value.replace("_", "-").split("-")[0].strip().lower() if isinstance(value, str) else ""
    if not re.fullmatch(r"[a-z]{2,3}", code):
        raise PydanticCustomError(
            "language",
            "{value} is not a language code (ISO 639-1 like en, de, or 639-3)",
            {"value": repr(value)[:40]},
        )
    return code


def _revisit_step(value: object) -> int:
    """One step of a revisit schedule: a duration (`90m`, `6h`, `1d`) or whole seconds."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise PydanticCustomError(
            "revisit",
            "{value} is not a duration ({examples})",
            {"value": repr(value), "examples": EXAMPLES},
        )
    seconds = value if isinstance(value, int) else seconds_of(value)
    if seconds is None:
        raise PydanticCustomError(
            "revisit",
            "{value} is not a duration ({examples})",
            {"value": repr(value)[:40], "examples": EXAMPLES},
        )
    if not MIN_STEP_S <= seconds <= MAX_STEP_S:
        raise PydanticCustomError(
            "revisit",
            "{value} is not between a minute and a year",
            {"value": repr(value)[:40]},
        )
    return seconds


Url = Annotated[
    str,
    Field(strict=True),
    StringConstraints(max_length=MAX_URL_CHARS),
    AfterValidator(_normalised),
]
Regexes = Annotated[
    list[Annotated[str, Field(strict=True)]],
    Field(max_length=MAX_PATTERNS),
    AfterValidator(_compiled),
]
Words = Annotated[
    list[Annotated[str, Field(strict=True, max_length=1000)]], Field(max_length=MAX_PATTERNS)
]
Selector = Annotated[str | None, Field(strict=True, max_length=1000)]
Instant = Annotated[datetime, BeforeValidator(_instant)]
Language = Annotated[str, BeforeValidator(_language)]
RevisitStep = Annotated[int, BeforeValidator(_revisit_step)]


class Selectors(BaseModel):
    """CSS selectors for the fields of an article page (generic extraction is the fallback)."""

    model_config = ConfigDict(extra="forbid")

    title: Selector = None
    body: Selector = None
    author: Selector = None
    published: Selector = None
    image: Selector = None


class UrlFilters(BaseModel):
    """Which feed and sitemap entries a source keeps: every key the poller honours."""

    model_config = ConfigDict(extra="forbid")

    include: Regexes | None = Field(default=None, description="Keep only URLs matching one.")
    exclude: Regexes | None = Field(default=None, description="Drop URLs matching one.")
    keywords: Words | None = Field(
        default=None, description="Keep only entries whose title or summary has one."
    )
    exclude_keywords: Words | None = Field(
        default=None, description="Drop entries whose title or summary has one."
    )
    most_recent: int | None = Field(
        default=None, strict=True, ge=1, description="Keep the newest k entries of each poll."
    )
    random: Literal[3, 5, 10] | None = Field(
        default=None,
        description="Keep k entries of each poll chosen at random (3, 5 or 10).",
    )


class SourceConfig(BaseModel):
    """A source's configuration: the create form (`name` required, the rest defaulted)."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[
        str,
        Field(strict=True),
        StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    ]
    base_url: Url | None = Field(
        default=None, description="The site's home page: feed discovery and spider start."
    )
    feed_url: Url | None = Field(default=None, description="RSS, Atom or JSON Feed to poll.")
    sitemap_url: Url | None = Field(default=None, description="A sitemap or sitemap index.")
    ingestion_mode: IngestionMode = Field(
        default=IngestionMode.FEED, description="feed: the poller; spider; both."
    )
    feed_poll_interval_minutes: int = Field(
        default=15, strict=True, ge=1, le=MAX_FEED_INTERVAL_MINUTES
    )
    priority: int = Field(default=5, strict=True, ge=1, le=10)
    rate_limit_ms: int | None = Field(
        default=None,
        strict=True,
        ge=0,
        le=MAX_RATE_LIMIT_MS,
        description="Delay between two requests to the source's host (null: the default).",
    )
    politeness_key: Literal["host", "domain", "ip"] | None = Field(
        default=None,
        description="What one request in flight and the delay count on for its URLs: host, "
        "domain (its registrable domain) or ip (its address); null: "
        "FRONTIER_POLITENESS_KEY.",
    )
    fetchprotection: int = Field(
        default=2,
        strict=True,
        ge=0,
        le=2,
        description="0: never fetch; 1: a bare request; 2: browser-like headers.",
    )
    selectors: Selectors | None = None
    article_url_patterns: Regexes | None = Field(
        default=None, description="Regexes of article URLs (the spider)."
    )
    url_filters: UrlFilters | None = None
    min_published_at: Instant | None = Field(
        default=None, description="Skip entries published earlier (a date: its midnight UTC)."
    )
    keep_trailing_slash: bool = Field(default=False, strict=True)
    enabled: bool = Field(default=True, strict=True)
    adaptive_interval: bool = Field(
        default=False,
        strict=True,
        description="Adapt the feed poll interval to how often the feed changes.",
    )
    spider_interval_minutes: int = Field(
        default=24 * 60,
        strict=True,
        ge=1,
        le=MAX_SPIDER_INTERVAL_MINUTES,
        description="How often `frontier spider --due` crawls the source.",
    )
    spider_allow_external: bool = Field(
        default=False,
        strict=True,
        description="Queue links to unknown hosts under the 'discovered' source.",
    )
    spider_listing_urls: list[Url] = Field(
        default_factory=list,
        max_length=MAX_PATTERNS,
        description="Listing pages the spider starts from besides base_url.",
    )
    revisit: list[RevisitStep] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_STEPS,
        description="Fetch each article again after these durations, each counted from the"
        " fetch before (e.g. [1h, 6h, 24h]; stored in seconds); null: never.",
    )
    languages: list[Language] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PATTERNS,
        description="Keep only articles detected (confidently) in one of these languages"
        " (ISO 639-1 codes, e.g. [en, de]); null: any language.",
    )
    kind: Annotated[str, Field(strict=True, pattern=KIND_NAME_PATTERN)] = Field(
        default=DEFAULT_KIND,
        description="What the source is polled as: a kind of the `frontier.source_kinds`"
        " entry-point group (feed, sitemap, wordpress, or a plugin's).",
    )
    config: dict[str, Any] = Field(
        default_factory=dict, description="The kind's options (the kind validates them)."
    )
    render: Literal["never", "auto", "always"] = Field(
        default="never",
        description="Render the source's pages in a headless browser: never; auto, a page"
        " whose HTML is a client-side app's shell (a thin body and an empty mount element,"
        " a framework's bootstrap data or a <noscript> notice); always.",
    )
    access: SourceAccess | None = Field(
        default=None,
        description="HTTP basic or bearer credentials, extra headers and cookies for the"
        " source's own origins (secrets by reference: *_env, *_file); null: none.",
    )
    proxy: SourceProxy | None = Field(
        default=None,
        description="The proxy for requests to the source's own hosts (http, https, socks5,"
        " socks5h; its password by reference: password_env, password_file), or"
        " {direct: true} for none; null: FRONTIER_PROXY_URL, when set.",
    )

    @field_validator("kind")
    @classmethod
    def _installed(cls, kind: str, info: ValidationInfo) -> str:
        kinds = kinds_of(info, kind)
        if kinds is not None and kinds.get(kind) is None:
            raise PydanticCustomError("kind", "{reason}", {"reason": kinds.missing(kind)})
        return kind

    @field_validator("config")
    @classmethod
    def _kind_config(cls, config: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        name = info.data.get("kind")
        if name is None:  # the kind was refused: its config cannot be judged
            return config
        kinds = kinds_of(info, name)
        kind = _FeedDefault if kinds is None else kinds.get(name)
        return config if kind is None else kind_config(kind, config)

    def values(self) -> dict[str, Any]:
        """Every field as a JSON value (what the repository stores)."""
        return _values(self, set(type(self).model_fields))


class _FeedDefault:
    """The default kind as the schema knows it without reading the entry points: `feed`
    takes the common options only (poller.kind_feed.FeedOptions adds none), so the common
    source (a feed) is checked without loading every installed kind."""

    name = DEFAULT_KIND
    config_model = PollOptions


def kinds_of(info: ValidationInfo, kind: str) -> KindRegistry | None:
    """The registry given as the validation context (`{"kinds": registry}`), else the
    kinds installed now; None for the default kind when no registry was given."""
    context = info.context if isinstance(info.context, dict) else {}
    kinds = context.get("kinds")
    if kinds is None and kind != DEFAULT_KIND:
        kinds = load_kinds()
        if isinstance(info.context, dict):
            info.context["kinds"] = kinds  # loaded once per validation
    return kinds


def kind_config(kind: Any, config: dict[str, Any]) -> dict[str, Any]:
    """`config` checked by `kind`; a refusal names the config key."""
    try:
        return check_config(kind, config)
    except ValueError as exc:
        raise PydanticCustomError("kind_config", "{reason}", {"reason": str(exc)}) from None


class PatchForm(BaseModel):
    """The base of SourcePatch: what the patch form offers besides its fields."""

    model_config = ConfigDict(extra="forbid")

    def values(self) -> dict[str, Any]:
        """The fields sent, as JSON values; the others are absent (unchanged)."""
        return _values(self, self.model_fields_set)


def _values(form: BaseModel, names: set[str]) -> dict[str, Any]:
    # Nested mappings keep only the keys given, so what is stored is what was sent.
    out: dict[str, Any] = form.model_dump(mode="json", include=names)
    for key in ("selectors", "url_filters", "access", "proxy"):
        nested = getattr(form, key, None)
        if key in out and nested is not None:
            out[key] = nested.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    return out


def _patch_fields() -> dict[str, Any]:
    """SourceConfig's fields, each optional: same type and rules, default "not sent"."""
    fields: dict[str, Any] = {}
    for name, info in SourceConfig.model_fields.items():
        annotation: Any = info.annotation
        if info.metadata:  # the constraints given in Field(...): ge, le, strict...
            annotation = Annotated[(annotation, *info.metadata)]
        fields[name] = (annotation, Field(default=None, description=info.description))
    return fields


if TYPE_CHECKING:

    class SourcePatch(PatchForm):
        name: str

else:
    SourcePatch = create_model(
        "SourcePatch",
        __base__=PatchForm,
        __doc__="A change to a source: only the fields sent change.",
        **_patch_fields(),
    )


# -- refusals ---------------------------------------------------------------------------


def refusal(error: ValidationError) -> InvalidSource:
    """pydantic's errors as one InvalidSource: `field: reason; field: reason`."""
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'source'}: {e['msg']}" for e in error.errors()
    ]
    return InvalidSource("; ".join(parts))


def parse_config(
    values: Mapping[str, Any] | object, *, kinds: KindRegistry | None = None
) -> SourceConfig:
    """Validate a create form; InvalidSource names every bad field. `kinds`: the
    registry to check `kind` and `config` against (default: the kinds installed now)."""
    try:
        return SourceConfig.model_validate(values, context={"kinds": kinds})
    except ValidationError as exc:
        raise refusal(exc) from None


def parse_patch(values: Mapping[str, Any]) -> SourcePatch:
    """Validate a patch form; InvalidSource names every bad field."""
    try:
        return SourcePatch.model_validate(values)
    except ValidationError as exc:
        raise refusal(exc) from None
