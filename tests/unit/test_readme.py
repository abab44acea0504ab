"""The README's configuration table cannot drift from the settings model."""

from pathlib import Path

from frontier.settings import Settings

README = Path(__file__).parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme() -> None:
    text = README.read_text()
    for variable, _default, _meaning in Settings.load(_env_file=None).describe():
        assert f"| `{variable}` |" in text, f"{variable} is missing from README.md"


def test_readme_opens_with_the_two_setup_commands() -> None:
    head = "\n".join(README.read_text().splitlines()[:30])
    assert "make run" in head and "make test" in head
