"""`frontier documents`: the stored articles, newest first, from whichever sink is
configured (frontier.documents; the reader of frontier.sinks.configured)."""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from frontier.clock import utcnow
from frontier.db import Database
from frontier.documents import Cursor, DocumentPage, build_filter
from frontier.short_text import cut_middle
from frontier.sinks.configured import open_reader
from frontier.url_story import hash_of
from frontier.versions import DocumentVersions
from frontier_cli.app import app, run_with_database, settings_of
from frontier_cli.terminal import printable

documents_app = typer.Typer(
    help="The stored articles, newest first (from Elasticsearch or PostgreSQL, as configured)."
)
app.add_typer(documents_app, name="documents")


@documents_app.callback(invoke_without_command=True)
def documents(
    ctx: typer.Context,
    source: Optional[str] = typer.Option(None, "--source", help="Source name or id."),  # noqa: UP045
    host: Optional[str] = typer.Option(None, "--host", help="A host, host:port or URL."),  # noqa: UP045
    since: Optional[str] = typer.Option(  # noqa: UP045
        None, "--since", help="Fetched since: an ISO 8601 date or time, or an age (6h, 2d)."
    ),
    search: Optional[str] = typer.Option(  # noqa: UP045
        None, "--search", help="Words that must all be in the title or body."
    ),
    one_per_cluster: bool = typer.Option(
        False,
        "--one-per-cluster",
        help="Of near-duplicates (syndicated copies), only the earliest document.",
    ),
    limit: int = typer.Option(20, "--limit", min=1, max=1000, help="Documents per page."),
    after: Optional[str] = typer.Option(  # noqa: UP045
        None, "--after", help="The `next` cursor a previous page printed."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print {items, next} as JSON."),
) -> None:
    """The stored articles, newest first (from Elasticsearch or PostgreSQL, as configured);
    `frontier documents show URL`: one of them, its versions and their diff."""
    if ctx.invoked_subcommand is not None:
        return
    settings = settings_of(ctx)
    cursor = Cursor.decode(after) if after is not None else None

    async def work(db: Database) -> DocumentPage:
        where = await build_filter(
            db,
            source=source,
            host=host,
            since=since,
            search=search,
            distinct="cluster" if one_per_cluster else None,
            now=utcnow(),
        )
        reader = open_reader(settings, db)
        try:
            return await reader.page(where, after=cursor, limit=limit)
        finally:
            await reader.close()

    page = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps({"items": page.items, "next": page.next}, indent=2))
        return
    typer.echo(render_documents(page.items))
    if page.next:
        typer.echo(f"more: frontier documents ... --after {page.next}", err=True)


SOURCE_WIDTH = 48


@documents_app.command("show")
def show(
    ctx: typer.Context,
    url: str = typer.Argument(..., help="The URL (any spelling) or its url_hash."),
    versions: bool = typer.Option(False, "--versions", help="List its versions."),
    diff: Optional[tuple[int, int]] = typer.Option(  # noqa: UP045
        None, "--diff", metavar="OLD NEW", help="A unified diff of two versions' texts."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """One stored document; with --versions its earlier versions too (a revisit or a
    re-extraction whose text changed keeps the one it replaced), --diff OLD NEW the
    difference between two."""
    settings = settings_of(ctx)
    digest = hash_of(url)

    async def work(db: Database) -> dict[str, Any]:
        reader = open_reader(settings, db)
        try:
            doc = await reader.get(digest)
            kept = DocumentVersions(db, settings.document_versions)
            shown: dict[str, Any] = {"document": doc}
            if versions:
                shown["versions"] = await kept.history(digest, doc)
            if diff is not None:
                shown["diff"] = await kept.diff(digest, *diff, doc)
            return shown
        finally:
            await reader.close()

    shown = run_with_database(settings, work)
    if as_json:
        typer.echo(json.dumps(shown, indent=2, default=str))
    else:
        typer.echo(render_shown(shown))
    if shown["document"] is None:
        raise typer.Exit(1)


def render_shown(shown: dict[str, Any]) -> str:
    doc = shown["document"]
    if doc is None:
        return "no document stored for that URL"
    lines = [render_documents([doc])]
    if "versions" in shown:
        lines.append("versions:")
        for v in shown["versions"]:
            mark = "  (current)" if v["current"] else ""
            fetched = str(v["fetched_at"] or "")[:19].replace("T", " ")
            title = printable(v["title"] or "(no title)")[:60]
            lines.append(
                f"  {v['version']:>3}  {fetched}  {(v['content_hash'] or '-')[:12]}  "
                f"{v['chars']:>7} chars  {title}{mark}"
            )
    if "diff" in shown:
        lines.append(
            printable(shown["diff"], keep_newlines=True) if shown["diff"] else "(the same text)"
        )
    return "\n".join(lines)


def render_documents(items: list[dict[str, Any]]) -> str:
    if not items:
        return "no documents"
    lines = []
    # Source names whole, in a column as wide as the longest listed (one past
    # SOURCE_WIDTH is cut in the middle, both ends kept)
    sources = [cut_middle(printable(doc["source_name"] or "-"), SOURCE_WIDTH) for doc in items]
    width = max(map(len, sources))
    for doc, source in zip(items, sources, strict=True):
        fetched = (doc["fetched_at"] or "")[:19].replace("T", " ")
        title = printable(doc["title"] or "(no title)")[:70]
        lines.append(f"{fetched}  {source:<{width}} {doc['word_count'] or 0:>6} words  {title}")
        lines.append(f"    {printable(doc['url'])}")
    return "\n".join(lines)
