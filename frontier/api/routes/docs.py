"""`GET /docs`: Swagger UI over /openapi.json, with every asset served by this server
(`/docs/assets/` from the swagger-ui-bundle-v2 package, `/static/docs.js` ours), so the
page works offline and under the Content-Security-Policy of
`frontier.api.security_headers`."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

router = APIRouter(include_in_schema=False)

ASSETS = StaticFiles(directory=Path(str(swagger_ui_path)))
STATIC = StaticFiles(directory=Path(__file__).parents[1] / "static")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>frontier API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/static/docs.js"></script>
</body>
</html>
"""


@router.get("/docs", response_class=HTMLResponse)
async def docs() -> HTMLResponse:
    return HTMLResponse(PAGE)
