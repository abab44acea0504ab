"""`frontier sources export`: the sources as a file `frontier sources import` reads back.

YAML: the feeds spec (`frontier.source_specs`), each source with its name and the fields
that differ from the schema's defaults, so importing it gives the same configuration.

OPML 2.0: one `<outline type="rss">` a source, `text` and `title` its name, `xmlUrl` its
feed_url, `htmlUrl` its base_url, as feed readers write it. The other fields that differ
from the defaults are kept in one namespaced attribute, `frontier:source` (a JSON object
of the YAML entry's other keys, namespace `OPML_NS`), which other readers ignore and
`sources import` reads back: the round trip is exact through both formats. A source
without a feed_url (a spider or sitemap source) is an outline without `xmlUrl`, read back
through its `frontier:source` attribute.

The built-in `manual` source is written only when its configuration differs from the
defaults (every database has it); `discovered` (priority 1) is written like any other.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from frontier.source_schema import parse_config

OPML_NS = "urn:frontier:opml:source"
OPML_ATTRIBUTE = f"{{{OPML_NS}}}source"
_OUTLINE_KEYS = ("name", "feed_url", "base_url")  # the fields an OPML outline holds itself


def _defaults() -> dict[str, Any]:
    return parse_config({"name": "-"}).values()


def exported(configurations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stored configuration as an entry of the feeds spec: its name and the fields
    that differ from the defaults (in the schema's order), by name; `manual` only when it
    differs."""
    defaults = _defaults()
    entries = []
    for config in sorted(configurations, key=lambda c: c["name"]):
        entry = {"name": config["name"]}
        entry.update({k: v for k, v in config.items() if k != "name" and v != defaults.get(k)})
        if entry["name"] == "manual" and len(entry) == 1:
            continue
        entries.append(entry)
    return entries


def to_yaml(configurations: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(
        {"sources": exported(configurations)},
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
    )


def to_opml(configurations: list[dict[str, Any]], title: str = "frontier sources") -> bytes:
    from lxml import etree

    root = etree.Element("opml", version="2.0", nsmap={"frontier": OPML_NS})
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = title
    body = etree.SubElement(root, "body")
    for entry in exported(configurations):
        outline = etree.SubElement(body, "outline")
        if entry.get("feed_url"):
            outline.set("type", "rss")
        outline.set("text", entry["name"])
        outline.set("title", entry["name"])
        if entry.get("feed_url"):
            outline.set("xmlUrl", entry["feed_url"])
        if entry.get("base_url"):
            outline.set("htmlUrl", entry["base_url"])
        rest = {k: v for k, v in entry.items() if k not in _OUTLINE_KEYS}
        if rest or not entry.get("feed_url"):
            outline.set(OPML_ATTRIBUTE, json.dumps(rest, ensure_ascii=False))
    result: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return result
