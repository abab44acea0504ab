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
    assert settings.render_browsers == 1 and settings.render_chromium == "chromium"
    assert settings.render_media is False


def test_values_come_from_frontier_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRONTIER_LEASE_SECONDS", "60")
    monkeypatch.setenv("FRONTIER_ALLOW_PRIVATE_NETWORKS", "true")
    monkeypatch.setenv("FRONTIER_ALLOWED_NETWORKS", "10.1.0.0/16,wiki.intranet.example")
    settings = Settings.load(_env_file=None)
    assert settings.lease_seconds == 60
    assert settings.allow_private_networks is True
    assert settings.allowed_networks == "10.1.0.0/16,wiki.intranet.example"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FRONTIER_LEASE_SECONDS", "-1"),
        ("FRONTIER_DEFAULT_DELAY_MS", "fast"),
        ("FRONTIER_ALLOW_PRIVATE_NETWORKS", "maybe"),
        ("FRONTIER_ALLOWED_NETWORKS", "10.0.0.0/8,intranet wiki"),
        ("FRONTIER_RENDER_BROWSERS", "-1"),
        ("FRONTIER_RENDER_MEMORY_MB", "64"),  # under a browser's own footprint
        ("FRONTIER_RENDER_TIMEOUT_S", "0"),
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


EXAMPLE_OR_SHORT_SECRETS = [
    ("FRONTIER_API_TOKEN", "change-me-too", "an example value"),
    ("FRONTIER_API_TOKEN", "please-change-me-0123456789abcdef0123456789", "an example value"),
    ("FRONTIER_API_TOKEN", "test-token-0123456789", "21 characters; at least 32"),
    ("FRONTIER_API_READ_TOKEN", "read-only-token", "15 characters; at least 32"),
    (
        "FRONTIER_DATABASE_URL",
        "postgresql://api_1:change-me-api@postgres:5432/frontier",
        "the password is an example value",
    ),
    (
        "FRONTIER_ELASTICSEARCH_URL",
        "http://elastic:CHANGE-ME-elastic@elasticsearch:9200",
        "the password is an example value",
    ),
]


@pytest.mark.parametrize(("variable", "value", "told"), EXAMPLE_OR_SHORT_SECRETS)
def test_example_or_short_secrets_are_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, told: str
) -> None:
    """Placeholder secrets (`change-me-*`) and short tokens were accepted (issue 35)."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as refused:
        Settings.load(_env_file=None)
    message = str(refused.value)
    assert message.startswith(f"invalid configuration: {variable}: "), message
    assert told in message and value not in message


def test_long_random_tokens_load_and_an_empty_one_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "k3J9-xQ2v_Lm8pR4tW7yZ1aB5cD0eF6g"  # 32 characters
    monkeypatch.setenv("FRONTIER_API_TOKEN", token)
    monkeypatch.setenv("FRONTIER_API_READ_TOKEN", "")
    monkeypatch.setenv("FRONTIER_ELASTICSEARCH_URL", "http://elastic:pw@127.0.0.1:9200")
    settings = Settings.load(_env_file=None)
    assert settings.api_token == token and not settings.api_read_token
