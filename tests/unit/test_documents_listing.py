"""`frontier documents` lists source names whole (they were cut at 16 characters)."""

from __future__ import annotations

from typing import Any

from frontier_cli.documents import render_documents


def doc(source: str, title: str) -> dict[str, Any]:
    return {
        "fetched_at": "2026-11-27T10:00:00+00:00",
        "source_name": source,
        "title": title,
        "word_count": 420,
        "url": f"https://news.example/{title.lower()}",
    }


def test_source_names_are_shown_whole_in_one_column() -> None:
    names = ["Regional Broadcasting Corporation", "Regional Broadcasting Company", "BBC"]
    lines = render_documents([doc(name, f"Story{i}") for i, name in enumerate(names)])
    rows = lines.splitlines()[::2]
    for name, row in zip(names, rows, strict=True):
        assert f"  {name} " in row, row
    assert len({row.index(" words") for row in rows}) == 1  # one column
