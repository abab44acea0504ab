"""frontier/errors.py draws the whole exception tree: every FrontierError the project
defines is named there, under the parent it really has."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import fetcher
import frontier
import frontier_cli
import poller
import spider
from frontier.errors import FrontierError

TREE = Path(frontier.__file__).with_name("errors.py").read_text().split('"""')[1]


def project_errors() -> dict[str, type]:
    found: dict[str, type] = {}
    for package in (frontier, frontier_cli, poller, fetcher, spider):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__") or info.name == "spider.crawl_process":
                continue  # entry points: importing them runs them
            module = importlib.import_module(info.name)
            for name, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, FrontierError) and cls.__module__ == module.__name__:
                    found[name] = cls
    return found


def drawn_parents() -> dict[str, str]:
    """name -> the name one level up in the drawing."""
    parents: dict[str, str] = {}
    path = ["FrontierError"]
    for line in TREE.splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)[├└]── (\w+)", line)
        if match:
            depth = len(match.group(1)) // 4 + 1
            del path[depth:]
            parents[match.group(2)] = path[-1]
            path.append(match.group(2))
    return parents


def test_every_error_is_in_the_tree_under_its_parent() -> None:
    errors = project_errors()
    errors.pop("FrontierError")  # the root
    parents = drawn_parents()
    assert sorted(set(errors) - set(parents)) == []
    for name, cls in errors.items():
        bases = {base.__name__ for base in cls.__mro__[1:]}
        assert parents[name] in bases, f"{name} is drawn under {parents[name]}"
