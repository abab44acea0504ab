"""The core of frontier: settings, database access, URL normalisation, the frontier queue,
sources and stats, and the command line that runs every service."""
