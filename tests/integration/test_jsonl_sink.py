"""The built-in JSON-lines sink (frontier.sinks.jsonl): written by the fetcher's run_once,
one line per document re-read by jq, files rotated by size and never rewritten across
starts, deletions in their own file, options checked."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from fetcher.sink_kinds import JsonLinesKind
from frontier.db import Database
from frontier.settings import Settings
from frontier.sinks import SinkUnavailable
from frontier.sinks.jsonl import JsonLinesOptions, JsonLinesSink
from frontier.sinks.schema import FIELD_NAMES
from frontier.urls import url_hash
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.full_documents import full_document
from tests.local_site import LocalSite


def jq_lines(directory: Path, program: str) -> list[str]:
    assert shutil.which("jq"), "jq is needed: make jq (apt-get install jq)"
    files = sorted(str(p) for p in directory.glob("documents-*.jsonl"))
    done = subprocess.run(["jq", "-r", program, *files], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


async def test_the_fetcher_writes_json_lines(
    db: Database, tmp_path: Path, local_site: LocalSite
) -> None:
    options = JsonLinesOptions(path=str(tmp_path / "out"))
    sink = await JsonLinesKind().open(Settings.load(home=tmp_path, _env_file=None), db, options)
    urls = []
    for n in range(2):
        local_site.serve(f"/j/{n}", article(f"Story {n}"))
        urls.append(local_site.url(f"/j/{n}"))
    await submit(db, *urls)
    async with fetcher_for(db, sink=sink) as fetcher:
        for k in range(len(urls)):  # one URL of a host per claim
            await fetcher.run_once(now=after(60 * k))
    await sink.close()
    for url in urls:
        assert (await frontier_row(db, url))["status"] == "fetched"
    out = tmp_path / "out"
    assert sorted(jq_lines(out, ".url_hash")) == sorted(url_hash(u) for u in urls)
    assert sorted(jq_lines(out, ".title")) == ["Story 0", "Story 1"]
    assert jq_lines(out, 'keys_unsorted | join(",")') == [",".join(FIELD_NAMES)] * 2
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0


async def test_rotation_restarts_and_deletions(tmp_path: Path) -> None:
    options = JsonLinesOptions(path=str(tmp_path), rotate_mb=0.001)  # about 1 KB a file
    sink = JsonLinesSink.open(options)
    docs = [full_document(i) for i in range(4)]
    await sink.write(docs[:2])  # over 1 KB: the next batch starts a new file
    await sink.write(docs[2:3])
    await sink.delete([docs[0].url_hash])
    assert await sink.get(docs[0].url_hash) is None
    await sink.close()
    again = JsonLinesSink.open(options)  # a new start never appends to an old file
    await again.write(docs[3:])
    assert await again.health() == f"JSON lines in {tmp_path}"
    await again.close()
    names = sorted(p.name for p in tmp_path.glob("documents-*.jsonl"))
    assert names == ["documents-000001.jsonl", "documents-000002.jsonl", "documents-000003.jsonl"]
    assert jq_lines(tmp_path, ".url_hash") == [d.url_hash for d in docs]
    first = json.loads((tmp_path / names[0]).read_text().splitlines()[0])
    assert first == docs[0].as_json()
    deletions = [json.loads(x) for x in (tmp_path / "deletions.jsonl").read_text().splitlines()]
    assert [d["url_hash"] for d in deletions] == [docs[0].url_hash]


def test_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="rotate_mb"):
        JsonLinesOptions(path="x", rotate_mb=0)
    with pytest.raises(ValidationError, match="Extra inputs"):
        JsonLinesOptions.model_validate({"path": "x", "fsync": False})
    (tmp_path / "file").write_text("")
    with pytest.raises(SinkUnavailable, match="jsonl: cannot create"):
        JsonLinesSink.open(JsonLinesOptions(path=str(tmp_path / "file" / "sub")))
