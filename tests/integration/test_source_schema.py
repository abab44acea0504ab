"""One schema for a source: the same source fed through the YAML import,
`POST /api/v1/sources` and `frontier sources add` is stored as the same row (with the same
options in feed_state and spider_state), the same bad value is refused with the same text
by each, and the API accepts every key docs/sources.md documents."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from frontier.api.app import create_app
from frontier.db import Database
from frontier.settings import Settings
from frontier.source_schema import SourceConfig, UrlFilters
from frontier.source_specs import import_specs, parse_specs
from frontier.sources import SourceRepository
from tests.processes import clean_env, frontier_output

TOKEN = "test-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "sources.md"

# Every field of the schema, none at its default.
SOURCE: dict[str, Any] = {
    "name": "Harbour Gazette",
    "base_url": "https://Harbour.example/",
    "feed_url": "https://harbour.example/feed.xml",
    "sitemap_url": "https://harbour.example/sitemap.xml",
    "ingestion_mode": "both",
    "feed_poll_interval_minutes": 30,
    "priority": 7,
    "rate_limit_ms": 2000,
    "politeness_key": "domain",
    "fetchprotection": 1,
    "selectors": {"title": "h1", "body": "article"},
    "article_url_patterns": [r"/\d{4}/\d{2}/"],
    "url_filters": {
        "include": ["/news/"],
        "exclude": ["/sponsored/"],
        "keywords": ["harbour"],
        "exclude_keywords": ["advert"],
        "most_recent": 10,
        "random": 5,
    },
    "min_published_at": "2030-01-01",
    "keep_trailing_slash": True,
    "enabled": False,
    "adaptive_interval": True,
    "spider_interval_minutes": 120,
    "spider_allow_external": True,
    "spider_listing_urls": ["https://harbour.example/news/"],
    "kind": "wordpress",
    "config": {"per_page": 50, "timeout_s": 5.0, "host_header": "www.harbour.example"},
    "revisit": ["1h", "6h", "1d"],
    "languages": ["en", "de"],
    "render": "auto",
    "access": {
        "username": "harbour",
        "password_file": "/run/secrets/harbour",
        "headers": {"X-Edition": "north"},
        "cookies": {"consent": {"env": "HARBOUR_CONSENT"}},
    },
    "proxy": {
        "url": "socks5://proxy.harbour.example:1080",
        "username": "crawler",
        "password_env": "HARBOUR_PROXY_PASSWORD",
    },
}

# field -> `frontier sources add` flag
FLAGS = {
    "base_url": "--base-url",
    "feed_url": "--feed-url",
    "sitemap_url": "--sitemap-url",
    "ingestion_mode": "--mode",
    "feed_poll_interval_minutes": "--interval",
    "priority": "--priority",
    "rate_limit_ms": "--rate-limit-ms",
    "politeness_key": "--politeness-key",
    "render": "--render",
    "fetchprotection": "--fetchprotection",
    "min_published_at": "--min-published-at",
    "spider_interval_minutes": "--spider-interval-minutes",
    "kind": "--kind",
}
REPEATED = {
    "article_url_patterns": "--article-pattern",
    "spider_listing_urls": "--spider-listing-url",
    "revisit": "--revisit",
    "languages": "--language",
}
AS_JSON = {
    "selectors": "--selectors",
    "url_filters": "--url-filters",
    "config": "--config",
    "access": "--access",
    "proxy": "--proxy",
}
SWITCHES = {
    "keep_trailing_slash": ("--keep-trailing-slash", "--drop-trailing-slash"),
    "enabled": ("--enabled", "--disabled"),
    "adaptive_interval": ("--adaptive-interval", "--fixed-interval"),
    "spider_allow_external": ("--spider-allow-external", "--spider-no-external"),
}

# The same bad value through every path: (field, value).
BAD = [
    ("article_url_patterns", ["(unclosed"]),
    ("priority", 11),
    ("rate_limit_ms", 3_600_001),
    ("politeness_key", "subnet"),
    ("render", "sometimes"),
    ("url_filters", {"colour": ["red"]}),
    ("feed_url", "ftp://harbour.example/feed"),
    ("min_published_at", "yesterday"),
    ("kind", "gopher"),  # no such kind installed
    ("config", {"per_page": 500}),  # refused by the wordpress kind
    ("config", {"colour": "red"}),
    ("url_filters", {"random": 4}),
    ("revisit", ["soon"]),  # not a duration
    ("revisit", ["10s"]),  # under a minute: polling a page, not revisiting it
    ("languages", ["english"]),  # not a language code
    ("access", {"token": "clear-secret-token"}),  # a secret only by reference
    ("proxy", {"url": "http://u:clear-secret@proxy.example"}),  # its password too
]

ROW = """
SELECT s.*, f.feed_url AS state_feed_url, f.adaptive_interval,
       st.interval_minutes, st.allow_external, st.listing_urls
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
LEFT JOIN spider_state st ON st.source_id = s.id
WHERE s.name = $1
"""


def cli_args(values: dict[str, Any]) -> list[str]:
    args = ["sources", "add", values["name"]]
    for field, value in values.items():
        if field in FLAGS:
            args += [FLAGS[field], str(value)]
        elif field in REPEATED:
            for item in value:
                args += [REPEATED[field], item]
        elif field in AS_JSON:
            args += [AS_JSON[field], json.dumps(value)]
        elif field in SWITCHES:
            args.append(SWITCHES[field][0 if value else 1])
        else:
            assert field == "name", f"no flag for {field}"
    return args


async def frontier(*args: str, dsn: str) -> tuple[int, str, str]:
    return await frontier_output(*args, env=clean_env(dsn))


async def stored(db: Database, name: str) -> dict[str, Any] | None:
    record = await db.fetchrow(ROW, name)
    if record is None:
        return None
    return {k: v for k, v in dict(record).items() if k not in ("id", "created_at", "updated_at")}


class Paths:
    """The three ways a source comes in; each returns None or the refusal text."""

    def __init__(self, db: Database, dsn: str, api: httpx.AsyncClient) -> None:
        self.db, self.dsn, self.api = db, dsn, api

    async def yaml(self, values: dict[str, Any]) -> str | None:
        data = yaml.safe_dump({"sources": [values]}).encode()
        summary = await import_specs(SourceRepository(self.db), parse_specs(data, "feeds.yaml"))
        return summary.errors[0].reason if summary.errors else None

    async def api_post(self, values: dict[str, Any]) -> str | None:
        response = await self.api.post("/api/v1/sources", headers=AUTH, json=values)
        if response.status_code == 201:
            return None
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "validation_error" and error["fields"], error
        message: str = error["message"]
        return message

    async def cli(self, values: dict[str, Any]) -> str | None:
        code, _, err = await frontier(*cli_args(values), dsn=self.dsn)
        if code == 0:
            return None
        assert code == 2 and "Traceback" not in err, err
        return err.strip().removeprefix("frontier: ")


@pytest.fixture
async def paths(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[Paths]:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, api_token=TOKEN, _env_file=None)
    transport = httpx.ASGITransport(app=create_app(settings, db))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
        yield Paths(db, fresh_dsn, api)


def test_the_example_sets_every_field_off_its_default() -> None:
    assert set(SOURCE) == set(SourceConfig.model_fields)
    defaults = SourceConfig(name="x")
    assert all(
        getattr(SourceConfig.model_validate(SOURCE), k) != getattr(defaults, k) for k in SOURCE
    )
    assert set(SOURCE["url_filters"]) == set(UrlFilters.model_fields)


async def test_every_path_stores_the_same_row(paths: Paths, db: Database) -> None:
    rows = []
    for way in (paths.yaml, paths.api_post, paths.cli):
        assert await way(SOURCE) is None, way.__name__
        row = await stored(db, SOURCE["name"])
        assert row is not None, way.__name__
        rows.append(row)
        await SourceRepository(db).remove(SOURCE["name"])

    assert rows[0] == rows[1] == rows[2]
    row = rows[0]
    assert row["base_url"] == "https://harbour.example/"  # normalised
    assert row["url_filters"] == SOURCE["url_filters"]
    assert row["selectors"] == SOURCE["selectors"]
    assert row["min_published_at"] == datetime(2030, 1, 1, tzinfo=UTC)
    assert (row["priority"], row["enabled"], row["adaptive_interval"]) == (7, False, True)
    assert (row["interval_minutes"], row["allow_external"], row["listing_urls"]) == (
        120,
        True,
        ["https://harbour.example/news/"],
    )
    assert row["state_feed_url"] == row["feed_url"]
    assert row["revisit"] == [3600, 21600, 86400]  # seconds
    assert row["languages"] == ["en", "de"]
    assert row["proxy"] == SOURCE["proxy"]  # the reference, never a password


@pytest.mark.parametrize("field, value", BAD, ids=[field for field, _ in BAD])
async def test_every_path_refuses_a_bad_value_with_the_same_text(
    paths: Paths, db: Database, field: str, value: Any
) -> None:
    values = {**SOURCE, field: value}
    refusals = [await way(values) for way in (paths.yaml, paths.api_post, paths.cli)]

    assert refusals[0] is not None and refusals[0] == refusals[1] == refusals[2], refusals
    assert refusals[0].startswith(f"{field}"), refusals[0]
    assert await stored(db, SOURCE["name"]) is None


async def test_a_patch_changes_only_the_fields_sent(paths: Paths) -> None:
    created = (await paths.api.post("/api/v1/sources", headers=AUTH, json=SOURCE)).json()
    sid = created["id"]
    patched = await paths.api.patch(
        f"/api/v1/sources/{sid}",
        headers=AUTH,
        json={
            "adaptive_interval": False,
            "spider_interval_minutes": 60,
            "rate_limit_ms": None,
            "url_filters": {"exclude_keywords": ["quiz"]},
        },
    )
    assert patched.status_code == 200, patched.text
    after = patched.json()
    changed = {
        "adaptive_interval": False,
        "spider_interval_minutes": 60,
        "rate_limit_ms": None,
        "url_filters": {"exclude_keywords": ["quiz"]},
    }
    assert {k: after[k] for k in changed} == changed
    unchanged = set(SourceConfig.model_fields) - set(changed) - {"updated_at"}
    assert {k: after[k] for k in unchanged} == {k: created[k] for k in unchanged}
    refused = await paths.api.patch(
        f"/api/v1/sources/{sid}", headers=AUTH, json={"spider_interval_minutes": 0}
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["fields"][0]["field"] == "spider_interval_minutes"
    assert (await paths.api.get(f"/api/v1/sources/{sid}")).json() == after


def documented_keys() -> tuple[list[str], list[str]]:
    """The keys of the two tables of docs/sources.md: a source's, and url_filters'."""
    text = DOCS.read_text(encoding="utf-8")
    fields_table = text.split("| key | type | default | meaning |", 1)[1].split("\n\n", 1)[0]
    filters_table = text.split("| key | type | meaning |", 1)[1].split("\n\n", 1)[0]
    row = re.compile(r"^\| `(\w+)` \|", re.MULTILINE)
    return row.findall(fields_table), row.findall(filters_table)


async def test_the_api_accepts_every_key_the_docs_document(paths: Paths) -> None:
    fields, filters = documented_keys()
    assert len(fields) >= 19 and {"include", "exclude_keywords", "most_recent"} <= set(filters)
    body = {key: SOURCE[key] for key in fields}
    body["url_filters"] = {key: SOURCE["url_filters"][key] for key in filters}

    response = await paths.api.post("/api/v1/sources", headers=AUTH, json=body)

    assert response.status_code == 201, response.text
    shown = response.json()
    assert shown["url_filters"] == body["url_filters"]
    normalised = ("base_url", "min_published_at", "revisit")  # revisit: stored in seconds
    assert {k: shown[k] for k in fields if k not in normalised} == {
        k: body[k] for k in fields if k not in normalised
    }
    assert shown["revisit"] == [3600, 21600, 86400]
    schema = (await paths.api.get("/openapi.json")).json()["components"]["schemas"]
    assert set(fields) == set(schema["SourceConfig"]["properties"])
    assert set(fields) <= set(schema["SourcePatch"]["properties"])
