"""Source polling, whatever the source's kind (feed, sitemap, WordPress, a plugin's), and
a source's own sitemaps beside it: the due-source scheduler, conditional GET, feed
parsing and auto-discovery, sitemap discovery, parsing and walking, submitting what it
finds to the frontier.

Modules, each the owner of one concern:

- `policy`        `PollPolicy`, the poller's knobs built once from settings
- `intervals`     phase, jitter, backoff and adaptive intervals as pure functions
- `xml_safety`    refuse DTD entity declarations; the one safe lxml parser configuration
- `entries`       `Entry` and its normalisation (HTML stripped, content quality)
- `feed_fastpath` plain, well-formed RSS/RDF/Atom on lxml; `feed_parse` falls back otherwise
- `feed_parse`    RSS/Atom via feedparser (bytes + headers only), JSON Feed by hand
- `filters`       per-source include/exclude regexes, keywords, min date, most-recent-k,
                  random-k
- `sitemap_parse` urlset / index / text sitemaps, streamed, gzip bounded
- `sitemap_walk`  the one walk of a sitemap tree (depth, files, budget), for the
                  `sitemap` kind and a source's own sitemaps
- `feed_discovery` feed auto-discovery from a site's HTML and common paths
- `poll_state`    `PollState`, a source's poll state (every kind's and its sitemaps'),
                  and its repository: the `feed_state` table (SQL in frontier/sql/feeds.sql)
- `responses`     what a poll's HTTP response means (304, 2xx, 404, 410, 429/503...), pure
- `kinds`         the polling half of a source kind (`KindRequest`, `KindResult`, the
                  in-poll `Retry`); kinds come from the `frontier.source_kinds`
                  entry points (`frontier.source_kinds.load_kinds`)
- `kind_feed`, `kind_sitemap`, `kind_wordpress`  the kinds frontier ships; their parser
                  modules (`feed_parse`, `sitemap_parse`, `wordpress_parse`) are registered
                  in `frontier.parse_preload` for the parse pool's fork server
- `poll`          poll one source through its kind; `sitemaps` poll a source's sitemaps
- `source_poll`   poll one claimed source (feed and/or sitemaps) and apply what was found
- `poll_summary`  `PartOutcome` (each part of a poll) and `PollSummary`, what one
                  source's poll came to (`as_json()` for the CLI)
- `scheduler`     `Poller.run_once()`: claim due sources, poll them, write results
- `fire`          `fire_source`: poll one source now (rate limited) or dry-run it
- `websub`        WebSub subscriptions: what a poll learns of a feed's hub (subscribe,
                  unsubscribe, the fallback interval), the requests sent to hubs
- `websub_push`   `WebSubLoop`: the requests due and the notifications the API's
                  callback kept, parsed in the parse pool and submitted at once
- `seeding`       the default source list shipped in `default_sources.yaml`
- `service`       the one entry point of the edge: poll once, run until stopped, fire

Errors (all `PollerError`, a `FrontierError`); a poll never raises them to the scheduler,
it records them on the source and in `fetch_log`:

    PollerError
    ├── DocumentRefused    permanent for this document: hostile XML, not a feed, unusable
    │   └── SitemapRefused     ... the same for a sitemap (corrupt gzip, not a sitemap)
    ├── DocumentUnavailable  retryable: the server failed, timed out or rate-limited us
    └── FireRateLimited    a real fire of the same source within the last 60 s
        └── SourceBusy         the source is being polled right now
"""
