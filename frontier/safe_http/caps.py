"""The body caps: how much of an answer is read.

The cap applies to the *decompressed* body: aiohttp inflates gzip, deflate, br (and zstd
when a zstd module is present) in bounded steps as the body is read, and the read stops at
the cap, so a compression bomb costs no more than the cap. A declared `Content-Length` over
the cap is refused before the body is read.
"""

from __future__ import annotations

import asyncio
from typing import IO

import aiohttp

from frontier.safe_http.errors import BodyTooLarge

READ_CHUNK = 65_536  # a body read into memory, in chunks of this size
STREAM_CHUNK = 1 << 20  # a body streamed to a file


def refuse_declared_length(resp: aiohttp.ClientResponse, cap: int, url: str) -> None:
    """Raise `BodyTooLarge` for a successful answer whose `Content-Length` is over `cap`
    (a redirect or an error page is read, and cut by the read's own cap)."""
    declared = resp.content_length
    if declared is not None and declared > cap and resp.status < 300:
        raise BodyTooLarge(f"declares {declared} bytes, over {cap} ({url})")


async def read_capped(
    resp: aiohttp.ClientResponse, cap: int, url: str, truncate: bool = False
) -> bytes:
    """The decompressed body, at most `cap` bytes: past it, `BodyTooLarge`, or with
    `truncate` the first `cap` bytes (the rest is left unread)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(READ_CHUNK):
        size += len(chunk)
        if size > cap and truncate:
            chunks.append(chunk[: len(chunk) - (size - cap)])
            break
        if size > cap:
            raise BodyTooLarge(f"sent more than {cap} bytes after decompression ({url})")
        chunks.append(chunk)
    return b"".join(chunks)


async def stream_capped(
    resp: aiohttp.ClientResponse, into: IO[bytes], max_bytes: int, url: str
) -> int:
    """Write the decompressed body into the file `into` (in a thread: the event loop never
    waits on the disk) and return its size; `BodyTooLarge` past `max_bytes`."""
    written = 0
    async for chunk in resp.content.iter_chunked(STREAM_CHUNK):
        written += len(chunk)
        if written > max_bytes:
            raise BodyTooLarge(f"more than {max_bytes} bytes ({url})")
        await asyncio.to_thread(into.write, chunk)
    return written
