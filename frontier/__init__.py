"""The core of frontier: settings, database access (`db`, `connect`, `migrate`), URL
normalisation, the frontier queue, sources and stats, the safe HTTP client, the content
sinks, and the HTTP API and dashboard (`frontier.api`, given the services' functions by its
caller). The core imports no service (`poller`, `fetcher`, `spider`) and nothing above them:
the edge, `frontier_cli` (the command line, `frontier up` and its demo), wires the services
together through their `service` modules (docs/architecture.md, 1)."""
