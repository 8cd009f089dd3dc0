"""The fast scoring paths give exactly the reference's results.

Scoring has fast paths that must never change a result: `orjson` for well-formed
`<tool_call>` JSON (`hermes.decode_strict`), compiled argument matchers
(`matchers.compile_matcher`), schema errors without `jsonschema`
(`loragate.calls.schema_errors`), records built without re-validation (`records.trusted`,
`scoring.result_record`) and `loragate score --jobs` over several processes. Here each
corpus is scored twice - once as shipped, once with every fast path replaced by its
reference - and every result must be equal and dump to the same bytes. The pieces are
also compared one by one on generated input (hypothesis).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loragate.calls.hermes as hermes
import loragate.calls.matchers as matchers_module
import loragate.calls.parsing as parsing
import loragate.calls.schemacheck as schemacheck
import loragate.formats.records as records_module
from loragate.calls.matchers import compile_matcher, matches
from loragate.calls.schema_errors import _APPLIED, compile_errors
from loragate.calls.schemacheck import ArgumentsValidator, SchemaChecker
from loragate.common.files import replace_files
from loragate.common.resources import bundled
from loragate.evalset.bfcl import (
    DEFAULT_CATEGORIES,
    build_entries,
    data_dir,
    evalset_files,
    read_category,
)
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.records import (
    GenerationRecord,
    ResultRecord,
    ToolCall,
    Verdict,
    trusted,
)
from loragate.judge.language import detect_language
from loragate.score import scoring
from loragate.score.processes import ForkedJudges
from loragate.score.scoring import Scorer, score_records
from tests._bfcl import mutations, tool_call_text

DATA = Path(__file__).parent / "data"


# -- the reference ------------------------------------------------------------------


@contextmanager
def reference_paths(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every fast path replaced by the reference it stands for."""
    with monkeypatch.context() as m:
        m.setattr(hermes, "decode_strict", lambda text: hermes.decode(text, hermes.STRICT))
        m.setattr(
            matchers_module,
            "compile_matcher",
            lambda matcher, text: lambda v: matches(matcher, v, text),
        )
        m.setattr(matchers_module, "_compiled_arguments", {})
        m.setattr(schemacheck, "compile_errors", lambda schema: None)
        m.setattr(parsing, "trusted", _validated)
        m.setattr(hermes, "trusted", _validated)
        m.setattr(records_module, "trusted", _validated)
        yield


def _validated(cls: type[Any], fields: dict[str, Any]) -> Any:
    return cls.model_validate(fields)


def reference_score(scorer: Scorer, record: GenerationRecord) -> ResultRecord:
    """What `Scorer.score` built before the fast record: a validated `ResultRecord`."""
    parse, verdict = scorer.judge(record)
    entry = scorer.evalset.by_id[record.entry_id]
    fields = {**record.__dict__, "family": entry.family, "fault": entry.fault}
    fields["language"] = detect_language(parse.answer)
    return ResultRecord.model_validate({**fields, "parse": parse, "verdict": verdict})


def assert_same_results(
    load: Any, records: list[GenerationRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Score `records` on a fresh evalset (`load()`) with the fast paths and with the
    reference; every result equal and written the same."""
    fast_scorer = Scorer(load())
    fast = [fast_scorer.score(r) for r in records]
    with reference_paths(monkeypatch):
        ref_scorer = Scorer(load())
        ref = [reference_score(ref_scorer, r) for r in records]
    differ = [
        (a.entry_id, a.text[:80], a.verdict, b.verdict)
        for a, b in zip(fast, ref, strict=True)
        if a.model_dump_json(by_alias=True) != b.model_dump_json(by_alias=True) or a != b
    ]
    assert differ[:5] == []


# -- corpora --------------------------------------------------------------------------


def _agent20() -> Evalset:
    return load_evalset(bundled(Path("evalsets") / "agent20"))


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in [
        DATA / "agent20_reference_outputs.jsonl",
        *sorted((DATA / "labelled").glob("*.jsonl")),
    ]:
        texts += [json.loads(line)["text"] for line in path.read_text().splitlines() if line]
    junk = [
        '<tool_call>\n{"name": "get_invoice", "arguments": {"invoice_id": "a", "invoice_id": "b"}}\n</tool_call>',
        '<tool_call>\n{"name": "convert_currency", "arguments": {"amount": 123456789012345678901234567890}}\n</tool_call>',
        '<tool_call>{"name": "convert_currency", "arguments": {"amount": 1e400}}</tool_call>',
        '<tool_call>{"name": "convert_currency", "arguments": {"amount": NaN}}</tool_call>',
        '<tool_call>{"name": "get_invoice", "arguments": {"invoice_id": "\\ud800"}}</tool_call>',
        '<tool_call>{"name": "get_invoice", "arguments": {"invoice_id": "\\u00e9\\ud83d\\ude00"}}</tool_call>',
        '<tool_call>{"name": "get_invoice", "arguments": {"invoice:id": "x"}}</tool_call>',
        '<tool_call>{"name": "get_invoice", "arguments": {"a": {"b": {"c": [1, 2.5, -0.0]}}}}</tool_call>',
        '<tool_call>[{"name": "get_invoice", "arguments": {}}, {"name": "web_search", "arguments": {"query": 5}}]</tool_call>',
        '<tool_call>{"name": "get_invoice", "arguments": {"invoice_id": "INV-1"}}',
        '{"name": "get_invoice", "arguments": {"invoice_id": "INV-1"}}',
        "<tool_call>" + "[" * 70 + "]" * 70 + "</tool_call>",
        "<think>plan</think>\n" + '<tool_call>{"name": "x", "arguments": {}}</tool_call>',
        "",
        "\x00\ufffd junk",
    ]
    return texts + junk


def test_agent20_corpus_through_fast_and_reference_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every labelled and reference output, each against 12 entries of every family."""
    ids = [e.id for e in _agent20().entries]
    records = [
        GenerationRecord(
            entry_id=ids[(i * 7 + j * 11) % len(ids)], adapter="m", sample=j, text=text
        )
        for i, text in enumerate(_corpus_texts())
        for j in range(12)
    ]
    assert len(records) > 14_000
    assert_same_results(_agent20, records, monkeypatch)


@cache
def _bfcl_folder(semantics: str, root: Path) -> Path:
    folder = root / f"bfcl-{semantics}"
    entries, _ = build_entries(DEFAULT_CATEGORIES, "bfcl" if semantics == "bfcl" else "loragate")
    replace_files(
        folder,
        evalset_files(
            entries, list(DEFAULT_CATEGORIES), "bfcl" if semantics == "bfcl" else "loragate", "t"
        ),
    )
    return folder


def _bfcl_records() -> list[GenerationRecord]:
    out = []
    for category in DEFAULT_CATEGORIES:
        raws, answers = read_category(data_dir(), category)
        for raw in raws:
            for _, output in mutations(raw, answers.get(raw["id"]), category):
                text = output if isinstance(output, str) else tool_call_text(output)
                out.append(GenerationRecord(entry_id=raw["id"], adapter="m", sample=0, text=text))
    return out


@pytest.mark.parametrize("semantics", ["loragate", "bfcl"])
@pytest.mark.bfcl
def test_bfcl_corpus_through_fast_and_reference_paths(
    semantics: str, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The 22,472 mutated BFCL outputs (a third of them schema-invalid)."""
    folder = _bfcl_folder(semantics, tmp_path_factory.getbasetemp())
    assert_same_results(lambda: load_evalset(folder), _bfcl_records(), monkeypatch)


# -- the pieces on generated input ------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def _decoded(text: str) -> tuple[str, Any]:
    """('ok', repr of the value) or ('reject', reason) of a strict decode."""
    try:
        return "ok", repr(hermes.decode_strict(text))
    except hermes.Reject as exc:
        return "reject", exc.reason


def _decoded_reference(text: str) -> tuple[str, Any]:
    try:
        return "ok", repr(hermes.decode(text, hermes.STRICT))
    except hermes.Reject as exc:
        return "reject", exc.reason


_json_texts = st.one_of(
    _values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    _values.map(lambda v: json.dumps(v)),
    st.lists(
        st.sampled_from(
            [
                '{"a": 1',
                ', "a": 2}',
                "[",
                "]",
                '"\\ud800"',
                "1e999",
                "NaN",
                "12345678901234567890",
                " ",
                ":",
                '"x:y"',
                "-0",
                "1.5e3",
                '"\\u003a"',
                "{}",
                "true",
            ]
        ),
        max_size=8,
    ).map("".join),
    st.text(max_size=30),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_texts)
def test_strict_decode_equals_the_stdlib_decoder(text: str) -> None:
    assert _decoded(text) == _decoded_reference(text)


_matcher_leaves = st.one_of(
    _scalars,
    st.builds(lambda s: {"$contains": s}, st.text(max_size=3)),
    st.builds(lambda s: {"$regex": s}, st.sampled_from(["a", "^x", "(?i)b|c", "[", "\\d+"])),
    st.builds(lambda s: {"$loose": s}, st.text(max_size=4)),
    st.builds(lambda n: {"$integer": n}, st.integers(-3, 3)),
    st.sampled_from([{"$absent": True}, {"$present": True}, {"$never": True}]),
)
_matchers = st.recursive(
    _matcher_leaves,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: {"$any": xs}),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: {"$all": xs}),
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)


@settings(max_examples=3000, deadline=None)
@given(_matchers, st.one_of(_values, st.just(matchers_module.MISSING)))
def test_compiled_matchers_equal_matches(matcher: Any, value: Any) -> None:
    assert compile_matcher(matcher)(value) == matches(matcher, value)


def test_a_matcher_deeper_than_compiled_falls_back() -> None:
    deep: Any = 1
    for _ in range(matchers_module.COMPILE_MAX_DEPTH + 5):
        deep = {"$any": [deep]}
    assert compile_matcher(deep)(1) and not compile_matcher(deep)(2)


def test_a_huge_integer_is_no_crash() -> None:
    # `float(10**400)` overflows: it once escaped `matches` as an OverflowError.
    assert not matches(5, 10**400) and matches(10**400, 10**400)
    assert not compile_matcher(5)(10**400)


def test_applied_keywords_are_the_references() -> None:
    assert set(ArgumentsValidator.VALIDATORS) == _APPLIED


def _tool_schemas() -> list[Any]:
    schemas = [t.function.parameters for t in _agent20().toolset.tools]
    entries, _ = build_entries(DEFAULT_CATEGORIES, "loragate")
    seen: set[str] = set()
    for entry in entries:
        for tool in entry.get("tools", []):
            key = json.dumps(tool, sort_keys=True)
            if key not in seen and isinstance(tool, dict):
                seen.add(key)
                schemas.append(tool["function"]["parameters"])
    return schemas


@cache
def _schemas() -> tuple[Any, ...]:
    return tuple(_tool_schemas())


def _instance_for(schema: Any, data: st.DataObject) -> Any:
    """An instance near the schema: its properties with values of any type, some
    required ones left out, some extra keys."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    out: dict[str, Any] = {}
    for name, sub in props.items():
        if data.draw(st.booleans()):
            enum = sub.get("enum") if isinstance(sub, dict) else None
            if enum and data.draw(st.booleans()):
                out[name] = data.draw(st.sampled_from(enum))
            else:
                out[name] = data.draw(_values)
    if data.draw(st.booleans()):
        out[data.draw(st.text(max_size=5))] = data.draw(_values)
    return out


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@pytest.mark.bfcl
def test_schema_errors_equal_the_references(data: st.DataObject) -> None:
    schema = data.draw(st.sampled_from(_schemas()))
    instance = _instance_for(schema, data)
    checker = SchemaChecker(schema)
    assert compile_errors(schema) is not None
    assert checker.errors(instance) == checker._reference_errors(instance)


def test_unmodelled_schemas_keep_the_reference() -> None:
    for schema in (
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "object", "anyOf": [{"required": ["a"]}]},
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
        {
            "type": "object",
            "properties": {"a": {"type": "array", "prefixItems": [{}], "items": {}}},
        },
    ):
        assert compile_errors(schema) is None
    nested = {"type": "object", "properties": {"a": {"items": False, "minItems": 2}}}
    checker = SchemaChecker(nested)
    for instance in ({"a": [1]}, {"a": []}, {"a": [1, 2, 3]}, {"a": "x"}):
        assert checker.errors(instance) == checker._reference_errors(instance)


# -- records built without validation -------------------------------------------------


def test_trusted_records_equal_validated_ones() -> None:
    call = trusted(ToolCall, {"name": "f", "arguments": {"x": [1, 2.5]}, "arguments_json": None})
    assert call == ToolCall(name="f", arguments={"x": [1, 2.5]})
    verdict = Verdict.fail(records_module.ReasonCode.no_call, "none")
    validated = Verdict.model_validate({"pass": False, "reason": "no_call", "detail": "none"})
    assert verdict == validated
    assert verdict.model_dump_json(by_alias=True) == validated.model_dump_json(by_alias=True)
    assert pickle.loads(pickle.dumps(verdict)) == validated
    assert verdict.model_fields_set == validated.model_fields_set
    assert Verdict.ok() is Verdict.ok() and Verdict.ok() == Verdict.model_validate(
        {"pass": True, "reason": "ok"}
    )


# -- several processes -------------------------------------------------------------------


def test_scoring_in_several_processes_equals_one(monkeypatch: pytest.MonkeyPatch) -> None:
    evalset = _agent20()
    ids = [e.id for e in evalset.entries]
    texts = _corpus_texts()
    records = [
        GenerationRecord(
            entry_id=ids[i % len(ids)],
            adapter="m",
            sample=i // len(ids),
            text=texts[i % len(texts)],
        )
        for i in range(4 * len(ids) * 9)
    ]
    one = score_records(evalset, records, progress=False, jobs=1)
    forks: list[int] = []

    class Counted(ForkedJudges):
        def __enter__(self) -> ForkedJudges:
            forks.append(self.jobs)
            return super().__enter__()

    monkeypatch.setattr(scoring, "ForkedJudges", Counted)
    several = score_records(evalset, records, progress=False, jobs=3, min_parallel=1)
    assert forks == [3]
    assert [r.model_dump_json(by_alias=True) for r in several] == [
        r.model_dump_json(by_alias=True) for r in one
    ]


def test_a_scorer_that_raises_in_a_worker_is_reported_as_in_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loragate.families.tool_call import ToolCallFamily
    from loragate.score.scoring import ScorerError

    evalset = _agent20()
    first = next(e.id for e in evalset.entries if e.family == "tool_call")
    records = [
        GenerationRecord(entry_id=e.id, adapter="m", sample=0, text=f"answer {e.id}")
        for e in evalset.entries
    ]
    records.append(GenerationRecord(entry_id=first, adapter="m", sample=1, text="boom"))
    judge = ToolCallFamily.score

    def boom(self: ToolCallFamily, sample: Any) -> Verdict:
        if sample.parse.answer == "boom":
            raise KeyError("a bug")
        return judge(self, sample)

    monkeypatch.setattr(ToolCallFamily, "score", boom)  # before the fork: workers share it
    with pytest.raises(ScorerError, match=r"tool_call.*KeyError"):
        score_records(evalset, records, progress=False, jobs=2, min_parallel=1)


def test_no_process_to_spare_scores_in_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    evalset = _agent20()
    records = [
        GenerationRecord(entry_id=e.id, adapter="m", sample=0, text=f"answer {e.id}")
        for e in evalset.entries
    ]
    one = score_records(evalset, records, progress=False, jobs=1)

    class NoFork:
        def Pool(self, jobs: int) -> Any:
            raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing, "get_context", lambda method: NoFork())
    several = score_records(evalset, records, progress=False, jobs=2, min_parallel=1)
    assert several == one


def test_one_refusal_search_finds_what_each_pattern_finds() -> None:
    from loragate.judge.language import supported
    from loragate.judge.refusals import answer_cues
    from loragate.judge.text import fold, sentences

    cues = answer_cues(supported())

    pieces = [fold(s) for text in _corpus_texts() for s in sentences(text)]
    pieces += ["as an ai language model", "i can't help with that", "we must decline"]
    assert sum(cues.refusal_any.search(p) is not None for p in pieces) >= 3
    for piece in pieces:
        assert (cues.refusal_any.search(piece) is not None) == any(
            p.search(piece) for p in cues.refusals
        )
