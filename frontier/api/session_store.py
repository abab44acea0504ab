"""The dashboard sessions the server holds (`api_sessions`, migration 0030): a signed
cookie acts only while its session is open here, so logging out ends it for whoever
replays the cookie, in every API process. One primary-key lookup per request that carries
a cookie; the expired rows go at the next login."""

from __future__ import annotations

from frontier.api.sessions import Session
from frontier.db import Database
from frontier.sql import load

_SQL = load("api_sessions")


class SessionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def open(self, session: Session) -> None:
        await self._db.execute(_SQL["open"], session.nonce, session.role, session.expires)

    async def alive(self, session: Session) -> bool:
        return bool(await self._db.fetchval(_SQL["alive"], session.nonce))

    async def close(self, session: Session) -> None:
        await self._db.execute(_SQL["close"], session.nonce)
