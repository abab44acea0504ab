"""Benchmark `frontier.urls.normalize_url` against `w3lib.url.canonicalize_url`.

Run ``python -m bench.normalize [--quick]``. Both normalisers get the same deterministic
list of realistic URLs (100,000, or 10,000 with ``--quick``) drawn from about a tenth as
many hosts, in three rounds each; the median round counts. frontier's host cache is
emptied before each of its rounds, so every round pays for its IDNA work afresh.
The last line printed is one JSON object:
``{"urls": N, "frontier_urls_per_s": ..., "w3lib_urls_per_s": ..., "ratio": ...}``.
"""

import argparse
import json
import random
import statistics
import string
import time
from collections.abc import Callable

from w3lib.url import canonicalize_url

from frontier import hostnames, urls
from frontier.urls import normalize_url

ROUNDS = 3
SEED = 20240501
# fmt: off
_WORDS = [
    "news", "world", "local", "sport", "business", "tech", "science", "health", "travel",
    "food", "culture", "opinion", "city", "council", "election", "market", "energy", "climate",
    "water", "school", "police", "court", "festival", "music", "film", "review", "guide",
    "weekly", "daily", "report", "update", "live", "video", "photo", "story", "analysis",
    "budget", "housing", "transport", "rail", "airport", "storm", "river", "bridge", "museum",
    "library", "garden",
]
_TLDS = [
    "com", "org", "net", "de", "fr", "co.uk", "io", "info", "nl", "es", "it", "com.au",
]
_IDN_NAMES = [
    "bücher", "münchen-zeitung", "café-crème", "россия-новости", "日本語ニュース", "ελλάδα",
]
_SECTIONS = [
    "news", "blog", "articles", "politics", "sport", "tech", "p", "story", "en/news",
]
_TRACKING = [
    "utm_source=twitter", "utm_medium=social", "utm_campaign=spring_sale",
    "fbclid=IwAR2xYz0123", "gclid=Cj0KCQjw", "mc_cid=5d2f9a", "_ga=2.1234.5678",
]
_PARAMS = [
    "page=2", "id=48213", "ref=home", "q=climate+change", "sort=new", "lang=en", "tag=local",
    "a=", "print", "from=rss",
]
# fmt: on


def _hosts(rng: random.Random, count: int) -> list[str]:
    hosts = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.02:
            name = rng.choice(_IDN_NAMES) + str(i)
        else:
            name = "-".join(rng.sample(_WORDS, rng.choice((1, 2, 2, 3)))) + str(i % 97)
        host = f"{name}.{rng.choice(_TLDS)}"
        if rng.random() < 0.5:
            host = "www." + host
        if rng.random() < 0.05:
            host = host.upper() if rng.random() < 0.5 else host.title()
        if rng.random() < 0.01:
            host += f":{rng.choice((8080, 8443, 80, 443))}"
        hosts.append(host)
    return hosts


def _slug(rng: random.Random) -> str:
    words = rng.sample(_WORDS, rng.randint(3, 8))
    slug = "-".join(words)
    roll = rng.random()
    if roll < 0.04:
        slug = slug.replace("-", "%20", 2)
    elif roll < 0.07:
        slug += rng.choice(("-caf%C3%A9", "-caf%c3%a9", "-%E2%80%93-x", "%2Fpart"))
    elif roll < 0.09:
        slug += rng.choice(("-café", "-über", " two words"))
    return slug


def _path(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.45:
        date = f"{rng.randint(2005, 2025)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"
        path = f"/{date}/{_slug(rng)}"
    elif roll < 0.75:
        path = f"/{rng.choice(_SECTIONS)}/{_slug(rng)}"
    elif roll < 0.85:
        path = f"/{rng.choice(_SECTIONS)}/{rng.randint(1000, 9_999_999)}"
    elif roll < 0.9:
        path = rng.choice(("/", "", "/index.html", "/feed/", "/rss.xml"))
    else:
        path = f"/{rng.choice(_SECTIONS)}/../{rng.choice(_SECTIONS)}/./{_slug(rng)}"
    if rng.random() < 0.15 and path and not path.endswith("/"):
        path += rng.choice(("/", ".html", ".php"))
    return path


def _query(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.6:
        return ""
    params = []
    if roll < 0.78:
        params += rng.sample(_TRACKING, rng.randint(1, 3))
    params += rng.sample(_PARAMS, rng.randint(0 if params else 1, 3))
    rng.shuffle(params)
    return "?" + "&".join(params)


def build_urls(count: int, seed: int = SEED) -> list[str]:
    """`count` realistic URLs from about count/10 hosts, the same for a given seed."""
    rng = random.Random(seed)
    hosts = _hosts(rng, max(1, count // 10))
    out = []
    for _ in range(count):
        scheme = "https" if rng.random() < 0.8 else rng.choice(("http", "HTTP", "Https"))
        url = f"{scheme}://{rng.choice(hosts)}{_path(rng)}{_query(rng)}"
        if rng.random() < 0.1:
            url += (
                "#"
                + rng.choice(("comments", "section-2", "top", ""))
                + rng.choice(string.ascii_lowercase)
            )
        out.append(url)
    return out


def _frontier_round(batch: list[str]) -> float:
    hostnames.normalize_host.cache_clear()
    urls._authority.cache_clear()
    start = time.perf_counter()
    for url in batch:
        normalize_url(url)
    return time.perf_counter() - start


def _w3lib_round(batch: list[str]) -> float:
    start = time.perf_counter()
    for url in batch:
        canonicalize_url(url)
    return time.perf_counter() - start


def _median_rate(run: Callable[[list[str]], float], batch: list[str]) -> float:
    return len(batch) / statistics.median(run(batch) for _ in range(ROUNDS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 URLs instead of 100,000")
    args = parser.parse_args(argv)
    batch = build_urls(10_000 if args.quick else 100_000)
    for url in batch:  # every URL is valid, so the timed loops need no error handling
        try:
            normalize_url(url)
            canonicalize_url(url)
        except ValueError as exc:
            raise SystemExit(f"bench URL {url!r} is refused: {exc}") from exc
    print(f"normalising {len(batch)} URLs, {ROUNDS} rounds each", flush=True)
    frontier_rate = _median_rate(_frontier_round, batch)
    w3lib_rate = _median_rate(_w3lib_round, batch)
    result = {
        "urls": len(batch),
        "frontier_urls_per_s": round(frontier_rate),
        "w3lib_urls_per_s": round(w3lib_rate),
        "ratio": round(frontier_rate / w3lib_rate, 3),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
