"""A tiny third-party content sink, installed for the tests through the entry-point group
`frontier.sinks` (the `.dist-info` beside this package registers it when the folder is on
sys.path): each document a JSON line appended to a file, a deletion a `{"deleted": ...}`
line. Documents of the hosts in `refuse_hosts` are refused (DocumentRejected), the others
of their batch written."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable


class JsonLinesOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    refuse_hosts: list[str] = Field(default_factory=list)


class JsonLinesSink:
    name = "lines"

    def __init__(self, path: Path, refuse_hosts: Sequence[str]) -> None:
        self._path = path
        self._refuse = frozenset(refuse_hosts)

    def _append(self, lines: list[dict[str, Any]]) -> None:
        try:
            with self._path.open("a", encoding="utf-8") as out:
                out.writelines(json.dumps(line) + "\n" for line in lines)
                out.flush()
                os.fsync(out.fileno())  # durable on return
        except OSError as exc:
            raise SinkUnavailable(f"{self._path}: {exc}") from None

    async def write(self, documents: Sequence[RawDocument]) -> None:
        refused = [d.url_hash for d in documents if d.host in self._refuse]
        self._append([d.as_json() for d in documents if d.host not in self._refuse])
        if refused:
            reasons = {h: "host refused by this sink" for h in refused}
            raise DocumentRejected("lines refused: host refused by this sink", refused, reasons)

    async def delete(self, url_hashes: Sequence[str]) -> None:
        self._append([{"deleted": h} for h in url_hashes])

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        return None  # a log of documents: not read back

    async def health(self) -> str:
        if not os.access(self._path.parent, os.W_OK):
            raise SinkUnavailable(f"{self._path.parent} is not writable")
        return f"JSON lines in {self._path}"

    async def close(self) -> None:
        """Each write closes its file."""


class JsonLinesKind:
    name = "lines"
    options_model = JsonLinesOptions

    async def open(self, settings: Any, db: Any, options: JsonLinesOptions) -> JsonLinesSink:
        return JsonLinesSink(Path(options.path), options.refuse_hosts)
