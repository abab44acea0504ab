"""Seed the default sources shipped in `default_sources.yaml`, once: each seeded URL is
recorded in `seeded_sources` in the same transaction, so a default that an operator
deleted never comes back. Seeding only inserts rows; it never reaches the network.
SQL is in `frontier/sql/seeded_sources.sql`."""

from __future__ import annotations

from importlib import resources

from frontier.db import Database
from frontier.source_specs import ParsedSpecs, SpecImportSummary, import_specs, parse_yaml
from frontier.sources import SourceRepository
from frontier.sql import load

SQL = load("seeded_sources")


def default_specs() -> ParsedSpecs:
    data = resources.files("poller").joinpath("default_sources.yaml").read_bytes()
    return parse_yaml(data)


async def seed_defaults(db: Database, specs: ParsedSpecs | None = None) -> SpecImportSummary:
    """Add the defaults not seeded before; returns what was added (and any errors, such
    as a name already taken by an operator's own source)."""
    specs = specs or default_specs()
    keyed = {
        (spec.feed_url or spec.base_url or spec.sitemap_url or ""): (n, spec)
        for n, spec in specs.specs
    }

    async def work(tx: Database) -> SpecImportSummary:
        fresh = await tx.fetch(SQL["claim_new"], list(keyed))
        chosen = ParsedSpecs(specs=[keyed[r["url"]] for r in fresh], errors=list(specs.errors))
        return await import_specs(SourceRepository(tx), chosen)

    return await db.run_transaction(work)
