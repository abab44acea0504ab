"""The source schema on its own: the patch form is derived from the create form, one rule
per field, and refusals read `field: reason`."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from frontier.source_schema import (
    InvalidSource,
    SourceConfig,
    SourcePatch,
    parse_config,
    parse_patch,
)


def test_the_patch_form_has_the_create_forms_fields_all_optional() -> None:
    assert list(SourcePatch.model_fields) == list(SourceConfig.model_fields)
    assert not any(info.is_required() for info in SourcePatch.model_fields.values())
    assert parse_patch({}).values() == {}


@pytest.mark.parametrize(
    "field, value, reason",
    [
        ("priority", 0, "priority: Input should be greater than or equal to 1"),
        ("priority", "7", "priority: Input should be a valid integer"),
        ("enabled", "yes", "enabled: Input should be a valid boolean"),
        ("url_filters", {"most_recent": 0}, "url_filters.most_recent: Input should be greater"),
        ("url_filters", {"include": ["("]}, "url_filters.include: item 0: '(' is not a valid"),
        ("spider_listing_urls", ["ftp://a.example/"], "spider_listing_urls.0: scheme 'ftp'"),
        ("selectors", {"headline": "h1"}, "selectors.headline: Extra inputs are not permitted"),
    ],
)
def test_both_forms_refuse_a_bad_value_alike(field: str, value: object, reason: str) -> None:
    with pytest.raises(InvalidSource) as created:
        parse_config({"name": "x", field: value})
    with pytest.raises(InvalidSource) as patched:
        parse_patch({field: value})
    assert str(created.value).startswith(reason)
    assert str(patched.value) == str(created.value)


def test_null_clears_a_nullable_field_and_is_refused_for_the_others() -> None:
    assert parse_patch({"rate_limit_ms": None}).values() == {"rate_limit_ms": None}
    with pytest.raises(InvalidSource, match=r"^priority: "):
        parse_patch({"priority": None})


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2030-01-02", datetime(2030, 1, 2, tzinfo=UTC)),
        (date(2030, 1, 2), datetime(2030, 1, 2, tzinfo=UTC)),
        ("2030-01-02T03:04:05", datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2030-01-02T03:04:05+02:00", datetime(2030, 1, 2, 1, 4, 5, tzinfo=UTC)),
        (
            datetime(2030, 1, 2, 3, tzinfo=timezone(timedelta(hours=-1))),
            datetime(2030, 1, 2, 4, tzinfo=UTC),
        ),
    ],
)
def test_min_published_at_is_an_iso_date_or_datetime_naive_meaning_utc(
    value: object, expected: datetime
) -> None:
    assert parse_config({"name": "x", "min_published_at": value}).min_published_at == expected


def test_urls_are_normalised_keeping_the_trailing_slash() -> None:
    config = parse_config({"name": " x ", "base_url": "HTTPS://Example.COM/news/#top"})
    assert (config.name, config.base_url) == ("x", "https://example.com/news/")
