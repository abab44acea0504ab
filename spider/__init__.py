"""The Scrapy discovery spider for sources without a complete feed, and the pipeline that
submits the article URLs it finds to the frontier. It never extracts content: fetchers do.

How a run goes (`frontier spider SOURCE` or `frontier spider --due`):

    edge (frontier_cli) -> spider.service        parent: no Scrapy, no reactor
        claims due sources (spider_state), starts one child per source:
        python -m spider.crawl_process < CrawlJob JSON
                                                 child: the reactor starts once per process
            1. spider.plan.load_plan             source, start pages, classifier, a new
                                                 host's delay, listing pages seen before
            2. Scrapy on the asyncio reactor     spider.discovery.DiscoverySpider
               (settings from spider.crawl_settings, no settings file)
                 -> spider.host_slot             each request takes its host's slot
                 -> spider.links                 classify each link
                 -> spider.pipeline              batched submits, page states (asyncpg on
                                                 the reactor's loop), flushed on close
            3. record the run                    fetch_log (kind spider), spider_state
        <- one JSON summary line (spider.summary.CrawlSummary)

Modules: `links` (classification and the article heuristic), `plan` (what a crawl needs),
`discovery` (the spider), `pipeline` (the frontier pipeline), `host_slot` (the HTTP
download handler: each request first takes its host's `host_state` slot, as the fetchers'
requests do), `middlewares` (the SSRF guard: DNS resolver and downloader middleware),
`robots` (robots.txt: Scrapy's ROBOTSTXT_PARSER and middleware on the core's verdict,
`frontier.robots`, parsed in a parse process), `crawl_settings` (Scrapy
settings from ours), `state` (the repository of `spider_state` / `spider_pages`),
`summary` (a crawl's `CrawlSummary`), `job`, `crawl_process` (the child) and `service`
(the parent: the one entry point of `frontier spider` and `frontier up`).

Errors:

    FrontierError
    └── SpiderError
        ├── SpiderConfigError  permanent: the source cannot be crawled as configured
        └── CrawlFailed        retryable: the crawl process gave no summary; next run retries

An address the SSRF guard refuses raises `frontier.safe_http.errors.BlockedAddress`, the safe
client's own. Errors during a crawl (HTTP errors, timeouts, a failed database write,
refused addresses) never stop it: they are counted in the summary. The run exits 1 only
when it failed (a start page could not be used, found URLs could not be written); a crawl
that went through exits 0 whatever dead links it met (`CrawlSummary.failed`).
"""
