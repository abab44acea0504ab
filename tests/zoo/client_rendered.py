"""Client-rendered news sites: the HTML a plain client gets is an app's empty shell, and the
article's text comes from the site's API, fetched by the page's script once it runs in a
browser (issue 32 item 1; docs/fetching.md, "Rendering in a browser").

- `react_shell`: a React single-page app as Create React App and Vite build it: an empty
  `<div id="root"></div>` the bundle renders into with `createRoot(document.getElementById
  ('root'))` (react.dev/reference/react-dom/client/createRoot), the template's `<noscript>You
  need to enable JavaScript to run this app.</noscript>`, and a bundle that fetches the
  story as JSON from the same host (react.dev/learn/synchronizing-with-effects#fetching-data:
  a `fetch` in an effect, the result set as state).
- `next_shell`: a Next.js page rendered on the client (nextjs.org/docs/pages/building-your-
  application/rendering/client-side-rendering: "the initial HTML is minimal"): the
  `<div id="__next"></div>` mount, the `<script id="__NEXT_DATA__" type="application/json">`
  bootstrap data the pages router writes into every page (its `props.pageProps`, `page`,
  `buildId`: nextjs.org/docs/pages/building-your-application/data-fetching), and a chunk that
  reads it and fetches the story's text from the same host's `/api/` route
  (nextjs.org/docs/pages/building-your-application/routing/api-routes).
- `next_server_rendered`: the same page rendered on the server (`getServerSideProps`): the
  article's text is in the HTML already, beside its `__NEXT_DATA__`; nothing to render.
- `prying_shell`: a React shell whose script, besides fetching its story (through a
  redirect of its own host), tries a private address (the router's admin page, another
  loopback address here) directly and through a redirect of its own host, before it renders.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tests.local_site import LocalSite


def story(subject: str) -> dict[str, Any]:
    """A story about `subject` (the harbour's `subject` bridge), as the site's API sends it."""
    return {
        "title": f"Harbour opens its new {subject} bridge early",
        "author": "Ines Okafor",
        "published": "2026-05-04T07:30:00Z",
        "paragraphs": [
            f"The harbour authority opened the new {subject} bridge on Monday morning, three "
            "weeks ahead of the schedule agreed with the city council last spring.",
            f"Engineers said the {subject} span, which turns on a single pivot, can open for "
            "tall ships in under four minutes, half the time the old bridge needed.",
            "Ferry operators welcomed the change, saying the morning crossings had lost up to "
            "twenty minutes whenever the old bridge jammed in cold weather.",
            "Residents of the east quay will still face closures at night while the cabling "
            "beneath the road is finished, the authority added in a statement.",
        ],
    }


# The bundle: fetch the story from the API, render it into the mount element.
RENDER_JS = """
function render(story) {
  const root = document.getElementById(MOUNT);
  const paragraphs = story.paragraphs.map(p => '<p>' + p + '</p>').join('');
  root.innerHTML = '<article><h1>' + story.title + '</h1><p class="byline">By ' +
    story.author + '</p><time datetime="' + story.published + '"></time>' +
    paragraphs + '</article>';
}
"""


def _shell(mount: str, head: str, scripts: str, *, noscript: str = "") -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Harbour Daily</title>{head}</head><body>{noscript}"
        f"<div id='{mount}'></div>{scripts}</body></html>"
    )


def react_shell(site: LocalSite, path: str, api: str, subject: str) -> None:
    """`path`: Create React App's shell, with the template's logo image; its bundle (named by
    its content's hash, as CRA names them) fetches `api` (`story(subject)`)."""
    bundle = f"{RENDER_JS}\nconst MOUNT = 'root';\nfetch('{api}').then(r => r.json()).then(render);"
    name = f"/static/js/main.{hashlib.sha256(bundle.encode()).hexdigest()[:8]}.js"
    site.serve(
        path,
        _shell(
            "root",
            "",
            f"<img src='/logo192.png' alt=''><script src='{name}'></script>",
            noscript="<noscript>You need to enable JavaScript to run this app.</noscript>",
        ),
    )
    site.serve(name, bundle, content_type="application/javascript")
    site.serve("/logo192.png", b"\x89PNG\r\n\x1a\n", content_type="image/png")
    site.serve(api, json.dumps(story(subject)), content_type="application/json")


def next_shell(site: LocalSite, path: str, slug: str) -> None:
    """`path`: a Next.js page rendered on the client; its chunk fetches /api/stories/`slug`."""
    data = {"props": {"pageProps": {"slug": slug}}, "page": "/news/[slug]", "buildId": "b1"}
    chunk = (
        f"{RENDER_JS}\nconst MOUNT = '__next';\n"
        "const data = JSON.parse(document.getElementById('__NEXT_DATA__').textContent);\n"
        "fetch('/api/stories/' + data.props.pageProps.slug).then(r => r.json()).then(render);"
    )
    site.serve(
        path,
        _shell(
            "__next",
            "",
            f"<script id='__NEXT_DATA__' type='application/json'>{json.dumps(data)}</script>"
            "<script src='/_next/static/chunks/pages/news.js' defer></script>",
        ),
    )
    site.serve("/_next/static/chunks/pages/news.js", chunk, content_type="application/javascript")
    site.serve(f"/api/stories/{slug}", json.dumps(story(slug)), content_type="application/json")


def next_server_rendered(slug: str) -> str:
    """The Next.js page rendered on the server: its text is there, with `__NEXT_DATA__`."""
    props = story(slug)
    data = {"props": {"pageProps": props}, "page": "/news/[slug]", "buildId": "b1"}
    paragraphs = "".join(f"<p>{p}</p>" for p in props["paragraphs"])
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{props['title']}</title></head><body><div id='__next'><article>"
        f"<h1>{props['title']}</h1>{paragraphs}</article></div>"
        f"<script id='__NEXT_DATA__' type='application/json'>{json.dumps(data)}</script>"
        "</body></html>"
    )


def prying_shell(site: LocalSite, path: str, api: str, private_url: str, subject: str) -> None:
    """`path`: a React shell whose script tries `private_url` first (an image beacon, a
    frame, a fetch, and a fetch of its own host's `/go/admin`, which redirects there), then renders
    the story from `api` through a redirect of its own host (`/api/v1/...`, moved)."""
    script = (
        f"<script>{RENDER_JS}\nconst MOUNT = 'root';\n"
        f"new Image().src = '{private_url}?via=img';\n"
        "const frame = document.createElement('iframe');\n"
        f"frame.src = '{private_url}?via=frame'; document.body.appendChild(frame);\n"
        f"fetch('{private_url}?via=fetch').catch(() => null)\n"
        "  .then(() => fetch('/go/admin')).catch(() => null)\n"
        f"  .then(() => fetch('/api/v1{api}')).then(r => r.json()).then(render);</script>"
    )
    site.serve(path, _shell("root", "", script))
    site.redirect("/go/admin", f"{private_url}?via=redirect", status=302)
    site.redirect(f"/api/v1{api}", api)
    site.serve(api, json.dumps(story(subject)), content_type="application/json")
