"""Article versions (issue 30 item 4): a revisit or a re-extraction whose text changed keeps
the document it replaces in `document_versions` (SQL in frontier/sql/document_versions.sql),
so the edit history of an article (corrections, stealth edits) is not lost.

The newest version is the document the sink holds; the earlier ones are numbered 1, 2, ...
per URL, each with the time it was fetched, its content hash, its title and text (kept for
the diff between any two) and the pointer of its response in the WARC archive.
FRONTIER_DOCUMENT_VERSIONS bounds how many earlier versions a URL keeps (the oldest go).

Reading: `history` lists them with the current document as the last version; `diff` is a
unified diff (difflib) of the text of any two.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from frontier.db import Database
from frontier.documents import json_ready
from frontier.errors import FrontierError
from frontier.sql import load

SQL = load("document_versions")
DIFF_CONTEXT = 3  # lines of context around each change


class UnknownVersion(FrontierError, LookupError):
    """A version number the document does not have (or no longer keeps)."""


class DocumentVersions:
    def __init__(self, db: Database, keep: int) -> None:
        self._db = db
        self.keep_count = keep

    async def keep(self, replaced: Sequence[dict[str, Any]]) -> None:
        """Keep these documents (as a sink's `get` returns them: the ones a changed text is
        about to replace) as their URLs' next earlier versions."""
        rows = sorted(replaced, key=lambda d: d["url_hash"])
        if not rows or self.keep_count <= 0:
            return
        columns = [
            [_moment(d["fetched_at"]) for d in rows]
            if name == "fetched_at"
            else [d.get(name) for d in rows]
            for name in _KEPT
        ]
        await self._db.execute(SQL["keep"], *columns, self.keep_count)

    async def history(self, url_hash: str, current: dict[str, Any] | None) -> list[dict[str, Any]]:
        """The versions of a URL, oldest first: the earlier ones kept, then `current` (the
        document the sink holds) as the newest, marked `current`."""
        rows = [json_ready(dict(r)) for r in await self._db.fetch(SQL["list"], url_hash)]
        for row in rows:
            row["current"] = False
            row["kept_at"] = row["kept_at"].isoformat()
        if current is not None:
            newest = rows[-1]["version"] if rows else 0
            rows.append(
                {
                    "version": newest + 1,
                    "current": True,
                    "chars": len(current.get("body") or ""),
                    **{name: current.get(name) for name in _LISTED},
                }
            )
        return rows

    async def text(self, url_hash: str, version: int, current: dict[str, Any] | None) -> str:
        """The text of one version (the current document's for the newest number)."""
        row = await self._db.fetchrow(SQL["one"], url_hash, version)
        if row is not None:
            return row["body"] or ""
        newest = await self._db.fetchval(SQL["newest_number"], url_hash) or 0
        if current is not None and version == newest + 1:
            return current.get("body") or ""
        raise UnknownVersion(f"no version {version} of this document is kept")

    async def diff(self, url_hash: str, old: int, new: int, current: dict[str, Any] | None) -> str:
        """A unified diff of the texts of versions `old` and `new`, line by line."""
        before = await self.text(url_hash, old, current)
        after = await self.text(url_hash, new, current)
        return unified_diff(before, after, f"version {old}", f"version {new}")


def unified_diff(before: str, after: str, old_name: str, new_name: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=old_name,
        tofile=new_name,
        n=DIFF_CONTEXT,
        lineterm="",
    )
    return "\n".join(lines)


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


_KEPT = (
    "url_hash",
    "fetched_at",
    "content_hash",
    "title",
    "body",
    "warc_file",
    "warc_offset",
    "warc_length",
    "warc_record_id",
)
_LISTED = (
    "fetched_at",
    "content_hash",
    "title",
    "warc_file",
    "warc_offset",
    "warc_length",
    "warc_record_id",
)
