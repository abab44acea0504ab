"""The layout docs/architecture.md draws, checked from the imports themselves (every `import`, also
those inside functions) and from what the core loads by name: each package imports only the
layers below it (the core, `frontier`, nothing of the services; a service only the core; the
edge, `frontier_cli`, anything), the core names no module above it even as a string (an
`import_module`, a preload list, a fallback table of entry points), what registers through
an entry point sits above what loads it, and no module imports itself back through others."""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
import sys
import tomllib
from importlib.metadata import distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = "frontier"
SERVICES = ("poller", "fetcher", "spider")
EDGE = "frontier_cli"
PACKAGES = (CORE, *SERVICES, EDGE)
# What each package may import of the project: the layers, from the bottom up.
MAY_IMPORT = {
    CORE: {CORE},
    **{service: {CORE, service} for service in SERVICES},
    EDGE: set(PACKAGES),
}
API = "frontier.api"  # in the core, given the services' functions: only it and the edge use it
# A string that is a module (or `module:attribute`) of a package above the core, or the head of
# one in an f-string ("poller." ...), and not a sentence ("poller: tick failed")
ABOVE_THE_CORE = re.compile(rf"^(?:{'|'.join((*SERVICES, EDGE))})(?=[.:])(?:\.\w*)*(?::[\w.]+)?$")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _imports() -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = _modules()
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


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _package(module: str) -> str:
    return module.split(".")[0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        if _package(module) == package
        for target in targets
        if _package(target) not in MAY_IMPORT[package]
    )
    assert wrong == []


def test_only_the_api_and_the_edge_import_the_api() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        if not (_within(module, API) or _package(module) == EDGE)
        for target in targets
        if _within(target, API)
    )
    assert wrong == []


def test_no_import_cycle() -> None:
    assert _cycles(_imports()) == []


def test_the_packages_draw_no_cycle() -> None:
    graph: dict[str, set[str]] = {package: set() for package in PACKAGES}
    for module, targets in _imports().items():
        graph[_package(module)] |= {_package(t) for t in targets} - {_package(module)}
    assert _cycles(graph) == []


def _strings(path: Path) -> list[str]:
    """Every string constant of `path`, the pieces of its f-strings included."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def test_the_core_names_no_module_above_it_to_load_at_run_time() -> None:
    """No `import_module("poller.x")`, no preload list or fallback table of entry points
    naming a service or the edge: what the core loads from above, it finds through an entry
    point that the package above registers (pyproject.toml)."""
    wrong = sorted(
        f"{name}: {text!r}"
        for name, path in _modules().items()
        if _package(name) == CORE
        for text in _strings(path)
        if ABOVE_THE_CORE.match(text)
    )
    assert wrong == []


def test_importing_the_core_loads_nothing_above_it() -> None:
    """Every module of the core imported (`__main__` aside: it runs the command): no service
    and nothing of the edge is in sys.modules, whatever an import does at run time."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import frontier\n"
        "for info in pkgutil.walk_packages(frontier.__path__, 'frontier.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {list(PACKAGES[1:])!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"


def _declared_entry_points() -> dict[str, dict[str, str]]:
    """pyproject.toml's entry points by group, its console scripts as `console_scripts`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"console_scripts": project["scripts"], **project["entry-points"]}


def test_what_registers_through_an_entry_point_sits_above_what_loads_it() -> None:
    """Each entry point names a module of the tree, outside the core, in a package that
    may import the core: the arrow runs from the plugin down to what it plugs into. Each
    group is one the core loads (its name is a constant of the core; console_scripts:
    `python -m frontier`), so no registration is dead."""
    modules = _modules()
    core_strings = {
        text for name, path in modules.items() if _package(name) == CORE for text in _strings(path)
    }
    wrong = []
    for group, points in _declared_entry_points().items():
        if group not in core_strings:
            wrong.append(f"group {group}: the core never loads it")
        for name, value in points.items():
            module = value.split(":")[0]
            if module not in modules:
                wrong.append(f"{group} {name} = {value}: no such module")
            elif _package(module) == CORE or CORE not in MAY_IMPORT[_package(module)]:
                wrong.append(f"{group} {name} = {value}: not above the core")
    assert wrong == []


def test_the_installed_entry_points_are_the_declared_ones() -> None:
    """The core finds the poller's kinds and parsers, and `python -m frontier` its command,
    only through the installed metadata: an install older than pyproject.toml would lose
    them (no fallback names them)."""
    installed: dict[str, dict[str, str]] = {}
    for point in distribution("frontier").entry_points:
        installed.setdefault(point.group, {})[point.name] = point.value
    assert installed == _declared_entry_points(), (
        "the installed metadata is not pyproject.toml's: `pip install -e . --no-deps`"
    )


def test_a_command_loads_only_what_it_drives() -> None:
    """`frontier status` must not pay for Scrapy, uvicorn and the fetcher at start-up."""
    setup = "from frontier_cli import load_commands\nload_commands(['-v', 'status'])"
    assert _loaded_after(setup, ("scrapy", "uvicorn", "fetcher", "spider", "poller")) == []


def test_an_extraction_worker_loads_only_what_parsing_needs() -> None:
    """An extraction worker (fetcher.extract_worker, and the job it is sent) imports no HTTP
    client, database driver or settings: each would cost every worker's start-up, and its
    memory, for nothing it uses."""
    setup = "import fetcher.extract_worker, fetcher.extract_job"
    unwanted = ("aiohttp", "asyncpg", "psycopg", "pydantic_settings", "frontier.settings")
    assert _loaded_after(setup, (*unwanted, "frontier.db")) == []


def _loaded_after(setup: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter has loaded once it has run `setup`."""
    code = f"import sys\n{setup}\nprint([m for m in {modules!r} if m in sys.modules])\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return list(ast.literal_eval(done.stdout.strip()))


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
    """The names a module loads by string: `importlib.import_module(f"frontier_cli.{m}")`
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
