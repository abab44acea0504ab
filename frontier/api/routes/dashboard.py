"""`GET /`: the dashboard, one server-rendered page (Jinja2 + inline SVG charts) that
refreshes itself. It reads the same repositories as the JSON views.

Triage first: the failing sources with their cause, the hosts backing off and the recent
failures come before the figures; then the spider runs. With a session made with the
write token (`/login`), each source has its actions (fire, disable or enable: forms posted
to frontier.api.routes.actions with the session's CSRF token); a notice of the last
action (`?notice=`) is shown at the top when the server signed it (`&sig=`)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from frontier.api import charts, sessions
from frontier.api.auth import require_read, session_of
from frontier.api.context import context_of
from frontier.api.queries import ApiQueries
from frontier.api.read_gate import expensive_read
from frontier.api.templating import TEMPLATES, ago, host_href
from frontier.clock import utcnow
from frontier.fetch_log import FetchLogRepository
from frontier.outbox import OutboxRepository
from frontier.sinks.configured import sinks_status
from frontier.states import UrlStatus
from frontier.stats import StatsRepository

router = APIRouter(tags=["dashboard"])

SERIES = ("pages_ok", "pages_error", "pages_other", "polls")


@router.get(
    "/",
    response_class=HTMLResponse,
    dependencies=[Depends(require_read), Depends(expensive_read)],
)
async def dashboard(request: Request) -> HTMLResponse:
    context = context_of(request)
    db = context.reads
    now = utcnow()
    repository = StatsRepository(db)
    stats = await repository.stats(now=now, top_hosts=10)
    throughput = await repository.throughput(now=now)
    error_hosts = await repository.top_error_hosts(10)
    source_total, sources = await ApiQueries(db).sources_overview(30)
    log_rows = await FetchLogRepository(db).recent(25)
    queries = ApiQueries(db)
    failing = await queries.failing_sources(20)
    backing_off = await queries.hosts_backing_off(now, 10)
    spider_runs = await queries.spider_runs(10)
    sinks = sinks_status(context.settings, await OutboxRepository(db).status(), now)
    recent_errors = [{**r, "at": datetime.fromisoformat(r["at"])} for r in stats.recent_errors]
    session = await session_of(request)
    statuses = [(str(s), stats.by_status[str(s)]) for s in UrlStatus]
    labels = [datetime.fromisoformat(b["minute"]).strftime("%H:%M") for b in throughput]
    hour = {name: sum(b[name] for b in throughput) for name in SERIES}
    page = TEMPLATES.get_template("dashboard.html").render(
        now=now,
        refresh_s=context.settings.api_dashboard_refresh_s,
        stats=stats,
        statuses=statuses,
        status_colours=charts.COLOURS,
        status_bar=charts.stacked_bar(statuses),
        throughput_chart=charts.stacked_columns(throughput, SERIES, labels),
        hour=hour,
        series=SERIES,
        pending_hosts=charts.bar_rows(
            [(h["host"], h["pending"]) for h in stats.hosts.top_pending], href=host_href
        ),
        error_hosts=error_hosts,
        error_host_bars=charts.bar_rows(
            [(h["host"], h["consecutive_failures"]) for h in error_hosts],
            colour="#e45756",
            href=host_href,
        ),
        source_total=source_total,
        sources=sources,
        log_rows=log_rows,
        failing=failing,
        backing_off=backing_off,
        spider_runs=spider_runs,
        sinks=sinks,
        recent_errors=recent_errors,
        session=session,
        notice=sessions.notice_shown(
            request.query_params.get("notice"),
            request.query_params.get("sig"),
            context.settings.api_token,
        ),
        host_href=host_href,
        ago=lambda moment: ago(moment, now),
    )
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})
