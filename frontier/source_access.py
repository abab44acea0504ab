"""A source's `access`: the HTTP credentials, extra headers and cookies its requests carry
(as Miniflux allows per feed), declared in the source schema (frontier.source_schema).

    access:
      username: alice                      # HTTP basic, with password_env or password_file
      password_env: WIKI_PASSWORD
      # token_env: WIKI_TOKEN              # or a bearer token (token_env / token_file)
      headers:
        X-Tenant: newsroom                 # a plain value: not a secret
        X-Api-Key: {env: WIKI_API_KEY}     # a secret: by reference ({env: ...} / {file: ...})
      cookies:
        session: {file: /run/secrets/wiki-session}   # cookies only by reference

Secrets never sit in the configuration: a password, a token and a cookie are given as the
name of an environment variable or the absolute path of a file holding them (its content,
one trailing newline dropped), and resolved where a request is made
(frontier.source_credentials). A secret given in clear (`password:`, `token:`, a cookie's
value, the value of a header whose name says it carries one: Authorization, *key*,
*token*, *secret*, *session*, *auth*, *password*, *cookie*) is refused with a message saying
how to give it. So what is stored, exported and shown (API, CLI) holds references only.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from frontier.proxies import InvalidProxy, Proxy

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,199}$"
ABSOLUTE_PATH = r"^/[^\x00]{0,4095}$"
MAX_ENTRIES = 50
# RFC 9110 token characters: a header's or a cookie's name
TOKEN = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$"
# Headers a source cannot set: the client's own framing and target.
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "cookie"}
)
SECRET_HEADER = re.compile(r"auth|key|token|secret|session|password|cookie", re.IGNORECASE)
CLEAR_SECRET = "a secret is never stored in clear: give {how}"

EnvName = Annotated[str, Field(strict=True, pattern=ENV_NAME)]
FilePath = Annotated[str, Field(strict=True, pattern=ABSOLUTE_PATH)]
Name = Annotated[str, Field(strict=True, pattern=TOKEN)]
PlainValue = Annotated[
    str, Field(strict=True, pattern=r"^[^\r\n\x00]*$"), StringConstraints(max_length=4096)
]


class SecretRef(BaseModel):
    """Where a secret is read: an environment variable, or a file."""

    model_config = ConfigDict(extra="forbid")

    env: EnvName | None = None
    file: FilePath | None = None

    @model_validator(mode="after")
    def _one_place(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise PydanticCustomError("secret_ref", "give exactly one of env or file")
        return self


class SourceAccess(BaseModel):
    """What a source's requests carry to its own hosts (frontier.source_credentials)."""

    model_config = ConfigDict(extra="forbid")

    username: Annotated[str, Field(strict=True, pattern=r"^[^:\r\n\x00]{1,200}$")] | None = None
    password_env: EnvName | None = None
    password_file: FilePath | None = None
    token_env: EnvName | None = None
    token_file: FilePath | None = None
    headers: dict[Name, PlainValue | SecretRef] | None = Field(default=None, max_length=MAX_ENTRIES)
    cookies: dict[Name, SecretRef] | None = Field(default=None, max_length=MAX_ENTRIES)

    @model_validator(mode="before")
    @classmethod
    def _no_clear_secret(cls, value: Any) -> Any:
        """The clear forms get a message saying how to give the secret instead (not
        pydantic's "extra inputs are not permitted")."""
        if not isinstance(value, dict):
            return value
        for key in ("password", "token"):
            if key in value:
                raise PydanticCustomError(
                    "clear_secret",
                    "{key}: " + CLEAR_SECRET,
                    {"key": key, "how": f"{key}_env: VARIABLE or {key}_file: /path"},
                )
        # Not a mapping (a list, a string): the field's own validation says so below.
        cookies, headers = value.get("cookies"), value.get("headers")
        for name, cookie in cookies.items() if isinstance(cookies, dict) else ():
            if isinstance(cookie, str):
                raise PydanticCustomError(
                    "clear_secret",
                    "cookies.{name}: " + CLEAR_SECRET,
                    {"name": name, "how": "{env: VARIABLE} or {file: /path}"},
                )
        for name, header in headers.items() if isinstance(headers, dict) else ():
            if isinstance(header, str) and SECRET_HEADER.search(str(name)):
                raise PydanticCustomError(
                    "clear_secret",
                    "headers.{name}: its name says it carries a secret, and " + CLEAR_SECRET,
                    {"name": name, "how": "{env: VARIABLE} or {file: /path}"},
                )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> SourceAccess:
        password = self.password_env is not None or self.password_file is not None
        token = self.token_env is not None or self.token_file is not None
        problem = None
        if self.password_env is not None and self.password_file is not None:
            problem = "give password_env or password_file, not both"
        elif self.token_env is not None and self.token_file is not None:
            problem = "give token_env or token_file, not both"
        elif password and token:
            problem = "basic credentials (username, password) or a bearer token, not both"
        elif password != (self.username is not None):
            problem = "basic credentials need both a username and a password"
        else:
            reserved = sorted(n for n in self.headers or {} if n.lower() in RESERVED_HEADERS)
            if any(n.lower() == "authorization" for n in self.headers or {}) and (
                password or token
            ):
                reserved.append("Authorization (set by the credentials)")
            if reserved:
                problem = f"headers: {', '.join(reserved)} cannot be set (cookies go in cookies)"
        if problem:
            raise PydanticCustomError("access", "{problem}", {"problem": problem})
        return self


ProxyUrl = Annotated[str, Field(strict=True, max_length=2048, pattern=r"^[^\r\n\x00]*$")]


class SourceProxy(BaseModel):
    """The proxy a source's requests to its own hosts go through (frontier.proxies):

        proxy:
          url: socks5://proxy.eu.internal:1080   # http, https, socks5, socks5h
          username: crawler                      # optional, with password_env/_file
          password_env: EU_PROXY_PASSWORD
        # or: proxy: {direct: true}              # none, whatever FRONTIER_PROXY_URL says

    A password in the URL is refused like any secret in clear."""

    model_config = ConfigDict(extra="forbid")

    url: ProxyUrl | None = None
    direct: Annotated[bool, Field(strict=True)] = False  # no proxy, whatever the operator's
    username: Annotated[str, Field(strict=True, pattern=r"^[^:\r\n\x00]{1,200}$")] | None = None
    password_env: EnvName | None = None
    password_file: FilePath | None = None

    @model_validator(mode="after")
    def _usable(self) -> SourceProxy:
        if self.direct:
            if self.url or self.username or self.password_env or self.password_file:
                raise PydanticCustomError(
                    "proxy", "direct: true takes no url, username or password"
                )
            return self
        if self.url is None:
            raise PydanticCustomError("proxy", "give its url (or direct: true for no proxy at all)")
        try:
            proxy = Proxy.parse(self.url)
        except InvalidProxy as exc:
            raise PydanticCustomError("proxy", "url: {problem}", {"problem": str(exc)}) from None
        problem = None
        if proxy.password is not None:
            problem = "url: its password: " + CLEAR_SECRET.format(
                how="username and password_env: VARIABLE or password_file: /path"
            )
        elif proxy.username is not None:
            problem = "url: give the user name as username, not in the URL"
        elif self.password_env is not None and self.password_file is not None:
            problem = "give password_env or password_file, not both"
        elif (self.password_env or self.password_file) and self.username is None:
            problem = "a proxy password needs a username"
        if problem:
            raise PydanticCustomError("proxy", "{problem}", {"problem": problem})
        return self
