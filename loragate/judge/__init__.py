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

__all__: list[str] = []
