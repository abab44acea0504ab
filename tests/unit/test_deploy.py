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

from frontier.settings import ENV_PREFIX, Settings, SettingsError
from frontier_cli import load_commands

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DEPLOY_FILES = sorted(
    p for p in DEPLOY.rglob("*") if p.is_file() and p.name != "compose-spec.schema.json"
)


COMPOSE_FILES = ("compose.yaml", "compose.fetcher.yaml", "compose.publish-postgres.yaml")
FRONTIER_SERVICES = ("migrate", "api", "poller", "spider", "fetcher")


def compose(name: str = "compose.yaml") -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DEPLOY / name).read_text())
    return document


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_file_is_valid_against_the_compose_specification(name: str) -> None:
    schema = json.loads((DEPLOY / "compose-spec.schema.json").read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator_class(schema).iter_errors(compose(name))
    ]
    assert errors == []


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_files_avoid_what_compose_v1_rejects(name: str) -> None:
    """Debian 12's docker-compose (1.29) rejects a top-level `name:` and the long `env_file:`
    form; deploy/smoke runs these files with it."""
    document = compose(name)
    assert "name" not in document
    for service in document["services"].values():
        assert isinstance(service.get("env_file", ""), str)


def _dsn_user(service: dict[str, Any]) -> str:
    dsn = service["environment"]["FRONTIER_DATABASE_URL"]
    user, password = r"(\$\{[^}]+\}|[^:@$]+)", r"\$\{([A-Z_]+)[^}]*\}"
    match = re.fullmatch(rf"postgresql://{user}:{password}@postgres:5432/.+", dsn)
    assert match, dsn
    return match.group(1) + " " + match.group(2)


def test_each_service_connects_as_its_own_login_user() -> None:
    """One DSN per service, each with its own user and password variable; only `migrate`
    (frontier db upgrade) is the owner; the others are the users the initdb script creates
    in their group roles (docs/operations.md, "Database roles")."""
    services = compose()["services"]
    users = {name: _dsn_user(services[name]) for name in FRONTIER_SERVICES}
    assert len(set(users.values())) == len(users), users
    assert users["migrate"] == "${POSTGRES_USER:-frontier} POSTGRES_PASSWORD"
    script = (DEPLOY / "postgres" / "initdb" / "10-frontier-roles.sh").read_text()
    created = dict(
        re.findall(r"^login_user (frontier_\w+) \"\$\{POSTGRES_\w+_USER:-(\w+)\}\"", script, re.M)
    )
    groups = {
        "api": "frontier_api",
        "poller": "frontier_poller",
        "spider": "frontier_spider",
        "fetcher": "frontier_fetcher",
    }
    for name, group in groups.items():
        user, password = users[name].split()
        assert created[group] == user, (name, created)
        assert password in services["postgres"]["environment"], password
    # the shared anchor sets no DSN: a service without its own would have none at all
    assert "FRONTIER_DATABASE_URL" not in compose()["x-frontier"]["environment"]
    mounts = services["postgres"]["volumes"]
    assert "./postgres/initdb:/docker-entrypoint-initdb.d:ro" in mounts


def test_no_service_is_a_shell_loop() -> None:
    for name, service in compose()["services"].items():
        if name in ("elasticsearch-init",):  # a one-shot curl, not a frontier service
            continue
        command = " ".join(map(str, service.get("command", [])))
        assert "entrypoint" not in service, name
        assert not re.search(r"\b(while|sleep)\b", command), (name, command)
    assert compose()["services"]["spider"]["command"][:3] == ["spider", "--due", "--every"]


def test_the_fetcher_machine_runs_only_fetchers_reaching_postgres_by_its_dsn() -> None:
    services = compose("compose.fetcher.yaml")["services"]
    assert list(services) == ["fetcher"]
    fetcher = services["fetcher"]
    assert fetcher["command"] == ["fetch"] and "ports" not in fetcher
    assert fetcher["deploy"]["replicas"] >= 2
    example = (DEPLOY / "fetcher.env.example").read_text()
    dsn = re.search(r"^FRONTIER_DATABASE_URL=(\S+)$", example, re.M)
    assert dsn and dsn.group(1).startswith("postgresql://fetcher_1:")
    published = compose("compose.publish-postgres.yaml")["services"]["postgres"]["ports"]
    assert published[0].startswith("${POSTGRES_PUBLISH_ADDRESS:?")  # never 0.0.0.0 by default


def test_the_image_has_a_healthcheck_that_compose_does_not_override() -> None:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    checks = [line for line in text.splitlines() if line.startswith("HEALTHCHECK ")]
    assert len(checks) == 1 and "/opt/frontier/healthcheck.py" in checks[0]
    assert "COPY deploy/healthcheck.py /opt/frontier/healthcheck.py" in text
    for name in ("api", "poller", "spider", "fetcher"):
        assert "healthcheck" not in compose()["services"][name], name


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
    assert services["postgres"]["image"] == "${POSTGRES_IMAGE:-postgres:16}"
    assert any(v.endswith(":/var/lib/postgresql/data") for v in services["postgres"]["volumes"])
    assert services["elasticsearch"]["environment"]["discovery.type"] == "single-node"
    # published to the fetcher machines (deploy/README.md): never without a password
    elastic = services["elasticsearch"]["environment"]
    assert elastic["xpack.security.enabled"] == "true"
    assert elastic["ELASTIC_PASSWORD"].startswith("${ELASTIC_PASSWORD:?")
    env_example = (DEPLOY / ".env.example").read_text()
    assert "ELASTIC_PASSWORD=" in env_example
    assert "ELASTICSEARCH_URL=http://elastic:" in env_example
    assert "http://elastic:" in (DEPLOY / "fetcher.env.example").read_text()
    assert services["fetcher"]["deploy"]["replicas"] >= 2
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["restart"] == "no"
    for name in ("api", "poller", "fetcher"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
    for name in ("postgres", "elasticsearch"):
        assert services[name]["healthcheck"]["test"], name
    # the raw_content mapping is the one the sink ships as package data: one copy
    mounts = " ".join(services["elasticsearch-init"]["volumes"])
    assert "../frontier/sinks/raw_content.json:" in mounts
    assert (DEPLOY / ".." / "frontier" / "sinks" / "raw_content.json").is_file()
    # only the API is published, and on loopback
    published = {name: s.get("ports") for name, s in services.items() if s.get("ports")}
    assert published == {"api": ["127.0.0.1:${API_PORT:-8000}:8000"]}


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
        if (
            isinstance(command, list)
            and "entrypoint" not in service
            and "image" in service
            and service["image"].startswith("${IMAGE")
        ):
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
    assert {"FRONTIER_DATABASE_URL", "FRONTIER_ELASTICSEARCH_URL", "FRONTIER_API_TOKEN"} <= set(
        used
    )
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
        "install",
        "--no-deps",
        "-r",
        "requirements.lock",
    ]
    assert [w for w in installs[1] if not w.startswith("/")] == ["install", "--no-deps", "."]
    assert any("pip check" in run for run in _dockerfile_runs())
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -e '.[dev]'" in makefile
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "COPY requirements.lock" in dockerfile and "COPY pyproject.toml" in dockerfile
    for package in ("frontier", "frontier_cli", "poller", "fetcher", "spider", "migrations"):
        assert f"COPY {package} ./{package}" in dockerfile


def test_the_lock_pins_every_dependency_within_its_range() -> None:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and " " not in line, line
            pins[canonicalize_name(name)] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]  # the image ships these (requirements.lock)
    shipped = [
        *project["dependencies"],
        *extras["opensearch"],
        *extras["parquet"],
        *extras["render"],  # the image renders pages
    ]
    for requirement in map(Requirement, shipped):
        version = pins.get(canonicalize_name(requirement.name))
        assert version is not None, f"{requirement.name} is not in requirements.lock"
        assert requirement.specifier.contains(version), (str(requirement), version)


def test_the_image_is_multi_stage_slim_and_unprivileged() -> None:
    """Both stages start from BASE_IMAGE, a slim public image unless a build argument names
    another (deploy/smoke's debootstrapped Debian)."""
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) >= 2 and all(stage.startswith("FROM ${BASE_IMAGE}") for stage in stages)
    default = next(line for line in lines if line.startswith("ARG BASE_IMAGE="))
    assert default.endswith("-slim") and default.startswith("ARG BASE_IMAGE=python:")
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert 'ENTRYPOINT ["frontier"]' in lines


def _env_values(name: str) -> dict[str, str]:
    text = (DEPLOY / name).read_text()
    return dict(re.findall(r"^([A-Z_]+)=(.*)$", text, re.M))


def test_the_env_examples_ship_no_secret_that_would_be_accepted() -> None:
    """The examples' placeholders are refused as they are: the user must set real ones."""
    compose_env = _env_values(".env.example")
    dsns = [
        f"postgresql://{user}:{compose_env[key]}@postgres:5432/frontier"
        for user, key in (
            ("frontier", "POSTGRES_PASSWORD"),
            ("fetcher_1", "POSTGRES_FETCHER_PASSWORD"),
            ("poller_1", "POSTGRES_POLLER_PASSWORD"),
            ("spider_1", "POSTGRES_SPIDER_PASSWORD"),
            ("api_1", "POSTGRES_API_PASSWORD"),
        )
    ]
    fetcher_env = _env_values("fetcher.env.example")
    refused = [
        *({"database_url": dsn} for dsn in [*dsns, fetcher_env["FRONTIER_DATABASE_URL"]]),
        {"elasticsearch_url": compose_env["ELASTICSEARCH_URL"]},
        {"elasticsearch_url": fetcher_env["FRONTIER_ELASTICSEARCH_URL"]},
        {"api_token": _env_values("frontier.env.example")["FRONTIER_API_TOKEN"]},
    ]
    for values in refused:
        with pytest.raises(SettingsError, match="example value"):
            Settings.load(**values, _env_file=None)
