"""A tiny third-party source kind, installed for the tests through the entry-point group
`frontier.source_kinds` (the `.dist-info` beside this package registers it when the
folder is on sys.path): a plain-text list of URLs, one a line, `# title` after a URL."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from frontier.source_kinds import PollOptions
from frontier.states import Origin
from poller.entries import build_entry
from poller.kinds import KindRequest, KindResult


class EchoOptions(PollOptions):
    url: str = Field(max_length=4096)
    limit: int = Field(default=50, strict=True, ge=1, le=1000)


class EchoKind:
    name = "echo"
    config_model = EchoOptions
    origin = Origin.FEED

    def target(self, source: Any, options: EchoOptions) -> str | None:
        return options.url

    async def poll(self, request: KindRequest) -> KindResult:
        assert request.url is not None
        response = await request.get(request.url, conditional=True)
        if not request.readable(response):
            return KindResult(response)
        lines = [line.strip() for line in response.body.decode().splitlines() if line.strip()]
        entries = []
        for line in lines[: request.options.limit]:
            url, _, title = line.partition(" # ")
            entries.append(
                build_entry(
                    url=url,
                    title=title or None,
                    summary_html=None,
                    content_html=None,
                    author=None,
                    published_at=None,
                    image_url=None,
                )
            )
        return KindResult(response, entries, len(lines))
