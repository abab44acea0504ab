"""What the parent hands a crawl process: a `CrawlJob`, as JSON on the child's standard
input (not the command line, where the DSN's password would show in `ps`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class CrawlJob:
    dsn: str
    source: str
    settings: dict[str, Any] = field(default_factory=dict)  # Settings values, as JSON
    max_pages: int | None = None
    max_depth: int | None = None
    with_pipeline: bool = True  # False: the same crawl, items dropped (benchmarks)
    record: bool = True  # write the run to spider_state and the fetch log
    log_level: str = "WARNING"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> CrawlJob:
        return cls(**json.loads(text))
