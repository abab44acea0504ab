"""Priority of a URL in the frontier (docs/architecture.md "Priority"):
source priority + origin bonus - depth (spider links only), clamped to 1..10."""

from frontier.states import Origin

MIN_PRIORITY = 1
MAX_PRIORITY = 10

ORIGIN_BONUS = {Origin.FEED: 2, Origin.SITEMAP: 1, Origin.SPIDER: 0, Origin.MANUAL: 0}


def score(source_priority: int, origin: Origin, depth: int = 0) -> int:
    penalty = depth if origin is Origin.SPIDER else 0
    return max(MIN_PRIORITY, min(MAX_PRIORITY, source_priority + ORIGIN_BONUS[origin] - penalty))
