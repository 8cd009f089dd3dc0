"""Train/eval leakage check: training examples whose user turns repeat an eval entry's.

Two kinds of overlap are found, comparing every user turn of every training example
with every user turn of every eval entry:

- `exact`: identical after light normalisation (Unicode NFKC, case folding, runs of
  whitespace collapsed);
- `near`: after strong normalisation (punctuation dropped, every run of digits
  replaced by `#`, so `INV-58213` and `INV-71234` look alike) the sets of words and
  word bigrams have a Jaccard similarity of at least `threshold`, or at least
  `containment` of the eval turn's set occurs in the training turn (an eval question
  pasted into a longer prompt). Templated copies of an eval entry with other slot values are
  near-duplicates by design.

Turns shorter than `MIN_TOKENS_EXACT` / `MIN_TOKENS_NEAR` words are skipped: "yes,
go ahead" in a training conversation is not a leaked eval entry. Candidates are found
through an inverted index over the eval turns' bigrams, so a 60k-example mix is
checked in seconds.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from loragate.evalset.load import Evalset
    from loragate.training.example import TrainingExample

DEFAULT_THRESHOLD = 0.6
"""Jaccard similarity of word+bigram sets from which two turns count as near-duplicates.
(One word changed in a 12-word turn gives about 0.77, two words about 0.6.)"""
DEFAULT_CONTAINMENT = 0.8
"""Share of an eval turn's word+bigram set found in a training turn from which it counts
as contained."""
MIN_TOKENS_EXACT = 4
MIN_TOKENS_NEAR = 6

_WS = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_DIGITS = re.compile(r"\d+")


def light_normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed and stripped."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def tokens(text: str) -> list[str]:
    """Words of the strongly normalised text (punctuation dropped, digit runs -> `#`)."""
    return [_DIGITS.sub("#", w) for w in _WORD.findall(light_normalize(text))]


Shingle = tuple[str, ...]


def shingles(words: Sequence[str]) -> frozenset[Shingle]:
    """The words (1-tuples) and word bigrams (2-tuples) of a turn."""
    return frozenset([(w,) for w in words] + list(itertools.pairwise(words)))


@dataclass(frozen=True)
class LeakHit:
    """One training example whose user turn overlaps an eval entry's user turn."""

    example_id: str
    source: str
    entry_id: str
    kind: Literal["exact", "near"]
    similarity: float
    """1.0 for exact; else the larger of the Jaccard similarity and the containment."""
    train_text: str
    eval_text: str


@dataclass
class LeakageReport:
    """What the check compared and what it found."""

    examples_checked: int
    eval_turns: int
    threshold: float
    containment: float
    hits: list[LeakHit] = field(default_factory=list)

    @property
    def flagged_ids(self) -> set[str]:
        """Ids of training examples with at least one hit."""
        return {h.example_id for h in self.hits}

    def counts(self) -> dict[str, int]:
        """Flagged examples per kind (an example with an exact hit counts as exact)."""
        kinds: dict[str, str] = {}
        for h in self.hits:
            if kinds.get(h.example_id) != "exact":
                kinds[h.example_id] = h.kind
        return dict(Counter(kinds.values()))

    def lines(self, limit: int = 20) -> list[str]:
        """Human-readable lines, one per hit (at most `limit`)."""
        out = []
        for h in self.hits[:limit]:
            out.append(
                f"{h.kind:5} {h.similarity:4.2f}  {h.source}:{h.example_id} ~ eval {h.entry_id}: "
                f"{h.train_text[:70]!r}"
            )
        if len(self.hits) > limit:
            out.append(f"... and {len(self.hits) - limit} more")
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "examples_checked": self.examples_checked,
            "eval_turns": self.eval_turns,
            "threshold": self.threshold,
            "containment": self.containment,
            "flagged_examples": len(self.flagged_ids),
            "by_kind": self.counts(),
            "hits": [
                {
                    "example_id": h.example_id,
                    "source": h.source,
                    "entry_id": h.entry_id,
                    "kind": h.kind,
                    "similarity": round(h.similarity, 4),
                    "train_text": h.train_text[:500],
                    "eval_text": h.eval_text[:500],
                }
                for h in self.hits
            ],
        }


@dataclass(frozen=True)
class _EvalTurn:
    entry_ids: tuple[str, ...]
    text: str
    light: str
    grams: frozenset[Shingle]
    n_tokens: int


class LeakageIndex:
    """The eval side of the check, built once: exact keys and an inverted index whose
    keys are bigrams (rarer than words, so candidate lists stay short)."""

    def __init__(
        self,
        turns: Iterable[tuple[str, str]],
        threshold: float = DEFAULT_THRESHOLD,
        containment: float = DEFAULT_CONTAINMENT,
    ) -> None:
        """`turns`: (entry id, user-turn text) pairs of the eval set."""
        if not 0 < threshold <= 1 or not 0 < containment <= 1:
            raise ValueError("threshold and containment must be in (0, 1]")
        self.threshold = threshold
        self.containment = containment
        by_text: dict[str, list[str]] = defaultdict(list)
        raw: dict[str, str] = {}
        for entry_id, text in turns:
            key = light_normalize(text)
            if entry_id not in by_text[key]:
                by_text[key].append(entry_id)
            raw.setdefault(key, text)
        self.turns: list[_EvalTurn] = []
        self.exact: dict[str, int] = {}
        self.postings: dict[Shingle, list[int]] = defaultdict(list)
        for key, ids in by_text.items():
            words = tokens(key)
            turn = _EvalTurn(tuple(ids), raw[key], key, shingles(words), len(words))
            idx = len(self.turns)
            self.turns.append(turn)
            if turn.n_tokens >= MIN_TOKENS_EXACT:
                self.exact[key] = idx
            if turn.n_tokens >= MIN_TOKENS_NEAR:
                for g in turn.grams:
                    if len(g) == 2:
                        self.postings[g].append(idx)

    @classmethod
    def from_evalset(
        cls,
        evalset: Evalset,
        threshold: float = DEFAULT_THRESHOLD,
        containment: float = DEFAULT_CONTAINMENT,
    ) -> LeakageIndex:
        pairs = [
            (e.id.split("~", 1)[0], m.content or "")
            for e in evalset.entries
            for m in e.messages
            if m.role == "user"
        ]
        return cls(pairs, threshold, containment)

    def match(self, text: str) -> list[tuple[int, Literal["exact", "near"], float]]:
        """(eval turn index, kind, similarity) of every eval turn `text` overlaps."""
        key = light_normalize(text)
        words = tokens(key)
        hits: list[tuple[int, Literal["exact", "near"], float]] = []
        if len(words) >= MIN_TOKENS_EXACT and key in self.exact:
            hits.append((self.exact[key], "exact", 1.0))
            return hits
        if len(words) < MIN_TOKENS_NEAR:
            return hits
        grams = shingles(words)
        candidates: set[int] = set()
        for g in grams:
            if len(g) == 2:
                candidates.update(self.postings.get(g, ()))
        for idx in sorted(candidates):
            turn = self.turns[idx]
            inter = len(grams & turn.grams)
            union = len(grams) + len(turn.grams) - inter
            jaccard = inter / union if union else 0.0
            contained = inter / len(turn.grams) if turn.grams else 0.0
            if jaccard >= self.threshold or contained >= self.containment:
                hits.append((idx, "near", max(jaccard, contained)))
        return hits


def check_leakage(
    examples: Iterable[TrainingExample],
    index: LeakageIndex,
) -> LeakageReport:
    """Compare every user turn of `examples` with the eval turns in `index`."""
    report = LeakageReport(
        examples_checked=0,
        eval_turns=len(index.turns),
        threshold=index.threshold,
        containment=index.containment,
    )
    for ex in examples:
        report.examples_checked += 1
        for text in ex.user_turns():
            for idx, kind, sim in index.match(text):
                turn = index.turns[idx]
                report.hits.append(
                    LeakHit(
                        example_id=ex.id,
                        source=ex.source,
                        entry_id=",".join(turn.entry_ids),
                        kind=kind,
                        similarity=sim,
                        train_text=text,
                        eval_text=turn.text,
                    )
                )
    return report


__all__ = [
    "DEFAULT_CONTAINMENT",
    "DEFAULT_THRESHOLD",
    "LeakHit",
    "LeakageIndex",
    "LeakageReport",
    "check_leakage",
    "light_normalize",
    "shingles",
    "tokens",
]
