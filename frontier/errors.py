"""The root of frontier's exceptions, and the whole tree. Each package keeps its own
under this root (one module each, named in brackets):

    FrontierError
    ├── DatabaseUnavailable      (here) PostgreSQL is unreachable or dropped us; retryable
    ├── StatementTimedOut        (here) a read cancelled at its time limit: too expensive
    ├── RetryLater               (here) refused for now, welcome after `retry_after_s`
    │   └── FireRateLimited      (poller.errors; also a PollerError) a manual fire too soon
    │       └── SourceBusy       the source is being polled right now
    ├── SettingsError            (frontier.settings; also a ValueError) bad FRONTIER_* value
    ├── InvalidURL               (frontier.urls; also a ValueError) unfit for the frontier
    ├── InvalidSource            (frontier.source_schema; also a ValueError) a source
    │                            definition that cannot be stored: "field: reason"
    ├── UnknownSource            (frontier.sources) no source of that name or id
    ├── BadDocumentQuery         (frontier.documents; also a ValueError) a documents
    │                            filter or page cursor that cannot be used
    ├── BadUrlFilter             (frontier.url_actions; also a ValueError) a requeue or
    │                            purge filter that cannot be used
    ├── UnusableSpec             (frontier.source_specs; also a ValueError) a sources file
    │                            that is not a YAML spec or OPML
    ├── UnusableInput            (frontier.imports) a URL import file that cannot be read
    │   └── NestedTooDeeply      an NDJSON line nested past the parser's limit
    ├── MigrationFailed          (frontier.migrate) a revision the server refused
    ├── SchemaOutdated           (frontier.migrate) the schema is not the code's
    ├── HttpError                (frontier.safe_http.errors) an outbound request
    │   ├── Refused              permanent: not made, or its answer is unusable
    │   │   ├── BlockedAddress   the SSRF guard: a non-public address
    │   │   ├── PolicyBlocked    the source's fetchprotection forbids it
    │   │   ├── BodyTooLarge     over the body or decompression cap
    │   │   ├── TooManyRedirects
    │   │   └── CredentialsUnavailable (frontier.source_credentials) a source's secret
    │   │                        cannot be read (an unset variable, a missing file)
    │   └── FetchFailed          transient: timeout, DNS, connection; retry later
    │       ├── HostBackingOff   (frontier.host_slots) a host that backs off for longer
    │       │                    than its requester waits: not requested
    │       └── ProxyError       the outbound proxy failed, not the target (frontier.proxies):
    │                            nothing counts against the target's host; retried
    ├── UnsupportedAiohttp       (frontier.safe_http.aiohttp_support; also a RuntimeError)
    │                            an aiohttp the safe client was not written and tested for
    ├── ExtractionCrashed        (fetcher.extract_job)  a page that killed the extraction
    │                            process each time it was extracted alone
    ├── ExtractionOverLimit      (fetcher.extract_job)  a page over its extraction time
    │                            or memory limit, stopped
    ├── ParseLimitExceeded       (frontier.parse_pool) a feed or sitemap parse over its
    │                            time, CPU or memory limit, stopped
    ├── RenderUnavailable        (fetcher.render_pool) no browser to render with
    ├── RenderFailed             (fetcher.render_pool) a page that could not be rendered
    │   ├── RenderOverLimit      over its rendering time or memory limit, stopped
    │   └── RenderCrashed        its browser died under it twice, the second time alone
    ├── SubrequestRefused        (fetcher.render_pool) a rendered page's request the rules
    │                            refuse (the SSRF guard, a policy)
    ├── SinkError                (frontier.sinks) storing documents
    │   ├── SinkUnavailable      retryable: the sink cannot take documents now
    │   │   ├── UnsupportedServer (frontier.sinks.search_clients) not a server this
    │   │   │                    sink speaks to (another product or major)
    │   │   └── NotSent          (frontier.sinks.webhook) a document of a webhook write
    │   │                        not sent: another POST of the write failed first
    │   └── DocumentRejected     permanent: the sink refused these documents
    ├── UnknownVersion           (frontier.versions; also a LookupError) a version a
    │                            document does not have, or no longer keeps
    ├── NothingSelected          (frontier_cli.reextract; also a ValueError) reextract
    │                            given no selection
    ├── ArchiveWriteFailed       (frontier.archive.files) a WARC write the disk refused
    │                            (full, read-only, gone): archiving backs off
    ├── ApiError                 (frontier.api.errors) a request the API refuses
    │   ├── BadBody              400: a body that cannot be parsed
    │   ├── Unauthorized         401: no or a wrong bearer token
    │   │   └── LoginRequired    (frontier.api.auth) a browser without a session: to /login
    │   ├── WritesDisabled       403: no FRONTIER_API_TOKEN is configured
    │   ├── NotPermitted         403: (frontier.api.routes.reextract) the API's database
    │   │                        role lacks the fetcher's write grants
    │   ├── CsrfRefused          403: (frontier.api.auth) a dashboard form without its token
    │   ├── NotFound             404: (frontier.api.routes.content) no such URL or document
    │   ├── RequestTooLarge      413: over the body limit
    │   ├── UnsupportedMediaType 415: a Content-Type the endpoint does not read
    │   ├── FieldInvalid         422: a field with a bad value
    │   ├── ReextractRunning     409: (frontier.api.routes.reextract) one run at a time
    │   ├── RateLimited          429: try again after Retry-After
    │   ├── FireUnavailable      501: (frontier.api.routes.sources) no fire function given
    │   └── ReextractUnavailable 501: (frontier.api.routes.reextract) no reextract function
    ├── PlatformError            (frontier_cli.up) `frontier up` cannot start
    ├── DemoError                (frontier_cli.demo)
    │   └── DemoBusy             another demo runs on the same home
    ├── PollerError              (poller.errors)
    │   ├── DocumentRefused      permanent for this document: hostile XML, not a feed
    │   │   └── SitemapRefused
    │   └── DocumentUnavailable  transient: retried on the poller's backoff
    └── SpiderError              (spider.errors)
        ├── SpiderConfigError    (also a ValueError) a source the spider cannot crawl
        └── CrawlFailed          a crawl that could not run or finish

Retryable conditions (DatabaseUnavailable, RetryLater, FetchFailed, SinkUnavailable,
DocumentUnavailable) are kept apart from permanent ones (bad input), so callers back off
on the first and report the second. The CLI prints any FrontierError as one line and exits 2.
(`poller.feed_fastpath.Unsupported` is not in the tree on purpose: it never leaves the
poller; it sends a feed the lxml fast path cannot read to feedparser.)
"""


class FrontierError(Exception):
    """Base of every error frontier raises on purpose. Its message is one line unless the
    class says it is laid out on several (`multiline`: a parser's excerpt of the input)."""

    multiline = False


class DatabaseUnavailable(FrontierError):
    """PostgreSQL cannot be reached, refused us or dropped the connection; the message
    names the host and cause. Retryable: wait (`db.outage.backoff()`) and try again."""


class StatementTimedOut(FrontierError):
    """A statement of a bounded `Database` (`Database.bounded`: the API's reads) ran past
    its time limit and was cancelled on the server. Not retryable as it is: the same query
    costs the same; narrow it."""


class RetryLater(FrontierError):
    """Refused for now: the same request is welcome again after `retry_after_s` seconds.
    The edge answers it as such (the API: 429 with Retry-After) without knowing which
    service raised it."""

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
