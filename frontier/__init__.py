"""The core of frontier: settings, database access (`db`, `connect`, `migrate`), URL
normalisation, the frontier queue, sources and stats, the safe HTTP client and the content
sinks. The core imports no service (`poller`, `fetcher`, `spider`); the edge does:
`frontier.cli` (the command line, `frontier up` and its demo) and `frontier.api` (the HTTP
API and dashboard) wire the services together through their `service` modules."""
