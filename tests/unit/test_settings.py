from pathlib import Path

import pytest

from frontier.settings import Settings, SettingsError


def test_defaults_match_the_design() -> None:
    settings = Settings.load(_env_file=None)
    assert settings.database_url is None
    assert settings.home == Path(".frontier")
    assert settings.lease_seconds == 300
    assert settings.default_delay_ms == 1000
    assert settings.allow_private_networks is False


def test_values_come_from_frontier_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRONTIER_LEASE_SECONDS", "60")
    monkeypatch.setenv("FRONTIER_ALLOW_PRIVATE_NETWORKS", "true")
    settings = Settings.load(_env_file=None)
    assert settings.lease_seconds == 60
    assert settings.allow_private_networks is True


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FRONTIER_LEASE_SECONDS", "-1"),
        ("FRONTIER_DEFAULT_DELAY_MS", "fast"),
        ("FRONTIER_ALLOW_PRIVATE_NETWORKS", "maybe"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match=variable):
        Settings.load(_env_file=None)
