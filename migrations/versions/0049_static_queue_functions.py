"""The claim and answer functions with static statements on a single server.

`frontier_claim` (migration 0040), `frontier_complete`, `frontier_renew` and
`frontier_reap` (0043) run their statements with `EXECUTE format(...)`, because on a Citus
worker the function names the bucket's shards, whose names it only learns at the call. A
single server has no shards: there the tables are known when the function is made, and
EXECUTE only cost its price: every statement parsed, analysed and planned again at every
call. On bench.fetch that was about a fifth of PostgreSQL's CPU a page (bench/RESULTS.md,
"ninth session, helper s9-pg"). Here, on a server without Citus, each function is made
again with the same statements written in it (static SQL): PL/pgSQL then prepares each one
once a session and keeps its plan (custom or generic, as PostgreSQL's plan cache decides
for any prepared statement), as the client's prepared statements were before 0040.

The statements are those of 0040 and 0043, taken from their text, not copied: the table
names go in where `format` put them, and each `$n` of a statement becomes the value its
USING clause passed as `$n` (the function's own parameter by its position, or a local
variable by its name). `#variable_conflict use_column` keeps every other name what it
was inside EXECUTE, where no variable is seen: a column (the functions' result columns,
`url_hash`, `host`, `status`..., are also variables in PL/pgSQL).

On Citus nothing changes (the functions keep naming the shards at the call).

Revision ID: 0049
Revises: 0048
Create Date: 2026-11-28
"""

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from alembic import op

revision = "0049"
down_revision = "0048"
branch_labels = None
depends_on = None

TABLES = ("host_state", "url_frontier")

# One dynamic statement: `[RETURN QUERY ]EXECUTE format($q$ SQL $q$, table variables)
# [INTO targets] USING values;`
DYNAMIC = re.compile(
    r"(?P<ret>RETURN QUERY )?EXECUTE format\(\$q\$(?P<sql>.*?)\$q\$,\s*(?P<tables>[^)]*)\)"
    r"\s*(?:INTO (?P<into>[^;]*?)\s+)?USING (?P<using>[^;]*);",
    re.DOTALL,
)
DECLARED_TABLES = re.compile(r"\n\s*(host_table|url_table) text := '\w+';")


def _revision(prefix: str) -> ModuleType:
    """The earlier revision whose file name starts with `prefix` (its statements)."""
    (path,) = Path(__file__).parent.glob(f"{prefix}_*.py")
    spec = importlib.util.spec_from_file_location(f"frontier_revision_{prefix}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parameters(function: str) -> list[str]:
    """The names of a CREATE FUNCTION's parameters, in order."""
    start = function.index("(", function.index("FUNCTION")) + 1
    end = function.index(") RETURNS", start)
    return [p.split()[0] for p in function[start:end].split(",")]


def static(function: str) -> str:
    """`function` (a CREATE FUNCTION of 0040/0043 made for a single server) with each
    `EXECUTE format(...)` written out as the statement it ran, on the tables it named."""
    names = parameters(function)

    def written(found: re.Match[str]) -> str:
        tables = [t.strip() for t in found["tables"].split(",")]
        table_names = [TABLES[("host_table", "url_table").index(t)] for t in tables]
        values = [v.strip() for v in found["using"].split(",")]
        sql = found["sql"]
        for i, table in enumerate(table_names, start=1):
            sql = sql.replace(f"%{i}$I", table)
        for table in table_names:  # `%I` takes the tables in turn
            sql = sql.replace("%I", table, 1)
        sql = sql.replace("%%", "%")

        def value(number: re.Match[str]) -> str:
            name = values[int(number[1]) - 1]
            return f"${names.index(name) + 1}" if name in names else name

        sql = re.sub(r"\$(\d+)", value, sql).rstrip()
        into = f"\n    INTO {found['into']}" if found["into"] else ""
        return f"{found['ret'] or ''}{sql}{into};"

    body = DYNAMIC.sub(written, function)
    if "EXECUTE" in body or "$q$" in body:
        raise ValueError("a dynamic statement was left in the function")
    body = DECLARED_TABLES.sub("", body)
    # (0040's note of what the claim's $n were: they are the function's parameters now)
    body = re.sub(r"\n *-- Worker \$1, hosts \$2[^\n]*", "", body)
    return body.replace("AS $$\n", "AS $$\n#variable_conflict use_column\n", 1)


def functions() -> list[str]:
    """The four functions as 0040 and 0043 make them on a single server."""
    claim, answers = _revision("0040"), _revision("0043")
    made = [claim.CLAIM, *answers.FUNCTIONS.values()]
    return [f.replace("{tables}", "").replace("    \n", "") for f in made]


def has_citus() -> bool:
    return bool(_revision("0043").has_citus())


def upgrade() -> None:
    if has_citus():
        return
    for function in functions():
        op.execute(static(function))


def downgrade() -> None:
    if has_citus():
        return
    for function in functions():
        op.execute(function)
