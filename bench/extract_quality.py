"""Body extraction candidates and the metadata path on the corpus's article benchmark.

Run ``python -m bench.extract_quality [--quick]``. Every candidate extracts the body of the
36 pages of tests/corpus/articles/article-extraction-benchmark (real news pages with their
full article text in ``ground-truth.json``), in this process, one page after another (one
core). For each candidate:

- ``f1``: the mean over pages of token F1 (precision and recall over ``\\w+`` tokens,
  lowercased, counted with multiplicity), the figure issue 15 states its target in;
- ``benchmark_f1``: the article-extraction-benchmark's own figure (its ``evaluate.py``):
  4-token shingles, precision and recall averaged over pages, F1 of those two means;
- ``pages_per_s``: the median of 3 rounds (1 with ``--quick``);
- ``small_pages_per_s``: the same on 300 generated small article pages (about 6 KB of
  text in ``<article>``, nav, aside and footer around it, title, author and date
  declared in meta tags), the shape of issue 15's fetch measurements;
- ``undated_pages_per_s``: the same pages declaring no date (as bench/fetch.py's), where
  ``fetcher.extract`` pays for trafilatura's metadata pass to look for one.

The ``fetcher.extract`` row is the whole function the pipeline calls (body and metadata).
The metadata figures compare its title, author and date with trafilatura's metadata pass
(the gold data has none) on the pages where trafilatura found one: titles agree when one
contains the other once case and spacing are ignored (a site name suffix is not a
disagreement), authors when they share a name, dates when the calendar day is the same in some
time zone (trafilatura gives a day without one).

The last line printed is one JSON object: ``{"pages": N, "candidates": {name: {"f1",
"benchmark_f1", "pages_per_s", "small_pages_per_s", "undated_pages_per_s"}},
"metadata": {field: {"agree", "pages", "share"}}}``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import trafilatura
from resiliparse.extract.html2text import extract_plain_text

from fetcher.encoding import decode_html
from fetcher.extract import Extracted, extract, main_text

ROOT = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "articles"
BENCHMARK = ROOT / "article-extraction-benchmark"
_TOKEN = re.compile(r"\w+")
_NAME_SPLIT = re.compile(r";|,|\band\b|&", re.IGNORECASE)

Page = tuple[str, str, str]  # url, html, gold body


def _trafilatura(**options: Any) -> Callable[[str, str], str | None]:
    def run(html: str, url: str) -> str | None:
        return trafilatura.extract(html, include_comments=False, include_tables=True, **options)

    return run


def _with_metadata(html: str, url: str) -> str | None:
    doc = trafilatura.bare_extraction(
        html, url=url, with_metadata=True, include_comments=False, include_tables=True
    )
    return None if doc is None or isinstance(doc, dict) else doc.text


CANDIDATES: dict[str, Callable[[str, str], str | None]] = {
    "trafilatura + metadata (before)": _with_metadata,
    "trafilatura": _trafilatura(),
    "trafilatura fast": _trafilatura(fast=True),
    "trafilatura favor_precision fast": _trafilatura(fast=True, favor_precision=True),
    "trafilatura favor_recall fast": _trafilatura(fast=True, favor_recall=True),
    "resiliparse": lambda html, url: extract_plain_text(html, main_content=True),
    "resiliparse text only": lambda html, url: extract_plain_text(
        html, main_content=True, alt_texts=False, links=False, list_bullets=False
    ),
    "combined (main_text)": main_text,
    "fetcher.extract": lambda html, url: extract(html, url).body,
}


def load_pages() -> list[Page]:
    truth = json.loads((BENCHMARK / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key, gold in sorted(truth.items()):
        html, _ = decode_html(
            gzip.decompress((BENCHMARK / "html" / f"{key}.html.gz").read_bytes()), None
        )
        pages.append((gold["url"], html, gold["articleBody"]))
    return pages


def small_pages(count: int, *, dated: bool = True) -> list[Page]:
    words = [
        "river",
        "council",
        "budget",
        "market",
        "school",
        "station",
        "harbour",
        "festival",
        "report",
        "energy",
    ]
    pages = []
    for n in range(count):
        paragraphs = "".join(
            f"<p>{' '.join(words[(n + p + i) % len(words)] for i in range(95))}.</p>"
            for p in range(10)
        )
        html = (
            f"<!doctype html><html lang='en'><head><title>Story {n} | Daily</title>"
            f"<meta property='og:title' content='Story {n}'>"
            + (
                f"<meta property='article:published_time' content='2026-01-02T08:{n % 60:02d}Z'>"
                if dated
                else ""
            )
            + f"<meta name='author' content='Desk {n % 7}'></head><body>"
            "<nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a></nav>"
            f"<aside><h3>Most read</h3><ul><li>Other story {n + 1}</li></ul></aside>"
            f"<article><h1>Story {n}</h1>{paragraphs}</article>"
            "<footer>Copyright Daily. All rights reserved.</footer></body></html>"
        )
        pages.append((f"https://daily.example/news/story-{n}", html, ""))
    return pages


def token_f1(found: str, gold: str) -> float:
    found_tokens = Counter(_TOKEN.findall(found.lower()))
    gold_tokens = Counter(_TOKEN.findall(gold.lower()))
    common = sum((found_tokens & gold_tokens).values())
    if not common:
        return 0.0
    precision = common / sum(found_tokens.values())
    recall = common / sum(gold_tokens.values())
    return 2 * precision * recall / (precision + recall)


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + 4]) for i in range(max(1, len(tokens) - 3)) if tokens)


def benchmark_f1(pairs: list[tuple[str, str]]) -> float:
    """F1 of the per-page mean precision and recall over 4-token shingles, as the
    article-extraction-benchmark's evaluate.py computes it."""
    precisions, recalls = [], []
    for found, gold in pairs:
        found_s, gold_s = _shingles(found), _shingles(gold)
        tp = sum((found_s & gold_s).values())
        fp = sum((found_s - gold_s).values())
        fn = sum((gold_s - found_s).values())
        if fp == fn == 0:
            precisions.append(1.0)
            recalls.append(1.0)
            continue
        if tp + fp:
            precisions.append(tp / (tp + fp))
        if tp + fn:
            recalls.append(tp / (tp + fn))
    precision, recall = statistics.mean(precisions), statistics.mean(recalls)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _speed(run: Callable[[str, str], str | None], pages: list[Page]) -> tuple[float, list[str]]:
    started = time.perf_counter()
    bodies = [run(html, url) or "" for url, html, _ in pages]
    return len(pages) / (time.perf_counter() - started), bodies


def measure(
    name: str,
    run: Callable[[str, str], str | None],
    pages: list[Page],
    small: list[Page],
    undated: list[Page],
    rounds: int,
) -> dict[str, float]:
    speeds: list[float] = []
    small_speeds: list[float] = []
    undated_speeds: list[float] = []
    bodies: list[str] = []
    for _ in range(rounds):
        speed, bodies = _speed(run, pages)
        speeds.append(speed)
        small_speeds.append(_speed(run, small)[0])
        undated_speeds.append(_speed(run, undated)[0])
    pairs = [(body, gold) for body, (_, _, gold) in zip(bodies, pages, strict=True)]
    figures = {
        "f1": round(statistics.mean(token_f1(found, gold) for found, gold in pairs), 4),
        "benchmark_f1": round(benchmark_f1(pairs), 4),
        "pages_per_s": round(statistics.median(speeds), 1),
        "small_pages_per_s": round(statistics.median(small_speeds), 1),
        "undated_pages_per_s": round(statistics.median(undated_speeds), 1),
    }
    print(f"{name:34s} {figures}", flush=True)
    return figures


def _norm(text: str) -> str:
    return " ".join(_TOKEN.findall(text.casefold()))


def titles_agree(ours: str, theirs: str) -> bool:
    a, b = _norm(ours), _norm(theirs)
    return bool(a and b) and (a in b or b in a)


def authors_agree(ours: str, theirs: str) -> bool:
    names = [{_norm(n) for n in _NAME_SPLIT.split(text) if _norm(n)} for text in (ours, theirs)]
    if names[0] & names[1]:
        return True
    return any(a in b or b in a for a in names[0] for b in names[1])


def dates_agree(ours: Any, theirs: str) -> bool:
    """trafilatura gives a day without a zone: the same day somewhere (UTC-12 to UTC+14)."""
    if ours is None:
        return False
    days = {(ours + timedelta(hours=h)).date().isoformat() for h in (-12, 0, 14)}
    return theirs[:10] in days


def _agreement(field: str, ours: Extracted, theirs: str) -> bool:
    if field == "title":
        return titles_agree(ours.title or "", theirs)
    if field == "author":
        return authors_agree(ours.author or "", theirs)
    return dates_agree(ours.published_at, theirs)


def metadata_agreement(pages: list[Page]) -> dict[str, dict[str, float]]:
    counts = {field: [0, 0] for field in ("title", "author", "date")}
    for url, html, _ in pages:
        ours = extract(html, url)
        ref = trafilatura.extract_metadata(html, default_url=url)
        for field, theirs in (("title", ref.title), ("author", ref.author), ("date", ref.date)):
            if not theirs:
                continue
            counts[field][1] += 1
            if _agreement(field, ours, theirs):
                counts[field][0] += 1
            else:
                mine = {"title": ours.title, "author": ours.author, "date": ours.published_at}
                print(f"  {field} differs on {url}: ours {mine[field]!r}, trafilatura {theirs!r}")
    return {
        field: {"agree": agree, "pages": total, "share": round(agree / total, 3) if total else 1.0}
        for field, (agree, total) in counts.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    args = parser.parse_args()
    pages = load_pages()
    rounds = 1 if args.quick else 3
    small, undated = small_pages(300), small_pages(300, dated=False)
    candidates = {
        name: measure(name, run, pages, small, undated, rounds) for name, run in CANDIDATES.items()
    }
    metadata = metadata_agreement(pages)
    print(json.dumps({"pages": len(pages), "candidates": candidates, "metadata": metadata}))


if __name__ == "__main__":
    main()
