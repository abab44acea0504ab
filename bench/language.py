"""Language identification candidates on the corpus's articles: accuracy on short and long
news text, and speed.

Run ``python -m bench.language [--quick]``. The labelled data are the corpus's articles
(tests/corpus/articles): the 36 pages of the article-extraction-benchmark with their gold
text, and the 12 trafilatura-eval pages (German, French, English) with the text
``fetcher.extract`` finds in them. Each page's label is the language it declares (``<html
lang>``, ``og:locale``, JSON-LD ``inLanguage``: the primary subtag); pages declaring none
are left out. Samples per page:

- ``long``: the text, cut at ``fetcher.language.MAX_CHARS`` characters (what the
  extraction worker gives the detector);
- ``short``: up to 5 of its paragraphs of at least 40 characters, each cut at 120 (a
  title's or a summary's length), and the page's title.

For each candidate installed in this environment (the others are reported as missing):
``short``/``long`` accuracy (share of samples whose primary language is the label),
``ms_long``/``ms_short`` (median of 3 rounds, 1 with ``--quick``, per sample, one core),
``load_ms`` (building the detector: the extraction worker does it once) and whether its
model is inside the installed package. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fetcher.encoding import decode_html
from fetcher.extract import extract
from fetcher.language import MAX_CHARS, detect, primary

ROOT = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "articles"
Sample = tuple[str, str]  # label, text
Detector = Callable[[str], str | None]


def _declared(html: str, url: str) -> tuple[str | None, str | None, str]:
    found = extract(html, url)
    return primary(found.language), found.title, found.body or ""


def load_samples() -> tuple[list[Sample], list[Sample]]:
    """(short, long) samples of every page that declares its language."""
    pages: list[tuple[str, str, str | None]] = []  # html, url, gold text
    bench = ROOT / "article-extraction-benchmark"
    truth = json.loads((bench / "ground-truth.json").read_text(encoding="utf-8"))
    for key, entry in sorted(truth.items()):
        raw = gzip.decompress(next((bench / "html").glob(f"{key}*.html.gz")).read_bytes())
        pages.append((decode_html(raw, None)[0], entry["url"], entry["articleBody"]))
    for path in sorted((ROOT / "trafilatura-eval" / "html").glob("*.html")):
        pages.append((decode_html(path.read_bytes(), None)[0], f"https://{path.stem}/", None))
    short: list[Sample] = []
    long: list[Sample] = []
    for html, url, gold in pages:
        label, title, body = _declared(html, url)
        text = gold or body
        if label is None or len(text) < 200:
            continue
        long.append((label, text[:MAX_CHARS]))
        paragraphs = [p.strip() for p in text.splitlines() if len(p.strip()) >= 40][:5]
        short.extend((label, p[:120]) for p in paragraphs)
        if title:
            short.append((label, title))
    return short, long


def candidates() -> dict[str, tuple[Callable[[], Detector], bool] | str]:
    """name: (a function building the detector, model inside the package), or why not."""
    found: dict[str, tuple[Callable[[], Detector], bool] | str] = {}

    def lingua(low: bool) -> Callable[[], Detector]:
        def build() -> Detector:
            from lingua import LanguageDetectorBuilder

            builder = LanguageDetectorBuilder.from_all_languages()
            if low:
                builder = builder.with_low_accuracy_mode()
            detector = builder.with_preloaded_language_models().build()

            def run(text: str) -> str | None:
                language = detector.detect_language_of(text)
                return language.iso_code_639_1.name.lower() if language else None

            return run

        return build

    def langid() -> Detector:
        import py3langid

        model = py3langid.langid.LanguageIdentifier.from_model_file(
            py3langid.langid.MODEL_FILE, norm_probs=True
        )
        return lambda text: str(model.classify(text)[0])

    def langdetect() -> Detector:
        from langdetect import DetectorFactory, detect

        DetectorFactory.seed = 0
        detect("warm up")
        return lambda text: str(detect(text))

    def fasttext_lite() -> Detector:  # what the extraction worker runs
        def run(text: str) -> str | None:
            found = detect(text)
            return found.language if found else None

        run("warm up: the model loads on first use")
        return run

    def cld3() -> Detector:
        import gcld3  # the cld3-py package's module

        model = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=MAX_CHARS)

        def run(text: str) -> str | None:
            found = model.FindLanguage(text=text)
            return (
                str(found.language).split("-")[0] if found.is_reliable or found.language else None
            )

        return run

    for name, module, build, inside in (
        ("lingua (high accuracy)", "lingua", lingua(False), True),
        ("lingua (low accuracy)", "lingua", lingua(True), True),
        ("py3langid", "py3langid", langid, True),
        ("langdetect", "langdetect", langdetect, True),
        ("fetcher.language (fastText lid.176.ftz)", "fasttext", fasttext_lite, True),
        ("cld3", "gcld3", cld3, True),
    ):
        try:
            __import__(module)
        except ImportError:
            found[name] = "not installed"
            continue
        found[name] = (build, inside)
    return found


def _timed(run: Detector, samples: list[Sample]) -> tuple[float, float]:
    """(accuracy, ms per sample)."""
    start = time.perf_counter()
    right = sum(1 for label, text in samples if run(text) == label)
    elapsed = time.perf_counter() - start
    return right / len(samples), elapsed * 1000 / len(samples)


def measure(
    build: Callable[[], Detector], short: list[Sample], long: list[Sample], rounds: int
) -> dict[str, Any]:
    start = time.perf_counter()
    run = build()
    load_ms = (time.perf_counter() - start) * 1000
    figures: dict[str, list[float]] = {"short": [], "long": [], "ms_short": [], "ms_long": []}
    for _ in range(rounds):
        for key, samples in (("short", short), ("long", long)):
            accuracy, ms = _timed(run, samples)
            figures[key].append(accuracy)
            figures[f"ms_{key}"].append(ms)
    return {
        "short": round(figures["short"][0], 3),
        "long": round(figures["long"][0], 3),
        "ms_short": round(statistics.median(figures["ms_short"]), 3),
        "ms_long": round(statistics.median(figures["ms_long"]), 3),
        "load_ms": round(load_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    args = parser.parse_args()
    short, long = load_samples()
    labels = sorted({label for label, _ in long})
    print(f"{len(long)} pages, {len(short)} short samples, languages {labels}", flush=True)
    results: dict[str, Any] = {}
    for name, candidate in candidates().items():
        if isinstance(candidate, str):
            results[name] = candidate
        else:
            build, inside = candidate
            results[name] = {
                **measure(build, short, long, 1 if args.quick else 3),
                "model_in_package": inside,
            }
        print(f"{name:24s} {results[name]}", flush=True)
    print(
        json.dumps(
            {
                "pages": len(long),
                "short_samples": len(short),
                "languages": labels,
                "candidates": results,
            }
        )
    )


if __name__ == "__main__":
    main()
