"""Verdicts the judge's rules cannot reach: the seam between a rule and `review`.

Where a verdict hinges on a sentence no rule can classify - a quantity it cannot read,
an action-like statement it can neither map to a tool nor rule out, a clause whose
scope it cannot tell - a rule does not guess. It returns `undecided(...)`, naming the
rule and the sentence, so a person (or a named judge model) can settle it once.

Every rule goes through this one function, so what an undecided verdict is stays in one
place: until the `review` verdict lands (issue 50) it is a failing verdict with the
reason the rule would give, its detail marked `review (<rule>, <cause>): ...`.
"""

from __future__ import annotations

from typing import Literal

from loragate.formats.records import ReasonCode, Verdict

ReviewCause = Literal[
    "unreadable_quantity",
    "unmapped_action",
    "unclassified_scope",
    "unsupported_language",
    "other",
]
"""Why a rule could not decide (the verdict's `review` cause)."""

REVIEW_MARK = "review ("


def undecided(
    reason: ReasonCode, rule: str, sentence: str, cause: ReviewCause, detail: str = ""
) -> Verdict:
    """The verdict of a sample whose judgement hinges on `sentence`, which `rule` cannot
    classify; `reason` is the failing reason it would have if it were wrong."""
    said = detail or f"cannot decide: {sentence[:160]!r}"
    return Verdict.fail(reason, f"{REVIEW_MARK}{rule}, {cause}): {said}")


def is_undecided(verdict: Verdict) -> bool:
    """True for a verdict `undecided` made."""
    return verdict.detail.startswith(REVIEW_MARK)


__all__ = ["REVIEW_MARK", "ReviewCause", "is_undecided", "undecided"]
