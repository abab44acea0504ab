"""Feed and sitemap polling: the due-source scheduler, conditional GET, feed parsing and
auto-discovery, submitting what it finds to the frontier."""
