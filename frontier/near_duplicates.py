"""Near-duplicate fingerprints: a MinHash of a text's word shingles, banded for lookup
(docs/duplicates.md, "Near-duplicates").

The fingerprint is `BINS` minimum hash values of the text's shingles of `SHINGLE` words,
by one-permutation hashing (Li, Owen and Zhang, NIPS 2012: each shingle is hashed once,
the hash's top bits choose a bin and each bin keeps its minimum), with the empty bins of a
short text filled by rotation (Shrivastava and Li, ICML 2014). The share of bins in which
two fingerprints agree estimates the Jaccard similarity of their shingle sets; at least
`THRESHOLD` is the same article (a syndicated copy with a typo fixed, a paragraph added,
another byline). The shingle size, the threshold and the bands were chosen on the
labelled set of `bench.near_duplicates --labelled` (bench/RESULTS.md), where a SimHash,
ours or trafilatura's, needed 11 or more differing bits of 64 to reach the recall target:
too many for a banded index lookup.

Lookup: the bins are cut into `BANDS` bands of `ROWS` bins; each band hashes to a 32-bit
value, and the documents sharing a band value with a new one are its candidates
(locality-sensitive hashing: a pair of similarity s shares a band with probability
1 - (1 - s^ROWS)^BANDS), checked against `THRESHOLD` with the whole fingerprint.

Written here rather than taken from a library: `datasketch` (MinHash and LSH) needs numpy
and hashes every shingle once per permutation (`BINS` times more hashing than this); its
LSH index lives in memory or Redis, not in the frontier database. trafilatura ships only
a SimHash. blake2b is stable across processes (unlike `hash()`).
"""

from __future__ import annotations

import re
import unicodedata
from hashlib import blake2b

SHINGLE = 3  # words per shingle
BINS = 64
BANDS = 16
ROWS = BINS // BANDS  # bins per band
THRESHOLD = 0.5  # the estimated Jaccard similarity from which two texts are one article
MAX_WORDS = 5_000  # the words read of one body: the cost is bounded whatever its length
MAX_CHARS = 100_000  # and the characters they are found in
_BIN_BITS = 6  # 2**6 = BINS
_VALUE_BITS = 32  # each bin keeps the low 32 bits of its minimum
_VALUE_MASK = (1 << _VALUE_BITS) - 1
_EMPTY = 1 << _VALUE_BITS  # above every value
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of `text` as compared: Unicode-normalised (NFKC), case-folded, at most
    `MAX_WORDS` (of its first `MAX_CHARS` characters)."""
    normal = unicodedata.normalize("NFKC", text[:MAX_CHARS]).casefold()
    return _WORD.findall(normal)[:MAX_WORDS]


def shingles(text: str, size: int = SHINGLE) -> set[str]:
    """The text's shingles of `size` words (a text shorter than one shingle is one)."""
    tokens = words(text)
    if len(tokens) <= size:
        return {" ".join(tokens)} if tokens else set()
    # the shorter tails end the zip: each shingle is `size` words
    return {" ".join(gram) for gram in zip(*(tokens[i:] for i in range(size)), strict=False)}


def minhash(text: str, size: int = SHINGLE) -> bytes | None:
    """The text's fingerprint: `BINS` 32-bit values, big-endian (4 * BINS bytes); None for
    a text without words."""
    grams = shingles(text, size)
    if not grams:
        return None
    mins = [_EMPTY] * BINS
    shift = 64 - _BIN_BITS
    mask = _VALUE_MASK
    from_bytes = int.from_bytes
    for gram in grams:
        h = from_bytes(blake2b(gram.encode(), digest_size=8).digest())
        b = h >> shift
        v = h & mask
        if v < mins[b]:
            mins[b] = v
    if _EMPTY in mins:  # rotation: an empty bin takes the next full one's value, marked
        for b in range(BINS):
            if mins[b] == _EMPTY:
                step = 1
                while mins[(b + step) % BINS] >= _EMPTY:
                    step += 1
                source = mins[(b + step) % BINS]
                mins[b] = _EMPTY | source ^ (step * 0x9E3779B1 & _VALUE_MASK)
        mins = [m & _VALUE_MASK for m in mins]
    return b"".join(m.to_bytes(4) for m in mins)


def similarity(a: bytes, b: bytes) -> float:
    """The estimated Jaccard similarity of two fingerprints' texts: the share of bins
    that agree."""
    same = sum(1 for i in range(0, 4 * BINS, 4) if a[i : i + 4] == b[i : i + 4])
    return same / BINS


def bands(fingerprint: bytes) -> list[int]:
    """The fingerprint's `BANDS` band values (signed 32-bit, as PostgreSQL's int): a hash
    of each band's bins and its number, so that equal values are the same band."""
    width = 4 * ROWS
    return [
        int.from_bytes(
            blake2b(
                fingerprint[b * width : (b + 1) * width], digest_size=4, salt=bytes([b])
            ).digest(),
            signed=True,
        )
        for b in range(BANDS)
    ]
