"""The README's configuration table cannot drift from the settings model."""

import re
import subprocess
from pathlib import Path

from frontier.settings import Settings

README = Path(__file__).parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme() -> None:
    text = README.read_text()
    for variable, _default, _meaning in Settings.load(_env_file=None).describe():
        assert f"| `{variable}` |" in text, f"{variable} is missing from README.md"


def test_readme_opens_with_the_two_setup_commands() -> None:
    head = "\n".join(README.read_text().splitlines()[:30])
    assert "make run" in head and "make test" in head


def test_every_path_in_the_layout_table_exists() -> None:
    """The first column's folders and every `package/module.py` the table names."""
    lines = README.read_text().splitlines()
    rows = [line for line in lines if line.startswith("| `") and line.split("`")[1].endswith("/")]
    paths = {row.split("`")[1] for row in rows}
    paths |= {name for row in rows for name in re.findall(r"`([a-z_]+/[a-z_/]+\.py)`", row)}
    assert {"frontier_cli/", "poller/service.py", "spider/service.py"} <= paths
    for path in paths:
        assert (README.parent / path).exists(), path


def _make_dry_run(*args: str) -> str:
    result = subprocess.run(
        ["make", "-n", *args], cwd=README.parent, capture_output=True, text=True, check=True
    )
    return result.stdout


def test_the_readme_names_every_package_make_run_and_test_install_with_apt() -> None:
    recipes = _make_dry_run("run") + _make_dry_run("test")
    packages = set(re.findall(r"apt-get install -y --no-install-recommends ([\w.+-]+)", recipes))
    assert packages >= {"libtcmalloc-minimal4", "chromium"}
    head = "\n".join(README.read_text().splitlines()[:40])
    for package in packages:
        assert f"`{package}`" in head, f"README's set-up does not say make installs {package}"


def test_make_run_takes_another_port() -> None:
    assert "frontier up --host 127.0.0.1 --port 8123" in _make_dry_run("run", "PORT=8123")
