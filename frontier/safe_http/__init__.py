"""The safe HTTP client: the one outbound HTTP client of the poller, the fetcher and the API,
built on aiohttp. Every request it makes is bounded and guarded:

- timeouts (connect, read, total), a body cap applied to the *decompressed* body (a gzip or
  brotli bomb stops at the cap), a redirect cap, and a configurable User-Agent;
- `Accept-Encoding` is aiohttp's own, which offers only what it can decode: gzip and
  deflate (zlib-wrapped or raw, as IIS sends it), br with the Brotli package (a
  dependency), zstd when a zstd module is present;
- redirects are requested as the server spelt them (`frontier.urls.request_spelling`), and
  the hops of one chain send the cookies that the chain's own responses set
  (`frontier.chain_cookies`); the session itself never keeps a cookie;
- `fetchprotection` levels: 0 refuses to fetch, 1 sends a bare request, 2 (the default)
  sends browser-like headers plus Origin and Referer;
- an SSRF guard: private, loopback, link-local, reserved and cloud-metadata addresses are
  refused after DNS resolution (in the connector's resolver, so the checked address is the
  one connected to) and for IP literals in every URL, redirects included, unless the
  operator's `allowed_networks` let them through (frontier.allowed_networks) or
  `allow_private_networks` is set;
- an archive's view (`exchanges=`, a list the caller passes): each request of the call
  and its answer, as sent and received (`Exchange`), for the WARC archive
  (frontier/archive/);
- politeness: given `HostSlots` (the poller's and a manual fire's client), every request
  holds its host from before it is sent until its answer is in (frontier/host_slots.py);
  a caller that holds the host already (a fetcher, through its claim) passes a `Pace`, and
  each request of the call (the redirect hops) starts no sooner than the host's delay
  after the previous answer.

Modules (import from them; this package re-exports nothing):

- `client`           `SafeClient`: get, download, the redirect loop, fetchprotection headers
- `limits`           `HttpLimits` (from the settings), the process's open-file limit
- `ssrf`             the address rules: `address_is_public`, `refuse_literal_address`,
                     `GuardedResolver`, `PRIVATE_NETWORKS_HINT`
- `connector`        the transport seam: `ConnectorFactory`, the default `guarded_connector`,
                     `requests_resolver` (the same DNS rule for the host slots)
- `caps`             the body caps: a declared length, a read into memory, a stream to a file
- `responses`        `Response`, `Exchange` (the archive's), `REDIRECT_STATUSES`
- `errors`           the error tree, drawn in its docstring
- `aiohttp_support`  the aiohttp versions the client is tested with, and the resolver seam
                     it relies on, checked when a client is built
"""
