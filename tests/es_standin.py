"""An Elasticsearch stand-in for tests (not Elasticsearch): a real HTTP server on loopback
that speaks the few endpoints the Elasticsearch sink uses, and strictly validates them:

- `HEAD /{index}`, `PUT /{index}`: the index must be created with exactly the definition
  of deploy/elasticsearch/raw_content.json (settings and mappings);
- `POST`/`PUT /_bulk`: NDJSON with the ndjson content type; each action must be `index` into an
  existing index with an `_id` equal to the document's `url_hash`; documents must only
  hold mapped fields (the mapping is `dynamic: strict`) with values of the mapped types.
  Bad requests get a 400, bad documents a per-item error, as Elasticsearch answers;
- every answer carries `X-Elastic-Product: Elasticsearch`, which the official client
  checks. Set `down = True` to answer 503 to everything.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from aiohttp import web

from frontier.sinks.elasticsearch import load_index_definition
from tests.local_site import serve_on_loopback

MEDIA = "application/vnd.elasticsearch+json;compatible-with=9"


def _type_ok(kind: str, value: Any) -> bool:
    if value is None:
        return True
    if kind in ("keyword", "text"):
        return isinstance(value, str)
    if kind in ("integer", "short", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "date":
        try:
            datetime.fromisoformat(value)
        except (TypeError, ValueError):
            return False
        return True
    return False


class ElasticsearchStandIn:
    def __init__(self, address: str = "127.0.0.1") -> None:
        self.address = address
        self.port = 0
        self.definition = load_index_definition()
        self.indices: dict[str, dict[str, dict[str, Any]]] = {}  # index -> id -> source
        self.bulk_requests = 0
        self.rejected_requests: list[str] = []
        self.down = False
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def _answer(self, body: Any, status: int = 200) -> web.Response:
        return web.Response(
            text=json.dumps(body), status=status, content_type="application/json",
            headers={"X-Elastic-Product": "Elasticsearch"},
        )  # fmt: skip

    def _bad(self, reason: str) -> web.Response:
        self.rejected_requests.append(reason)
        return self._answer({"error": {"type": "illegal_argument_exception", "reason": reason},
                             "status": 400}, 400)  # fmt: skip

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            return self._answer({"error": "unavailable", "status": 503}, 503)
        path = request.path.strip("/")
        if path == "_bulk" and request.method in ("POST", "PUT"):
            return await self._bulk(request)
        if path and "/" not in path and not path.startswith("_"):
            if request.method == "HEAD":
                return self._answer({}, 200 if path in self.indices else 404)
            if request.method == "PUT":
                return await self._create(path, request)
        if not path and request.method == "GET":
            return self._answer({"version": {"number": "9.0.0"}, "tagline": "stand-in"})
        return self._bad(f"unsupported {request.method} /{path}")

    async def _create(self, index: str, request: web.Request) -> web.Response:
        if index in self.indices:
            return self._answer({"error": {"type": "resource_already_exists_exception",
                                           "reason": index}, "status": 400}, 400)  # fmt: skip
        body = await request.json()
        if body.get("mappings") != self.definition["mappings"]:
            return self._bad("mappings differ from deploy/elasticsearch/raw_content.json")
        if body.get("settings") != self.definition["settings"]:
            return self._bad("settings differ from deploy/elasticsearch/raw_content.json")
        self.indices[index] = {}
        return self._answer({"acknowledged": True, "index": index})

    async def _bulk(self, request: web.Request) -> web.Response:
        if "x-ndjson" not in request.headers.get("Content-Type", ""):
            return self._bad("bulk body must be NDJSON")
        lines = [line for line in (await request.text()).split("\n") if line.strip()]
        if not lines or len(lines) % 2:
            return self._bad("bulk body must be action/source pairs")
        self.bulk_requests += 1
        properties = self.definition["mappings"]["properties"]
        items, errors = [], False
        for action_line, source_line in zip(lines[::2], lines[1::2], strict=True):
            action = json.loads(action_line)
            if list(action) != ["index"]:
                return self._bad(f"unexpected bulk action {list(action)}")
            meta, source = action["index"], json.loads(source_line)
            index, doc_id = meta.get("_index"), meta.get("_id")
            problem = None
            if index not in self.indices:
                problem = ("index_not_found_exception", f"no such index [{index}]", 404)
            elif doc_id != source.get("url_hash"):
                problem = ("illegal_argument_exception", "_id must equal url_hash", 400)
            else:
                for name, value in source.items():
                    if name not in properties:
                        problem = ("strict_dynamic_mapping_exception",
                                   f"field [{name}] not allowed", 400)  # fmt: skip
                        break
                    if not _type_ok(properties[name]["type"], value):
                        problem = ("document_parsing_exception",
                                   f"failed to parse field [{name}]", 400)  # fmt: skip
                        break
            if problem:
                errors = True
                items.append(
                    {
                        "index": {
                            "_index": index,
                            "_id": doc_id,
                            "status": problem[2],
                            "error": {"type": problem[0], "reason": problem[1]},
                        }
                    }
                )
                continue
            created = doc_id not in self.indices[index]
            self.indices[index][doc_id] = source
            items.append(
                {
                    "index": {
                        "_index": index,
                        "_id": doc_id,
                        "status": 201 if created else 200,
                        "result": "created" if created else "updated",
                    }
                }
            )
        return self._answer({"took": 1, "errors": errors, "items": items})

    async def start(self) -> ElasticsearchStandIn:
        # self.port: 0 at first (any free port), then the same port when started again
        self._runner, self.port = await serve_on_loopback(self._dispatch, self.address, self.port)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
