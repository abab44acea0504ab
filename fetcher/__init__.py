"""The fetcher worker pool: claim URLs host-first, settle robots.txt, keep per-host
politeness, fetch, decide each response's outcome, extract the article and write it to a
content sink.

Modules, each the owner of one concern:

- `config`        `FetcherConfig`: the fetcher's settings, read once at the edge
- `service`       `run_fetcher`: a fetch process from settings (client, sink, extraction
                  pool, signals)
- `worker`        `Fetcher`: `run_once(now=...)` claims, processes and completes one
                  batch; `run()` is the process: the claim loop (claim while slots are
                  free, each batch a task; stop), and `renew_once` / `maintain_once`, the
                  ticks of the timer loops (`frontier.loops.run_every`); it wakes on
                  LISTEN frontier_submitted (`frontier.listen`)
- `pipeline`      `BatchPipeline`: claims -> requests -> pages fetched, then the
                  response steps
- `response_steps` `ResponseSteps`: a response -> decided, verdicts, extracted ->
                  stored (keys, duplicates, archive, sink, versions); reextract runs it too
- `page`          `Page`: one claim on its way through a batch; its fetch_log outcome
- `robots_step`   the robots.txt step of a batch: host leases, fetch, store, apply
                  (the verdict is the core's `frontier.robots`)
- `politeness`    a request starts only inside the slot its claim reserved
- `decisions`     `decide()`: what an HTTP response means (pure)
- `meta_refresh`  a near-empty page's `<meta http-equiv="refresh">` as a redirect (pure)
- `extract`       article extraction: the body (selectors, or trafilatura checked
                  against resiliparse, or the declared `articleBody` when the HTML is
                  thin), metadata merged in order, canonical link, the paywall flag
- `metadata`      what a page declares: JSON-LD, OpenGraph, meta, time, lang,
                  `articleBody`, `isAccessibleForFree`; `plausible_date`, the rule for
                  dates in the future
- `extract_job`   `extract_page`, the job: a body in, its `Extraction` out; the limits
- `extract_pool`  `ExtractionPool`: the job in worker processes, a dead one replaced and
                  its pages retried, a slow one set aside
- `extract_pipe`  `WorkerPipe`: the fetch process's end of one worker's pipe (frames,
                  answers in order, the page at the head timed)
- `extract_worker` an extraction worker process: its command, and its side of the pipe
- `extract_thread` `InProcessExtraction`: the job in a thread of the fetch process
- `canonical`     which URL keeps an article: the trusted canonical identity (pure)
- `sink_backoff`  `SinkBackoff`: how long pages wait while the sink is down (pure)
- `source_cache`  per-source settings the fetcher needs, cached briefly
- `summary`       `FetchSummary`: what a batch or a whole run did
- `archiving`     `ArchiveStep`: each page's exchanges into the WARC archive
                  (frontier.archive) before its document is stored, which gets the pointer
"""
