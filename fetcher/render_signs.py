"""Is this page a client-side app's shell, whose text its scripts will write? The signs the
`auto` render mode looks for (docs/fetching.md, "Rendering in a browser"), on a page whose
own text is thin already (fewer than `fetcher.verdict.THIN_WORDS` words): a page with an
article's worth of text is never rendered, whatever framework made it (a server-rendered
Next.js page carries `__NEXT_DATA__` too).

Read from the tree the extraction has parsed already (`fetcher.extract_job`), so a sign
costs a few CSS queries and a bounded substring search, in the extraction worker.

The signs, and where the frameworks document them:

- an empty mount element: the element a framework renders the app into, shipped empty by a
  client-rendered page. React's `createRoot(document.getElementById('root'))`
  (react.dev/reference/react-dom/client/createRoot; Create React App and Vite's templates
  ship `<div id="root"></div>`), Next.js's `<div id="__next">` (nextjs.org/docs, the pages
  router's `_document`), Vue's `createApp(App).mount('#app')` (vuejs.org/guide/essentials/
  application.html#mounting-the-app), Nuxt's `#__nuxt`, Gatsby's `#___gatsby`, Angular's
  `<app-root>` (angular.dev, the CLI's index.html), Quasar's `#q-app`, Ember's
  `.ember-application`;
- a framework's bootstrap data: the state a client-side app starts from, serialized into the
  page: Next.js's `<script id="__NEXT_DATA__" type="application/json">` (nextjs.org/docs/
  pages/building-your-application/data-fetching), Nuxt's `window.__NUXT__`, Redux's
  `window.__PRELOADED_STATE__` (redux.js.org/usage/server-rendering), `__INITIAL_STATE__`
  (Vuex and many others), Apollo's `__APOLLO_STATE__`, Remix's `window.__remixContext`,
  SvelteKit's `__sveltekit_` start script, Angular's `<script id="ng-state">`;
- a `<noscript>` notice that says the page needs JavaScript ("You need to enable
  JavaScript to run this app." is Create React App's).
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

MARKER_BYTES = 262_144  # how much of the page the bootstrap-data search reads

# id (or selector) of the mount element, and the framework it is named after
_MOUNTS: tuple[tuple[str, str], ...] = (
    ("#root", "React"),
    ("#__next", "Next.js"),
    ("#app", "Vue"),
    ("#__nuxt", "Nuxt"),
    ("#___gatsby", "Gatsby"),
    ("app-root", "Angular"),
    ("#q-app", "Quasar"),
    ("#svelte", "SvelteKit"),
    ("[data-reactroot]", "React"),
    (".ember-application", "Ember"),
)
_BOOTSTRAP: tuple[tuple[str, str], ...] = (
    ('id="__next_data__"', "Next.js's __NEXT_DATA__"),
    ("window.__nuxt__", "Nuxt's window.__NUXT__"),
    ("__preloaded_state__", "Redux's __PRELOADED_STATE__"),
    ("__initial_state__", "__INITIAL_STATE__"),
    ("__apollo_state__", "Apollo's __APOLLO_STATE__"),
    ("window.__remixcontext", "Remix's __remixContext"),
    ("__sveltekit_", "SvelteKit's start data"),
    ('id="ng-state"', "Angular's ng-state"),
)
_NOSCRIPT = (
    "enable javascript",
    "javascript is required",
    "javascript is disabled",
    "requires javascript",
    "need javascript",
    "turn on javascript",
    "javascript enabled",
    "activate javascript",
    "javascript aktivieren",
    "activer javascript",
    "activa javascript",
    "habilita javascript",
)


def app_shell_sign(tree: LexborHTMLParser, html: str) -> str | None:
    """The first sign that `tree` (parsed from `html`) is a client-side app's shell, as a
    short reason ("empty mount element #root (React)"), or None. The caller asks only of a
    page whose text is thin."""
    for selector, framework in _MOUNTS:
        node = tree.css_first(selector)
        if node is not None and not (node.text(deep=True) or "").strip():
            return f"empty mount element {selector} ({framework})"
    head = html[:MARKER_BYTES].lower()
    for marker, what in _BOOTSTRAP:
        if marker in head:
            return f"bootstrap data: {what}"
    for node in tree.css("noscript"):
        text = " ".join((node.text(deep=True) or "").lower().split())
        if not text:  # lexbor keeps a <noscript>'s content as raw text in <head>
            text = " ".join((node.html or "").lower().split())
        for phrase in _NOSCRIPT:
            if phrase in text:
                return f'<noscript> notice "{phrase}"'
    return None
