"""Which WARC writer the archive uses (issue 30): warcio against FastWARC, writing the
same N typical fetches (a request record and a response record each, the response a news
page of about 60 KB of HTML with a dozen headers, or with ``--words 300`` about 6 KB), each
record its own gzip member (record-level gzip, as the archive writes them), block and
payload digests included: warcio's writer; FastWARC with its GzipWriter per record; and
what the archive writes (FastWARC's records, zlib's gzip members).

Run ``python -m bench.warc_writer [--quick] [--rounds R]``. Reports records/s and
MB/s of HTML per writer (median of the rounds) and the bytes on disk per fetch. The
files written are checked: each reader reads back every record.

Then the archive's own writer (`frontier.archive.writer.ArchiveWriter`, FastWARC in a
thread) against the same records built and written on the event loop: how late a 1 ms
timer on the loop fires while batches of 16 fetches are archived (the loop's longest
stall and its 99th percentile), which is what the fetches in flight would wait.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.server import emit_result, log

REQUEST = (
    b"GET /news/2026/11/27/article-%d HTTP/1.1\r\nHost: news.example\r\n"
    b"User-Agent: frontier/0.1 (+https://example.org/bot)\r\nAccept: text/html\r\n"
    b"Accept-Encoding: gzip, deflate, br\r\nAccept-Language: en-US,en;q=0.9\r\n\r\n"
)
HEADERS = [
    ("Date", "Fri, 27 Nov 2026 15:00:00 GMT"),
    ("Server", "nginx"),
    ("Content-Type", "text/html; charset=utf-8"),
    ("Cache-Control", "max-age=60"),
    ("ETag", '"5f3a-6123"'),
    ("Last-Modified", "Fri, 27 Nov 2026 14:00:00 GMT"),
    ("Vary", "Accept-Encoding"),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("Set-Cookie", "session=abc123; Path=/; HttpOnly"),
    ("Strict-Transport-Security", "max-age=31536000"),
    ("X-Cache", "HIT"),
    ("Age", "12"),
]


def page(n: int, count: int = 6000) -> bytes:
    words = " ".join(f"word{(n * 7 + i) % 997}" for i in range(count))
    return (
        f"<!doctype html><html><head><title>Article {n}</title></head><body><nav>"
        + "".join(f'<a href="/section/{i}">Section {i}</a>' for i in range(60))
        + f"</nav><article><h1>Article {n}</h1><p>{words}</p></article></body></html>"
    ).encode()


def http_block(body: bytes) -> bytes:
    lines = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in HEADERS)]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def write_warcio(path: Path, bodies: list[bytes]) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True, warc_version="WARC/1.1")
        for n, body in enumerate(bodies):
            url = f"https://news.example/news/2026/11/27/article-{n}"
            http = StatusAndHeaders(
                "200 OK", [*HEADERS, ("Content-Length", str(len(body)))], protocol="HTTP/1.1"
            )
            response = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=http
            )
            request = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(REQUEST % n),
                warc_content_type="application/http; msgtype=request",
                warc_headers_dict={"WARC-Concurrent-To": response.rec_headers["WARC-Record-ID"]},
            )
            writer.write_record(response)
            writer.write_record(request)


def write_fastwarc(path: Path, bodies: list[bytes]) -> None:
    from fastwarc.stream_io import GzipWriter
    from fastwarc.warc import WarcRecord, WarcRecordType

    with path.open("wb") as out:
        for n, body in enumerate(bodies):
            url = f"https://news.example/news/2026/11/27/article-{n}"
            response_id = uuid.uuid4().urn
            for kind, block, extra in (
                (WarcRecordType.response, http_block(body), None),
                (WarcRecordType.request, REQUEST % n, response_id),
            ):
                record = WarcRecord()
                urn = response_id if extra is None else uuid.uuid4().urn
                record.init_headers(record_type=kind, record_urn=urn[4:].encode())
                record.headers["WARC-Target-URI"] = url
                msgtype = "response" if extra is None else "request"
                record.headers["Content-Type"] = f"application/http; msgtype={msgtype}"
                if extra is not None:
                    record.headers["WARC-Concurrent-To"] = f"<{extra}>"
                record.set_bytes_content(block)
                member = io.BytesIO()
                gz = GzipWriter(member)
                record.write(gz, checksum_data=True)
                gz.close()
                out.write(member.getvalue())


def exchanges(bodies: list[bytes]) -> list[Any]:
    from datetime import UTC, datetime

    from frontier.safe_http.responses import Exchange

    return [
        Exchange(
            url=f"https://news.example/news/2026/11/27/article-{n}",
            started=datetime.now(UTC),
            request_headers=(("Host", "news.example"), ("User-Agent", "frontier/0.1")),
            version="1.1",
            status=200,
            reason="OK",
            headers=tuple(HEADERS),
            body=body,
        )
        for n, body in enumerate(bodies)
    ]


async def loop_stalls(directory: Path, bodies: list[bytes], threaded: bool) -> dict[str, float]:
    """Archive the fetches in batches of 16 while a 1 ms timer runs on the loop; how late
    it fired (ms): the longest and the 99th percentile."""
    import asyncio

    from frontier.archive.records import exchange_records
    from frontier.archive.writer import ArchiveWriter

    writer = ArchiveWriter(directory, "thread" if threaded else "loop", 1 << 30)
    lateness: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            lateness.append((time.perf_counter() - before - 0.001) * 1000)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    batch = exchanges(bodies)
    for start in range(0, len(batch), 16):
        chunk = batch[start : start + 16]
        if threaded:
            await writer.write([(e, None) for e in chunk])
        else:  # built and appended on the loop, as without the thread
            writer.files.append([r for e in chunk for r in exchange_records(e)])
            await asyncio.sleep(0)
    done.set()
    await ticking
    await writer.close()
    lateness.sort()
    return {
        "max_ms": round(lateness[-1], 2),
        "p99_ms": round(lateness[int(len(lateness) * 0.99)], 2),
    }


def write_archive(path: Path, bodies: list[bytes]) -> None:
    """What the archive writes: FastWARC serialises each record, zlib makes its gzip
    member (frontier.archive.records)."""
    from frontier.archive.records import exchange_records

    with path.open("wb") as out:
        for exchange in exchanges(bodies):
            response, request = exchange_records(exchange)
            out.write(response.member + request.member)


def read_back(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    with path.open("rb") as stream:
        return sum(1 for r in ArchiveIterator(stream) if r.content_stream().read() is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="500 fetches instead of 3,000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--words", type=int, default=6000, help="words per page: 6000 ~ 60 KB, 300 ~ 6 KB"
    )
    args = parser.parse_args()
    count = 500 if args.quick else 3000
    bodies = [page(n, args.words) for n in range(count)]
    html_mb = sum(map(len, bodies)) / 1e6
    result: dict[str, Any] = {
        "fetches": count,
        "html_kb_per_page": round(1000 * html_mb / count, 1),
        "html_mb": round(html_mb, 1),
    }
    with tempfile.TemporaryDirectory() as tmp:
        writers = (
            ("warcio", write_warcio),
            ("fastwarc", write_fastwarc),
            ("archive", write_archive),
        )
        for name, write in writers:
            times = []
            for r in range(args.rounds):
                path = Path(tmp) / f"{name}-{r}.warc.gz"
                started = time.perf_counter()
                write(path, bodies)
                times.append(time.perf_counter() - started)
            records = read_back(path)
            assert records == 2 * count, (name, records)
            median = statistics.median(times)
            result[name] = {
                "fetches_per_s": round(count / median),
                "html_mb_per_s": round(html_mb / median, 1),
                "ms_per_fetch": round(1000 * median / count, 3),
                "bytes_per_fetch": path.stat().st_size // count,
                "sha256_prefix": hashlib.sha256(path.read_bytes()).hexdigest()[:8],
            }
            log(f"{name}: {result[name]}")
    for name in ("fastwarc", "archive"):
        result[f"{name}_over_warcio"] = round(
            result[name]["fetches_per_s"] / result["warcio"]["fetches_per_s"], 2
        )
    import asyncio

    with tempfile.TemporaryDirectory() as tmp:
        for mode, threaded in (("on_the_loop", False), ("in_a_thread", True)):
            stalls = [
                asyncio.run(loop_stalls(Path(tmp) / f"{mode}-{r}", bodies, threaded))
                for r in range(args.rounds)
            ]
            result[f"loop_stall_{mode}"] = {
                key: statistics.median(s[key] for s in stalls) for key in ("max_ms", "p99_ms")
            }
            log(f"loop stall, archive {mode}: {result[f'loop_stall_{mode}']}")
    emit_result(result)


if __name__ == "__main__":
    main()
