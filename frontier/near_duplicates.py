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
a SimHash. CRC-32 and blake2b are stable across processes (unlike `hash()`).
"""

from __future__ import annotations

import struct
import sys
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from hashlib import blake2b
from itertools import compress
from zlib import crc32

SHINGLE = 3  # words per shingle
BINS = 64
BANDS = 16
ROWS = BINS // BANDS  # bins per band
THRESHOLD = 0.5  # the estimated Jaccard similarity from which two texts are one article
MAX_WORDS = 5_000  # the words read of one body: the cost is bounded whatever its length
MAX_CHARS = 100_000  # and the characters they are found in
_BIN_BITS = 6  # 2**6 = BINS
_VALUE_BITS = 32  # each bin keeps 32 bits of its minimum
_VALUE_MASK = (1 << _VALUE_BITS) - 1
_EMPTY = 1 << _VALUE_BITS  # above every value
_NONE = 1 << 64  # above every 64-bit shingle hash
_BIN_SHIFT = 64 - _BIN_BITS  # a shingle's 64-bit hash: its bin, then its value
_VALUE_SHIFT = _BIN_SHIFT - _VALUE_BITS
# the shingle hash's multipliers, one per word of a shingle (odd 64-bit constants, fixed:
# the fingerprint must not change between processes or releases)
_MULTIPLIERS = (
    0x9E3779B97F4A7C15,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0xD6E8FEB86659FD93,
    0xFF51AFD7ED558CCD,
)
# the multipliers a lane (128 bits) apart, last first: `minhash`'s one multiplication
_LANED_MULTIPLIERS = {
    size: sum(a << 128 * (size - 1 - k) for k, a in enumerate(_MULTIPLIERS[:size]))
    for size in range(1, len(_MULTIPLIERS) + 1)
}
_BIG_ENDIAN = sys.byteorder == "big"  # `array`'s items are native; the lanes little-endian


def _share(bits: int, count: int) -> tuple[int, bytes, bytes]:
    """What `_bin_minima` reads first on a text of at least `count` shingles: the hashes in
    the lowest `1 / 2**bits` of their bin, and the rest (each as a table of a hash's byte
    7, its bin's 6 bits then the top bits of its place in the bin, to 1 or 0). Some bin
    has no hash in that share with probability about BINS * (1 - 2**-bits) ** (count /
    BINS): under 7 % from `count` on."""
    place = ((1 << bits) - 1) << (8 - _BIN_BITS - bits)  # the place's top `bits` bits
    within = bytes(top & place == 0 for top in range(256))
    return count, within, bytes(1 - keep for keep in within)


_SHARES = (_share(bits=2, count=1_600), _share(bits=1, count=640))  # the largest first
_FINGERPRINT = struct.Struct(f">{BINS}I")  # the bins' values, big-endian, in order
# each band's hash, salted with its number, ready to be copied and fed the band's bins;
# the band values are the digests read as big-endian signed 32-bit integers
_BAND_HASHES = tuple(blake2b(digest_size=4, salt=bytes([b])) for b in range(BANDS))
_BAND_VALUES = struct.Struct(f">{BANDS}i")
_ASCII = bytes(range(128))
# the ASCII bytes that are no word characters, as spaces (bytes >= 128 are parts of the
# non-ASCII characters `_word_bytes` has already judged)
_ASCII_WORD = bytes(b if b >= 128 or chr(b).isalnum() or b == 95 else 32 for b in range(256))


def words(text: str) -> list[str]:
    """The words of `text` as compared: Unicode-normalised (NFKC), case-folded, at most
    `MAX_WORDS` (of its first `MAX_CHARS` characters)."""
    return [w.decode() for w in _word_bytes(text)]


def _word_bytes(text: str) -> list[bytes]:
    """`words`, UTF-8 encoded, found without a regular expression: the bytes of the
    characters that are no word characters (`\\w`: `str.isalnum` or "_") become spaces,
    and the rest split on them. Four times faster than `re.findall(r"\\w+")` over the
    text (and the words need their bytes to be hashed anyway)."""
    normal = unicodedata.normalize("NFKC", text[:MAX_CHARS]).casefold()
    data = normal.encode()
    if not normal.isascii():  # the text's few distinct non-ASCII characters
        for char in set(data.translate(None, _ASCII).decode()):
            if not char.isalnum():
                data = data.replace(char.encode(), b" ")
    return data.translate(_ASCII_WORD).split()[:MAX_WORDS]


def shingles(text: str, size: int = SHINGLE) -> set[str]:
    """The text's shingles of `size` words (a text shorter than one shingle is one)."""
    tokens = words(text)
    if len(tokens) <= size:
        return {" ".join(tokens)} if tokens else set()
    # the shorter tails end the zip: each shingle is `size` words
    return {" ".join(gram) for gram in zip(*(tokens[i:] for i in range(size)), strict=False)}


def minhash(text: str, size: int = SHINGLE) -> bytes | None:
    """The text's fingerprint: `BINS` 32-bit values, big-endian (4 * BINS bytes); None for
    a text without words.

    Each word is hashed once (CRC-32 of its UTF-8 bytes: stable, and in C), and a shingle's
    hash is `(a0 * w0 + a1 * w1 + a2 * w2) mod 2**64` of its words' hashes (multiply-shift
    hashing of a vector, Dietzfelbinger 1996, universal): its top 6 bits choose the bin and
    the next 32 are the value. All shingles are hashed at once, as 128-bit lanes of one
    Python integer (no lane carries into the next: each sum is below 2**99): the words'
    hashes, one a lane, times one constant holding the multipliers a lane apart, so that
    lane i + size - 1 of the product is the hash of the shingle starting at word i (the
    cost is one multiplication, not a hash call per shingle)."""
    if not 1 <= size <= len(_MULTIPLIERS):
        raise ValueError(f"shingles of 1 to {len(_MULTIPLIERS)} words, not {size}")
    hashes = list(map(crc32, _word_bytes(text)))
    if not hashes:
        return None
    n = len(hashes)
    lanes = array("I", bytes(16 * n))  # the word's hash in each lane's lowest 32 bits
    lanes[::4] = array("I", hashes)
    if _BIG_ENDIAN:
        lanes.byteswap()
    product = int.from_bytes(lanes, "little") * _LANED_MULTIPLIERS[size]
    count = max(n - size + 1, 1)  # a text shorter than a shingle is one
    shingles_ = product.to_bytes(16 * (n + size - 1), "little")[16 * (size - 1) :][: 16 * count]
    return _FINGERPRINT.pack(*_filled(_bin_minima(shingles_, count)))


def _bin_minima(lanes: bytes, count: int) -> list[int]:
    """The smallest of each bin's shingle hashes (`_NONE` for a bin without one), of the
    `count` 128-bit little-endian lanes whose low 64 bits are the hashes. One pass, no
    sort (a fifth of the cost of sorting them and bisecting once a bin), and on a long
    text a pass over a half or a quarter of them: each lane's byte 7 holds its hash's bin
    and the next two bits, its place in the bin's lower or upper half, quarter; when every
    bin has a hash in its lower half (or quarter), the others cannot be its smallest.
    `itertools.compress` picks them in C. The rest are read when a bin has none."""
    values: Sequence[int] = memoryview(lanes).cast("Q")[::2]
    if _BIG_ENDIAN:
        values = array("Q", lanes)[::2]
        values.byteswap()
    lowest = [_NONE] * BINS
    for least, within, beyond in _SHARES:
        if count >= least:
            tops = lanes[7::16]
            _lower(lowest, compress(values, tops.translate(within)))
            if _NONE in lowest:
                _lower(lowest, compress(values, tops.translate(beyond)))
            return lowest
    _lower(lowest, values)
    return lowest


def _lower(lowest: list[int], values: Iterable[int]) -> None:
    for value in values:
        b = value >> _BIN_SHIFT
        if value < lowest[b]:
            lowest[b] = value


def _filled(lowest: list[int]) -> list[int]:
    """Each bin's value: its minimum's 32 bits; an empty bin takes the next full one's,
    marked (rotation)."""
    mins = [_EMPTY if low == _NONE else low >> _VALUE_SHIFT & _VALUE_MASK for low in lowest]
    if _EMPTY not in mins:
        return mins
    for b in range(BINS):
        if mins[b] == _EMPTY:
            step = 1
            while mins[(b + step) % BINS] >= _EMPTY:
                step += 1
            source = mins[(b + step) % BINS]
            mins[b] = _EMPTY | source ^ (step * 0x9E3779B1 & _VALUE_MASK)
    return [m & _VALUE_MASK for m in mins]


def similarity(a: bytes, b: bytes) -> float:
    """The estimated Jaccard similarity of two fingerprints' texts: the share of bins
    that agree."""
    same = sum(1 for i in range(0, 4 * BINS, 4) if a[i : i + 4] == b[i : i + 4])
    return same / BINS


def bands(fingerprint: bytes) -> list[int]:
    """The fingerprint's `BANDS` band values (signed 32-bit, as PostgreSQL's int): a hash
    of each band's bins and its number, so that equal values are the same band."""
    width = 4 * ROWS
    digests = []
    for b, salted in enumerate(_BAND_HASHES):
        band = salted.copy()  # blake2b(chunk, digest_size=4, salt=bytes([b])), a third the cost
        band.update(fingerprint[b * width : (b + 1) * width])
        digests.append(band.digest())
    return list(_BAND_VALUES.unpack(b"".join(digests)))
