"""An Elasticsearch stand-in for tests (not Elasticsearch): a real HTTP server on loopback
that speaks the few endpoints the Elasticsearch sink uses, and strictly validates them:

- `HEAD /{index}`, `PUT /{index}`: the index must be created with exactly the definition
  of frontier/sinks/raw_content.json (settings and mappings);
- `POST`/`PUT /_bulk`: NDJSON with the ndjson content type; each action must be `delete` or
  `index` into an
  existing index with an `_id` equal to the document's `url_hash`; documents must only
  hold mapped fields (the mapping is `dynamic: strict`) with values of the mapped types.
  Bad requests get a 400, bad documents a per-item error, as Elasticsearch answers;
- it claims the Elasticsearch version deploy/compose.yaml runs (`SERVER_VERSION`), or the
  `version` it is given (an 8.x or a 9.x), and refuses, as that server does, a request
  whose `Accept` or `Content-Type` asks for a REST compatibility it does not serve (400
  `media_type_header_exception`), or asks for it on one header only. A 9.x serves
  `compatible-with` 9 and 8 (its own major and the one before), an 8.x only 8: a real 8.x
  also takes `compatible-with=7`, with 7.x semantics this stand-in does not speak. Each
  request's path and `compatible-with` (None: plain JSON) are kept in `compatible_with`,
  for tests to check what the client sent;
- `GET /` answers as Elasticsearch does (`version.number`, `build_flavor`, the tagline);
  `OpenSearchStandIn` answers as OpenSearch does instead (`version.distribution:
  "opensearch"`, no `X-Elastic-Product` header, bulk bodies as `application/json` too)
  and refuses the Elasticsearch media type with 406, as OpenSearch does: "Content-Type
  header [application/vnd.elasticsearch+json; compatible-with=8] is not supported".
- `POST /{index}/_search`: only the requests the document reader and the export send (a
  `bool` query of `term`/`range`/`prefix`/`exists` clauses and nested `bool`s with
  `should` and `minimum_should_match`, a `multi_match` over title and body with operator
  `and`, sorted by fetched_at then url_hash, both descending (the reader) or ascending (the
  export), `search_after`, `size`, `_source` excludes, `track_total_hits: false`); any other
  key, query or sort is a 400 `parsing_exception`, as a real server refuses unknown
  fields. Text is analysed as the standard analyser does for these tests (lowercase word
  tokens); `multi_match` best_fields with operator `and` matches a document when one field
  holds every term;
- `GET /{index}/_doc/{id}`: one document, or 404 `found: false`;
- `PUT /{index}/_mapping`: fields added to an existing index (`properties` only); a field
  already mapped must keep its mapping, as Elasticsearch refuses a change. Each index keeps
  the fields it was given (`properties`), and documents are checked against them:
  `create_old_index(index, without=...)` makes one as an older definition made it;
- every answer carries `X-Elastic-Product: Elasticsearch`, which the official client
  checks. Set `down = True` to answer 503 to everything.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from aiohttp import web

from frontier.sinks.schema import index_definition
from tests.local_site import serve_on_loopback

COMPOSE = Path(__file__).resolve().parents[1] / "deploy" / "compose.yaml"
SERVER_VERSION = re.search(
    r"image: docker\.elastic\.co/elasticsearch/elasticsearch:(\d+\.\d+\.\d+)",
    COMPOSE.read_text(encoding="utf-8"),
)[1]  # type: ignore[index]
SERVER_MAJOR = int(SERVER_VERSION.split(".")[0])
OPENSEARCH_VERSION = "2.19.1"
COMPATIBLE_WITH = re.compile(r"compatible-with\s*=\s*(\d+)")


def compatible_with(value: str | None) -> int | None:
    """The REST compatibility a media type asks for (None: plain JSON)."""
    match = COMPATIBLE_WITH.search(value or "")
    return int(match[1]) if match else None


def media_type_error(
    accept: str, content_type: str | None, major: int = SERVER_MAJOR
) -> str | None:
    """Why an Elasticsearch server of `major` refuses these headers (the
    `status_exception` reason), or None."""
    served = {major, major - 1} if major - 1 >= 8 else {major}  # 7.x semantics: not here
    versions = {}
    for name, value in (("Accept", accept), ("Content-Type", content_type)):
        version = compatible_with(value)
        if version is not None:
            versions[name] = version
            if version not in served:
                return (
                    f"{name} version must be either version {major} or {major - 1}, "
                    f"but found {version}. {name}={value}"
                )
    if versions and content_type is not None and len(set(versions.values())) != 1:
        return f"Content-Type and Accept compatible versions must match: {versions}"
    if versions and content_type is not None and len(versions) != 2:  # one header only
        return (
            "A compatible version is required on both Content-Type and Accept headers if "
            "either one has requested a compatible version and the compatible versions "
            f"must match. Accept={accept}, Content-Type={content_type}"
        )
    return None


def _type_ok(kind: str, value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, list):  # any field holds an array of its type's values
        return all(_type_ok(kind, item) for item in value)
    if kind in ("keyword", "text"):
        return isinstance(value, str)
    if kind in ("integer", "short", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "date":
        try:
            datetime.fromisoformat(value)
        except (TypeError, ValueError):
            return False
        return True
    return False


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SEARCH_KEYS = {"query", "sort", "size", "search_after", "_source", "track_total_hits"}
READER_SORT = [{"fetched_at": "desc"}, {"url_hash": "desc"}]
EXPORT_SORT = [{"fetched_at": "asc"}, {"url_hash": "asc"}]
_WORDS = re.compile(r"\w+")


def _millis(value: str) -> int:
    """A `date` field's sort value: epoch milliseconds (sub-millisecond digits dropped)."""
    return (datetime.fromisoformat(value) - EPOCH) // timedelta(milliseconds=1)


def _terms(text: Any) -> set[str]:
    return set(_WORDS.findall(text.lower())) if isinstance(text, str) else set()


def _date_test(field: str, bounds: dict[str, str]) -> Any:
    """A `range` on a date field: `gte` and/or `lte` (ISO 8601, as the sink sends)."""
    low = datetime.fromisoformat(bounds["gte"]) if "gte" in bounds else None
    high = datetime.fromisoformat(bounds["lte"]) if "lte" in bounds else None

    def test(source: dict[str, Any]) -> bool:
        if source.get(field) is None:
            return False
        value = datetime.fromisoformat(source[field])
        return (low is None or value >= low) and (high is None or value <= high)

    return test


def _clause(clause: Any) -> Any:
    """A predicate for one clause of the queries the reader and the export send (`term`,
    `range` with gte/lte, `prefix`, `exists`, `multi_match` with operator and, and a
    nested `bool`), or why it is refused."""
    if not isinstance(clause, dict) or len(clause) != 1:
        return f"unsupported clause {clause}"
    ((kind, spec),) = clause.items()
    if kind == "bool":
        return _bool(spec)
    if kind == "exists" and isinstance(spec, dict) and set(spec) == {"field"}:
        return lambda s, f=spec["field"]: s.get(f) is not None
    if kind == "multi_match":
        if set(spec) != {"query", "fields", "operator"} or spec["operator"] != "and":
            return f"unsupported multi_match {clause}"
        wanted = _terms(spec["query"])
        return lambda s, fields=spec["fields"], w=wanted: any(w <= _terms(s.get(f)) for f in fields)
    if not isinstance(spec, dict) or len(spec) != 1:
        return f"unsupported clause {clause}"
    ((field, value),) = spec.items()
    if kind == "term":
        return lambda s, f=field, v=value: s.get(f) == v
    if kind == "prefix" and isinstance(value, str):
        return lambda s, f=field, v=value: isinstance(s.get(f), str) and s[f].startswith(v)
    if kind == "range" and isinstance(value, dict) and value and set(value) <= {"gte", "lte"}:
        return _date_test(field, value)
    return f"unsupported clause {clause}"


def _bool(spec: Any) -> Any:
    """A `bool` query: every filter and must, no must_not, and at least
    `minimum_should_match` of should (default 1 when alone, else 0, as Elasticsearch)."""
    keys = {"filter", "must", "must_not", "should", "minimum_should_match"}
    if not isinstance(spec, dict) or set(spec) - keys:
        return f"this stand-in reads a bool of {sorted(keys)}, not {spec}"
    parts: dict[str, list[Any]] = {}
    for key in ("filter", "must", "must_not", "should"):
        parts[key] = []
        for clause in spec.get(key, []):
            test = _clause(clause)
            if isinstance(test, str):
                return test
            parts[key].append(test)
    alone = not (parts["filter"] or parts["must"] or parts["must_not"])
    wanted = spec.get("minimum_should_match", 1 if alone and parts["should"] else 0)

    def test(source: dict[str, Any]) -> bool:
        return (
            all(t(source) for t in parts["filter"] + parts["must"])
            and not any(t(source) for t in parts["must_not"])
            and sum(1 for t in parts["should"] if t(source)) >= wanted
        )

    return test


def _query_matcher(query: Any) -> Any:
    """A predicate over a document's source for the query, or why it is refused."""
    if query == {"match_all": {}}:
        return lambda _source: True
    if not isinstance(query, dict) or list(query) != ["bool"]:
        return f"this stand-in reads only a bool query, not {query}"
    return _bool(query["bool"])


class ElasticsearchStandIn:
    distribution = "elasticsearch"
    product_headers: ClassVar[dict[str, str]] = {"X-Elastic-Product": "Elasticsearch"}
    bulk_types: tuple[str, ...] = ("application/x-ndjson", "application/vnd.elasticsearch+x-ndjson")

    def __init__(self, address: str = "127.0.0.1", version: str = SERVER_VERSION) -> None:
        self.address = address
        self.port = 0
        self.version = version
        self.major = int(version.split(".")[0])
        self.definition = index_definition(self.distribution, self.major)
        # each request's path and the compatible-with its Accept asked for, in order
        self.compatible_with: list[tuple[str, int | None]] = []
        self.indices: dict[str, dict[str, dict[str, Any]]] = {}  # index -> id -> source
        # index -> its mapped fields (an index made by an older release lacks new ones)
        self.properties: dict[str, dict[str, Any]] = {}
        self.bulk_requests = 0
        self.rejected_requests: list[str] = []
        self.down = False
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def _answer(self, body: Any, status: int = 200) -> web.Response:
        return web.Response(
            text=json.dumps(body),
            status=status,
            content_type="application/json",
            headers=self.product_headers,
        )

    def _bad(self, reason: str) -> web.Response:
        self.rejected_requests.append(reason)
        return self._answer(
            {"error": {"type": "illegal_argument_exception", "reason": reason}, "status": 400}, 400
        )

    def _media_type_refusal(self, request: web.Request) -> web.Response | None:
        refused = media_type_error(
            request.headers.get("Accept", ""),
            request.headers.get("Content-Type") if request.body_exists else None,
            self.major,
        )
        return self._refuse_media_type(refused) if refused else None

    def _root(self) -> dict[str, Any]:
        return {
            "name": "stand-in",
            "cluster_name": "frontier-tests",
            "version": {
                "number": self.version,
                "build_flavor": "default",
                "minimum_wire_compatibility_version": f"{self.major - 1}.19.0",
            },
            "tagline": "You Know, for Search",
        }

    def _refuse_media_type(self, reason: str) -> web.Response:
        """The answer of an Elasticsearch server to headers it cannot serve."""
        self.rejected_requests.append(reason)
        header = "Invalid media-type value on headers [Accept, Content-Type]"
        return self._answer(
            {
                "error": {
                    "root_cause": [{"type": "media_type_header_exception", "reason": header}],
                    "type": "media_type_header_exception",
                    "reason": header,
                    "caused_by": {"type": "status_exception", "reason": reason},
                },
                "status": 400,
            },
            400,
        )

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            return self._answer({"error": "unavailable", "status": 503}, 503)
        self.compatible_with.append((request.path, compatible_with(request.headers.get("Accept"))))
        refused = self._media_type_refusal(request)
        if refused is not None:
            return refused
        path = request.path.strip("/")
        if path == "_bulk" and request.method in ("POST", "PUT"):
            return await self._bulk(request)
        parts = path.split("/")
        if len(parts) == 2 and parts[1] == "_search" and request.method in ("POST", "GET"):
            return await self._search(parts[0], request)
        if len(parts) == 2 and parts[1] == "_mapping" and request.method in ("PUT", "POST"):
            return await self._put_mapping(parts[0], request)
        if len(parts) == 3 and parts[1] == "_doc" and request.method == "GET":
            return self._get(parts[0], parts[2])
        if path and "/" not in path and not path.startswith("_"):
            if request.method == "HEAD":
                return self._answer({}, 200 if path in self.indices else 404)
            if request.method == "PUT":
                return await self._create(path, request)
        if not path and request.method == "GET":
            return self._answer(self._root())
        return self._bad(f"unsupported {request.method} /{path}")

    async def _create(self, index: str, request: web.Request) -> web.Response:
        if index in self.indices:
            return self._answer(
                {
                    "error": {"type": "resource_already_exists_exception", "reason": index},
                    "status": 400,
                },
                400,
            )
        body = await request.json()
        if body.get("mappings") != self.definition["mappings"]:
            return self._bad("mappings differ from the schema")
        if body.get("settings") != self.definition["settings"]:
            return self._bad("settings differ from the schema")
        self.indices[index] = {}
        self.properties[index] = dict(self.definition["mappings"]["properties"])
        return self._answer({"acknowledged": True, "index": index})

    def create_old_index(self, index: str, without: tuple[str, ...]) -> None:
        """An index as an older release made it: the mapping lacks the fields `without`."""
        self.indices[index] = {}
        properties = self.definition["mappings"]["properties"]
        self.properties[index] = {k: v for k, v in properties.items() if k not in without}

    async def _put_mapping(self, index: str, request: web.Request) -> web.Response:
        """Fields added to an index's mapping; a mapped field's type never changes (as
        Elasticsearch refuses that with `illegal_argument_exception`)."""
        if index not in self.indices:
            return self._missing_index(index)
        body = await request.json()
        given = body.get("properties")
        if not isinstance(given, dict) or set(body) - {"properties"}:
            return self._bad("a mapping update must hold only properties")
        known = self.properties[index]
        for name, spec in given.items():
            if name in known and known[name] != spec:
                return self._answer(
                    {
                        "error": {
                            "type": "illegal_argument_exception",
                            "reason": f"mapper [{name}] cannot be changed",
                        },
                        "status": 400,
                    },
                    400,
                )
        known.update(given)
        return self._answer({"acknowledged": True})

    async def _bulk(self, request: web.Request) -> web.Response:
        if request.headers.get("Content-Type", "").split(";")[0].strip() not in self.bulk_types:
            return self._bad(f"bulk body must be one of {self.bulk_types}")
        lines = [line for line in (await request.text()).split("\n") if line.strip()]
        pairs: list[tuple[dict[str, Any], str | None]] = []
        while lines:
            action = json.loads(lines.pop(0))
            if list(action) == ["delete"]:
                pairs.append((action, None))
            elif list(action) == ["index"] and lines:
                pairs.append((action, lines.pop(0)))
            else:
                return self._bad(f"unexpected bulk action {list(action)} or no source")
        if not pairs:
            return self._bad("empty bulk body")
        self.bulk_requests += 1
        items, errors = [], False
        for action, source_line in pairs:
            if source_line is None:  # a delete: 404 when absent, as Elasticsearch answers
                meta = action["delete"]
                found = self.indices.get(meta.get("_index"), {}).pop(meta.get("_id"), None)
                status = 200 if found is not None else 404
                result = "deleted" if found is not None else "not_found"
                items.append({"delete": {**meta, "status": status, "result": result}})
                continue
            meta, source = action["index"], json.loads(source_line)
            index, doc_id = meta.get("_index"), meta.get("_id")
            problem = None
            if index not in self.indices:
                problem = ("index_not_found_exception", f"no such index [{index}]", 404)
            elif doc_id != source.get("url_hash"):
                problem = ("illegal_argument_exception", "_id must equal url_hash", 400)
            else:
                properties = self.properties.get(index, self.definition["mappings"]["properties"])
                for name, value in source.items():
                    if name not in properties:
                        problem = (
                            "strict_dynamic_mapping_exception",
                            f"field [{name}] not allowed",
                            400,
                        )
                        break
                    if not _type_ok(properties[name]["type"], value):
                        problem = (
                            "document_parsing_exception",
                            f"failed to parse field [{name}]",
                            400,
                        )
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

    def _get(self, index: str, doc_id: str) -> web.Response:
        if index not in self.indices:
            return self._missing_index(index)
        source = self.indices[index].get(doc_id)
        if source is None:
            return self._answer({"_index": index, "_id": doc_id, "found": False}, 404)
        return self._answer({"_index": index, "_id": doc_id, "found": True, "_source": source})

    def _missing_index(self, index: str) -> web.Response:
        error = {"type": "index_not_found_exception", "reason": f"no such index [{index}]"}
        return self._answer({"error": error, "status": 404}, 404)

    def _parsing(self, reason: str) -> web.Response:
        self.rejected_requests.append(reason)
        error = {"type": "parsing_exception", "reason": reason}
        return self._answer({"error": error, "status": 400}, 400)

    async def _search(self, index: str, request: web.Request) -> web.Response:
        if index not in self.indices:
            return self._missing_index(index)
        body = await request.json()
        unknown = set(body) - SEARCH_KEYS
        if unknown:
            return self._parsing(f"Unknown key for a START_OBJECT in [{sorted(unknown)[0]}].")
        if body.get("sort") not in (READER_SORT, EXPORT_SORT):
            return self._parsing(f"this stand-in sorts only by {READER_SORT} or {EXPORT_SORT}")
        descending = body["sort"] == READER_SORT
        size = body.get("size", 10)
        if not isinstance(size, int) or not 0 <= size <= 10_000:
            return self._bad("[size] must be between 0 and 10000 (index.max_result_window)")
        matches = _query_matcher(body.get("query", {"match_all": {}}))
        if isinstance(matches, str):
            return self._parsing(matches)
        excluded = set((body.get("_source") or {}).get("excludes", []))
        hits = []
        for doc_id, source in self.indices[index].items():
            if matches(source):
                millis = _millis(source["fetched_at"])
                hits.append(((millis, source["url_hash"]), doc_id, source))
        hits.sort(key=lambda hit: hit[0], reverse=descending)
        after = body.get("search_after")
        if after is not None:
            if not (isinstance(after, list) and len(after) == len(READER_SORT)):
                return self._bad("search_after has 2 value(s) but sort has 2.")
            mark = (int(after[0]), str(after[1]))
            hits = [hit for hit in hits if (hit[0] < mark if descending else hit[0] > mark)]
        return self._answer(
            {
                "took": 1,
                "timed_out": False,
                "hits": {
                    "max_score": None,
                    "hits": [
                        {
                            "_index": index,
                            "_id": doc_id,
                            "_score": None,
                            "_source": {k: v for k, v in source.items() if k not in excluded},
                            "sort": list(key),
                        }
                        for key, doc_id, source in hits[:size]
                    ],
                },
            }
        )

    async def start(self) -> ElasticsearchStandIn:
        # self.port: 0 at first (any free port), then the same port when started again
        self._runner, self.port = await serve_on_loopback(self._dispatch, self.address, self.port)
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


class OpenSearchStandIn(ElasticsearchStandIn):
    """The stand-in answering as OpenSearch does (not OpenSearch): `GET /` names the
    distribution, no `X-Elastic-Product` header, and the Elasticsearch media type
    (`application/vnd.elasticsearch+json; compatible-with=N`) is refused with 406, as
    OpenSearch refuses it; the rest as the Elasticsearch stand-in (the same index API)."""

    distribution = "opensearch"
    product_headers: ClassVar[dict[str, str]] = {}
    bulk_types = ("application/x-ndjson", "application/json")

    def __init__(self, address: str = "127.0.0.1", version: str = OPENSEARCH_VERSION) -> None:
        super().__init__(address, version)

    def _media_type_refusal(self, request: web.Request) -> web.Response | None:
        content_type = request.headers.get("Content-Type") if request.body_exists else None
        if content_type and "vnd.elasticsearch" in content_type:
            reason = f"Content-Type header [{content_type}] is not supported"
            self.rejected_requests.append(reason)
            return self._answer({"error": reason, "status": 406}, 406)
        return None

    def _root(self) -> dict[str, Any]:
        return {
            "name": "stand-in",
            "cluster_name": "frontier-tests",
            "version": {
                "distribution": "opensearch",
                "number": self.version,
                "build_type": "tar",
                "minimum_wire_compatibility_version": "7.10.0",
            },
            "tagline": "The OpenSearch Project: https://opensearch.org/",
        }
