"""The HTTP API and dashboard (`frontier serve`): FastAPI routers under `/api/v1`, the bulk
import endpoint, Prometheus metrics at `/metrics` and a server-rendered page at `/`.

`create_app(settings, db, fire=..., reextract=...)` builds the app around a `Database` its
caller owns; the edge (`frontier_cli`) gives it the services' functions: the poller's
`poller.service.fire` for the manual fire, the fetcher's `fetcher.reextract.run_reextract`
for `POST /api/v1/reextract`. The API imports no service (tests/unit/test_layout.py); an
endpoint whose function it was not given answers 501. Read queries are in
`frontier.api.queries`, the routes in `frontier.api.routes`. Errors
leave as one JSON shape, `{"error": {"code", "message", "fields": [{"field", "message"}]}}`
(see `frontier.api.errors`). Exceptions raised on purpose:

    FrontierError
    └── ApiError                 (frontier.api.errors) a request the API refuses
        ├── BadBody              400: a body that cannot be parsed (invalid JSON, nested
        │                        past 32 levels, ...)
        ├── RequestTooLarge      413: over FRONTIER_API_IMPORT_MAX_BYTES or
        │                        FRONTIER_API_JSON_MAX_BYTES (`frontier.api.body_limit`)
        ├── UnsupportedMediaType 415: a Content-Type the import does not read
        ├── FireUnavailable      501: the app was built without a fire function
        └── ReextractUnavailable 501: the app was built without a reextract function

All are permanent for the request that caused them; the database being down
(`frontier.errors.DatabaseUnavailable`) is the retryable case and answers 503, and a
fire that comes too soon (`frontier.errors.RetryLater`) answers 429 with Retry-After.
"""
