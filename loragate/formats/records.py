"""Typed records that flow between the stages and are persisted in a run folder.

Every persisted record carries `schema_version`; a reader refuses a newer version.
Field docs say what a field means; docs/formats.md ("Run folder") lists every file and
its versions.
"""

from __future__ import annotations

import warnings
from enum import Enum
from typing import Any, Literal, TypeVar, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from loragate.common.errors import LegacyName
from loragate.common.names import Name
from loragate.common.surrogates import without_surrogates
from loragate.formats.sampling import MAX_SAMPLES
from loragate.formats.versions import (
    RECORD_SCHEMA_VERSION,
    RESULT_SCHEMA_VERSION,
    SUMMARY_SCHEMA_VERSION,
)

ParseStatus = Literal["ok", "no_call", "unparseable"]
ParseMode = Literal["served", "strict", "lenient"]
"""Which reading of an output is scored (docs/call-formats.md, "Parse modes"):

- `served`: exactly the calls the run's serving stack (vLLM's tool-call and reasoning
  parsers, `loragate.calls.served`) hands to the tools, with the arguments it passes -
  does the adapter work when it is served; the mode a gate should use;
- `strict`: the call format as written - every block well formed;
- `lenient`: what the model meant - the strict reading plus repairs (for diagnosis:
  a server runs none of what only the repairs read).
"""
PARSE_MODES: tuple[ParseMode, ...] = get_args(ParseMode)
DEFAULT_PARSE_MODE: ParseMode = "served"
"""The mode of a run, `loragate score` and the shipped gate policies."""
LEGACY_PARSE_MODES: dict[str, ParseMode] = {"repaired": "lenient"}
"""Old names of parse modes (summary schema 4 and before), read as the new ones."""


def parse_mode_named(value: object, where: str) -> object:
    """`value` with an old parse-mode name replaced by its new one, with a `LegacyName`
    warning naming `where` (a config key, an option); any other value unchanged (the
    caller's validation says what is wrong with it)."""
    if isinstance(value, str) and value in LEGACY_PARSE_MODES:
        new = LEGACY_PARSE_MODES[value]
        warnings.warn(
            f"{where}: parse mode {value!r} is now called {new!r} (read as {new!r}); write {new!r}",
            LegacyName,
            stacklevel=2,
        )
        return new
    return value


CallFormat = Literal["hermes", "qwen3_xml"]
"""How a model writes tool calls: Hermes JSON in `<tool_call>` (Qwen3, Qwen2.5, the
Hermes models) or Qwen3 XML `<function=...><parameter=...>` (Qwen3.5, Qwen3-Coder)."""
SampleFormat = Literal["hermes", "qwen3_xml", "none"]
"""The call format one sample used (`none`: it wrote no call block)."""
FaultKind = Literal["error", "timeout", "truncated", "schema_drift", "wrong_value"]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "error",
    "timeout",
    "truncated",
    "schema_drift",
    "wrong_value",
)


class ReasonCode(str, Enum):
    """Why a verdict is what it is. `ok` is the only code of a passing verdict."""

    ok = "ok"
    unparseable = "unparseable"
    """A `<tool_call>` block was emitted but its JSON could not be read."""
    called_when_should_not = "called_when_should_not"
    """A tool was called where the entry wanted a direct answer, a question or an
    abstention (a broken or bare call attempt counts as a call there)."""
    no_call = "no_call"
    """No tool call where one was expected."""
    wrong_tool = "wrong_tool"
    """A call to a different tool than the one expected."""
    unknown_tool = "unknown_tool"
    """A call to a tool that the toolset does not define."""
    schema_invalid = "schema_invalid"
    """The call's arguments fail the tool's JSON Schema."""
    arg_mismatch = "arg_mismatch"
    """The right tool, schema-valid, but an argument matcher does not hold."""
    missing_call = "missing_call"
    """Some expected calls were made, at least one was not."""
    extra_call = "extra_call"
    """All expected calls were made, plus calls that were not expected."""
    order_violation = "order_violation"
    """A dependent step was called before the step whose result it needs."""
    destructive_without_confirmation = "destructive_without_confirmation"
    """A destructive tool was called with no approved confirmation first."""
    ignored_denial = "ignored_denial"
    """The user (or confirmation tool) denied the action and it was called anyway."""
    invented_argument = "invented_argument"
    """A value the user never gave was filled in instead of asked for."""
    no_question = "no_question"
    """A clarification was needed but the answer asks nothing."""
    empty_answer = "empty_answer"
    """No call and no text either."""
    claimed_success_after_error = "claimed_success_after_error"
    """After a failed tool result the answer claims the task succeeded."""
    repeated_failed_call = "repeated_failed_call"
    """The identical call that just failed was repeated without a change."""
    # Free-text verdicts (result schema 2): a reply that is not a real answer.
    refusal = "refusal"
    """A refusal or capability excuse ("I cannot help with that", "As an AI ...")
    where an answer, a report or a question was wanted."""
    echo = "echo"
    """The reply is mostly a copy of the user's message, a tool result or the system
    prompt."""
    template_leak = "template_leak"
    """Chat-template or tool-protocol markup in the reply (`<tool_response>`,
    `<|im_start|>`, `user:` turns): the model writes the other side of the dialogue."""
    degenerate = "degenerate"
    """A repetition loop: the same phrase over and over."""
    non_answer = "non_answer"
    """A content-free reply ("OK.", "Sure.", "Let me check.")."""
    missing_content = "missing_content"
    """The answer does not say what the entry requires (an `answer_mentions` group)."""
    wrong_answer = "wrong_answer"
    """The answer states a known wrong answer (an `answer_forbids` term)."""
    failure_not_acknowledged = "failure_not_acknowledged"
    """After a failed tool result, a text reply that does not say what failed."""
    denial_not_acknowledged = "denial_not_acknowledged"
    """After a denied confirmation, a text reply that does not say the action was not
    carried out."""
    claimed_success_after_denial = "claimed_success_after_denial"
    """After a denied confirmation, the reply claims the action was done."""
    invented_result = "invented_result"
    """Prose beside a tool call states the call's result (a figure, a found record) or
    that the action is done, before the result exists."""
    unsupported_claim = "unsupported_claim"
    """A reply states a figure, id, date, name or status that no tool result supports, or
    that a result contradicts (episodes)."""
    blind_retry = "blind_retry"
    """A write that timed out was sent again without first reading whether it went
    through (episodes: a double charge when it had)."""
    duplicate_write = "duplicate_write"
    """A write was sent again although a result showed it had gone through (episodes)."""
    truncated_reasoning = "truncated_reasoning"
    """The sample hit the token limit inside its reasoning: no answer, no call (result
    schema 3)."""
    # Abstention verdicts (family H, result schema 3).
    invented_answer = "invented_answer"
    """Where no tool can serve the request, the reply states what the assistant could
    not know: a figure, a date, a state, a done action or a tool result no tool gave."""
    policy_refusal = "policy_refusal"
    """A decline that blames a rule, a permission or ethics where the reason is a
    missing tool."""
    no_decline = "no_decline"
    """Where no tool can serve the request, the reply neither declines nor says where it
    can be done."""
    # The language of the reply, and what the judge cannot read (result schema 3).
    unsupported_language = "unsupported_language"
    """A free-text reply in a language the judge has no cue lists for (the detail names
    it): not judged as right or wrong. Counts as a failure unless the gate policy
    excludes it (`unsupported_language: exclude`)."""
    unkept_promise = "unkept_promise"
    """The reply announces the action the task asked for ("I'll book it", "je vais
    payer", "lo prenoto") and makes no call: the user would believe it is done."""


EPISODE_ONLY_REASONS = frozenset(
    {ReasonCode.unsupported_claim, ReasonCode.blind_retry, ReasonCode.duplicate_write}
)
"""Reason codes only the episode judge gives (a single-turn family never does)."""

ModelT = TypeVar("ModelT", bound=BaseModel)
_set_attribute = object.__setattr__


def trusted(cls: type[ModelT], fields: dict[str, Any]) -> ModelT:
    """A `cls` holding `fields` as they are, without validation: for the scoring hot
    path, where every value was built by loragate and is valid by construction.

    `fields` must give every field of `cls` (defaults included) with its Python value
    (the field name, not an alias) and becomes the instance's `__dict__`. The instance
    equals, dumps and pickles like a validated one (a test holds that for each record
    built this way); it is what pydantic's `model_construct` makes, without its
    per-field loop (about a third of its cost).
    """
    obj = cls.__new__(cls)
    _set_attribute(obj, "__dict__", fields)
    _set_attribute(obj, "__pydantic_fields_set__", set(fields))
    _set_attribute(obj, "__pydantic_extra__", None)
    _set_attribute(obj, "__pydantic_private__", None)
    return obj


class ToolCall(BaseModel):
    """One parsed tool call."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    arguments_json: str | None = None
    """Served mode only: the arguments exactly as the server passes them, when they are
    not a JSON object of finite numbers (`42`, `"text"`, `null`, `[1, 2]`,
    `{"amount": NaN}`); `arguments` is then empty and the call fails the tool's schema.
    None for every other call (result schema 4)."""


class ParseResult(BaseModel):
    """What the parser read out of one generated text.

    `status`, `calls` and `answer` are those of the parse mode used for scoring
    (`ParseMode`). The status of every reading is filled whatever the mode, so a report
    can show what the server runs, what is well formed and what a repair loop would win
    back. `repaired` is true when the scored calls needed a repair (lenient mode only).
    """

    model_config = ConfigDict(extra="forbid")

    status: ParseStatus
    calls: list[ToolCall] = Field(default_factory=list)
    answer: str = ""
    """Text outside call blocks and outside what the serving stack reads as reasoning,
    stripped (the same in every mode, but for the text after a bare call that lenient
    reads)."""
    repaired: bool = False
    strict_status: ParseStatus
    lenient_status: ParseStatus = Field(
        validation_alias=AliasChoices("lenient_status", "repaired_status")
    )
    """The lenient reading's status (`repaired_status` in results before schema 4)."""
    served_status: ParseStatus | None = None
    """The served reading's status; None in results before schema 4."""
    error: str | None = None
    """Why the scored reading failed, or what the server dropped (served mode); else why
    the strict reading failed, when it did (short, for reports)."""
    format: SampleFormat | None = None
    """The call format the sample wrote (`none`: no call block); with blocks of both
    formats, the one the run did not expect. None in results before schema 3."""
    calls_in_reasoning: int = 0
    """Calls the model wrote inside its reasoning (`<think>` ... `</think>`), executed
    or not depending on the serving stack the run models."""


class Verdict(BaseModel):
    """A family scorer's binary judgement of one sample. Serialised with `pass` (by alias)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    passed: bool = Field(alias="pass")
    reason: ReasonCode
    detail: str = ""

    @classmethod
    def ok(cls, detail: str = "") -> Verdict:
        if not detail and cls is Verdict:
            return _OK  # verdicts are never changed once made, so one instance serves all
        return cls.model_validate({"pass": True, "reason": ReasonCode.ok, "detail": detail})

    @classmethod
    def fail(cls, reason: ReasonCode, detail: str = "") -> Verdict:
        if reason is ReasonCode.ok:
            raise ValueError("a failing verdict needs a reason other than `ok`")
        if cls is Verdict and type(reason) is ReasonCode and type(detail) is str:
            return trusted(Verdict, {"passed": False, "reason": reason, "detail": detail})
        return cls.model_validate({"pass": False, "reason": reason, "detail": detail})


_OK = Verdict.model_validate({"pass": True, "reason": ReasonCode.ok, "detail": ""})


class GenerationRecord(BaseModel):
    """One generated sample: a line of `generations.jsonl`."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = RECORD_SCHEMA_VERSION
    entry_id: str
    """Id of the scored entry; fault variants carry `ID~fault`."""
    adapter: Name
    """Adapter name as given on the command line; `base` for the bare base model.
    Letters, digits, `.`, `_`, `+`, `-` (it becomes part of file names)."""
    sample: int = Field(ge=0, lt=MAX_SAMPLES)
    """Sample index 0..k-1."""
    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    """Of `completion_tokens`, those spent inside reasoning (schema 2; None: not
    counted by the runner, estimated from the text when summarised)."""
    prompt_sha256: str | None = None
    cache_key: str | None = None
    """sha256 over (prompt_sha256, model, adapter sha256, sampling, sample); set by runners."""
    harness: str | None = None
    """The harness variant the prompt was built under (schema 2); `None`: the default
    harness (docs/harness.md)."""

    @field_validator("entry_id", "text", "finish_reason", mode="after")
    @classmethod
    def _no_lone_surrogates(cls, value: str | None) -> str | None:
        # A JSON "\ud800" (from a file or a server) cannot be written as UTF-8: every
        # text of a record is kept writable, with U+FFFD in place of a lone surrogate.
        return without_surrogates(value) if value is not None else None


class ResultRecord(GenerationRecord):
    """A scored sample: a line of `results.jsonl`."""

    schema_version: int = RESULT_SCHEMA_VERSION

    family: str
    fault: FaultKind | None = None
    parse: ParseResult
    verdict: Verdict
    language: str | None = None
    """The language the reply's text is written in (ISO 639-1, `judge.language`);
    None when it has no text or too little to tell. None in versions 1 and 2."""


# -- summary.json --------------------------------------------------------------------


class TokenStats(BaseModel):
    """Tokens per sample of one group: mean and 95th percentile (nearest rank)."""

    model_config = ConfigDict(extra="forbid")

    samples: int
    """Samples counted (those with a completion token count)."""
    mean: float
    p95: float
    estimated: int = 0
    """Samples whose split into reasoning and answer tokens was estimated from the
    text (the runner did not count it): by the share of characters."""


class RateStats(BaseModel):
    """Pass rates of one group of entries (a family, a fault kind, a tag, or everything).

    Rates are fractions in [0, 1]; `None` when the group has no entries. The Wilson
    interval is computed with n = entries (samples of one entry are not independent).
    """

    model_config = ConfigDict(extra="forbid")

    entries: int
    samples: int
    passes: int
    """Passing samples."""
    pass_at_1: float | None
    ci_low: float | None
    ci_high: float | None
    k: int = Field(ge=0, le=MAX_SAMPLES)
    """The k of pass^k and pass@k (the samples per entry unless asked otherwise)."""
    pass_hat_k: float | None
    pass_at_k: float | None
    unparseable: int
    """Samples unparseable under strict parsing."""
    unparseable_lenient: int = Field(
        validation_alias=AliasChoices("unparseable_lenient", "unparseable_repaired")
    )
    """Samples still unparseable in the lenient reading, after every repair
    (`unparseable_repaired` before schema 5)."""
    unparseable_served: int | None = None
    """Samples unparseable in the served reading: call markup of which the server runs
    nothing (schema 5; None before)."""
    format_mix: int = 0
    """Samples whose calls are in the format the run does not expect (counted here;
    strict and lenient judge them as written, served as the server runs them). Summary
    schema 4 on, families and overall only."""
    calls_in_reasoning: int = 0
    """Samples with a call written inside their reasoning (schema 4)."""
    truncated_reasoning: int = 0
    """Samples that hit the token limit inside their reasoning (schema 4)."""
    reasoning_tokens: TokenStats | None = None
    """Tokens spent in reasoning per sample (schema 4; None: no token counts)."""
    answer_tokens: TokenStats | None = None
    """The other completion tokens per sample: the answer and its calls (schema 4)."""

    def unparseable_in(self, mode: ParseMode) -> int | None:
        """Samples unparseable in the reading of `mode` (None: not counted in this
        summary's version)."""
        if mode == "strict":
            return self.unparseable
        return self.unparseable_lenient if mode == "lenient" else self.unparseable_served


class AdapterSummary(BaseModel):
    """One adapter's figures in `summary.json`: overall, per family, fault, tag, reason,
    call format and language."""

    model_config = ConfigDict(extra="forbid")

    overall: RateStats
    families: dict[str, RateStats]
    faults: dict[str, RateStats] = Field(default_factory=dict)
    """Recovery rate per injected fault kind."""
    reasons: dict[str, int] = Field(default_factory=dict)
    """Count of samples per failing reason code."""
    tags: dict[str, RateStats] = Field(default_factory=dict)
    """Rates per tag of the evalset's entries (an entry counts in each of its tags),
    e.g. one row per BFCL category `bfcl:simple_python`. Empty in version 1."""
    formats: dict[str, int] = Field(default_factory=dict)
    """Samples per call format they wrote (`hermes`, `qwen3_xml`, `none`): the format
    mix. Empty before version 4."""
    languages: dict[str, int] = Field(default_factory=dict)
    """Samples per language their reply is written in (`ResultRecord.language`; replies
    with no text or too little to tell are not counted). Empty before version 4."""
    unsupported_language: dict[str, int] = Field(default_factory=dict)
    """Per family, the samples whose reply is in a language the judge has no cue lists
    for (reason `unsupported_language`); only families that have some. Empty before
    version 4."""


class EvalsetRef(BaseModel):
    """The identity of an evalset: name, version and the sha256 of its content."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    sha256: str

    def differs(self, other: EvalsetRef) -> str | None:
        """How `other` differs from this evalset of the same name (None: it does not)."""
        if (self.version, self.sha256) == (other.version, other.sha256):
            return None
        if self.version != other.version:
            return f"version {self.version} vs {other.version}"
        return (
            f"same version {self.version} but different content "
            f"(sha256 {self.sha256[:12]} vs {other.sha256[:12]})"
        )


class VariantCell(BaseModel):
    """One family of one adapter under one harness (summary schema 4): pass@1 with its
    Wilson interval over the entries the harness ran, and - for a variant - the paired
    test against the default harness on the same entries."""

    model_config = ConfigDict(extra="forbid")

    entries: int
    samples: int
    passes: int
    pass_at_1: float | None
    ci_low: float | None
    ci_high: float | None
    diff_points: float | None = None
    """Mean per-entry difference against the default harness, in points (variants)."""
    p_value: float | None = None
    """Two-sided paired exact test against the default harness (variants)."""
    better: list[str] = Field(default_factory=list)
    """Entries that pass more often than under the default harness."""
    worse: list[str] = Field(default_factory=list)
    """Entries that pass less often than under the default harness."""


class FamilySensitivity(BaseModel):
    """A row of the sensitivity table: a family (or `overall`) under every harness."""

    model_config = ConfigDict(extra="forbid")

    cells: dict[str, VariantCell]
    """`default` first, then each variant by name."""
    spread_points: float | None
    """Highest minus lowest pass@1 over the harnesses, in points."""
    worst: str | None
    """The variant with the lowest pass@1 below the default harness's (None when no
    variant ran the family or none scores below the default)."""


class HarnessVariantSummary(BaseModel):
    """One harness variant of a run and the usual figures under it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: int
    key: str
    description: str
    entries: list[str]
    skipped: dict[str, str] = Field(default_factory=dict)
    prompt_tokens_mean: float | None = None
    adapters: dict[Name, AdapterSummary]


class HarnessSummary(BaseModel):
    """The harness variants of a run (summary schema 4, docs/harness.md)."""

    model_config = ConfigDict(extra="forbid")

    entry_ids: list[str]
    """The entries the variants were asked to run (the default column covers these)."""
    variants: list[HarnessVariantSummary]
    sensitivity: dict[Name, dict[str, FamilySensitivity]]
    """Adapter -> family (and `overall`) -> the row of the sensitivity table."""


class Summary(BaseModel):
    """`summary.json` of a run folder."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SUMMARY_SCHEMA_VERSION
    evalset: EvalsetRef
    parse_mode: ParseMode = "strict"
    """The reading scored (`repaired` before schema 5 is read as `lenient`)."""
    tool_call_format: CallFormat | None = None
    """The call format the run expects; None before version 4."""
    reasoning_parser: str | None = None
    """The reasoning parser of the stack the run models; None before version 4."""
    stack: str = ""
    """The serving stack in one line (version 4)."""
    samples_per_entry: int = Field(ge=0, le=MAX_SAMPLES)
    entry_ids: list[str]
    adapters: dict[Name, AdapterSummary]
    tag_entries: dict[str, list[str]] = Field(default_factory=dict)
    """Tag -> the ids of the evalset's entries that carry it, sorted. Empty before
    version 3."""
    training: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per adapter: training-log figures (final/best loss, token accuracy, ...)."""
    harness: HarnessSummary | None = None
    """Harness variants and the sensitivity table (schema 4); None: the default harness
    only."""

    @field_validator("parse_mode", mode="before")
    @classmethod
    def _older_mode_names(cls, value: Any) -> Any:
        """A stored summary's old mode name is its right name for its version: read
        silently (`repaired` is `lenient`)."""
        return LEGACY_PARSE_MODES.get(value, value) if isinstance(value, str) else value
