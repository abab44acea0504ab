"""`frontier sinks status`, and FRONTIER_SINKS' errors: a kind not installed, options its
model refuses (a webhook's secret in clear), each one line and exit status 2 (issue 33
item 2)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from fetcher.sink_kinds import WebhookKind
from frontier.clock import utcnow
from frontier.db import Database
from frontier.outbox import OutboxRepository
from frontier.settings import Settings, SettingsError
from frontier.sinks.configured import chosen_sinks
from frontier.sinks.installed import SinkRegistry, load_sinks
from tests.integration.test_outbox import raw
from tests.processes import frontier_env, frontier_output

HOOK = {"name": "hook", "kind": "webhook", "required": False}


async def test_sinks_status_shows_each_sinks_backlog_and_last_error(
    db: Database, fresh_dsn: str
) -> None:
    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["hook"], [raw(1), raw(2)])
    await outbox.enqueue_documents(["gone"], [raw(3)])  # a sink configured no more
    rows = await outbox.claim("hook", "w", 1, lease_s=60)
    later = utcnow() + timedelta(minutes=5)
    await outbox.failed([r.id for r in rows], "w", later, "HTTP 503", None)
    sinks = json.dumps([{"name": "postgres"}, {**HOOK, "options": {"url": "http://x"}}])
    env = frontier_env(fresh_dsn, FRONTIER_SINKS=sinks)
    code, out, err = await frontier_output("sinks", "status", "--json", env=env)
    assert code == 0, err
    lines = {line["sink"]: line for line in json.loads(out)}
    assert list(lines) == ["postgres", "hook", "gone"]
    assert (lines["postgres"]["required"], lines["postgres"]["backlog"]) == (True, 0)
    hook = lines["hook"]
    assert (hook["required"], hook["backlog"], hook["last_error"]) == (False, 2, "HTTP 503")
    assert hook["oldest_pending_s"] is not None
    assert (lines["gone"]["configured"], lines["gone"]["backlog"]) == (False, 1)
    code, out, err = await frontier_output("sinks", "status", env=env)
    assert code == 0, err
    assert "hook" in out and "optional" in out and "HTTP 503" in out and "removed" in out


async def test_a_sink_kind_not_installed_stops_the_fetch_with_one_line(fresh_dsn: str) -> None:
    sinks = json.dumps([{"name": "postgres"}, {"name": "search", "kind": "nope"}])
    env = frontier_env(fresh_dsn, FRONTIER_SINKS=sinks)
    code, _, err = await frontier_output("fetch", "--until-idle", env=env)
    assert code == 2
    assert err.strip().splitlines() == [
        "frontier: invalid configuration: FRONTIER_SINKS: entry 'search': sink 'nope' is not "
        f"installed (installed: {', '.join(sorted(load_sinks().sinks))})"
    ]


def test_a_webhooks_secret_is_refused_in_clear() -> None:
    installed = SinkRegistry({**load_sinks().sinks, "webhook": WebhookKind()})
    options = {"url": "https://hooks.example/in", "secret": "s3cret"}
    settings = Settings.load(
        _env_file=None, sinks=[{"name": "pg", "kind": "postgres"}, {**HOOK, "options": options}]
    )
    with pytest.raises(SettingsError) as refused:
        chosen_sinks(settings, installed)
    assert str(refused.value).startswith(
        "invalid configuration: FRONTIER_SINKS: entry 'hook': options: secret: "
    )
    assert "s3cret" not in str(refused.value)
    ok = {**options, "secret": {"env": "HOOK_SECRET"}}
    settings = Settings.load(
        _env_file=None, sinks=[{"name": "pg", "kind": "postgres"}, {**HOOK, "options": ok}]
    )
    assert [(c.name, c.required) for c in chosen_sinks(settings, installed)] == [
        ("pg", True),
        ("hook", False),
    ]
