"""`Page`: one claim on its way through a batch, and how its outcome is logged."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from fetcher.source_cache import SourceInfo
from frontier.queue_values import Claim, Outcome, OutcomeKind
from frontier.revisits import next_revisit_s
from frontier.safe_http.responses import Exchange
from frontier.sinks import RawDocument
from frontier.states import LogOutcome

LOG_OUTCOMES = {
    OutcomeKind.FETCHED: LogOutcome.OK,
    OutcomeKind.NOT_MODIFIED: LogOutcome.NOT_MODIFIED,
    OutcomeKind.REDIRECT: LogOutcome.REDIRECT,
    OutcomeKind.NOT_FOUND: LogOutcome.NOT_FOUND,
    OutcomeKind.GONE: LogOutcome.GONE,
    OutcomeKind.ROBOTS_BLOCKED: LogOutcome.BLOCKED,
    OutcomeKind.DUPLICATE_CONTENT: LogOutcome.DUPLICATE,
    OutcomeKind.UNSUPPORTED_CONTENT: LogOutcome.UNSUPPORTED,
    OutcomeKind.BLOCKED_BY_POLICY: LogOutcome.REFUSED,
    OutcomeKind.FORBIDDEN: LogOutcome.BLOCKED,
    OutcomeKind.RETRY: LogOutcome.FAILED,
    OutcomeKind.RATE_LIMITED: LogOutcome.RATE_LIMITED,
    OutcomeKind.DEFERRED: LogOutcome.DEFERRED,
    OutcomeKind.FAILED: LogOutcome.FAILED,
    OutcomeKind.CHALLENGE: LogOutcome.CHALLENGE,
    OutcomeKind.LOGIN_REQUIRED: LogOutcome.LOGIN_REQUIRED,
    OutcomeKind.NOINDEX: LogOutcome.NOINDEX,
    OutcomeKind.SOFT_404: LogOutcome.SOFT_404,
    OutcomeKind.EMPTY: LogOutcome.EMPTY,
}


@dataclass(slots=True)
class Page:
    """One claim on its way through the batch: its outcome once decided, and the document
    to store for a page fetched."""

    claim: Claim
    source: SourceInfo
    outcome: Outcome | None = None
    elapsed_ms: int | None = None
    document: RawDocument | None = None
    canonical: str | None = None  # the trusted canonical identity, when not the page's own
    names_itself: bool = False  # its canonical link names the page itself
    fetch_url: str | None = None  # the server's spelling, when it redirected to the same page
    # Each request made for the page and its answer, redirect hops included (the archive's)
    exchanges: list[Exchange] = field(default_factory=list)
    archived: bool = False  # its exchanges are in the WARC archive
    # Rendered in a browser (fetcher.render_step): the requests its scripts made and their
    # answers (archived with its own), why a rendering failed
    rendered: bool = False
    render_exchanges: list[Exchange] = field(default_factory=list)
    render_error: str | None = None
    rendered_dom: bytes | None = None  # what its document was extracted from (archived)

    def held_bytes(self) -> int:
        """About how much the page holds while its document waits to be stored: its
        responses and a rendered DOM (kept for the archive, redirect hops included) and
        its document's text (characters, as a bound's measure)."""
        held = sum(len(e.body) for e in self.exchanges) + len(self.rendered_dom or b"")
        held += sum(len(e.body) for e in self.render_exchanges)
        document = self.document
        if document is not None:
            held += len(document.body or "") + len(document.markdown or "")
            held += sum(map(len, document.paragraphs))
        return held

    def end(self, kind: OutcomeKind, **values: object) -> None:
        """Decide the page's outcome."""
        values.setdefault("fetch_url", self.fetch_url)
        self.outcome = Outcome(self.claim, kind, **values)  # type: ignore[arg-type]

    def completed(self) -> Outcome | None:
        """The outcome to complete the claim with: a fetch (or a 304) that leaves steps of
        its source's revisit schedule carries the delay until the next one."""
        outcome = self.outcome
        if outcome is None or outcome.kind not in (OutcomeKind.FETCHED, OutcomeKind.NOT_MODIFIED):
            return outcome
        delay = next_revisit_s(self.source.revisit, self.claim.revisit_step)
        return outcome if delay is None else replace(outcome, revisit_after_s=float(delay))


def ms_since(started: float) -> int:
    """Milliseconds since `started` (a `time.monotonic()` reading)."""
    return max(int((time.monotonic() - started) * 1000), 0)
