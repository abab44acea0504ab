"""The WARC archive: every response a fetcher receives, kept as WARC/1.1 (issue 30,
docs/archive.md).

Modules:

- `records`    one exchange (`frontier.safe_http.responses.Exchange`) as WARC records: a `response`
               (or a `revisit`: a 304, or a payload archived before) and its `request`,
               each one gzip member (record-level gzip); pure, no I/O
- `files`      `WarcFiles`: a writer's rotating files, `*.warc.gz.open` while written,
               synced and renamed `*.warc.gz` when full; `Location`, where a record lies
- `writer`     `ArchiveWriter`: builds and writes the records in a thread of its own (the
               event loop never waits on gzip or the disk)
- `reader`     `read_record`: the record a `Location` points at
- `upkeep`     the maintenance step: files a dead writer left open are sealed; the
               retention setting (age, total size) applied

The writer is FastWARC (resiliparse's), chosen by measurement (bench/warc_writer.py,
bench/RESULTS.md: faster than warcio for the same records); each record's gzip member
is zlib's (a FastWARC GzipWriter per record costs more than the record).
"""
