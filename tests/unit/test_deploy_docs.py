"""docs/configuration.md is generated from the settings model and must match it."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontier import config_reference
from frontier.settings import Settings


def test_configuration_reference_is_up_to_date() -> None:
    current = config_reference.DOCS_FILE.read_text(encoding="utf-8")
    assert current == config_reference.render(), (
        "docs/configuration.md is stale: run `python -m frontier.config_reference`"
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


def test_check_mode_reports_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# out of date\n")
    monkeypatch.setattr(config_reference, "DOCS_FILE", stale)
    assert config_reference.main(["--check"]) == 1
    assert config_reference.main([]) == 0
    assert config_reference.main(["--check"]) == 0
