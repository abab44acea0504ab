"""`frontier sources`: add, list, show, update, enable/disable, remove, import and export
sources. `add` and `update` take the same flags (`SOURCE_FLAGS`, one per field of the
source schema); every value is validated by the one schema (`frontier.source_schema`)."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from typing import Any, Optional

import typer

from frontier_cli.app import EXIT_PARTIAL, app, run_with_database, settings_of
from frontier_cli.terminal import printable

sources_app = typer.Typer(help="Manage sources.", no_args_is_help=True)
app.add_typer(sources_app, name="sources")

# (parameter, schema field, type, option): the flags of `sources add` and `sources update`.
# A flag left out is None: not given (the default for `add`, unchanged for `update`).
SOURCE_FLAGS: list[tuple[str, str, Any, Any]] = [
    ("feed_url", "feed_url", Optional[str], typer.Option(None, "--feed-url")),  # noqa: UP045
    ("sitemap_url", "sitemap_url", Optional[str], typer.Option(None, "--sitemap-url")),  # noqa: UP045
    ("base_url", "base_url", Optional[str], typer.Option(None, "--base-url")),  # noqa: UP045
    (
        "mode",
        "ingestion_mode",
        Optional[str],  # noqa: UP045
        typer.Option(None, "--mode", help="feed, spider or both (default feed)."),
    ),
    (
        "priority",
        "priority",
        Optional[int],  # noqa: UP045
        typer.Option(None, "--priority", help="1..10 (default 5)."),
    ),
    (
        "interval",
        "feed_poll_interval_minutes",
        Optional[int],  # noqa: UP045
        typer.Option(None, "--interval", help="Feed poll interval in minutes (default 15)."),
    ),
    ("rate_limit_ms", "rate_limit_ms", Optional[int], typer.Option(None, "--rate-limit-ms")),  # noqa: UP045
    (
        "politeness_key",
        "politeness_key",
        Optional[str],  # noqa: UP045
        typer.Option(
            None,
            "--politeness-key",
            help="host, domain or ip: what one request in flight counts on (default: the setting).",
        ),
    ),
    (
        "article_pattern",
        "article_url_patterns",
        Optional[list[str]],  # noqa: UP045
        typer.Option(None, "--article-pattern", help="Regex of article URLs (repeatable)."),
    ),
    (
        "url_filters",
        "url_filters",
        Optional[str],  # noqa: UP045
        typer.Option(
            None, "--url-filters", help='JSON object, e.g. \'{"exclude": ["/sponsored/"]}\'.'
        ),
    ),
    (
        "selectors",
        "selectors",
        Optional[str],  # noqa: UP045
        typer.Option(
            None, "--selectors", help='JSON object of CSS selectors, e.g. \'{"title": "h1"}\'.'
        ),
    ),
    (
        "min_published_at",
        "min_published_at",
        Optional[str],  # noqa: UP045
        typer.Option(None, "--min-published-at", help="ISO 8601 date or datetime (naive: UTC)."),
    ),
    (
        "fetchprotection",
        "fetchprotection",
        Optional[int],  # noqa: UP045
        typer.Option(None, "--fetchprotection", help="0, 1 or 2."),
    ),
    (
        "keep_trailing_slash",
        "keep_trailing_slash",
        Optional[bool],  # noqa: UP045
        typer.Option(None, "--keep-trailing-slash/--drop-trailing-slash"),
    ),
    ("enabled", "enabled", Optional[bool], typer.Option(None, "--enabled/--disabled")),  # noqa: UP045
    (
        "adaptive_interval",
        "adaptive_interval",
        Optional[bool],  # noqa: UP045
        typer.Option(
            None,
            "--adaptive-interval/--fixed-interval",
            help="Adapt the feed poll interval to how often the feed changes (default fixed).",
        ),
    ),
    (
        "spider_interval_minutes",
        "spider_interval_minutes",
        Optional[int],  # noqa: UP045
        typer.Option(
            None,
            "--spider-interval-minutes",
            help="How often the spider crawls it (default 1440).",
        ),
    ),
    (
        "spider_allow_external",
        "spider_allow_external",
        Optional[bool],  # noqa: UP045
        typer.Option(
            None,
            "--spider-allow-external/--spider-no-external",
            help="Queue links to unknown hosts under the 'discovered' source (default no).",
        ),
    ),
    (
        "spider_listing_url",
        "spider_listing_urls",
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            None,
            "--spider-listing-url",
            help="A listing page the spider starts from (repeatable).",
        ),
    ),
    (
        "kind",
        "kind",
        Optional[str],  # noqa: UP045
        typer.Option(
            None, "--kind", help="feed, sitemap, wordpress or a plugin's kind (default feed)."
        ),
    ),
    (
        "kind_config",
        "config",
        Optional[str],  # noqa: UP045
        typer.Option(
            None,
            "--config",
            help="The kind's options as a JSON object, e.g. '{\"per_page\": 50}'.",
        ),
    ),
    (
        "revisit",
        "revisit",
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            None,
            "--revisit",
            help="Fetch each article again this long after the fetch before (repeatable: "
            "--revisit 1h --revisit 6h --revisit 1d; default never).",
        ),
    ),
    (
        "language",
        "languages",
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            None,
            "--language",
            help="Keep only articles detected in this language (repeatable: --language en "
            "--language de; default any).",
        ),
    ),
    (
        "render",
        "render",
        Optional[str],  # noqa: UP045
        typer.Option(
            None,
            "--render",
            help="Render its pages in a headless browser: never (default), auto (a page "
            "that is a client-side app's empty shell), always.",
        ),
    ),
    (
        "access",
        "access",
        Optional[str],  # noqa: UP045
        typer.Option(
            None,
            "--access",
            help="Credentials, headers and cookies for the source's own origins, as JSON, "
            'secrets by reference: \'{"username": "u", "password_env": "WIKI_PASSWORD"}\' '
            "(docs/sources.md).",
        ),
    ),
    (
        "proxy",
        "proxy",
        Optional[str],  # noqa: UP045
        typer.Option(
            None,
            "--proxy",
            help="The proxy for the source's own hosts, as JSON, its password by reference: "
            '\'{"url": "socks5://proxy:1080", "username": "u", "password_env": "PROXY_PW"}\' '
            "(docs/sources.md).",
        ),
    ),
]
JSON_FIELDS = frozenset({"url_filters", "selectors", "config", "access", "proxy"})


def with_source_flags(command: Callable[..., None]) -> Callable[..., None]:
    """`command`'s signature extended with SOURCE_FLAGS (typer reads the signature), so
    `add` and `update` declare them once; the command takes them as `**flags`."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    flags = [
        inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
        for param, _, kind, option in SOURCE_FLAGS
    ]
    command.__signature__ = signature.replace(parameters=[*own, *flags])  # type: ignore[attr-defined]
    command.__annotations__ = {
        **{p.name: p.annotation for p in own},
        **{param: kind for param, _, kind, _ in SOURCE_FLAGS},
    }
    return command


def fields_of(flags: dict[str, Any]) -> dict[str, Any]:
    """The flags given, keyed by the schema's field names (JSON flags parsed)."""
    from frontier.source_schema import InvalidSource

    given: dict[str, Any] = {}
    for param, field, _, _ in SOURCE_FLAGS:
        value = flags.get(param)
        if value is None:
            continue
        if field in JSON_FIELDS:
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise InvalidSource(f"{field}: not valid JSON ({exc})") from None
        given[field] = value
    return given


@sources_app.command("add")
@with_source_flags
def sources_add(ctx: typer.Context, name: str, **flags: Any) -> None:
    """Add a source (validated by the same schema as the API and `sources import`)."""
    from frontier.source_schema import parse_config
    from frontier.sources import SourceRepository

    config = parse_config({"name": name, **fields_of(flags)})
    source = run_with_database(settings_of(ctx), lambda db: SourceRepository(db).create(config))
    typer.echo(f"added source {printable(source.name)} ({source.id})")


@sources_app.command("list")
def sources_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """List sources."""
    from frontier.sources import SourceRepository

    async def listed(db: Any) -> tuple[list[Any], dict[Any, str]]:
        repository = SourceRepository(db)
        found = await repository.list()
        return found, await repository.poll_errors([s.id for s in found])

    sources, errors = run_with_database(settings_of(ctx), listed)
    if as_json:
        shown = [{**s.as_json(), "last_error": errors.get(s.id)} for s in sources]
        typer.echo(json.dumps(shown, indent=2))
        return
    for source in sources:
        url = source.feed_url or source.sitemap_url or source.base_url
        where = printable(url or (source.config or {}).get("url") or "-")
        if source.kind != "feed":
            where = f"{printable(source.kind)}: {where}"
        name = printable(source.name)
        error = f"  [error: {printable(errors[source.id])}]" if source.id in errors else ""
        typer.echo(f"{name:<30} {source.ingestion_mode:<7} p{source.priority:<3} {where}{error}")


@sources_app.command("show")
def sources_show(
    ctx: typer.Context,
    name: str,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object."),
) -> None:
    """One source: every field, its poller's last error and its URLs by status."""
    from frontier.sources import SourceRepository
    from frontier.url_story import UrlStoryRepository

    async def shown(db: Any) -> dict[str, Any]:
        repository = SourceRepository(db)
        source = await repository.get(name)
        configuration = (await repository.configurations([source]))[source.id]
        errors = await repository.poll_errors([source.id])
        return {
            "id": str(source.id),
            **configuration,
            "created_at": source.created_at.isoformat(),
            "updated_at": source.updated_at.isoformat(),
            "last_error": errors.get(source.id),
            "urls": await UrlStoryRepository(db).source_counts(source.id),
        }

    found = run_with_database(settings_of(ctx), shown)
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    for key, value in found.items():
        if key == "urls":
            value = ", ".join(f"{status} {n}" for status, n in sorted(value.items())) or "none"
        elif isinstance(value, dict | list):
            value = json.dumps(value)
        typer.echo(f"{key + ':':<28} {printable('-' if value is None else str(value))}")


@sources_app.command("update")
@with_source_flags
def sources_update(
    ctx: typer.Context,
    name: str,
    new_name: Optional[str] = typer.Option(None, "--name", help="Rename it."),  # noqa: UP045
    clear: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--clear", help="Set this field to none, e.g. --clear rate_limit_ms (repeatable)."
    ),
    **flags: Any,
) -> None:
    """Change the fields given (the same flags as `sources add`); the others stay."""
    from frontier.source_schema import InvalidSource, SourceConfig, parse_patch

    values = fields_of(flags)
    if new_name is not None:
        values["name"] = new_name
    for field in clear or ():
        if field in values:
            raise InvalidSource(f"{field}: both given and cleared")
        known = SourceConfig.model_fields.get(field)
        if known is not None and (
            known.is_required() or known.get_default(call_default_factory=True) is not None
        ):
            raise InvalidSource(f"{field}: always has a value and cannot be cleared")
        values[field] = None
    if not values:
        raise typer.BadParameter("name at least one field to change (see --help)")
    _update(ctx, name, parse_patch(values), "updated")


def _update(ctx: typer.Context, name: str, patch: Any, done: str) -> None:
    from frontier.sources import SourceRepository

    async def updated(db: Any) -> Any:
        repository = SourceRepository(db)
        return await repository.update((await repository.get(name)).id, patch)

    source = run_with_database(settings_of(ctx), updated)
    typer.echo(f"{done} source {printable(source.name)}")


@sources_app.command("enable")
def sources_enable(ctx: typer.Context, name: str) -> None:
    """Poll and crawl the source again."""
    from frontier.source_schema import parse_patch

    _update(ctx, name, parse_patch({"enabled": True}), "enabled")


@sources_app.command("disable")
def sources_disable(ctx: typer.Context, name: str) -> None:
    """Stop polling and crawling the source (its queued URLs are still fetched)."""
    from frontier.source_schema import parse_patch

    _update(ctx, name, parse_patch({"enabled": False}), "disabled")


@sources_app.command("remove")
def sources_remove(ctx: typer.Context, name: str) -> None:
    """Remove a source; its URLs stay in the frontier without a source."""
    from frontier.sources import SourceRepository

    run_with_database(settings_of(ctx), lambda db: SourceRepository(db).remove(name))
    typer.echo(f"removed source {printable(name)}")


@sources_app.command("import")
def sources_import(
    ctx: typer.Context,
    file: str = typer.Argument(..., help="A YAML feeds spec or an OPML file; - reads stdin."),
    sync: bool = typer.Option(
        False, "--sync", help="Make the sources match the file: add, and update what differs."
    ),
    prune: bool = typer.Option(
        False, "--prune", help="With --sync: remove the sources the file does not name."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="With --sync: print the changes, make none."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import sources from a YAML feeds spec (`sources:` list) or OPML; per-entry errors."""
    from frontier.source_specs import MAX_FILE_BYTES, UnusableSpec, import_specs, parse_specs
    from frontier.sources import SourceRepository

    if (prune or dry_run) and not sync:
        raise typer.BadParameter("--prune and --dry-run go with --sync")
    try:
        if file == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)  # parse_specs refuses what is over
        else:
            with open(file, "rb") as stream:
                data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UnusableSpec(f"cannot read {file}: {exc.strerror}") from None
    parsed = parse_specs(data, "" if file == "-" else file)
    if sync:
        _sync(ctx, parsed, prune=prune, dry_run=dry_run, as_json=as_json)
        return
    summary = run_with_database(
        settings_of(ctx), lambda db: import_specs(SourceRepository(db), parsed)
    )
    if as_json:
        typer.echo(json.dumps(summary.as_json()))
    else:
        typer.echo(f"added {len(summary.added)} sources, {len(summary.errors)} failed")
        _print_errors(summary.errors)
    if summary.errors:
        raise typer.Exit(EXIT_PARTIAL)


def _print_errors(errors: list[Any]) -> None:
    for error in errors:
        name, reason = printable(error.name or "?"), printable(error.reason)
        where = f"entry {error.entry} ({name})" if error.entry else name
        typer.echo(f"  {where}: {reason}", err=True)


def _sync(ctx: typer.Context, parsed: Any, *, prune: bool, dry_run: bool, as_json: bool) -> None:
    from frontier.source_sync import apply_sync, plan_sync
    from frontier.sources import SourceRepository

    async def synced(db: Any) -> Any:
        repository = SourceRepository(db)
        plan = await plan_sync(repository, parsed, prune=prune)
        return plan if dry_run else await apply_sync(repository, plan)

    plan = run_with_database(settings_of(ctx), synced)
    if as_json:
        typer.echo(json.dumps(plan.as_json()))
    else:
        would = "would " if plan.dry_run else ""
        typer.echo(
            f"{would}add {len(plan.add)}, {would}update {len(plan.update)}, "
            f"{would}remove {len(plan.remove)}, {len(plan.unchanged)} unchanged, "
            f"{len(plan.errors)} failed"
        )
        for _, spec in plan.add:
            typer.echo(f"  + {printable(spec.name)}")
        for change, _ in plan.update:
            fields = ", ".join(
                f"{k} {json.dumps(a)} -> {json.dumps(b)}" for k, (a, b) in change.fields.items()
            )
            typer.echo(f"  ~ {printable(change.name)}: {printable(fields)}")
        for name in plan.remove:
            typer.echo(f"  - {printable(name)}")
        _print_errors(plan.errors)
    if plan.errors:
        raise typer.Exit(EXIT_PARTIAL)


@sources_app.command("export")
def sources_export(
    ctx: typer.Context,
    format: str = typer.Option("yaml", "--format", help="yaml or opml."),
    output: Optional[str] = typer.Option(  # noqa: UP045
        None, "--output", "-o", help="Write to this file (default stdout)."
    ),
) -> None:
    """Write the sources as a YAML feeds spec or OPML 2.0, which `sources import` reads."""
    from frontier.source_export import to_opml, to_yaml
    from frontier.sources import SourceRepository

    if format not in ("yaml", "opml"):
        raise typer.BadParameter(f"--format: {format!r} is not yaml or opml")

    async def stored(db: Any) -> list[dict[str, Any]]:
        repository = SourceRepository(db)
        return list((await repository.configurations(await repository.list())).values())

    configurations = run_with_database(settings_of(ctx), stored)
    data = to_yaml(configurations).encode("utf-8") if format == "yaml" else to_opml(configurations)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    with open(output, "wb") as stream:
        stream.write(data)
    typer.echo(f"wrote {len(configurations)} sources to {printable(output)}", err=True)
