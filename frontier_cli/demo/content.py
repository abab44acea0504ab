"""The demo's articles and the documents about them: article and listing pages, RSS 2.0,
Atom, a sitemap and robots.txt. Text is generated from a seed, so every run serves the
same articles; the functions here are pure (the `sites` module serves what they return).

Hand-written rather than pulled from a fixtures library: the documents are a few lines
each, and generating them keeps the demo free of bundled data files.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape

SUBJECTS = (
    "The harbour council",
    "Local fishermen",
    "The mayor's office",
    "Volunteers",
    "Shop owners on the quay",
    "The ferry company",
    "Teachers at the primary school",
    "A spokesperson for the port authority",
    "Residents of the old town",
)
VERBS = ("approve", "review", "postpone", "fund", "extend", "publish", "reconsider", "expand")
PERIODS = ("month", "season", "year", "summer", "winter")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
SENTENCES = (
    "{subject} said on {day} that the {topic} plan would {verb} its budget before the end "
    "of the {period}.",
    "According to figures published this week, the {topic} project has drawn more interest "
    "than any initiative in the last decade.",
    "{subject} asked for a public meeting so that everyone affected by the {topic} changes "
    "could be heard before a final vote.",
    "Critics argue that the {topic} proposal leaves too many questions open, while "
    "supporters point to the success of similar schemes along the coast.",
    "A first report on the {topic} work is expected next {period}, and a consultation will "
    "run alongside it.",
    "{subject} welcomed the decision and promised to {verb} the timetable if the weather "
    "allows work to continue.",
    "The {topic} committee will meet again on {day} evening in the library on Harbour Street.",
    "Nobody expects the {topic} debate to end soon, but both sides agree that the town needs "
    "a plan it can afford.",
)


@dataclass(frozen=True, slots=True)
class Article:
    slug: str
    title: str
    author: str
    published: datetime
    paragraphs: tuple[str, ...]

    @property
    def summary(self) -> str:
        return self.paragraphs[0].split(". ")[0].rstrip(".") + "."


def make_article(
    slug: str, title: str, topic: str, author: str, age_hours: float, *, now: datetime | None = None
) -> Article:
    """An article of five paragraphs about `topic`, the same text for the same slug."""
    rng = random.Random(slug)  # seeded per article: a local generator, no global state
    paragraphs = []
    for _ in range(5):
        sentences = rng.sample(SENTENCES, 4)
        paragraphs.append(
            " ".join(
                s.format(
                    subject=rng.choice(SUBJECTS),
                    verb=rng.choice(VERBS),
                    period=rng.choice(PERIODS),
                    day=rng.choice(DAYS),
                    topic=topic,
                )
                for s in sentences
            )
        )
    published = (now or datetime.now(UTC)) - timedelta(hours=age_hours)
    return Article(slug, title, author, published.replace(microsecond=0), tuple(paragraphs))


def _page(site_name: str, title: str, main: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} - {escape(site_name)}</title></head>\n<body>"
        f'<header><a href="/">{escape(site_name)}</a> <nav><a href="/">Home</a> '
        '<a href="/about">About</a></nav></header>\n'
        f"{main}\n<footer>{escape(site_name)} is a demo site served by frontier up --demo."
        "</footer></body></html>\n"
    )


def article_page(site_name: str, article: Article) -> str:
    body = "".join(f"<p>{escape(p)}</p>\n" for p in article.paragraphs)
    main = (
        f"<article><h1>{escape(article.title)}</h1>\n"
        f'<p class="byline">By <span class="author">{escape(article.author)}</span>, '
        f'<time datetime="{article.published.isoformat()}">'
        f"{article.published:%d %B %Y}</time></p>\n{body}</article>"
    )
    head_meta = (
        f'<meta name="author" content="{escape(article.author)}">'
        f'<meta property="article:published_time" '
        f'content="{article.published.isoformat()}">'
    )
    return _page(site_name, article.title, main).replace("</head>", head_meta + "</head>", 1)


def listing_page(site_name: str, heading: str, links: Sequence[tuple[str, str]]) -> str:
    """A page of links: (href, text) pairs."""
    items = "".join(
        f'<li><a href="{escape(href)}">{escape(text)}</a></li>\n' for href, text in links
    )
    return _page(site_name, heading, f"<main><h1>{escape(heading)}</h1>\n<ul>\n{items}</ul></main>")


def rss(site_name: str, site_url: str, items: Sequence[tuple[str, Article]]) -> str:
    entries = "".join(
        f"<item><title>{escape(a.title)}</title><link>{escape(url)}</link>"
        f"<guid>{escape(url)}</guid><pubDate>{format_datetime(a.published)}</pubDate>"
        f"<author>{escape(a.author)}</author>"
        f"<description>{escape(a.summary)}</description></item>\n"
        for url, a in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
        f"<title>{escape(site_name)}</title><link>{escape(site_url)}</link>"
        f"<description>News from {escape(site_name)}</description>\n{entries}</channel></rss>\n"
    )


def atom(site_name: str, site_url: str, feed_url: str, items: Sequence[tuple[str, Article]]) -> str:
    updated = max((a.published for _, a in items), default=datetime.now(UTC))
    entries = "".join(
        f'<entry><title>{escape(a.title)}</title><link href="{escape(url)}"/>'
        f"<id>{escape(url)}</id><updated>{a.published.isoformat()}</updated>"
        f"<author><name>{escape(a.author)}</name></author>"
        f"<summary>{escape(a.summary)}</summary></entry>\n"
        for url, a in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>{escape(site_name)}</title><id>{escape(feed_url)}</id>"
        f'<link href="{escape(site_url)}"/><link rel="self" href="{escape(feed_url)}"/>'
        f"<updated>{updated.isoformat()}</updated>\n{entries}</feed>\n"
    )


def sitemap(entries: Sequence[tuple[str, datetime]]) -> str:
    urls = "".join(
        f"<url><loc>{escape(url)}</loc><lastmod>{at.isoformat()}</lastmod></url>\n"
        for url, at in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    )


def robots(disallow: Sequence[str], sitemap_url: str | None = None) -> str:
    lines = ["User-agent: *", *(f"Disallow: {path}" for path in disallow)]
    if sitemap_url:
        lines += ["", f"Sitemap: {sitemap_url}"]
    return "\n".join(lines) + "\n"
