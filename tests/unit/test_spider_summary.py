"""A crawl's summary survives the trip from the crawl process to the parent unchanged, so
`frontier spider --json` prints what the child printed."""

from __future__ import annotations

import json

from spider.errors import CrawlFailed
from spider.service import CrawlResult
from spider.summary import CrawlSummary


def test_a_summary_read_back_prints_the_same_json() -> None:
    summary = CrawlSummary(
        "site",
        pages_crawled=3,
        articles_found=2,
        new_urls=1,
        elapsed_s=1.25,
        crawl_s=0.5,
        http_statuses={"404": 1},
        budget_exhausted=True,
        classification="heuristic",
    )
    line = json.dumps(summary.as_json())
    result = CrawlResult(CrawlSummary.from_json(json.loads(line)), 0)
    assert json.dumps(result.as_json()) == line
    assert result.summary == summary and result.as_json()["outcome"] == "ok"


def test_unknown_keys_from_the_child_are_ignored() -> None:
    data = {**CrawlSummary("site", errors=2).as_json(), "added_later": 1}
    assert CrawlSummary.from_json(data) == CrawlSummary("site", errors=2)


def test_a_crawl_without_a_summary_prints_only_source_and_error() -> None:
    result = CrawlResult.failed("site", CrawlFailed("exited with status -9"))
    assert result.as_json() == {"source": "site", "error": "exited with status -9"}
    assert result.exit_code == 1 and result.summary.outcome == "failed"
    assert "error: exited with status -9" in result.summary.render()
