"""What a failed migration or connection says: the server's first line, with the DSN's
password removed; an error with no message at all names its type instead."""

from __future__ import annotations

from frontier import migrate

DSN = "postgresql://frontier:s3cret@db.example:5432/frontier"


def test_a_refusal_quotes_the_first_line_without_the_password() -> None:
    error = migrate._refused(DSN, "upgrade", RuntimeError("permission denied s3cret\nDETAIL: x"))
    assert "permission denied" in str(error) and "DETAIL" not in str(error)
    assert "s3cret" not in str(error)


def test_an_error_without_a_message_names_its_type() -> None:
    assert str(migrate._unavailable(DSN, ConnectionResetError())).endswith(": ConnectionResetError")
    assert str(migrate._refused(DSN, "upgrade", OSError())).endswith(": OSError")
