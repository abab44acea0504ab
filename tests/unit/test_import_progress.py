"""`frontier import`'s progress bar: bytes are counted only when a bar is shown (a
terminal); otherwise the file's lines reach the import with no generator in between."""

from __future__ import annotations

import io

from frontier_cli.urls import ByteProgress


def test_without_a_terminal_the_stream_is_read_as_it_is() -> None:
    stream = io.BytesIO(b"https://a.example/1\nhttps://a.example/2\n")
    with ByteProgress(40) as progress:  # pytest's standard error is not a terminal
        assert progress.counting(stream) is stream
        progress.update(2)  # no bar: nothing to move, and no error


def test_with_a_bar_every_byte_read_is_counted() -> None:
    progress = ByteProgress(40)
    progress._bar = object()  # as __enter__ sets it on a terminal
    lines = list(progress.counting(io.BytesIO(b"https://a.example/1\nhttps://a.example/22\n")))
    assert lines == [b"https://a.example/1\n", b"https://a.example/22\n"]
    assert progress.read == 41
