"""The dashboard's pages beyond the overview, server-rendered like it (Jinja2 templates
in templates/pages/, styles in static/pages.css): recent articles (`/documents`), one
article (`/documents/{url_hash}`: its text, its versions and the diff between two), one
URL's story (`/urls/{hash or URL}`), one host (`/hosts/{host}`) and one source
(`/sources/{name}`). They read what the JSON endpoints read (frontier.documents,
frontier.url_story, frontier.versions) and say the same `why` sentence.

Everything from outside (titles, text, URLs, error texts, robots.txt) is autoescaped; a
link to an article's own site is made only for an http(s) URL, with rel="noopener
noreferrer nofollow".
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from frontier.api.auth import require_read
from frontier.api.context import context_of
from frontier.api.read_gate import expensive_read
from frontier.api.templating import TEMPLATES, ago, due
from frontier.clock import utcnow
from frontier.documents import BadDocumentQuery, Cursor, DocumentPage, build_filter
from frontier.errors import StatementTimedOut
from frontier.robots import stored_rules_check
from frontier.sources import SourceRepository, UnknownSource
from frontier.states import UrlStatus
from frontier.url_story import HOST_LOG_WALK, UrlStoryRepository, hash_of
from frontier.urls import InvalidURL, host_key
from frontier.versions import DocumentVersions, UnknownVersion

router = APIRouter(tags=["dashboard"], dependencies=[Depends(require_read)])

PAGE_SIZE = 50
FILTERS = ("search", "source", "host", "since")


def _render(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    now = utcnow()
    page = TEMPLATES.get_template(f"pages/{name}").render(
        now=now, ago=lambda moment: ago(moment, now), due=lambda moment: due(moment, now), **values
    )
    return HTMLResponse(page, status_code=status, headers={"Cache-Control": "no-store"})


def _not_found(what: str) -> HTMLResponse:
    return _render("missing.html", 404, what=what)


@router.get("/documents", response_class=HTMLResponse, dependencies=[Depends(expensive_read)])
async def documents_page(request: Request) -> HTMLResponse:
    context = context_of(request)
    form = {name: request.query_params.get(name) or None for name in FILTERS}
    after = request.query_params.get("after")
    problem, status, page = None, 200, DocumentPage([], None)
    try:
        where = await build_filter(context.reads, **form, now=utcnow())
        cursor = Cursor.decode(after) if after else None
        page = await context.documents().page(where, after=cursor, limit=PAGE_SIZE)
    except BadDocumentQuery as exc:
        problem, status = str(exc), 400
    except StatementTimedOut as exc:
        problem, status = str(exc), 503
    items = [{**d, "fetched": datetime.fromisoformat(d["fetched_at"])} for d in page.items]
    kept = {name: value for name, value in form.items() if value}
    next_href = f"/documents?{urlencode({**kept, 'after': page.next})}" if page.next else None
    return _render(
        "documents.html",
        status,
        items=items,
        form=form,
        problem=problem,
        next_href=next_href,
        sink=context.documents().name,
    )


@router.get("/documents/{key}", response_class=HTMLResponse)
async def document_page(request: Request, key: str) -> HTMLResponse:
    try:
        digest = hash_of(key)
    except InvalidURL:
        return _not_found("that article")
    context = context_of(request)
    doc = await context.documents().get(digest)
    if doc is None:
        return _not_found("that article")
    text = doc.get("body") or ""
    # Each line its own paragraph: the extractors write one block (paragraph, heading,
    # list item) a line, with no blank line between.
    paragraphs = [line.strip() for line in text.splitlines() if line.strip()]
    kept = DocumentVersions(context.reads, context.settings.document_versions)
    versions = await kept.history(digest, doc)
    # The diff shown: ?old=&new= when given, else the previous version against this one.
    old, new = _version_number(request, "old"), _version_number(request, "new")
    if old is None and len(versions) > 1:
        old, new = versions[-2]["version"], versions[-1]["version"]
    diff, problem = None, None
    if old is not None and new is not None:
        try:
            diff = await kept.diff(digest, old, new, doc)
        except UnknownVersion as exc:
            problem = str(exc)
    return _render(
        "document.html",
        doc=doc,
        paragraphs=paragraphs,
        versions=list(reversed(versions)),
        diff=diff,
        diff_versions=(old, new),
        problem=problem,
    )


def _version_number(request: Request, name: str) -> int | None:
    value = request.query_params.get(name, "")
    return int(value) if value.isdigit() and len(value) < 10 else None


@router.get("/urls/{key:path}", response_class=HTMLResponse)
async def url_page(request: Request, key: str) -> HTMLResponse:
    context = context_of(request)
    try:
        story = await UrlStoryRepository(context.reads).story(
            key,
            documents=context.documents(),
            robots_allows=stored_rules_check(context.settings.user_agent, context.parse_pool()),
            key_mode=context.settings.politeness_key,
        )
    except InvalidURL:
        return _not_found("that URL")
    if story.row is None:
        return _not_found("that URL in the frontier")
    return _render("url.html", story=story.as_json(), log=story.log)


@router.get("/hosts/{host}", response_class=HTMLResponse)
async def host_page(request: Request, host: str) -> HTMLResponse:
    try:
        name = host_key(host)
    except InvalidURL:
        return _not_found("that host")
    page = await UrlStoryRepository(context_of(request).reads).host_page(name)
    if page is None:
        return _not_found(f"host {name}")
    return _render(
        "host.html",
        host=page.host,
        why=page.why.as_json(),
        in_flight=page.in_flight,
        log=page.log,
        walk=HOST_LOG_WALK,
    )


@router.get("/sources/{name}", response_class=HTMLResponse)
async def source_page(request: Request, name: str) -> HTMLResponse:
    db = context_of(request).reads
    try:
        source_id = await SourceRepository(db).id_of(name)
    except UnknownSource:
        return _not_found(f"a source named {name}")
    page = await UrlStoryRepository(db).source_page(source_id)
    if page is None:
        return _not_found("that source")
    config = page.source.get("config")
    if isinstance(config, str):
        config = json.loads(config)
    return _render(
        "source.html",
        s=page.source,
        config=json.dumps(config, indent=2) if config else None,
        counts=page.counts,
        statuses=[str(status) for status in UrlStatus],
        errors=page.errors,
        log=page.log,
    )
