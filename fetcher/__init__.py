"""The fetcher worker pool: the claim loop, robots.txt, per-host politeness, response
handling and article extraction, writing documents to a content sink."""
