"""The plugin interface's renamed names (issue 34 item 6) still import from their old
place, as the new value, with a DeprecationWarning; a name never there is still an
ImportError."""

from __future__ import annotations

import importlib

import pytest

from poller.renamed import RENAMED


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [(module, old, new) for module, names in RENAMED.items() for old, new in names.items()],
)
def test_an_old_name_imports_as_the_new_one_with_a_warning(module: str, old: str, new: str) -> None:
    loaded = importlib.import_module(module)
    with pytest.warns(
        DeprecationWarning, match=f"{module}.{old} is deprecated: use {module}.{new}"
    ):
        value = getattr(loaded, old)
    assert value is getattr(loaded, new)


def test_a_name_that_was_never_there_is_still_an_import_error() -> None:
    with pytest.raises(ImportError, match="FeedNothing"):
        from poller.errors import FeedNothing  # type: ignore[attr-defined]  # noqa: F401
