"""`printable` and `json_text` for the CLI: see frontier.safe_text, where they live (the
log lines use them too)."""

from frontier.safe_text import json_text, printable

__all__ = ["json_text", "printable"]
