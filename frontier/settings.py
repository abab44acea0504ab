"""Every setting of the platform, read once from `FRONTIER_*` variables (and `.env`).

`Settings.load()` is called at the edge (the CLI, a test fixture) and the values are passed
down; no other module reads the environment. An invalid value raises `SettingsError`, whose
message names the variable and says what is wrong with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from frontier.allowed_networks import AllowedNetworks, split_entries
from frontier.dsn import check_dsn
from frontier.errors import FrontierError
from frontier.proxies import Proxy

ENV_PREFIX = "FRONTIER_"
MIN_SECRET_CHARS = 32  # a token of 32 random characters resists any guessing
EXAMPLE_MARK = "change-me"  # the placeholders of deploy/*.env.example
MAKE_A_SECRET = "e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


class SettingsError(FrontierError, ValueError):
    """A `FRONTIER_*` variable holds a value the platform cannot use."""


SINK_NAME = r"^[a-z][a-z0-9_]{0,49}$"


class SinkEntry(BaseModel):
    """One sink of FRONTIER_SINKS: its own name (the outbox's and the status's), the kind
    (its name in the frontier.sinks entry-point group; default: the name), whether a
    document is `fetched` only once this sink has it (required), and the kind's options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=SINK_NAME)
    kind: str | None = Field(default=None, pattern=SINK_NAME)
    required: bool = True
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind_name(self) -> str:
        return self.kind or self.name


def _refuse_an_example_password(url: str) -> None:
    """Raise `ValueError` (echoing no part of `url`) when the password in `url` is a
    placeholder of the deploy examples: the user must set a real one."""
    try:
        password = unquote(urlsplit(url).password or "")
    except ValueError:
        return  # not a URL: the field's own check says so
    if EXAMPLE_MARK in password.lower():
        raise ValueError(f"the password is an example value ({EXAMPLE_MARK}...): set the real one")


class Settings(BaseSettings):
    """The platform's configuration; one field per `FRONTIER_*` variable."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=".env", extra="ignore", frozen=True
    )

    database_url: str | None = Field(
        default=None,
        description="PostgreSQL DSN. Unset: an embedded PostgreSQL under FRONTIER_HOME.",
    )
    home: Path = Field(default=Path(".frontier"), description="Where embedded data lives.")
    elasticsearch_url: str | None = Field(
        default=None,
        description="Elasticsearch endpoint. Unset: the PostgreSQL raw_content table.",
    )
    sink: str | None = Field(
        default=None,
        pattern=SINK_NAME,
        description="The content sink, by its name in the frontier.sinks entry-point group "
        "(postgres, elasticsearch, or a plugin's). Unset: elasticsearch when "
        "FRONTIER_ELASTICSEARCH_URL is set, else postgres.",
    )
    sink_options: dict[str, Any] | None = Field(
        default=None,
        description="The options of the sink FRONTIER_SINK names, a JSON object its options "
        "model checks (opensearch: url, index, flush_docs, flush_ms; jsonl: path, rotate_mb; "
        "postgres and elasticsearch take none: they read their own settings). Unset: none.",
    )
    sinks: list[SinkEntry] | None = Field(
        default=None,
        description="Several sinks at once, a JSON list of {name, kind, required, options} "
        "(docs/outputs.md): a document is fetched once every required sink has it; the "
        "others get it through the outbox. Replaces FRONTIER_SINK and FRONTIER_SINK_OPTIONS "
        "(set one or the other). Unset: FRONTIER_SINK alone, required.",
    )
    outbox_retry_s: float = Field(
        default=5.0,
        gt=0,
        le=86_400,
        description="First wait before an optional sink's failed delivery is tried again "
        "(doubling, with jitter).",
    )
    outbox_retry_max_s: float = Field(
        default=3600.0,
        gt=0,
        le=86_400,
        description="Longest wait between tries of an optional sink's delivery (the cap).",
    )
    outbox_lease_s: float = Field(
        default=120.0,
        ge=5,
        le=86_400,
        description="How long a fetcher holds the outbox rows it delivers; a dead "
        "fetcher's rows are delivered by another once it runs out.",
    )
    webhook_max_in_flight: int = Field(
        default=4,
        ge=1,
        le=256,
        description="Requests in flight at once to a webhook sink's receiver, per process.",
    )
    api_token: str | None = Field(
        default=None,
        description="Bearer token for write endpoints: at least 32 characters, never an "
        "example value (change-me...). Unset: writes are refused.",
    )
    allow_private_networks: bool = Field(
        default=False, description="Let outbound requests reach private or loopback addresses."
    )
    allowed_networks: str = Field(
        default="",
        description="Comma-separated CIDRs, addresses and host names that outbound requests "
        "may reach although they are private (an intranet, your own servers); every other "
        "private, loopback, link-local and metadata address stays refused. A host name "
        "allows what it resolves to, for requests to that very name only; a cloud-metadata "
        "address only when listed by exact address.",
    )
    proxy_url: str | None = Field(
        default=None,
        description="The outbound proxy of every request (fetches, polls, robots.txt, the "
        "spider) that its source does not send through a proxy of its own: http://, https:// "
        "or socks5:// (socks5h://: the proxy resolves names), with user:password@ when it "
        "asks for them (percent-encoded). The SSRF guard still judges each target. Scrapy "
        "has no SOCKS: the spider refuses a socks5 proxy. Unset: requests go direct.",
    )
    proxy_password_file: Path | None = Field(
        default=None,
        description="A file holding the password of FRONTIER_PROXY_URL's user (a Docker or "
        "Kubernetes secret; one trailing newline dropped), read when a process starts, "
        "instead of a password in the URL (then scheme://user@host:port). Unset: the URL's.",
    )
    user_agent: str = Field(
        default="frontier-crawler/0.1 (+https://github.com/frontier-crawler/frontier)",
        min_length=1,
        description="Sent on every request; its product token is matched in robots.txt.",
    )
    lease_seconds: int = Field(
        default=300, ge=5, le=86_400, description="How long a claim is held before reaping."
    )
    default_delay_ms: int = Field(
        default=1000,
        ge=0,
        le=3_600_000,
        description="A host's delay when neither robots.txt nor the source sets one.",
    )
    host_concurrency: int = Field(
        default=8,
        ge=1,
        le=1000,
        description="Requests in flight at once to a host without a delay (rate_limit_ms 0); "
        "a host with a delay always has one.",
    )
    politeness_key: Literal["host", "domain", "ip"] = Field(
        default="host",
        description="What one request in flight and the delay are counted on: host; domain "
        "(the registrable domain, for the many subdomains one server answers); ip (the "
        "resolved address). A source's politeness_key overrides it.",
    )
    max_retries: int = Field(
        default=5, ge=0, le=100, description="Failed attempts before a URL becomes dead."
    )
    db_pool_size: int = Field(
        default=10, ge=1, le=500, description="Connections in each process's pool."
    )
    db_connect_timeout_s: float = Field(
        default=10.0, gt=0, le=300, description="Seconds to wait for PostgreSQL at start-up."
    )

    # -- reliability settings ---------------------------------------------------------
    sink_retry_max_s: float = Field(
        default=3600.0,
        gt=0,
        le=86_400,
        description="Longest wait of claimed URLs while the content sink is down (the cap).",
    )
    db_reconnect_max_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Longest wait between tries while PostgreSQL is unreachable (backoff cap).",
    )

    # -- poller settings --------------------------------------------------------------
    poll_tick_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="The longest wait between poller ticks; it also wakes when a source falls due.",
    )
    poll_concurrency: int = Field(
        default=32, ge=1, le=1000, description="Feed and sitemap polls in flight per process."
    )
    poll_per_host: int = Field(
        default=2, ge=1, le=100, description="Polls in flight per host, across all pollers."
    )
    poll_proxy_hosts: str = Field(
        default="",
        description=(
            "Comma-separated feed proxy hosts (RSSHub-style), grouped by first path segment."
        ),
    )
    sitemap_interval_minutes: int = Field(
        default=360, ge=1, le=43_200, description="Minutes between sitemap polls of a source."
    )
    sitemap_window_hours: float = Field(
        default=48.0, gt=0, le=87_600, description="Sitemap URLs modified longer ago are skipped."
    )
    poll_max_inflated_mb: int = Field(
        default=200,
        ge=1,
        le=100_000,
        description="Sitemap MiB one poll reads, after gzip is undone, over all its files.",
    )
    poll_max_elements: int = Field(
        default=5_000_000,
        ge=1000,
        description="XML elements one sitemap poll reads, over all its files.",
    )
    poll_max_urls: int = Field(
        default=250_000, ge=1, description="Sitemap URLs one poll reads, over all its files."
    )
    parse_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Wall-clock seconds one feed, sitemap or robots.txt parse may take "
        "(its process is then killed: the poll fails, or the host's robots.txt is "
        "unavailable for now).",
    )
    parse_cpu_s: int = Field(
        default=20, ge=1, le=3600, description="CPU seconds one parse may use (RLIMIT_CPU)."
    )
    parse_memory_mb: int = Field(
        default=1024,
        ge=128,
        le=1_048_576,
        description="Address space of one parse's process, in MiB (RLIMIT_AS).",
    )
    parse_processes: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Parses run at once per process. Unset: the number of cores.",
    )
    seed_default_sources: bool = Field(
        default=True,
        description="Seed the packaged default sources when `frontier up` starts "
        "(`frontier poll` only with --seed-defaults).",
    )
    public_url: str | None = Field(
        default=None,
        description="The URL the API is reached at from outside (http or https, e.g. "
        "https://crawler.example.org). Set: the poller subscribes to the WebSub hub a feed "
        "declares, with a callback under /websub/ there. Unset: no WebSub, feeds are polled.",
    )
    websub_poll_minutes: int = Field(
        default=60,
        ge=1,
        le=43_200,
        description="While a feed's WebSub subscription is active, the fallback: its feed is "
        "still polled, at least this many minutes apart (or at its own interval if longer).",
    )
    websub_lease_seconds: int = Field(
        default=10 * 86_400,
        ge=3600,
        le=365 * 86_400,
        description="The lease asked of a WebSub hub (the hub decides); a subscription is "
        "renewed before its lease ends.",
    )
    websub_max_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="Largest WebSub notification body the API's callback accepts, in bytes; "
        "larger ones get 413.",
    )

    # -- fetcher settings -------------------------------------------------------------
    fetch_concurrency: int = Field(
        default=10, ge=1, le=1000, description="Concurrent page fetches per fetch process."
    )
    fetch_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Total seconds one page or robots.txt fetch takes."
    )
    fetch_max_body_bytes: int = Field(
        default=10 * 1024 * 1024, ge=1024, description="Largest page body (after decompression)."
    )
    fetch_shutdown_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="On SIGTERM, seconds to finish in-flight fetches before releasing them.",
    )
    fetch_heartbeat_file: Path | None = Field(
        default=None,
        description="A file `frontier fetch` touches as its claim loop goes round (at least "
        "every 10 s), for a health check to read its age (deploy/healthcheck.py: stale after "
        "120 s). Unset: none.",
    )
    extract_processes: int | None = Field(
        default=None,
        ge=0,
        le=256,
        description="Article extraction worker processes per fetch process. Unset: the "
        "number of cores this process may use; 0: extract in the fetch process (a thread).",
    )
    extract_allocator: str = Field(
        default="auto",
        min_length=1,
        description="Memory allocator of the processes that extract: the extraction worker "
        "processes, or a fetch process that extracts in a thread of its own (it starts itself "
        "again on it): auto (tcmalloc when the system has it, e.g. Debian's "
        "libtcmalloc-minimal4, else the C library's), system (the C library's), or the "
        "absolute path of an allocator's shared library.",
    )
    extract_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Seconds one page's extraction may take (wall clock, so CPU too); a page "
        "over it ends failed. Keep it well under FRONTIER_LEASE_SECONDS.",
    )
    extract_memory_mb: int = Field(
        default=1024,
        ge=512,
        le=1_048_576,
        description="Address space of one extraction worker process, in MiB; a page that "
        "takes it within an eighth of this ends failed, and its worker is replaced.",
    )
    render_browsers: int = Field(
        default=1,
        ge=0,
        le=32,
        description="Headless Chromium browsers per fetch process rendering the pages of "
        'sources with `render` auto or always (docs/fetching.md, "Rendering in a browser"), '
        "each one page at a time; 0: never render (`auto` keeps the plain page).",
    )
    render_chromium: str = Field(
        default="chromium",
        min_length=1,
        description="The Chromium the renderer drives: a command on PATH (Debian's "
        "`chromium`) or an absolute path. Never downloaded.",
    )
    render_timeout_s: float = Field(
        default=20.0,
        gt=0,
        le=600,
        description="Seconds one page's rendering may take, its requests included; a page "
        "over it keeps its plain (unrendered) result.",
    )
    render_memory_mb: int = Field(
        default=1024,
        ge=128,
        le=65_536,
        description="Memory of one browser (the anonymous resident memory of its processes, "
        "in MiB; the page's JavaScript heap is held to half of it): a page over it is "
        "stopped, its browser replaced.",
    )
    render_media: bool = Field(
        default=False,
        description="Let rendered pages fetch images, media and fonts; false: refused "
        "(the text does not need them).",
    )
    fetch_log_retention_days: int = Field(
        default=30, ge=1, le=3650, description="fetch_log rows older than this are pruned."
    )
    archive: bool = Field(
        default=True,
        description="Keep every response (robots.txt, redirect hops and failures with a body "
        "included) as WARC/1.1 in the archive directory (docs/archive.md); false: no archive.",
    )
    archive_dir: Path | None = Field(
        default=None,
        description="Directory of the WARC archive; each fetch process writes files of its "
        "own there. Unset: FRONTIER_HOME/archive.",
    )
    archive_rotate_bytes: int = Field(
        default=1 << 30,
        ge=64 * 1024,
        le=1 << 40,
        description="A WARC file past this size is synced, closed and named complete, and "
        "the next one opened.",
    )
    archive_retention_days: int | None = Field(
        default=None,
        ge=1,
        le=36_500,
        description="Complete WARC files older than this are deleted by the fetchers' "
        "maintenance. Unset: kept whatever their age.",
    )
    archive_max_bytes: int | None = Field(
        default=None,
        ge=1 << 20,
        description="The oldest complete WARC files are deleted while the archive directory "
        "holds more than this. Unset: no size limit.",
    )
    document_versions: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="Earlier versions kept per document: a revisit or re-extraction whose "
        "text changed keeps the text it replaces (document_versions); the oldest go past "
        "this. 0: none kept.",
    )
    robots_ttl_hours: int = Field(
        default=24, ge=1, le=720, description="How long a fetched robots.txt is cached."
    )
    robots_max_crawl_delay_ms: int = Field(
        default=30_000, ge=0, le=3_600_000, description="Cap on a robots.txt Crawl-delay."
    )
    robots_retry_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="First retry delay after robots.txt failed (5xx/unreachable); doubles.",
    )
    sink_retry_s: float = Field(
        default=60.0,
        gt=0,
        le=86_400,
        description="While the content sink is down, claimed URLs wait this long (doubling).",
    )
    elasticsearch_index: str = Field(
        default="raw_content", min_length=1, description="Elasticsearch index of documents."
    )
    elasticsearch_flush_docs: int = Field(
        default=500, ge=1, le=100_000, description="Elasticsearch bulk batch size (documents)."
    )
    elasticsearch_flush_ms: int = Field(
        default=200, ge=0, le=60_000, description="Longest wait before a partial bulk is sent."
    )

    # -- spider settings --------------------------------------------------------------
    spider_max_pages: int = Field(
        default=1000,
        ge=1,
        le=10_000_000,
        description="Pages (listing and navigation) one spider run may request.",
    )
    spider_max_depth: int = Field(
        default=3, ge=0, le=100, description="Links the spider follows away from its start pages."
    )
    spider_max_body_bytes: int = Field(
        default=5 * 1024 * 1024,
        ge=1024,
        le=1024**3,
        description="Largest page the spider downloads (after decompression).",
    )
    spider_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Seconds the spider waits for one page."
    )
    spider_recrawl_max_hours: int = Field(
        default=168,
        ge=0,
        le=8760,
        description="An unchanged listing page is re-checked at least this often (0: always).",
    )
    spider_batch_size: int = Field(
        default=500, ge=1, le=100_000, description="URLs per spider submission to the frontier."
    )

    # -- platform settings ------------------------------------------------------------
    up_spider_tick_s: float = Field(
        default=60.0,
        gt=0,
        le=86_400,
        description="`frontier up`: seconds between looks for sources due for the spider.",
    )
    up_progress_s: float = Field(
        default=30.0,
        gt=0,
        le=86_400,
        description="`frontier up`: seconds between progress lines when not on a terminal.",
    )

    # -- logging settings -------------------------------------------------------------
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] | None = Field(
        default=None,
        description="Log level. Unset: INFO for the long-running services (poll, fetch "
        "(--until-idle too), serve, spider --every; up when not on a terminal), WARNING for "
        "one-shot commands.",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines as text, or one JSON object per line (time, level, logger, "
        "message and the line's fields).",
    )

    # -- api settings -----------------------------------------------------------------
    api_read_token: str | None = Field(
        default=None,
        description="Bearer token for reads only (GET endpoints, /metrics, the dashboard); "
        "never accepted for writes. The write token is accepted for reads too. At least 32 "
        "characters, never an example value.",
    )
    api_session_hours: float = Field(
        default=12.0,
        gt=0,
        le=720,
        description="How long a dashboard login (its session cookie) lasts.",
    )
    api_read_auth: bool = Field(
        default=False,
        description="Reads (API GETs, /metrics, the dashboard) need the bearer token too.",
    )
    api_import_max_bytes: int = Field(
        default=512 * 1024 * 1024,
        ge=1024,
        description="Largest POST /api/v1/import body in bytes; larger ones get 413.",
    )
    api_json_max_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest JSON body of the other write endpoints (sources) in bytes; "
        "larger ones get 413, refused by Content-Length or while the body streams.",
    )
    api_header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="Seconds a client gets to send a request's headers; a connection "
        "still without them is closed (no slowloris holding file descriptors).",
    )
    api_dashboard_refresh_s: int = Field(
        default=15, ge=0, le=3600, description="Dashboard self-refresh period (0: never)."
    )
    api_secure_cookies: bool = Field(
        default=False,
        description="Always mark the dashboard's session cookie Secure (HTTPS only). Set it "
        "behind a TLS proxy whose address is not a trusted proxy (compose: the proxy "
        "reaches the API through Docker's network, not from 127.0.0.1).",
    )
    api_trusted_proxies: str = Field(
        default="127.0.0.1",
        min_length=1,
        description="Comma-separated addresses (or *) whose X-Forwarded-Proto and "
        "X-Forwarded-For the API believes: the scheme (Secure cookies) and client address "
        "(per-client limits) of a request they forward.",
    )
    api_read_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="Longest a statement of an API read (a page, a search, stats) may run; "
        "it is then cancelled and the request answered 503 query_too_expensive.",
    )
    api_reads_per_client: int = Field(
        default=2,
        ge=1,
        le=1000,
        description="Expensive reads (document lists and searches, stats, the frontier "
        "view, the dashboard) in flight per client address and API process; more get 429 "
        "with Retry-After.",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level_in_capitals(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) and value else value or None

    @field_validator("extract_allocator")
    @classmethod
    def _extract_allocator_known_or_a_file(cls, value: str) -> str:
        if value in ("auto", "system") or (os.path.isabs(value) and os.path.isfile(value)):
            return value
        raise ValueError(
            "auto, system or the absolute path of an allocator's shared library "
            f"(no such file: {value!r})"
        )

    @field_validator("sinks", mode="before")
    @classmethod
    def _sinks_are_entries(cls, value: object) -> object:
        """One clear reason per bad entry, naming it (pydantic's would name the list)."""
        if value is None:
            return None
        if not isinstance(value, list) or not value:
            raise ValueError("a non-empty JSON list of {name, kind, required, options}")
        entries, names = [], set()
        for i, raw in enumerate(value, 1):
            try:
                entry = SinkEntry.model_validate(raw)
            except ValidationError as exc:
                reasons = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg']}"
                    for e in exc.errors()
                )
                raise ValueError(f"entry {i}: {reasons}") from None
            if entry.name in names:
                raise ValueError(f"entry {i}: the name {entry.name!r} is taken twice")
            names.add(entry.name)
            entries.append(entry)
        if not any(e.required for e in entries):
            raise ValueError("at least one sink must be required (where documents are read)")
        return entries

    @field_validator("allowed_networks")
    @classmethod
    def _allowed_networks_parse(cls, value: str) -> str:
        """A malformed entry stops every command at start-up, named (not a refusal at the
        first request to it)."""
        AllowedNetworks.parse(split_entries(value))
        return value

    @field_validator("proxy_password_file")
    @classmethod
    def _proxy_password_file_has_a_user(cls, value: Path | None, info: Any) -> Path | None:
        """The file stands for the password of FRONTIER_PROXY_URL's user: the URL names
        the user and holds no password of its own."""
        if value is None:
            return None
        url = info.data.get("proxy_url")
        proxy = Proxy.parse(url) if url else None
        if proxy is None or proxy.username is None or proxy.password is not None:
            raise ValueError(
                "the password of FRONTIER_PROXY_URL's user: give FRONTIER_PROXY_URL as "
                "scheme://user@host:port, without a password"
            )
        return value

    @field_validator("proxy_url")
    @classmethod
    def _proxy_url_is_a_proxy(cls, value: str | None) -> str | None:
        """A proxy URL that cannot be used stops every command at start-up, in words that
        echo no part of it (it may hold a password); empty is unset."""
        if not value:
            return None
        Proxy.parse(value)
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url_is_http(cls, value: str | None) -> str | None:
        """An http(s) URL with a host (a hub calls it back), no query or fragment."""
        if not value:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("an http or https URL with a host, e.g. https://crawler.example.org")
        if parts.query or parts.fragment:
            raise ValueError("a URL without a query or fragment")
        return value.rstrip("/")

    @field_validator("database_url")
    @classmethod
    def _database_url_is_a_postgresql_url(cls, value: str | None) -> str | None:
        """A bad DSN stops every command at load time, in one line that echoes no part of
        it (it may hold a password): never a driver's traceback later."""
        if value:
            check_dsn(value)
            _refuse_an_example_password(value)
        return value

    @field_validator("elasticsearch_url")
    @classmethod
    def _elasticsearch_url_has_no_example_password(cls, value: str | None) -> str | None:
        if value:
            _refuse_an_example_password(value)
        return value

    @field_validator("api_token", "api_read_token")
    @classmethod
    def _tokens_are_secrets(cls, value: str | None) -> str | None:
        """A token (the dashboard's login, the key its sessions are signed with) is refused
        when it is an example value or shorter than 32 characters, without echoing it;
        empty is unset."""
        if not value:
            return value
        if EXAMPLE_MARK in value.lower():
            raise ValueError(
                f"an example value ({EXAMPLE_MARK}...): set a secret of at least "
                f"{MIN_SECRET_CHARS} random characters, {MAKE_A_SECRET}"
            )
        if len(value) < MIN_SECRET_CHARS:
            raise ValueError(
                f"{len(value)} characters; at least {MIN_SECRET_CHARS} random characters, "
                f"{MAKE_A_SECRET}"
            )
        return value

    @classmethod
    def load(cls, **overrides: object) -> Settings:
        """Read the environment once; raise `SettingsError` naming each bad variable."""
        try:
            settings = cls(**overrides)  # type: ignore[arg-type]
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                field = str(error["loc"][0]) if error["loc"] else "?"
                problems.append(f"{ENV_PREFIX}{field.upper()}: {error['msg']}")
            raise SettingsError("invalid configuration: " + "; ".join(problems)) from None
        if settings.sinks is not None and (settings.sink or settings.sink_options is not None):
            raise SettingsError(
                "invalid configuration: FRONTIER_SINKS replaces FRONTIER_SINK and "
                "FRONTIER_SINK_OPTIONS: set one or the other"
            )
        return settings

    def describe(self) -> list[tuple[str, str, str]]:
        """(variable, default, meaning) for each setting, for docs and `--help`."""
        rows = []
        for name, field in type(self).model_fields.items():
            default = "unset" if field.default is None else str(field.default)
            rows.append((f"{ENV_PREFIX}{name.upper()}", default, field.description or ""))
        return rows
