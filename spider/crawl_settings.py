"""The Scrapy settings of one crawl, built from our settings and the crawl plan: there is
no Scrapy settings file to edit.

Politeness as the fetchers practise it: robots.txt obeyed with the fetchers' verdict
(`frontier.robots` through `spider.robots`: matched with our user agent's product token,
5xx or unreachable disallows all, a large file is read to 512 KiB, parsed in a parse
process off the reactor), one request at a time per host, and the host's delay kept
across every requester: each request takes the host's slot in `host_state`, as the
fetchers do (`spider.host_slot`, the HTTP download handler). Scrapy's own per-process
delay is off (DOWNLOAD_DELAY 0, no AutoThrottle), so it never adds on top of the host's
delay. The SSRF guard is the DNS resolver and a downloader
middleware (`spider.middlewares`); pages over the body cap are dropped by Scrapy's
DOWNLOAD_MAXSIZE, which also bounds decompressed bodies.
"""

from __future__ import annotations

from typing import Any

from frontier.allowed_networks import split_entries
from frontier.parse_pool import ParseLimits
from frontier.safe_http.client import BROWSER_HEADERS
from frontier.settings import Settings
from spider import host_slot, middlewares, pipeline, robots
from spider.plan import CrawlPlan

ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
HOST_SLOT_HANDLER = "spider.host_slot.HostSlotDownloadHandler"


def scrapy_settings(
    settings: Settings,
    plan: CrawlPlan,
    dsn: str | None,
    *,
    with_pipeline: bool = True,
    log_level: str = "WARNING",
) -> dict[str, Any]:
    headers = dict(BROWSER_HEADERS) if plan.fetchprotection >= 2 else {}
    return {
        "TWISTED_REACTOR": ASYNCIO_REACTOR,
        "TWISTED_DNS_RESOLVER": "spider.middlewares.GuardedResolver",
        middlewares.ALLOW_PRIVATE: settings.allow_private_networks,
        middlewares.ALLOWED_NETWORKS: list(split_entries(settings.allowed_networks)),
        middlewares.SOURCE_CREDENTIALS: plan.credentials,
        middlewares.SOURCE_PROXY: plan.proxy,
        middlewares.DEFAULT_PROXY: plan.default_proxy,
        "USER_AGENT": settings.user_agent,
        "DEFAULT_REQUEST_HEADERS": headers,
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_PARSER": "spider.robots.FrontierRobotParser",
        "ROBOTSTXT_USER_AGENT": settings.user_agent,
        robots.PARSE_LIMITS: ParseLimits.from_settings(settings),
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        # The host's delay is the host_state slot each request takes (spider.host_slot).
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_HANDLERS": {"http": HOST_SLOT_HANDLER, "https": HOST_SLOT_HANDLER},
        host_slot.NEW_HOST_DELAY_MS: plan.new_host_delay_ms,
        host_slot.POLITENESS_KEY: plan.politeness_key,
        "DOWNLOAD_TIMEOUT": settings.spider_timeout_s,
        "DOWNLOAD_MAXSIZE": settings.spider_max_body_bytes,
        "DOWNLOAD_WARNSIZE": 0,
        "REDIRECT_MAX_TIMES": 5,
        "RETRY_TIMES": 1,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": log_level,
        # FRONTIER_LOG_FORMAT=json: the crawl process installs frontier.log_setup's handler
        # itself (crawl_process.main), so Scrapy's lines are JSON lines too.
        "LOG_INSTALL_ROOT_HANDLER": settings.log_format != "json",
        "LOGSTATS_INTERVAL": 0,
        # Breadth first: shallow listing pages (where new articles appear) come first.
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "DOWNLOADER_MIDDLEWARES": {
            "spider.middlewares.SsrfGuardMiddleware": 50,
            # the proxy of each request (Scrapy's HttpProxyMiddleware, 750, speaks to it),
            # the target judged by the SSRF guard before the proxy is asked
            "spider.middlewares.SourceProxyMiddleware": 55,
            # the source's credentials to its own origins only, every hop asked again
            "spider.middlewares.SourceAccessMiddleware": 60,
            # the fetchers' robots.txt verdict, parsed off the reactor (spider.robots)
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "spider.robots.FrontierRobotsMiddleware": 100,
        },
        "ITEM_PIPELINES": {"spider.pipeline.FrontierPipeline": 300} if with_pipeline else {},
        pipeline.DSN: dsn,  # the pipeline's and the host slots' database
        pipeline.BATCH_SIZE: settings.spider_batch_size,
        pipeline.DEFAULT_DELAY_MS: settings.default_delay_ms,
    }
