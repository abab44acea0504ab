"""The search servers' clients as the index sinks use them (frontier.sinks.elasticsearch):
one small interface over the official Elasticsearch client and opensearch-py, so that the
sink and its reader are written once.

Which server answers, and the headers each wants (docs/sinks.md, "Elasticsearch 8 and 9,
OpenSearch"):

- The Elasticsearch client (8.x) asks for REST API compatibility on every request:
  `Accept` and `Content-Type: application/vnd.elasticsearch+json; compatible-with=8`. An
  Elasticsearch server of major N serves `compatible-with` N and N-1 and refuses any other
  with 400 `media_type_header_exception` ("Accept version must be either version 9 or 8");
  so a 9.x client, which sends `compatible-with=9`, is refused by an 8.x server.
  `ElasticClient` asks the server its version first (`GET /`, plain `application/json`),
  then sends `compatible-with` of the server's own major (8 or 9; `CompatibleTransport`):
  the client follows the server. Another major, or an OpenSearch server, is refused with a
  message saying which sink to use.
- OpenSearch refuses the Elasticsearch media type (406, "Content-Type header
  [application/vnd.elasticsearch+json; compatible-with=8] is not supported"), and sends no
  `X-Elastic-Product` header, which the Elasticsearch client requires: `OpenSearchClient`
  is opensearch-py (plain `application/json`), the optional extra `frontier[opensearch]`.

Errors of either client become `SearchError` (its HTTP status, None when none came back);
a server that is not the one the sink speaks to, `UnsupportedServer`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from frontier.sinks import SinkUnavailable

ELASTICSEARCH_MAJORS = (8, 9)
_COMPATIBLE_WITH = re.compile(r"compatible-with=\d+")


class SearchError(Exception):
    """A request the server refused or could not be sent (status None)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class UnsupportedServer(SinkUnavailable):
    """The server at the URL is not one this sink speaks to (another product or major)."""


@dataclass(frozen=True, slots=True)
class ServerVersion:
    distribution: str  # "elasticsearch" or "opensearch"
    number: str

    @property
    def major(self) -> int:
        head = self.number.split(".")[0]
        return int(head) if head.isdigit() else 0

    def __str__(self) -> str:
        name = "OpenSearch" if self.distribution == "opensearch" else "Elasticsearch"
        return f"{name} {self.number}"


def server_version(root: Any) -> ServerVersion:
    """The version `GET /` reports (OpenSearch names its distribution; Elasticsearch not)."""
    version = root.get("version", {}) if isinstance(root, Mapping) else {}
    return ServerVersion(
        str(version.get("distribution") or "elasticsearch"), str(version.get("number", "?"))
    )


class SearchClient(Protocol):
    """What the index sink and reader ask of a search server."""

    product: str  # "Elasticsearch" or "OpenSearch", for messages

    async def server(self) -> ServerVersion: ...
    async def index_exists(self, index: str) -> bool: ...
    async def create_index(self, index: str, definition: Mapping[str, Any]) -> None: ...
    async def add_fields(self, index: str, properties: Mapping[str, Any]) -> None: ...
    async def bulk(self, actions: Sequence[dict[str, Any]], **options: Any) -> list[Any]:
        """The bulk helper's per-item errors (raise_on_error=False)."""
        ...

    async def search(self, index: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    async def get(self, index: str, doc_id: str) -> dict[str, Any] | None:
        """The document's source, or None."""
        ...

    async def close(self) -> None: ...


def _elastic_transport_class() -> Any:
    from elastic_transport import AsyncTransport

    class CompatibleTransport(AsyncTransport):
        """The Elasticsearch client's transport, asking for the REST API compatibility of
        the server's own major (`compatible_with`, set once the server said its version;
        until then the client's)."""

        compatible_with: int | None = None

        async def perform_request(  # type: ignore[override]
            self, method: str, target: str, **kwargs: Any
        ) -> Any:
            headers = kwargs.get("headers")
            if self.compatible_with is not None and headers:
                wanted = f"compatible-with={self.compatible_with}"
                kwargs["headers"] = {
                    name: _COMPATIBLE_WITH.sub(wanted, value) for name, value in headers.items()
                }
            return await super().perform_request(method, target, **kwargs)

    return CompatibleTransport


class _IndexClient:
    """What both clients share: the server asked its version once before anything else,
    reading a document, the client's errors as SearchError (`_call`)."""

    product: str
    _client: Any
    _version: ServerVersion | None = None

    async def _ask_version(self) -> ServerVersion:
        raise NotImplementedError

    async def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def server(self) -> ServerVersion:
        """The server's version, asked once; UnsupportedServer when this client does not
        speak to it."""
        if self._version is None:
            self._version = await self._ask_version()
        return self._version

    async def _ready(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        await self.server()
        return await self._call(method, *args, **kwargs)

    async def index_exists(self, index: str) -> bool:
        return bool(await self._ready(self._client.indices.exists, index=index))

    async def get(self, index: str, doc_id: str) -> dict[str, Any] | None:
        try:
            answer = await self._ready(self._client.get, index=index, id=doc_id)
        except SearchError as exc:
            if exc.status == 404:
                return None
            raise
        return dict(answer["_source"])

    async def close(self) -> None:
        await self._client.close()


class ElasticClient(_IndexClient):
    """The official Elasticsearch client (8.x), for Elasticsearch 8 and 9 servers."""

    product = "Elasticsearch"

    def __init__(self, url: str, *, request_timeout: float = 30) -> None:
        from elasticsearch import AsyncElasticsearch

        self._client = AsyncElasticsearch(
            url, request_timeout=request_timeout, transport_class=_elastic_transport_class()
        )

    async def _ask_version(self) -> ServerVersion:
        """`GET /` in plain JSON (any server answers it); from then on every request asks
        for the compatibility of the server's major. Not Elasticsearch 8 or 9:
        UnsupportedServer."""
        answer = await self._call(
            self._client.transport.perform_request,
            "GET",
            "/",
            headers={"accept": "application/json"},
        )
        version = server_version(answer.body)
        if version.distribution != "elasticsearch":
            raise UnsupportedServer(
                f"the server is {version}, not Elasticsearch: use FRONTIER_SINK=opensearch"
            )
        if version.major not in ELASTICSEARCH_MAJORS:
            raise UnsupportedServer(
                f"the server is {version}: the elasticsearch sink speaks to Elasticsearch "
                f"{' and '.join(map(str, ELASTICSEARCH_MAJORS))}"
            )
        self._client.transport.compatible_with = version.major
        return version

    async def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        from elastic_transport import TransportError
        from elasticsearch import exceptions as es_errors

        try:
            return await method(*args, **kwargs)
        except es_errors.ApiError as exc:
            raise SearchError(str(exc), exc.status_code) from None
        except TransportError as exc:
            raise SearchError(str(exc)) from None

    async def create_index(self, index: str, definition: Mapping[str, Any]) -> None:
        await self._ready(
            self._client.indices.create,
            index=index,
            mappings=definition["mappings"],
            settings=definition.get("settings"),
        )

    async def add_fields(self, index: str, properties: Mapping[str, Any]) -> None:
        await self._ready(self._client.indices.put_mapping, index=index, properties=properties)

    async def bulk(self, actions: Sequence[dict[str, Any]], **options: Any) -> list[Any]:
        from elasticsearch import helpers

        _ok, errors = await self._ready(helpers.async_bulk, self._client, actions, **options)
        return errors if isinstance(errors, list) else []

    async def search(self, index: str, body: Mapping[str, Any]) -> dict[str, Any]:
        # the client's keyword spelling of a body (`_source` is `source`)
        arguments = {("source" if k == "_source" else k): v for k, v in body.items()}
        answer = await self._ready(self._client.search, index=index, **arguments)
        return dict(answer)


def missing_opensearch() -> str:
    return (
        "the opensearch sink needs opensearch-py, the extra frontier[opensearch]: "
        "pip install 'frontier[opensearch]'"
    )


class OpenSearchClient(_IndexClient):
    """opensearch-py's async client, for OpenSearch servers (1.x to 3.x)."""

    product = "OpenSearch"

    def __init__(self, url: str, *, request_timeout: float = 30) -> None:
        from opensearchpy import AsyncOpenSearch

        self._client = AsyncOpenSearch(url, timeout=request_timeout)

    async def _ask_version(self) -> ServerVersion:
        version = server_version(await self._call(self._client.info))
        if version.distribution != "opensearch":
            raise UnsupportedServer(
                f"the server is {version}, not OpenSearch: use FRONTIER_SINK=elasticsearch"
            )
        return version

    async def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        from opensearchpy import exceptions as os_errors

        try:
            return await method(*args, **kwargs)
        except os_errors.TransportError as exc:
            status = exc.status_code if isinstance(exc.status_code, int) else None
            raise SearchError(str(exc), status) from None

    async def create_index(self, index: str, definition: Mapping[str, Any]) -> None:
        await self._ready(self._client.indices.create, index=index, body=dict(definition))

    async def add_fields(self, index: str, properties: Mapping[str, Any]) -> None:
        body = {"properties": dict(properties)}
        await self._ready(self._client.indices.put_mapping, index=index, body=body)

    async def bulk(self, actions: Sequence[dict[str, Any]], **options: Any) -> list[Any]:
        from opensearchpy.helpers import async_bulk

        _ok, errors = await self._ready(async_bulk, self._client, actions, **options)
        return errors if isinstance(errors, list) else []

    async def search(self, index: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self._ready(self._client.search, index=index, body=dict(body)))
