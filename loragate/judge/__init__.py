"""The free-text judging library the families and the episode judge share.

- `claims`: success claims and results stated beside a call;
- `acknowledgements`: failures and non-actions acknowledged, answers despite a failure;
- `answer`: is a reply a real answer (refusal, filler, echo, loops, leaks);
- `questions`: does a reply ask the user something;
- `clarification`: the clarifying-question checks a `clarify` entry and an episode's
  scripted user share;
- `figures`: amounts, times, ids and dates in free text;
- `text`: normalisation, words, sentences, clauses, terms;
- `lexicon`: the cue lists, read from the data files `cues/<lang>/<kind>.txt`.

Above calls in the layer order; below the families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.judge.acknowledgements import acknowledges_failure
    from loragate.judge.answer import answer_problem
    from loragate.judge.claims import claims_success
    from loragate.judge.clarification import question_problem
    from loragate.judge.evidence import Evidence
    from loragate.judge.language import detect_language
    from loragate.judge.refusals import is_refusal
    from loragate.judge.support import support_problem

__all__ = [
    "Evidence",
    "acknowledges_failure",
    "answer_problem",
    "claims_success",
    "detect_language",
    "is_refusal",
    "question_problem",
    "support_problem",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
