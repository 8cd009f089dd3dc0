"""The shared answer check: is a free-text reply a real answer at all?

Every family that accepts a plain-text reply (F's answer, G's report, D's reply after
a denial, E's question) runs `answer_problem` on it before its own checks. It fails,
in this order:

1. `empty_answer`: nothing but whitespace.
2. `template_leak`: chat-template or tool-protocol markup in the reply
   (`<tool_response>`, `<|im_start|>`, `[INST]`, a line starting `user:` /
   `assistant:` / `human:`, a stray `<tool_call>` tag): the model is writing the
   other side of the conversation.
3. `degenerate`: a repetition loop - the same 4-word sequences keep coming back
   (`DEGENERATE_REPEAT_SHARE` of the positions), one phrase of four or more words is
   said three times in a row (where a generation stopped on repetition ends), or one
   character runs on and on.
4. `echo`: the reply is mostly a copy of the conversation - at least `ECHO_SHARE` of
   its words lie in word 3-grams of one message (user, tool result, earlier
   assistant turn) or the system prompt, and it reproduces at least
   `ECHO_SOURCE_SHARE` of that message's 3-grams (any share of the system prompt).
   Quoting the relevant part of a long tool result is an answer; copying the result
   is not.
5. `refusal`: every sentence is a refusal or capability excuse ("I cannot help with
   that.", "I'm sorry, but I can't assist with that request.", "As an AI ...",
   "I don't have access to real-time data", "I don't know") or filler, with at least
   one refusal. A reply that answers *and* carries a disclaimer is not a refusal.
6. `non_answer`: every sentence is content-free filler ("OK.", "Sure!", "Got it,
   thanks.", "Let me check.", "Is there anything else I can help with?").

`call_attempt` finds a tool call written as text instead of in `<tool_call>` tags
(a bare `{"name": ..., "arguments": ...}` object, `"name": "<a tool>"`, or
`tool_name(...)` for a tool of the evalset); each family decides what that means.

The thresholds are named constants below, each with how it was chosen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.language import (
    detect_language,
    is_unsupported,
    language_name,
    reply_languages,
    supported,
)
from loragate.judge.refusals import (
    REFUSAL_MAX_OTHER_WORDS,
    answer_cues,
    is_filler,
    is_refusal,
)
from loragate.judge.text import clip, sentences, words

ECHO_SHARE = 0.8
"""Share of the reply's words that must come from one source for `echo`. Correct
replies in the labelled set quote at most ~65 % (a short answer that repeats an
e-mail address or a title); pure copies, with or without a short lead-in, reach 90 %+."""
ECHO_SOURCE_SHARE = 0.5
"""Share of the source message's 3-grams the reply must reproduce for `echo`: a copy
of the message (or of most of it), not a quote of the one line that answers."""
ECHO_FULL_SHARE = 0.95
"""A reply whose words all come from one message (this share or more) is a copy of it
whatever part it copies: a bare fragment of a tool result. Correct replies in the
labelled sets reach at most 65 %."""
ECHO_MIN_WORDS = 5
"""Shorter replies are judged by the other checks (a 3-word copy is a non-answer or
asks nothing anyway)."""
DEGENERATE_MIN_WORDS = 16
"""Shorter replies cannot loop visibly (12 copies of a 3-word phrase reach 36)."""
DEGENERATE_REPEAT_SHARE = 0.6
"""Share of 4-gram positions whose 4-gram occurred earlier in the reply. A sentence
said twice scores 0.5 (tolerated), three times 0.67; correct answers in the labelled
set stay under 0.2 (lists such as "CHF 250,000 is EUR ... / USD ..." included)."""
RUN_OF_ONE_CHAR = 40
"""The same non-space character this many times in a row is a degenerate run."""
_LEAK_RE = re.compile(
    r"<\|[a-z_]{2,30}\|>|</?tool_response>|</?tools>|</?tool_call>|\[/?INST\]|<</?SYS>>"
    r"|<(?:start|end)_of_turn>|<\|?(?:system|user|assistant)\|?>"
    r"|(?:^|\n)[ \t]*(?:user|assistant|human)[ \t]*:",
    re.IGNORECASE,
)
_CHAR_RUN_RE = re.compile(rf"(\S)\1{{{RUN_OF_ONE_CHAR - 1},}}")


# -- echo -------------------------------------------------------------------------------

_Grams = frozenset[tuple[str, ...]]


def _echo_words(text: str) -> list[str]:
    """Words for the echo test, apostrophes dropped ("today's" = "todays")."""
    return [w.replace("'", "") for w in words(text)]


@lru_cache(maxsize=4096)
def _source_grams(source: str) -> _Grams:
    toks = _echo_words(source)
    return frozenset(tuple(toks[i : i + 3]) for i in range(len(toks) - 2))


def _echo_source(reply: list[str], sources: Sequence[tuple[str, str]]) -> str | None:
    """The name of the source the reply copies (see `ECHO_SHARE`), or None."""
    if len(reply) < 2:
        return None
    if len(reply) < ECHO_MIN_WORDS:
        # a short reply echoes only a short source, nearly whole: `{"approved": false}`
        joined = " ".join(reply)
        for name, text in sources:
            source_words = _echo_words(text)
            if len(reply) >= ECHO_SHARE * len(source_words) and joined in " ".join(source_words):
                return name
        return None
    grams = [tuple(reply[i : i + 3]) for i in range(len(reply) - 2)]
    for name, text in sources:
        source = _source_grams(text)
        if not source:
            continue
        covered = [False] * len(reply)
        hits: set[tuple[str, ...]] = set()
        for i, g in enumerate(grams):
            if g in source:
                hits.add(g)
                covered[i] = covered[i + 1] = covered[i + 2] = True
        if sum(covered) < ECHO_SHARE * len(reply):
            continue
        min_share = 0.0 if name == "the system prompt" else ECHO_SOURCE_SHARE
        if len(hits) >= min_share * len(source) or sum(covered) >= ECHO_FULL_SHARE * len(reply):
            return name
    return None


def _degenerate(reply: list[str], text: str) -> str | None:
    run = _CHAR_RUN_RE.search(text)
    if run:
        return f"{run.group(1)!r} repeated {len(run.group(0))} times"
    if len(reply) < DEGENERATE_MIN_WORDS:
        return None
    last: dict[tuple[str, ...], int] = {}
    repeats = 0
    positions = len(reply) - 3
    run_distance, streak = 0, 0
    for i in range(positions):
        g = tuple(reply[i : i + 4])
        before = last.get(g)
        last[g] = i
        if before is None:
            run_distance, streak = 0, 0
            continue
        repeats += 1
        # Consecutive positions whose 4-gram came exactly d words earlier: a phrase of
        # d words said again; 2d - 3 of them in a row is the phrase three times running
        # (the loop a generation stopped on repetition ends with).
        d = i - before
        streak = streak + 1 if d == run_distance else 1
        run_distance = d
        if d >= 4 and streak >= 2 * d - 3:
            return f"a phrase of {d} words said three times in a row"
    if repeats >= DEGENERATE_REPEAT_SHARE * positions:
        return f"{repeats} of {positions} 4-word sequences are repeats"
    return None


def answer_problem(answer: str, sources: Sequence[tuple[str, str]]) -> Verdict | None:
    """The failing verdict of a free-text reply that is not a real answer, or None.

    `sources` are (name, text) pairs of what the reply must not merely copy: the
    messages of the conversation and the system prompt (`conversation_sources`). The
    checks that need no words of a language come first (empty, markup, loops, copies);
    a reply in a language with no cue lists is then `unsupported_language`
    (`language_problem`), before the checks that read words (refusal, filler).
    """
    text = clip(answer).strip()
    if not text:
        return Verdict.fail(ReasonCode.empty_answer, "no call and no text")
    leak = _LEAK_RE.search(text)
    if leak:
        return Verdict.fail(
            ReasonCode.template_leak,
            f"chat-template markup in the reply: {leak.group(0).strip()!r}",
        )
    reply = words(text)
    loop = _degenerate(reply, text)
    if loop is not None:
        return Verdict.fail(ReasonCode.degenerate, f"a repetition loop: {loop}")
    copied = _echo_source([w.replace("'", "") for w in reply], sources)
    if copied is not None:
        return Verdict.fail(ReasonCode.echo, f"the reply is mostly a copy of {copied}")
    unsupported = language_problem(text)
    if unsupported is not None:
        return unsupported
    cues = answer_cues(reply_languages(text))
    kinds = []
    for sentence in sentences(text):
        if is_filler(sentence, langs=cues.langs):
            kinds.append("filler")
        elif is_refusal(sentence, cues=cues):
            kinds.append("refusal")
        else:
            return None
    if "refusal" in kinds:
        return Verdict.fail(ReasonCode.refusal, f"a refusal, not an answer: {quoted(text)}")
    return Verdict.fail(ReasonCode.non_answer, f"a content-free reply: {quoted(text)}")


def language_problem(answer: str) -> Verdict | None:
    """`unsupported_language` for a reply written in a language the judge has no cue
    lists for (`judge.language`), naming the language; None otherwise."""
    found = detect_language(answer)
    if not is_unsupported(found):
        return None
    return Verdict.fail(
        ReasonCode.unsupported_language,
        f"the reply is in {language_name(found)}; loragate judges replies in "
        f"{', '.join(language_name(lang) for lang in supported())} (docs/languages.md)",
    )


def quoted(text: str, limit: int = 80) -> str:
    """`text` on one line, cut to `limit` characters, as a repr (for verdict details)."""
    one_line = " ".join(text.split())
    return repr(one_line if len(one_line) <= limit else one_line[: limit - 3] + "...")


def conversation_sources(
    messages: Sequence[tuple[str, str | None]], system_prompt: str | None
) -> tuple[tuple[str, str], ...]:
    """(name, text) echo sources: each non-empty message and the system prompt."""
    out: list[tuple[str, str]] = []
    if system_prompt:
        out.append(("the system prompt", system_prompt))
    for i, (role, content) in enumerate(messages):
        if content and content.strip():
            what = {"tool": "a tool result", "user": "the user's message"}.get(
                role, f"an earlier {role} message"
            )
            out.append((f"{what} (message {i})", content))
    return tuple(out)


__all__ = [
    "DEGENERATE_MIN_WORDS",
    "DEGENERATE_REPEAT_SHARE",
    "ECHO_MIN_WORDS",
    "ECHO_SHARE",
    "ECHO_SOURCE_SHARE",
    "REFUSAL_MAX_OTHER_WORDS",
    "RUN_OF_ONE_CHAR",
    "answer_problem",
    "conversation_sources",
    "language_problem",
    "quoted",
]
