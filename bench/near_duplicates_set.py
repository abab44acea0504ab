"""The labelled set of near-duplicates (issue 29 item 4), generated from the corpus.

Run ``python -m bench.near_duplicates_set`` to write ``bench/data/near_duplicates.json.gz``
(committed; the same every time: a fixed seed). The 36 articles of
tests/corpus/articles/article-extraction-benchmark (real news articles, their gold text in
``ground-truth.json``) are rendered as HTML pages in four page templates (each its own
site furniture: navigation, share buttons, related cards, newsletter box, footer):

- ``original``: every article in template 0, its gold text as it is;
- positives, each article's original paired with a copy in another template and:
  ``typo`` a typo fixed (a word's letters swapped in the original, right in the copy),
  ``paragraph`` a paragraph added (an update or an editor's note, about 40 words),
  ``byline`` another byline, an "originally published" line and a share box inside the
  article, ``all`` the three together;
- negatives: every pair of two different originals (different articles, same template:
  630 pairs), and each article paired with ``rewrite``, another outlet's story on the same
  news (a different corpus article led by the original's first sentence, as a rewrite
  quotes the wire's lead), in template 1.

The bench extracts each page with the pipeline's own extractor (``fetcher.extract``) and
fingerprints the text it gets, so template furniture that leaks into a body counts.
"""

from __future__ import annotations

import gzip
import html
import json
import random
import re
from itertools import combinations
from pathlib import Path
from typing import Any

from bench.extract_quality import BENCHMARK

OUT = Path(__file__).resolve().parent / "data" / "near_duplicates.json.gz"
SEED = 29
SITES = ("daily-herald.test", "metro-wire.test", "coast-times.test", "valley-post.test")
BYLINES = ("By Staff Reporter", "By Maria Lopez, Wire Services", "By J. Chen", "Agency report")
ADDED = (
    "Update: this story has been updated with a statement from officials, who said on "
    "Thursday that a review of the matter was under way and that further details would be "
    "released once it was complete. Additional reporting by our correspondents.",
    "Editor's note: an earlier version of this article misstated the date of the meeting. "
    "It took place on Tuesday, not Monday as first reported. We regret the error and have "
    "corrected the text above accordingly for our readers.",
    "Readers who want to follow the story can sign up for alerts on the topic. Our newsroom "
    "will continue to report on developments as they happen, including reactions from the "
    "people and organisations affected in the coming days.",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n") if p.strip()]


def _typo(paragraphs: list[str], rng: random.Random) -> list[str]:
    """A copy with one word's two middle letters swapped (the typo the copy fixed)."""
    out = list(paragraphs)
    for _ in range(100):
        i = rng.randrange(len(out))
        words = out[i].split(" ")
        j = rng.randrange(len(words))
        w = words[j]
        if len(w) >= 6 and w.isalpha():
            k = len(w) // 2
            words[j] = w[: k - 1] + w[k] + w[k - 1] + w[k + 1 :]
            out[i] = " ".join(words)
            return out
    return out


def _page(site: int, title: str, byline: str, paragraphs: list[str], extra: str = "") -> str:
    """An article page in template `site`: its furniture around the article."""
    name = SITES[site]
    e = html.escape
    nav = "".join(
        f'<li><a href="/{s}">{s.title()}</a></li>'
        for s in ("world", "politics", "business", "tech", "sport", "culture", "opinion")
    )
    related = "".join(
        f'<li><a href="/story/{site}-{n}">Related story number {n} from {name}</a></li>'
        for n in range(1, 6)
    )
    body = "".join(f"<p>{e(p)}</p>" for p in paragraphs)
    head = f"<title>{e(title)} | {name}</title>"
    if site % 2:  # two of the templates declare the article's metadata
        head += (
            f'<meta name="author" content="{e(byline)}">'
            f'<meta property="og:title" content="{e(title)}">'
        )
    furniture = {
        0: (f'<header><div class="logo">{name}</div><nav><ul>{nav}</ul></nav></header>', ""),
        1: (
            f'<div class="top-bar">Subscribe to {name}</div><nav class="menu"><ul>{nav}</ul></nav>',
            '<aside class="newsletter"><h3>Newsletter</h3><p>Get the day\'s news in your '
            "inbox every morning.</p></aside>",
        ),
        2: (
            f'<nav><ul>{nav}</ul></nav><div class="breaking">Breaking: live coverage</div>',
            f'<section class="comments"><h3>Comments</h3>'
            f"<p>Comments are closed on {name}.</p></section>",
        ),
        3: (
            f'<header class="masthead"><h1 class="site">{name}</h1></header>'
            f"<nav><ul>{nav}</ul></nav>",
            '<div class="share">Share on social networks · Email · Print</div>',
        ),
    }[site]
    return (
        f"<!doctype html><html><head><meta charset='utf-8'>{head}</head><body>{furniture[0]}"
        f'<main><article><h1>{e(title)}</h1><p class="byline">{e(byline)}</p>{extra}{body}'
        f"</article>{furniture[1]}<aside class='related'><h3>More from {name}</h3><ul>{related}"
        f"</ul></aside></main><footer><p>© {name}. All rights reserved.</p>"
        f"<p>Contact · Privacy · Terms</p></footer></body></html>"
    )


def build() -> dict[str, Any]:
    """The pages and the labelled pairs (deterministic)."""
    truth = json.loads((BENCHMARK / "ground-truth.json").read_text(encoding="utf-8"))
    rng = random.Random(SEED)
    articles = sorted(truth)
    pages: dict[str, dict[str, Any]] = {}
    pairs: list[tuple[str, str, bool, str]] = []  # a, b, same article, kind

    def add(pid: str, article: str, site: int, edit: str, doc: str) -> str:
        pages[pid] = {"article": article, "site": SITES[site], "edit": edit, "html": doc}
        return pid

    for n, key in enumerate(articles):
        paras = _paragraphs(truth[key]["articleBody"])
        title = _SENTENCE.split(paras[0])[0][:90]
        typoed = _typo(paras, rng)  # the original carries the typo; copies fix it
        original = add(f"{n}-original", key, 0, "original", _page(0, title, BYLINES[0], typoed))
        at = rng.randrange(1, len(paras) + 1)
        note = [ADDED[rng.randrange(len(ADDED))]]
        other = rng.randrange(1, len(SITES))
        attribution = (
            f"<p>This article originally appeared on {SITES[0]}.</p>"
            '<div class="share-inline">Share · Tweet · Email</div>'
        )
        variants = {
            "typo": (other, BYLINES[0], paras, ""),
            "paragraph": (1 + other % 3, BYLINES[0], typoed[:at] + note + typoed[at:], ""),
            "byline": (1 + ((other + 1) % 3), BYLINES[1 + n % 3], typoed, attribution),
            "all": (other, BYLINES[1 + (n + 1) % 3], paras[:at] + note + paras[at:], attribution),
        }
        for edit, (site, byline, text, extra) in variants.items():
            copy = add(f"{n}-{edit}", key, site, edit, _page(site, title, byline, text, extra))
            pairs.append((original, copy, True, edit))
    for n, key in enumerate(articles):  # another outlet's story, led by the wire's lead
        other_n = (n + 1 + rng.randrange(len(articles) - 1)) % len(articles)
        lead = _SENTENCE.split(_paragraphs(truth[key]["articleBody"])[0])[0]
        paras = [lead, *_paragraphs(truth[articles[other_n]]["articleBody"])]
        title = lead[:90]
        rewrite = add(f"{n}-rewrite", key, 1, "rewrite", _page(1, title, BYLINES[2], paras))
        pairs.append((f"{n}-original", rewrite, False, "rewrite"))
    for a, b in combinations(range(len(articles)), 2):
        pairs.append((f"{a}-original", f"{b}-original", False, "same_template"))
    return {"seed": SEED, "pages": pages, "pairs": pairs}


def load() -> dict[str, Any]:
    """The committed set (``build()`` when it was never written)."""
    if not OUT.exists():
        return build()
    with gzip.open(OUT, "rt", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def main() -> None:
    data = build()
    OUT.parent.mkdir(exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:  # mtime 0: the same bytes each time
        f.write(json.dumps(data, sort_keys=True, ensure_ascii=False).encode())
    positives = sum(1 for p in data["pairs"] if p[2])
    print(
        f"{OUT}: {len(data['pages'])} pages, {positives} positive and "
        f"{len(data['pairs']) - positives} negative pairs"
    )


if __name__ == "__main__":
    main()
