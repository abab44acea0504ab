"""The layout docs/architecture.md draws, checked from the imports themselves (every `import`, also
those inside functions): the core imports no service, the services import no other service
and no edge, and no module imports itself back through others."""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("frontier", "poller", "fetcher", "spider")
SERVICES = ("poller", "fetcher", "spider")
EDGE = ("frontier.__main__", "frontier.cli", "frontier.api", "frontier.demo")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                candidates = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            targets.update(c for c in candidates if c in modules and c != name)
        graph[name] = targets
    return graph


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _package(module: str) -> str:
    return module.split(".")[0]


def test_the_core_imports_no_service_and_no_edge() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        if _package(module) == "frontier" and not _within(module, EDGE)
        for target in targets
        if _within(target, SERVICES) or _within(target, EDGE)
    )
    assert wrong == []


def test_services_import_only_the_core() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        if _within(module, SERVICES)
        for target in targets
        if _package(target) != _package(module)
        and (_package(target) != "frontier" or _within(target, EDGE))
    )
    assert wrong == []


def test_no_import_cycle() -> None:
    graph = _imports()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_a_command_loads_only_what_it_drives() -> None:
    """`frontier status` must not pay for Scrapy, uvicorn and the fetcher at start-up."""
    code = (
        "import sys\n"
        "from frontier.cli import load_commands\n"
        "load_commands(['-v', 'status'])\n"
        "print(sorted(m for m in ('scrapy', 'uvicorn', 'fetcher', 'spider', 'poller')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"


RUNTIME = (*PACKAGES, "migrations")
OUTSIDE = ("tests", "bench", "devtools")


def _imported_names(path: Path) -> set[str]:
    """Every absolute module name an `import` of `path` names (and `from M import x`'s M.x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _named_in_strings(path: Path, module: str) -> set[str]:
    """The names a module loads by string: `importlib.import_module(f"frontier.cli.{m}")`
    with m from a table of its own, Scrapy's settings ("spider.robots.FrontierRobots...").
    Each string constant, whole, cut at its dots, and under the module's own package."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.split(":")[0]
            parts = text.split(".")
            names.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
            names.add(f"{package}.{text}")
    return names


def _runs_as_a_script(path: Path) -> bool:
    return 'if __name__ == "__main__"' in path.read_text()


def test_nothing_in_the_runtime_packages_is_there_only_for_tests_or_bench() -> None:
    """Test and bench infrastructure lives in devtools/ (issue 34, item 7): each runtime
    module that tests/, bench/ or devtools/ import is also reached by the runtime: imported
    by a runtime module, loaded by one by name, named in pyproject.toml (console script,
    entry points) or run as a script (`python -m frontier.config_reference`)."""
    modules = {
        _module_name(path): path for package in RUNTIME for path in (ROOT / package).rglob("*.py")
    }
    reached: set[str] = set(re.findall(r'"([\w.]+):', (ROOT / "pyproject.toml").read_text()))
    for name, path in modules.items():
        reached |= {n for n in _imported_names(path) if n != name}
        reached |= _named_in_strings(path, name)
        if _runs_as_a_script(path) or name.endswith("__main__"):
            reached.add(name)
    outside = {
        imported
        for folder in OUTSIDE
        for path in (ROOT / folder).rglob("*.py")
        for imported in _imported_names(path)
        if imported in modules
    }
    only_outside = sorted(
        name
        for name in outside - reached
        # a package counts as reached when one of its modules is
        if not (
            modules[name].name == "__init__.py" and any(r.startswith(name + ".") for r in reached)
        )
    )
    assert only_outside == []


def test_the_wheel_leaves_devtools_out() -> None:
    found = re.search(r"include = \[(.*?)\]", (ROOT / "pyproject.toml").read_text())
    assert found is not None
    patterns = re.findall(r'"([^"]+)"', found.group(1))
    assert patterns and not any(fnmatch.fnmatch(folder, p) for p in patterns for folder in OUTSIDE)
