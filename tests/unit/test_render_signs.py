"""The `auto` render rule (fetcher/render_signs.py) measured on every page of the zoo
(tests/zoo/) and the article corpus (tests/corpus/articles): exactly the client-side apps'
empty shells would be rendered, and no page with its text in the HTML, nor a challenge.
docs/fetching.md ("Rendering in a browser") quotes the counts."""

from __future__ import annotations

import gzip
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser

import tests.zoo
from fetcher.encoding import decode_html
from fetcher.extract_job import Extraction, extract_page
from fetcher.render_signs import app_shell_sign
from frontier.queue_values import OutcomeKind
from tests.zoo import client_rendered

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "articles"
URL = "https://news.example/2026/05/story"


class Recorder:
    """Stands in for a LocalSite: keeps the HTML a zoo function serves, by path."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}

    def url(self, path: str) -> str:
        return "http://127.0.0.1:8000" + path

    def route(self, path: str, handler: Any) -> None:
        """A page a handler makes when asked: not read (it needs a request)."""

    def redirect(self, path: str, location: str, status: int = 301) -> None:
        """No page."""

    def serve(self, path: str, body: Any = b"", **options: Any) -> None:
        if options.get("content_type", "text/html").startswith("text/html"):
            self.pages[path] = body.decode() if isinstance(body, bytes) else body


def zoo_pages() -> dict[str, str]:
    """Every HTML page of the zoo that can be read without a server: the modules' HTML
    constants, what their functions of a title return, what their functions of a site and
    a path (or paths) serve, and the client-rendered shells."""
    pages: dict[str, str] = {}
    for info in pkgutil.iter_modules(tests.zoo.__path__):
        module = importlib.import_module(f"tests.zoo.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, str) and "<html" in value.lower() and not name.startswith("_"):
                pages[f"{info.name}.{name}"] = value
            elif inspect.isfunction(value) and value.__module__ == module.__name__:
                if inspect.iscoroutinefunction(value):
                    continue
                pages |= {f"{info.name}.{name}{k}": v for k, v in _called(value).items()}
    site = Recorder()
    client_rendered.react_shell(site, "/react", "/api/react.json", "swing")  # type: ignore[arg-type]
    client_rendered.next_shell(site, "/next", "lifting")  # type: ignore[arg-type]
    client_rendered.prying_shell(site, "/prying", "/api/p.json", "http://10.0.0.1/", "x")  # type: ignore[arg-type]
    pages |= {f"client_rendered{path}": html for path, html in site.pages.items()}
    return pages


def _called(function: Any) -> dict[str, str]:
    """The HTML a zoo function gives: returned for a title, or served at a path."""
    params = [p for p in inspect.signature(function).parameters.values() if p.default is p.empty]
    names = [p.name for p in params]
    if names in (["title"], ["slug"], ["number"]):
        page = function(3 if names == ["number"] else "A title")
        return {"()": page} if isinstance(page, str) and "<html" in page.lower() else {}
    if names not in (["site", "path"], ["site", "paths"]):
        return {}
    site = Recorder()
    function(site, "/zoo/page" if names[1] == "path" else ["/zoo/page"])
    return {path: html for path, html in site.pages.items() if "<html" in html.lower()}


def would_render(extraction: Extraction) -> bool:
    """`auto`'s rule, as fetcher.render_step.RenderStep.wants applies it."""
    verdict = extraction.verdict
    return extraction.app_shell is not None and (
        verdict is None or verdict.kind is not OutcomeKind.CHALLENGE
    )


def test_on_the_zoo_exactly_the_empty_app_shells_would_render() -> None:
    pages = zoo_pages()
    rendered = {
        name
        for name, html in pages.items()
        if would_render(extract_page(html.encode(), "text/html; charset=utf-8", URL, None, None))
    }
    assert rendered == {
        "not_articles.EMPTY_SHELL",  # Vite's index.html: #root
        "not_articles.empty_page/zoo/page",  # the same, served
        "client_rendered/react",  # #root, CRA's <noscript>
        "client_rendered/next",  # #__next, __NEXT_DATA__
        "client_rendered/prying",
    }
    # what it does not render: a Next.js page rendered on the server, one whose text is in
    # its JSON-LD, a challenge that also says "enable JavaScript"
    assert {"client_rendered.next_server_rendered()", "structured.nextjs_article()"} <= set(pages)
    assert "walls.CLOUDFLARE_CHALLENGE" in pages
    assert len(pages) >= 30, sorted(pages)


def test_no_article_of_the_corpus_would_render() -> None:
    """Only the pages with a sign are extracted (the sign is the cheap half of the rule):
    each has its text, so none is thin."""
    files = sorted(f for f in CORPUS.rglob("*") if f.name.endswith((".html", ".html.gz")))
    assert len(files) >= 40
    signed = []
    for path in files:
        html, _ = decode_html(_read(path), None)
        if app_shell_sign(LexborHTMLParser(html), html) is not None:
            signed.append(path)
    assert len(signed) == 4, [f.name for f in signed]  # Redux, Apollo, Nuxt, data-reactroot
    rendered = [
        f.name for f in signed if would_render(extract_page(_read(f), None, URL, None, None))
    ]
    assert rendered == []


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


@pytest.mark.parametrize(
    ("html", "sign"),
    [
        ("<div id='root'></div>", "empty mount element #root (React)"),
        ("<div id='app'> \n </div>", "empty mount element #app (Vue)"),
        ("<app-root></app-root>", "empty mount element app-root (Angular)"),
        ("<div id='__nuxt'></div><script>window.__NUXT__={}</script>", "empty mount element"),
        ("<main><p>Hi</p></main><script>window.__NUXT__={}</script>", "window.__NUXT__"),
        ("<p>x</p><script>window.__INITIAL_STATE__ = {}</script>", "__INITIAL_STATE__"),
        ("<noscript>Please enable JavaScript to view this site.</noscript>", "<noscript>"),
        ("<div id='root'><p>Server-rendered text</p></div>", None),
        ("<p>A short brief with no app at all.</p>", None),
        ("<noscript><img src='/pixel.gif'></noscript>", None),  # a tracking pixel
    ],
)
def test_signs(html: str, sign: str | None) -> None:
    found = app_shell_sign(LexborHTMLParser(f"<html><body>{html}</body></html>"), html)
    if sign is None:
        assert found is None
    else:
        assert found is not None and sign in found
