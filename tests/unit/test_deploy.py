"""Checks of deploy/ that run without a container engine: compose.yaml is valid against the
Compose specification's schema and has the services the deployment guide promises; every
`frontier` command and `FRONTIER_*` variable it mentions exists; the Dockerfile installs the
distribution the way `make test` does (from pyproject.toml)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from frontier.cli import load_commands
from frontier.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DEPLOY_FILES = sorted(p for p in DEPLOY.rglob("*")
                      if p.is_file() and p.name != "compose-spec.schema.json")  # fmt: skip


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return document


def test_compose_file_is_valid_against_the_compose_specification() -> None:
    schema = json.loads((DEPLOY / "compose-spec.schema.json").read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in validator_class(schema).iter_errors(compose())]  # fmt: skip
    assert errors == []


def test_the_schema_rejects_a_broken_compose_file() -> None:
    schema = json.loads((DEPLOY / "compose-spec.schema.json").read_text())
    broken = compose()
    broken["services"]["fetcher"]["deploy"] = {"replicas": [2]}
    broken["services"]["api"]["healthcheck"] = {"tset": ["CMD", "true"]}
    errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(broken))
    assert len(errors) >= 2


def test_compose_runs_the_promised_services() -> None:
    services = compose()["services"]
    assert {"postgres", "elasticsearch", "migrate", "api", "poller", "fetcher"} <= set(services)
    assert services["postgres"]["image"].split(":")[1].startswith("16")
    assert any(v.endswith(":/var/lib/postgresql/data") for v in services["postgres"]["volumes"])
    assert services["elasticsearch"]["environment"]["discovery.type"] == "single-node"
    assert services["fetcher"]["deploy"]["replicas"] >= 2
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["restart"] == "no"
    for name in ("api", "poller", "fetcher"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
    for name in ("postgres", "elasticsearch", "api", "poller", "fetcher"):
        assert services[name]["healthcheck"]["test"], name
    # the raw_content mapping is the one the sink ships as package data: one copy
    mounts = " ".join(services["elasticsearch-init"]["volumes"])
    assert "../frontier/sinks/raw_content.json:" in mounts
    assert (DEPLOY / ".." / "frontier" / "sinks" / "raw_content.json").is_file()
    # only the API is published, and on loopback
    published = {name: s.get("ports") for name, s in services.items() if s.get("ports")}
    assert published == {"api": ["127.0.0.1:8000:8000"]}


def _frontier_invocations() -> list[tuple[str, list[str]]]:
    """Every `frontier ...` command line in deploy/, and every compose service's command
    (arguments to the image's `frontier` entry point)."""
    found: list[tuple[str, list[str]]] = []
    for path in DEPLOY_FILES:
        for line in path.read_text().splitlines():
            for match in re.finditer(r"(?:^|[\s/;`(])frontier((?: [a-z-][\w.-]*)+)", line):
                words = match.group(1).split()
                if words and words[0] in _commands():
                    found.append((f"{path.name}: {line.strip()}", words))
    for name, service in compose()["services"].items():
        command = service.get("command")
        if isinstance(command, list) and "entrypoint" not in service and "image" in service \
                and service["image"].startswith("${IMAGE"):
            found.append((f"compose.yaml service {name}", [str(c) for c in command]))
        test = service.get("healthcheck", {}).get("test", [])
        if test[:2] == ["CMD", "frontier"]:
            found.append((f"compose.yaml healthcheck of {name}", test[2:]))
    return found


def _is_group(command: Any) -> bool:
    return hasattr(command, "commands")  # typer's groups are click-like, not click classes


def _commands() -> dict[str, Any]:
    group = typer.main.get_command(load_commands())
    assert _is_group(group)
    return dict(group.commands)  # type: ignore[attr-defined]


def _resolve(words: list[str]) -> tuple[Any, list[str]]:
    command: Any = typer.main.get_command(load_commands())
    rest = list(words)
    while _is_group(command) and rest and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    return command, rest


def test_every_frontier_command_used_in_deploy_exists() -> None:
    invocations = _frontier_invocations()
    used = {words[0] for _, words in invocations}
    assert {"db", "serve", "poll", "fetch", "spider", "status"} <= used
    for where, words in invocations:
        command, rest = _resolve(words)
        assert not _is_group(command), f"{where}: incomplete command {words}"
        options = {opt for param in command.params for opt in param.opts}
        for word in rest:
            if word.startswith("--"):
                assert word.split("=")[0] in options, f"{where}: no option {word}"


def test_a_misspelt_command_would_be_caught() -> None:
    command, _ = _resolve(["db", "upgrade"])
    assert command.name == "upgrade"
    with pytest.raises(AssertionError):
        command, _ = _resolve(["fetchh"])
        assert not _is_group(command)


def test_every_frontier_variable_used_in_deploy_is_a_setting() -> None:
    known = {variable for variable, _, _ in Settings.load(_env_file=None).describe()}
    used: dict[str, str] = {}
    for path in DEPLOY_FILES:
        for variable in re.findall(r"\bFRONTIER_[A-Z0-9_]+\b", path.read_text()):
            used.setdefault(variable, path.name)
    assert {"FRONTIER_DATABASE_URL", "FRONTIER_ELASTICSEARCH_URL",
            "FRONTIER_API_TOKEN"} <= set(used)  # fmt: skip
    unknown = {v: where for v, where in used.items() if v not in known}
    assert unknown == {}
    assert all(v.startswith(ENV_PREFIX) for v in known)


def _dockerfile_runs() -> list[str]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip()[4:] for line in text.splitlines() if line.strip().startswith("RUN ")]


def test_the_image_installs_the_lock_then_the_project() -> None:
    """The image installs requirements.lock exactly, then the project without dependencies
    (and `pip check` proves the lock satisfies it); the Makefile installs from pyproject."""
    installs = [shlex.split(run.split("&&")[0]) for run in _dockerfile_runs() if "pip" in run]
    assert [w for w in installs[0] if not w.startswith("/")] == [
        "install", "--no-deps", "-r", "requirements.lock"]  # fmt: skip
    assert [w for w in installs[1] if not w.startswith("/")] == ["install", "--no-deps", "."]
    assert any("pip check" in run for run in _dockerfile_runs())
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -e '.[dev]'" in makefile
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "COPY requirements.lock" in dockerfile and "COPY pyproject.toml" in dockerfile
    for package in ("frontier", "poller", "fetcher", "spider", "migrations"):
        assert f"COPY {package} ./{package}" in dockerfile


def test_the_lock_pins_every_dependency_within_its_range() -> None:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and " " not in line, line
            pins[canonicalize_name(name)] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in map(Requirement, project["dependencies"]):
        version = pins.get(canonicalize_name(requirement.name))
        assert version is not None, f"{requirement.name} is not in requirements.lock"
        assert requirement.specifier.contains(version), (str(requirement), version)


def test_the_image_is_multi_stage_slim_and_unprivileged() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) >= 2 and all("-slim" in stage for stage in stages)
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert 'ENTRYPOINT ["frontier"]' in lines
