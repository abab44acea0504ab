"""`python -m frontier`: the `frontier` command. The command line (`frontier_cli`) sits above
the services it wires, and the core imports neither: this runs the console script the
installed distribution declares (pyproject.toml, `[project.scripts]`), found through its
entry point as source kinds are."""

import sys
from importlib.metadata import PackageNotFoundError, distribution

try:
    (command,) = distribution("frontier").entry_points.select(
        group="console_scripts", name="frontier"
    )
except (PackageNotFoundError, ValueError):
    sys.exit("python -m frontier: frontier is not installed (pip install -e .)")
command.load()()
