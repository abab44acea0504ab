"""Every SQL statement of the platform, as named blocks in one `.sql` file per table or
concern. A block starts with `-- name: NAME` and runs to the next one; `load("queue")`
reads `queue.sql` once and returns the blocks by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType

_BLOCK = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@cache
def load(name: str) -> Mapping[str, str]:
    text = resources.files(__name__).joinpath(f"{name}.sql").read_text(encoding="utf-8")
    parts = _BLOCK.split(text)
    queries = {}
    for block_name, body in zip(parts[1::2], parts[2::2], strict=True):
        if block_name in queries:
            raise ValueError(f"{name}.sql defines {block_name} twice")
        queries[block_name] = body.strip()
    return MappingProxyType(queries)
