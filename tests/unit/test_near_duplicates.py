"""The near-duplicate fingerprint (frontier.near_duplicates): a MinHash of word shingles,
its similarity estimate and its LSH bands, on corpus articles."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from hashlib import blake2b
from zlib import crc32

import pytest

from bench.extract_quality import BENCHMARK
from frontier import near_duplicates as nd

GOLDEN = "55fcdb0c39f6d6dd"  # blake2b of the first article's fingerprint


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
    # CRC-32 of the word and fixed multipliers, not hash(): a fixed value, whatever
    # PYTHONHASHSEED. One word is one shingle: a0 * crc32(word) mod 2**64, whose top 6
    # bits choose the bin and the next 32 are its value.
    h = nd._MULTIPLIERS[0] * crc32(b"ferry") % 2**64
    b = h >> 58
    assert fingerprint("ferry")[4 * b : 4 * b + 4] == (h >> 26 & 0xFFFFFFFF).to_bytes(4)
    # and the same value in every release: stored fingerprints are compared with new ones
    assert blake2b(fingerprint(articles[0]), digest_size=8).hexdigest() == GOLDEN
    assert nd.minhash("the harbour bridge reopened on monday") == nd.minhash(
        "The  HARBOUR bridge reopened, on Monday!"
    )
    assert nd.minhash("") is None and nd.minhash(" ... ") is None


def by_definition(text: str, size: int = nd.SHINGLE) -> bytes | None:
    """The fingerprint as the module's docstring defines it, one shingle at a time."""
    hashes = [crc32(word.encode()) for word in nd.words(text)]
    if not hashes:
        return None
    starts = range(max(len(hashes) - size + 1, 1))
    lowest: dict[int, int] = {}
    for i in starts:
        h = sum(a * w for a, w in zip(nd._MULTIPLIERS, hashes[i : i + size], strict=False))
        h %= 2**64
        lowest[h >> 58] = min(lowest.get(h >> 58, 2**64), h)
    mins = [lowest[b] >> 26 & 0xFFFFFFFF if b in lowest else None for b in range(nd.BINS)]
    filled = []
    for b in range(nd.BINS):  # rotation: the next full bin's value, marked with the step
        step = 0
        while mins[(b + step) % nd.BINS] is None:
            step += 1
        value = mins[(b + step) % nd.BINS]
        assert value is not None
        filled.append(value if step == 0 else value ^ (step * 0x9E3779B1 & 0xFFFFFFFF))
    return b"".join(v.to_bytes(4) for v in filled)


def test_the_fingerprint_is_the_definitions(articles: list[str]) -> None:
    """All shingles hashed at once, and each bin's minimum found from the hashes in the
    lowest half or quarter of their bin first (on long texts), give the values of the
    definition: on the corpus's articles (mostly 300 to 2,800 words), parts of them, long
    texts of distinct words, and long texts of a few words repeated (most bins empty, so
    every hash is read)."""
    rng = random.Random(18)
    vocabulary = [f"w{i}" for i in range(20_000)]
    texts = [*articles, *(t[: rng.randrange(len(t))] for t in articles)]
    texts += [" ".join(rng.choices(vocabulary, k=n)) for n in (1, 2, 3, 700, 1_700, 4_000)]
    texts += [" ".join(rng.choices(vocabulary[:k], k=3_000)) for k in (1, 3, 12, 40)]
    for size in range(1, len(nd._MULTIPLIERS) + 1):
        for text in texts:
            assert nd.minhash(text, size) == by_definition(text, size), (size, text[:40])


def test_the_words_are_those_of_a_unicode_word_pattern() -> None:
    """The words are found without a regular expression (faster): the same as `\\w+`
    over the normalised text, for every kind of character."""
    rng = random.Random(29)
    alphabet = [chr(c) for c in range(0x20, 0x3100)] + ["\U0001f600", "\U00020000", "_"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 400)))
        normal = unicodedata.normalize("NFKC", text).casefold()
        assert nd.words(text) == re.findall(r"\w+", normal)


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
