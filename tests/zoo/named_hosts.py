"""Host names on a loopback address, for the requesters a test starts as child processes:
`python -m tests.zoo.named_hosts frontier COMMAND ...` runs `python -m frontier COMMAND
...` with aiohttp's threaded resolver (the one the requests use with private networks
allowed, and the one a politeness key by address looks names up with) answering the names
in `ZOO_NAMES` (`name=address,name=address`) as a hosts file would; any other name is
looked up as usual. So one local server answers several subdomains of one registered
domain, or several names of one address, and nothing leaves 127.0.0.1."""

from __future__ import annotations

import os
import runpy
import socket
import sys

from aiohttp.abc import ResolveResult
from aiohttp.resolver import ThreadedResolver

NAMES_VARIABLE = "ZOO_NAMES"


def names_value(names: dict[str, str]) -> str:
    return ",".join(f"{name}={address}" for name, address in names.items())


def install(names: dict[str, str]) -> None:
    looked_up = ThreadedResolver.resolve

    async def resolve(
        self: ThreadedResolver,
        host: str,
        port: int = 0,
        family: socket.AddressFamily = socket.AF_INET,
    ) -> list[ResolveResult]:
        address = names.get(host)
        if address is None:
            return await looked_up(self, host, port, family)
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    ThreadedResolver.resolve = resolve  # type: ignore[method-assign]


def main() -> None:
    pairs = (item.split("=", 1) for item in os.environ.get(NAMES_VARIABLE, "").split(",") if item)
    install({name: address for name, address in pairs})
    module, *args = sys.argv[1:]
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
