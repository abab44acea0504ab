"""Every setting of the platform, read once from `FRONTIER_*` variables (and `.env`).

`Settings.load()` is called at the edge (the CLI, a test fixture) and the values are passed
down; no other module reads the environment. An invalid value raises `SettingsError`, whose
message names the variable and says what is wrong with it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from frontier.errors import FrontierError

ENV_PREFIX = "FRONTIER_"


class SettingsError(FrontierError, ValueError):
    """A `FRONTIER_*` variable holds a value the platform cannot use."""


class Settings(BaseSettings):
    """The platform's configuration; one field per `FRONTIER_*` variable."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=".env", extra="ignore", frozen=True
    )

    database_url: str | None = Field(
        default=None,
        description="PostgreSQL DSN. Unset: an embedded PostgreSQL under FRONTIER_HOME.",
    )
    home: Path = Field(default=Path(".frontier"), description="Where embedded data lives.")
    elasticsearch_url: str | None = Field(
        default=None,
        description="Elasticsearch endpoint. Unset: the PostgreSQL raw_content table.",
    )
    api_token: str | None = Field(
        default=None, description="Bearer token for write endpoints. Unset: writes are refused."
    )
    allow_private_networks: bool = Field(
        default=False, description="Let outbound requests reach private or loopback addresses."
    )
    user_agent: str = Field(
        default="frontier-crawler/0.1 (+https://github.com/frontier-crawler/frontier)",
        min_length=1,
        description="Sent on every request; its product token is matched in robots.txt.",
    )
    lease_seconds: int = Field(
        default=300, ge=5, le=86_400, description="How long a claim is held before reaping."
    )
    default_delay_ms: int = Field(
        default=1000,
        ge=0,
        le=3_600_000,
        description="A host's delay when neither robots.txt nor the source sets one.",
    )
    max_retries: int = Field(
        default=5, ge=0, le=100, description="Failed attempts before a URL becomes dead."
    )
    db_pool_size: int = Field(
        default=10, ge=1, le=500, description="Connections in each process's pool."
    )
    db_connect_timeout_s: float = Field(
        default=10.0, gt=0, le=300, description="Seconds to wait for PostgreSQL at start-up."
    )

    # -- poller settings --------------------------------------------------------------

    # -- fetcher settings -------------------------------------------------------------

    # -- api settings -----------------------------------------------------------------

    @classmethod
    def load(cls, **overrides: object) -> Settings:
        """Read the environment once; raise `SettingsError` naming each bad variable."""
        try:
            return cls(**overrides)  # type: ignore[arg-type]
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                field = str(error["loc"][0]) if error["loc"] else "?"
                problems.append(f"{ENV_PREFIX}{field.upper()}: {error['msg']}")
            raise SettingsError("invalid configuration: " + "; ".join(problems)) from None

    def describe(self) -> list[tuple[str, str, str]]:
        """(variable, default, meaning) for each setting, for docs and `--help`."""
        rows = []
        for name, field in type(self).model_fields.items():
            default = "unset" if field.default is None else str(field.default)
            rows.append((f"{ENV_PREFIX}{name.upper()}", default, field.description or ""))
        return rows
