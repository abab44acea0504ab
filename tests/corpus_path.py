"""Where the test corpus lives: tests/corpus/, a byte-for-byte copy of the project's shared
corpus of real feeds, sitemaps, robots.txt files, URL vectors and articles (see its
README.md and MANIFEST.tsv for origins and licences), vendored so a clean clone tests alone.
"""

from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
