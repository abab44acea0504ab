"""The aiohttp versions the safe client was written and tested for, and the parts of aiohttp
its SSRF guard hangs on, checked when a client is built (`check_aiohttp`, called by
`SafeClient`), not when the package is imported.

What the client builds on: `GuardedResolver` subclasses aiohttp's resolver ABC
(`aiohttp.abc.AbstractResolver`: `resolve(host, port, family)` returning `ResolveResult`s,
and `close()`), and the default connector installs it through `TCPConnector(resolver=...)`;
the connector connects only to the addresses its resolver returns, so that is where the
guard sits. Those are aiohttp's public API. (The client once overrode private internals,
`TCPConnector._create_connection` and `ClientRequest.send`, for a politeness deadline; they
went with it in issue 31, and nothing private is overridden now.)

The verdict on the installed version:

- older than the floor (pyproject.toml, which `make test-floors` proves): an error. Below
  it the client has known faults (a body cut short hung the next request before 3.11.11;
  no `ResolveResult` before 3.10), and pip would not have installed it.
- a newer major: an error. A new major may move the client's and the connector's API, and
  where the SSRF guard sits has to be proved again before a crawler trusts it.
- a newer minor of the same major than the newest tested: a warning, not an error.
  The client uses only API that aiohttp keeps within a major, and the signature check
  below fails loudly on the one change that would unhook the guard; refusing to start every
  fetcher and poller over an untested minor would turn a routine upgrade into an outage.
  Raise `TESTED_THROUGH` once the tests pass on the newer version.

Whatever the version, a resolver seam whose signature is not the one `GuardedResolver`
overrides is an error: the guard would be called wrongly, or not at all.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from frontier.errors import FrontierError

log = logging.getLogger(__name__)

TESTED_FROM = (3, 11, 11)  # the floor of aiohttp in pyproject.toml
TESTED_THROUGH = (3, 14)  # the newest major.minor the tests have passed on (3.14.5)

# The resolver ABC's methods as GuardedResolver overrides them: their parameters, in order.
RESOLVER_METHODS = {"resolve": ("self", "host", "port", "family"), "close": ("self",)}


class UnsupportedAiohttp(FrontierError, RuntimeError):
    """The installed aiohttp is not one the safe client can trust: older than its floor, a
    newer major, or without the resolver seam its SSRF guard hangs on."""


def _dotted(parts: tuple[int, ...]) -> str:
    return ".".join(map(str, parts))


TESTED_RANGE = f"{_dotted(TESTED_FROM)} to {_dotted(TESTED_THROUGH)}.x"


def judge_version(version: str) -> str | None:
    """None for a version inside the tested range (any patch of a tested minor); a warning
    for a newer minor of the tested major; `UnsupportedAiohttp` for an older one, a newer
    major or one that cannot be read. Only the numeric release parts count (3.15.0rc1 is
    3.15.0)."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:
        raise UnsupportedAiohttp(
            f"aiohttp {version!r}: cannot read its version; the safe HTTP client is tested "
            f"with aiohttp {TESTED_RANGE}"
        )
    release = tuple(int(part or 0) for part in match.groups())
    if release < TESTED_FROM or release[0] > TESTED_THROUGH[0]:
        raise UnsupportedAiohttp(
            f"aiohttp {version} is installed; the safe HTTP client is tested with aiohttp "
            f"{TESTED_RANGE} (install one of those: pip install 'aiohttp>={_dotted(TESTED_FROM)},"
            f"<{TESTED_THROUGH[0] + 1}')"
        )
    if release[:2] > TESTED_THROUGH:
        return (
            f"aiohttp {version} is newer than the safe HTTP client has been tested with "
            f"({TESTED_RANGE}); its resolver seam checks out, but run the tests on it"
        )
    return None


def seam_problems(
    resolver: type = AbstractResolver,
    connector: Callable[..., object] = aiohttp.TCPConnector,
    result: type = ResolveResult,
) -> list[str]:
    """What is not as `GuardedResolver` and `guarded_connector` expect of aiohttp: the
    resolver ABC's methods and their parameters, the connector's `resolver` argument, the
    resolved address's `host` key. Empty when all is as written for."""
    problems = []
    for name, expected in RESOLVER_METHODS.items():
        method = getattr(resolver, name, None)
        if method is None:
            problems.append(f"{resolver.__qualname__}.{name} is gone")
            continue
        found = tuple(inspect.signature(method).parameters)
        if found != expected:
            problems.append(
                f"{resolver.__qualname__}.{name}({', '.join(found)}), "
                f"written for ({', '.join(expected)})"
            )
    if "resolver" not in inspect.signature(connector).parameters:
        problems.append(f"{getattr(connector, '__qualname__', connector)} takes no `resolver`")
    if "host" not in getattr(result, "__annotations__", {}):
        problems.append(f"{result.__qualname__} has no `host`")
    return problems


def check_aiohttp(version: str | None = None) -> None:
    """Raise `UnsupportedAiohttp` for an aiohttp the client cannot trust, log a warning for
    a newer one than tested (see the module's docstring for which and why). `version`:
    the installed aiohttp's unless given."""
    version = version or aiohttp.__version__
    warning = judge_version(version)
    problems = seam_problems()
    if problems:
        raise UnsupportedAiohttp(
            f"aiohttp {version} does not have the resolver seam the SSRF guard hangs on "
            f"({'; '.join(problems)}); the safe HTTP client is tested with aiohttp "
            f"{TESTED_RANGE}"
        )
    if warning is not None:
        log.warning(warning)
