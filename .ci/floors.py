"""Print a pip constraints file pinning every runtime dependency of pyproject.toml to its
floor (`name>=X` becomes `name==X`), for `make test-floors`: the floors are then proved by
installing exactly them. A dependency without a floor is an error, so none is left untested."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*(.*)$")


def floors(pyproject: Path) -> list[str]:
    dependencies = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = []
    for requirement in dependencies:
        match = REQUIREMENT.match(requirement.split(";")[0])
        assert match, requirement
        name, specifiers = match.groups()
        lowest = [s.strip()[2:] for s in specifiers.split(",") if s.strip().startswith(">=")]
        if len(lowest) != 1:
            raise SystemExit(f"{requirement!r}: no `>=` floor")
        pins.append(f"{name}=={lowest[0]}")  # a constraints file takes no extras
    return pins


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    print("\n".join(floors(root / "pyproject.toml")))
