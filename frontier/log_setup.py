"""How the `frontier` processes log: the level and format read once from the settings
(`FRONTIER_LOG_LEVEL`, `FRONTIER_LOG_FORMAT`) and applied to the root logger by the edge.

- `configure(level, fmt)`   install one handler on standard error in the chosen format
- `level_for(level, service=, verbose=)`  the level a command runs at: the setting when
  set; else INFO for a long-running service (poll, fetch, serve, spider --every; up off a
  terminal), so that each poll, spider run, fetch batch and failure is one line, and
  WARNING for a one-shot command, whose own output is its report; `--verbose` is DEBUG
- `JsonFormatter`           one JSON object per line: time, level, logger, message, the
  `extra=` fields the caller gave, and the traceback when there is one

Failures are logged as one line, cause first (`poll failed: <cause> (source S, URL)`);
a traceback only at DEBUG or for a bug (an unexpected exception, `log.exception`).
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

from frontier.safe_text import json_text, printable

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("text", "json")

# Every attribute a bare LogRecord has: what is left on a record is a caller's `extra=`.
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
_PLAIN = (str, int, float, bool, list, dict, type(None))


class JsonFormatter(logging.Formatter):
    """A log record as one JSON line. (python-json-logger would do this too; it is not a
    dependency, and the whole format is these few lines.)"""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            # a caller's fields; an object's repr (Scrapy passes its spider) says nothing
            if key not in _RECORD_FIELDS and not key.startswith("_") and isinstance(value, _PLAIN):
                entry[key] = value
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json_text(entry, indent=None)  # no character a terminal acts on, even raw


class TextFormatter(logging.Formatter):
    """TEXT_FORMAT, with the characters a terminal acts on (escape sequences, `\\r`, bidi
    overrides) shown escaped: messages carry source names and servers' error texts."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), keep_newlines=True)


def level_for(log_level: str | None, *, service: bool, verbose: bool = False) -> int:
    """The root level of a command (see the module docstring)."""
    if verbose:
        return logging.DEBUG
    if log_level:
        return int(logging.getLevelName(log_level.upper()))
    return logging.INFO if service else logging.WARNING


def configure(level: int, fmt: str = "text") -> logging.Handler:
    """Log to standard error at `level` in `fmt` ("text" or "json"), replacing any handler
    a previous call (or `basicConfig`) installed; the handler is returned."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Alembic's "Context impl PostgresqlImpl" lines at each start say nothing to an operator.
    logging.getLogger("alembic").setLevel(max(level, logging.WARNING))
    return handler
