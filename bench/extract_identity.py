"""Whether a change leaves every extraction as it was: the whole `Extraction` of each page
(the article's every field, the canonical, the content hash, the word count, the verdict,
the robots rules, the MinHash, the app-shell sign; not the pid of the process), digested.

Run ``python -m bench.extract_identity --write before.json`` on the code before a change
and ``python -m bench.extract_identity --compare before.json`` after it: the second names
every page whose extraction differs (exit status 1), or says how many are the same. The
pages: the corpus's article pages (../shared/corpus, as bench.extract_quality finds it),
the test corpus's HTML files, and pages of each of bench.fetch's sets.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from bench.fetch import PAGE_SETS
from fetcher.extract_job import extract_page

ROOT = Path(__file__).resolve().parents[1]
CORPORA = (ROOT.parent / "shared" / "corpus" / "articles", ROOT / "tests" / "corpus" / "articles")
BENCH_PAGES = 12  # of each bench.fetch set, over three hosts


def pages() -> Iterator[tuple[str, bytes, str]]:
    """(name, body, url) of every page compared."""
    for corpus in CORPORA:
        for path in sorted(corpus.rglob("*")):
            name = f"{corpus.parent.parent.name}/{path.relative_to(corpus)}"
            if path.name.endswith((".html", ".htm")):
                yield name, path.read_bytes(), ""
            elif path.name.endswith(".html.gz"):
                yield name, gzip.decompress(path.read_bytes()), ""
    for name, (prefix, build) in sorted(PAGE_SETS.items()):
        for n in range(BENCH_PAGES):
            host, page = n % 3, n
            url = f"http://127.0.0.{10 + host}:18080{prefix}{page}"
            yield f"bench.fetch/{name}/{n}", build(host, page).encode(), url


def digest(body: bytes, url: str) -> str:
    """The SHA-256 of the page's whole extraction, its pid left out."""
    extraction = extract_page(body, None, url or "https://example.com/article", None, None)
    fields = dataclasses.asdict(dataclasses.replace(extraction, pid=0))
    return hashlib.sha256(repr(_stable(fields)).encode()).hexdigest()


def _stable(value: object) -> object:
    """`value` with its dicts and sets in a fixed order (a set's order follows the
    process's string hashing)."""
    if isinstance(value, dict):
        return sorted((k, _stable(v)) for k, v in value.items())
    if isinstance(value, set | frozenset):
        return sorted(repr(_stable(v)) for v in value)
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", metavar="FILE", help="write each page's digest to FILE")
    action.add_argument("--compare", metavar="FILE", help="compare each page with FILE's")
    args = parser.parse_args()
    found = {name: digest(body, url) for name, body, url in pages()}
    if args.write:
        Path(args.write).write_text(json.dumps(found, indent=1, sort_keys=True))
        print(f"{len(found)} pages written to {args.write}")
        return
    before = json.loads(Path(args.compare).read_text())
    differ = sorted(n for n in found.keys() | before.keys() if found.get(n) != before.get(n))
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(found) - len(differ)} of {len(found | before)} pages the same")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
