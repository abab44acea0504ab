"""What the code and the documents cite is there: every `docs/NAME.md "Section"` and
`docs/NAME.md#anchor` named in the tree, and every link between the pages of docs/, reaches
an existing page and heading; nothing cites the design document that is not in the
repository (issue 34, item 8: the references point to docs/architecture.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("frontier", "fetcher", "poller", "spider", "migrations", "devtools", "tests", "docs")
SUFFIXES = {".py", ".sql", ".md", ".html", ".yaml"}
# "docs/fetching.md, "Fetch outcomes"", "docs/sources.md "Source kinds"", wrapped or not
QUOTED = re.compile(r'docs/([\w.-]+\.md),?\s+\(?"([^"]+)"')
ANCHORED = re.compile(r"docs/([\w.-]+\.md)#([\w-]+)")
LINKED = re.compile(r"\]\(([\w.-]+\.md)#([\w-]+)\)")  # a link from one page of docs/ to another


def _files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "deploy" / "README.md"]
    for folder in FOLDERS:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    here = Path(__file__).resolve()
    return [p for p in files if p != here and not {"corpus", "zoo"} & set(p.parts)]


def _text(path: Path) -> str:
    """The file with every run of whitespace and comment marks as one space, so that a
    reference wrapped over two lines of a comment is read whole."""
    return " ".join(re.sub(r"(?m)^\s*(#|--)\s?", " ", path.read_text(encoding="utf-8")).split())


def _headings(page: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_every_cited_page_and_section_exists() -> None:
    missing = []
    for path in _files():
        text = _text(path)
        where = path.relative_to(ROOT)
        for page, section in QUOTED.findall(text):
            if not (ROOT / "docs" / page).exists():
                missing.append(f"{where}: docs/{page}")
            elif not any(section.lower() in h.lower() for h in _headings(page)):
                missing.append(f'{where}: docs/{page} "{section}"')
        anchors = ANCHORED.findall(text)
        if path.parent == ROOT / "docs":
            anchors += LINKED.findall(text)
        for page, anchor in anchors:
            if not (ROOT / "docs" / page).exists():
                missing.append(f"{where}: docs/{page}")
            elif anchor not in {_slug(h) for h in _headings(page)}:
                missing.append(f"{where}: docs/{page}#{anchor}")
    assert missing == []


def test_nothing_cites_a_design_document_outside_the_repository() -> None:
    citing = [str(p.relative_to(ROOT)) for p in _files() if "DESIGN.md" in p.read_text()]
    assert citing == [], "point them to docs/architecture.md"


RUNTIME = ("frontier", "fetcher", "poller", "spider", "migrations")
# A measured time per unit of work, a rate, or a measured gain: what bench/RESULTS.md holds.
FIGURE = re.compile(
    r"\d[\d.,]* ?(ms|µs|us|ns|s) (of CPU )?(a|per|each) "
    r"(page|url|line|fetch|record|host|doc|document|request|statement|batch|claim)\b"
    r"|\d[\d.,]* ?(pages|urls|lines|claims|docs|documents|feeds|rows|requests)"
    r"(/s| a second| per second)"
    r"|\d[\d.]* ?% (more|less|faster|slower)"
    r"|\d[\d.]* ?(x|\u00d7) (faster|slower|the speed)",
    re.IGNORECASE,
)


def test_no_benchmark_figures_in_the_runtime_code() -> None:
    """A measured figure goes stale with the next machine or change: the code says why,
    and the figure lives in bench/RESULTS.md (issue 34, item 8)."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in RUNTIME
        for path in sorted((ROOT / package).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FIGURE.search(line)
    ]
    assert found == []
