"""`python -m bench.robots_parse [--quick]`: what parsing one robots.txt costs in-process,
the cost that decides where the spider and the fetchers parse it (`frontier.robots`: in a
parse process, off the event loop or Scrapy's reactor).

Best of 3 runs (1 with `--quick`) per file, in ms: the core's verdict (`rules_for_answer`)
and Scrapy's stock `ProtegoRobotParser`, on files near the size cap
(`bench.hostile_documents`) and on real ones (tests/corpus/robots/). The last line printed
is one JSON object: {"<file>": {"bytes": n, "verdict_ms": x, "scrapy_ms": y}, ...}.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from scrapy.robotstxt import ProtegoRobotParser

from bench.hostile_documents import robots_many_groups, robots_many_rules
from frontier.robots import ROBOTS_MAX_BYTES, rules_for_answer
from tests.corpus_path import CORPUS

TOKEN = "frontier-crawler"
REAL = ("protego-real/en.wikipedia.org.txt", "protego-real/www.cisco.com.txt")


def _best_ms(parse: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        parse()
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 2)


def documents() -> dict[str, bytes]:
    made = {
        "many groups, at the cap": robots_many_groups(ROBOTS_MAX_BYTES, rule_for_all="/p/"),
        "many rules, at the cap": robots_many_rules(ROBOTS_MAX_BYTES),
        "comments, at the cap": "User-agent: *\n" + ("# " + "x" * 100 + "\n") * 5200,
    }
    encoded = {name: text.encode()[:ROBOTS_MAX_BYTES] for name, text in made.items()}
    return encoded | {name: (CORPUS / "robots" / name).read_bytes() for name in REAL}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per file, not three")
    runs = 1 if parser.parse_args(argv).quick else 3
    figures = {}
    print(f"{'robots.txt':<40} {'bytes':>8} {'verdict ms':>11} {'scrapy ms':>10}")
    for name, body in documents().items():
        ours = _best_ms(lambda body=body: rules_for_answer(200, body, TOKEN), runs)
        stock = _best_ms(lambda body=body: ProtegoRobotParser(body, None), runs)
        print(f"{name:<40} {len(body):>8} {ours:>11.1f} {stock:>10.1f}")
        figures[name] = {"bytes": len(body), "verdict_ms": ours, "scrapy_ms": stock}
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
