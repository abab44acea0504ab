"""`frontier serve`: open the database, build the app and run it under uvicorn."""

from __future__ import annotations

import asyncio
import logging

import uvicorn

from frontier.database import open_database
from frontier.settings import Settings

log = logging.getLogger(__name__)


async def serve(settings: Settings, dsn: str, host: str, port: int) -> None:
    from frontier.api.app import create_app

    async with open_database(dsn, settings) as db:
        app = create_app(settings, db)
        config = uvicorn.Config(
            app, host=host, port=port, log_level="warning", access_log=False,
            lifespan="on", server_header=False,
        )  # fmt: skip
        server = uvicorn.Server(config)
        if not settings.api_token:
            log.warning("FRONTIER_API_TOKEN is not set: the API refuses every write")
        await server.serve()


def run(settings: Settings, dsn: str, host: str, port: int) -> None:
    asyncio.run(serve(settings, dsn, host, port))
