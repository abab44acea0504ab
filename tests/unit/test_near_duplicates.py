"""The near-duplicate fingerprint (frontier.near_duplicates): a MinHash of word shingles,
its similarity estimate and its LSH bands, on corpus articles."""

from __future__ import annotations

import json
from hashlib import blake2b

import pytest

from bench.extract_quality import BENCHMARK
from frontier import near_duplicates as nd


@pytest.fixture(scope="module")
def articles() -> list[str]:
    truth = json.loads((BENCHMARK / "ground-truth.json").read_text(encoding="utf-8"))
    return [truth[key]["articleBody"] for key in sorted(truth)]


def fingerprint(text: str) -> bytes:
    found = nd.minhash(text)
    assert found is not None
    return found


def test_a_fingerprint_is_64_bins_and_the_same_in_every_process(articles: list[str]) -> None:
    a = fingerprint(articles[0])
    assert len(a) == 4 * nd.BINS
    assert fingerprint(articles[0]) == a
    # blake2b, not hash(): a fixed value, whatever PYTHONHASHSEED
    digest = blake2b(b"ferry", digest_size=8).digest()
    b = digest[0] >> 2  # the top 6 bits choose the bin, which keeps the low 32
    assert fingerprint("ferry")[4 * b : 4 * b + 4] == digest[4:]
    assert nd.minhash("the harbour bridge reopened on monday") == nd.minhash(
        "The  HARBOUR bridge reopened, on Monday!"
    )
    assert nd.minhash("") is None and nd.minhash(" ... ") is None


def test_case_spacing_and_unicode_forms_do_not_count() -> None:
    assert nd.minhash("Café ﬁnal\u00a0result") == nd.minhash("CAFÉ final result")


def test_a_copy_with_small_edits_is_within_the_threshold(articles: list[str]) -> None:
    for text in articles[:10]:
        paragraphs = text.split("\n")
        edited = "\n".join(
            ["By another byline", *paragraphs, "Additional reporting by the wire desk."]
        ).replace(" the ", " teh ", 1)
        a, b = fingerprint(text), fingerprint(edited)
        assert nd.similarity(a, b) >= nd.THRESHOLD
        assert set(nd.bands(a)) & set(nd.bands(b))  # a candidate of the other


def test_different_articles_are_not(articles: list[str]) -> None:
    prints = [fingerprint(t) for t in articles]
    for i, a in enumerate(prints):
        for b in prints[i + 1 :]:
            assert nd.similarity(a, b) < nd.THRESHOLD


def test_similarity_counts_the_agreeing_bins() -> None:
    a = fingerprint("one two three four five six seven eight nine ten eleven twelve")
    assert nd.similarity(a, a) == 1.0
    changed = bytearray(a)
    changed[0:4] = bytes(4) if a[0:4] != bytes(4) else b"\x01\x02\x03\x04"
    assert nd.similarity(a, bytes(changed)) == (nd.BINS - 1) / nd.BINS


def test_a_short_text_fills_every_bin() -> None:
    short = fingerprint("Ferry timetable approved")
    assert len(short) == 4 * nd.BINS
    assert nd.similarity(short, fingerprint("ferry timetable approved")) == 1.0
    assert nd.similarity(short, fingerprint("Library hours extended")) < nd.THRESHOLD


def test_bands_are_signed_32_bit_and_name_their_band() -> None:
    a = fingerprint("the harbour bridge reopened to traffic on monday morning")
    values = nd.bands(a)
    assert len(values) == nd.BANDS
    assert all(-(2**31) <= v < 2**31 for v in values)
    # The same bins in two bands are two values: a band matches only itself.
    same = a[: 4 * nd.ROWS] * nd.BANDS
    assert len(set(nd.bands(same))) == nd.BANDS


def test_the_words_read_are_capped() -> None:
    words = [f"w{i}" for i in range(nd.MAX_WORDS + 500)]
    assert len(nd.words(" ".join(words))) == nd.MAX_WORDS
    assert nd.minhash(" ".join(words)) == nd.minhash(" ".join(words[: nd.MAX_WORDS]))
