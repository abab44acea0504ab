"""raw_content: the detected language and the metadata the downstream asks for (issue 29
items 5 and 6; fetcher/extract.py, fetcher/language.py, fetcher/metadata.py).

- `detected_language`, `language_confidence`: the language the body's text is written in,
  as the extraction worker detects it, and the model's probability for it, beside
  `language` (what the page declares);
- `modified_at`: the date the page declares it was last modified;
- `section`, `tags`: the section and the tags and keywords it declares;
- `paragraphs`: the body as a list of paragraphs; `markdown`: the body as Markdown, when
  it has headings or lists.

`sources.languages`: the languages a source keeps (ISO 639 codes; NULL: any). A page
whose detected language is confidently another ends without a document
(fetcher/pipeline.py).

Documents stored before this revision have none of them (NULL, and empty arrays). The
Elasticsearch mapping gains the same fields (frontier/sinks/raw_content.json). On Citus
raw_content stays a plain table on the coordinator (migration 0018): the columns are added
there like any other; a constant default rewrites no rows.

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-27
"""

from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None

COLUMNS = (
    ("detected_language", "text"),
    ("language_confidence", "real"),
    ("modified_at", "timestamptz"),
    ("section", "text"),
    ("tags", "text[] NOT NULL DEFAULT '{}'"),
    ("paragraphs", "text[] NOT NULL DEFAULT '{}'"),
    ("markdown", "text"),
)


def upgrade() -> None:
    op.execute(
        "ALTER TABLE raw_content "
        + ", ".join(f"ADD COLUMN {name} {kind}" for name, kind in COLUMNS)
    )
    op.execute("ALTER TABLE sources ADD COLUMN languages text[]")


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN languages")
    op.execute("ALTER TABLE raw_content " + ", ".join(f"DROP COLUMN {name}" for name, _ in COLUMNS))
