"""The OpenSearch content sink: the index sink of frontier.sinks.elasticsearch over
opensearch-py's async client (frontier.sinks.search_clients.OpenSearchClient), which speaks
plain `application/json` as OpenSearch wants and needs no `X-Elastic-Product` answer.
Configured by its options (FRONTIER_SINK_OPTIONS: `url`, `index`, `flush_docs`,
`flush_ms`); opensearch-py is the optional extra `frontier[opensearch]`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from frontier.sinks.elasticsearch import ElasticsearchDocuments, ElasticsearchSink
from frontier.sinks.search_clients import OpenSearchClient, SearchClient


class OpenSearchOptions(BaseModel):
    """FRONTIER_SINK_OPTIONS of the opensearch sink."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, description="http(s)://[user:password@]host:port")
    index: str = Field("raw_content", min_length=1, pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    flush_docs: int = Field(500, ge=1, le=10_000)
    flush_ms: int = Field(200, ge=0, le=60_000)


class OpenSearchSink(ElasticsearchSink):
    name = "opensearch"
    url_setting = "FRONTIER_SINK_OPTIONS url"

    def _client_for(self, url: str) -> SearchClient:
        return OpenSearchClient(url)


def open_reader(options: OpenSearchOptions) -> ElasticsearchDocuments:
    """The reader of the documents in the sink's index."""
    return ElasticsearchDocuments(
        options.url, index=options.index, client=OpenSearchClient(options.url)
    )
