"""docs/configuration.md is generated from the settings model and must match it."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontier import config_reference
from frontier.settings import Settings
from tests.processes import REPO

DOCS_FILE = REPO / "docs" / "configuration.md"


def test_configuration_reference_is_up_to_date() -> None:
    current = DOCS_FILE.read_text(encoding="utf-8")
    assert current == config_reference.render(), (
        "docs/configuration.md is stale: run "
        "`python -m frontier.config_reference --output docs/configuration.md`"
    )


def test_the_reference_lists_every_setting_with_its_default() -> None:
    text = config_reference.render()
    for variable, default, _meaning in Settings.load(_env_file=None).describe():
        row = next(
            (line for line in text.splitlines() if line.startswith(f"| `{variable}` |")), None
        )
        assert row is not None, variable
        if default not in ("unset", ""):
            assert default.lower() in row.lower(), (variable, row)


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# out of date\n")
    assert config_reference.main(["--check", str(stale)]) == 1
    assert config_reference.main(["--output", str(stale)]) == 0
    assert config_reference.main(["--check", str(stale)]) == 0


def test_it_writes_only_where_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No argument: the reference on standard output, no file written (it wrote a docs/
    folder next to the package: into site-packages when installed); --help is help."""
    before = DOCS_FILE.stat().st_mtime_ns
    assert config_reference.main([]) == 0
    assert capsys.readouterr().out == config_reference.render()
    with pytest.raises(SystemExit) as helped:
        config_reference.main(["--help"])
    assert helped.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m frontier.config_reference") and "--output" in out
    assert DOCS_FILE.stat().st_mtime_ns == before
