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


BAD_DSNS = [
    "host=db.example port=5432 user=u password=s3cret-pw dbname=x",
    "postgresql://u:s3cret-pw@db.example:99999/x",
    "postgresql://u:s3cret-pw@db.example:abc/x",
    "postgresql://u:s3cret-pw@db.example/x?port=0",
    "mysql://u:s3cret-pw@db.example/x",
]


@pytest.mark.parametrize("dsn", BAD_DSNS)
def test_a_bad_dsn_is_refused_at_load_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, dsn: str
) -> None:
    # Issue 19, item 12: a key=value DSN was echoed whole; a bad port gave a traceback.
    monkeypatch.setenv("FRONTIER_DATABASE_URL", dsn)
    with pytest.raises(SettingsError) as refused:
        Settings.load(_env_file=None)
    message = str(refused.value)
    assert "FRONTIER_DATABASE_URL" in message and "s3cret" not in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://u:p@db.example:5432/x",
        "postgres://db.example/x?port=6432",
        "postgresql://u@[::1]/x",
        "postgresql://u@h1:5432,h2:5433/x",
        "postgresql:///x",
    ],
)
def test_good_dsns_load(monkeypatch: pytest.MonkeyPatch, dsn: str) -> None:
    monkeypatch.setenv("FRONTIER_DATABASE_URL", dsn)
    assert Settings.load(_env_file=None).database_url == dsn


@pytest.mark.parametrize(
    "dsn", [*BAD_DSNS, "postgresql://u:s3cret-pw@db.example/x?password=s3cret-pw"]
)
def test_messages_about_a_dsn_never_hold_its_password(dsn: str) -> None:
    from frontier.dsn import describe_dsn, redact
    from frontier.errors import DatabaseUnavailable
    from frontier.migrate import sqlalchemy_url

    assert "s3cret" not in describe_dsn(dsn)
    assert "s3cret" not in redact(f"driver said: {dsn}", dsn)
    if not dsn.startswith(("postgresql://", "postgres://")):
        with pytest.raises(DatabaseUnavailable) as refused:
            sqlalchemy_url(dsn)
        assert "s3cret" not in str(refused.value)
