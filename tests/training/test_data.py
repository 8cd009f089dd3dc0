"""Training data: xLAM and messages loaders, tool subsets, rendering, mixing, manifest."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.generate.prompt import ChatRenderer, renderer_from_template
from loragate.training.data import (
    load_source,
    mix_table,
    prepare_data,
    related_tools,
    shaped_messages,
    tokenize_example,
    upweight,
)
from loragate.training.data_spec import CurriculumSpec, DataConfig, LeakageConfig, SourceSpec
from loragate.training.sources import xlam_example, xlam_tool

XLAM_ROWS: list[dict[str, Any]] = [
    {
        "id": 7,
        "query": "Track DHL parcel 123 and the UPS one 1Z9.",
        "tools": json.dumps(
            [
                {
                    "name": "track",
                    "description": "Track a parcel.",
                    "parameters": {
                        "carrier": {"description": "Carrier.", "type": "str", "default": "dhl"},
                        "number": {"description": "Tracking number.", "type": "str"},
                        "verbose": {"description": "More detail.", "type": "bool, optional"},
                        "ids": {"description": "Ids.", "type": "List[int]"},
                    },
                }
            ]
        ),
        "answers": json.dumps(
            [
                {"name": "track", "arguments": {"carrier": "dhl", "number": "123"}},
                {"name": "track", "arguments": {"carrier": "ups", "number": "1Z9"}},
            ]
        ),
    },
    {
        "id": 8,
        "query": "Weather in Bern?",
        "tools": [
            {"name": "weather", "description": "Weather.", "parameters": {"city": {"type": "str"}}}
        ],
        "answers": [{"name": "weather", "arguments": {"city": "Bern"}}],
    },
]


class CharTokenizer:
    """A stand-in tokenizer (one id per character; `<|im_end|>` is one token)."""

    eos_token = "<|im_end|>"

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        assert add_special_tokens is False
        ids: list[int] = []
        for i, part in enumerate(text.split(self.eos_token)):
            if i:
                ids.append(0)
            ids += [ord(c) for c in part]
        return {"input_ids": ids}


@pytest.fixture(scope="module")
def agent20(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


@pytest.fixture(scope="module")
def renderer() -> ChatRenderer:
    return renderer_from_template("chatml-tools", special_tokens={"eos_token": "<|im_end|>"})


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_xlam_tool_conversion() -> None:
    tool = xlam_tool(json.loads(XLAM_ROWS[0]["tools"])[0])
    params = tool["function"]["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["number", "ids"]
    assert params["properties"]["carrier"] == {
        "type": "string",
        "description": "Carrier.",
        "default": "dhl",
    }
    assert params["properties"]["verbose"]["type"] == "boolean"
    assert params["properties"]["ids"]["type"] == "array"
    # A parameters object that already is a JSON Schema is kept.
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert xlam_tool({"name": "s", "parameters": schema})["function"]["parameters"] == schema


def test_xlam_example_and_its_errors() -> None:
    ex = xlam_example(XLAM_ROWS[0], 0, "xl")
    assert ex.id == "xl:7" and ex.tools is not None
    assert ex.messages[0] == {"role": "user", "content": XLAM_ROWS[0]["query"]}
    calls = ex.messages[1]["tool_calls"]
    assert [c["function"]["arguments"]["number"] for c in calls] == ["123", "1Z9"]
    with pytest.raises(ValueError, match="query"):
        xlam_example({"tools": "[]", "answers": "[]"}, 0, "xl")
    with pytest.raises(ValueError, match="not valid JSON"):
        xlam_example({"query": "q", "tools": "[", "answers": "[]"}, 0, "xl")


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
@pytest.mark.train
def test_xlam_files_through_datasets(tmp_path: Path, agent20: Evalset, suffix: str) -> None:
    path = tmp_path / f"x{suffix}"
    rows = [
        {
            **r,
            "tools": r["tools"] if isinstance(r["tools"], str) else json.dumps(r["tools"]),
            "answers": r["answers"] if isinstance(r["answers"], str) else json.dumps(r["answers"]),
        }
        for r in XLAM_ROWS
    ]
    if suffix == ".jsonl":
        _write_jsonl(path, rows)
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        import datasets

        datasets.Dataset.from_list(rows).to_parquet(str(path))
    src = load_source(SourceSpec(name="xl", path=str(path), format="auto"), agent20)
    assert src.format == "xlam" and src.rows == 2 and len(src.examples) == 2
    assert src.examples[1].messages[1]["tool_calls"][0]["function"]["arguments"] == {"city": "Bern"}
    assert len(src.sha256) == 64


def test_invalid_rows_fail_or_are_counted(tmp_path: Path, agent20: Evalset) -> None:
    good = {
        "messages": [
            {"role": "user", "content": "What's INV-7001 about?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "get_invoice",
                            "arguments": {"invoice_id": "INV-7001"},
                        },
                    }
                ],
            },
        ]
    }
    bad_schema = json.loads(json.dumps(good))
    bad_schema["messages"][1]["tool_calls"][0]["function"]["arguments"] = {"invoice_id": "7001"}
    no_answer = {"messages": [{"role": "user", "content": "hi there"}]}
    path = _write_jsonl(tmp_path / "m.jsonl", [good, bad_schema, no_answer])
    with pytest.raises(BadInput) as exc:
        load_source(SourceSpec(name="m", path=str(path)), agent20)
    text = str(exc.value)
    assert "2 invalid row(s)" in text and "invoice_id" in text and "skip_invalid" in text
    src = load_source(SourceSpec(name="m", path=str(path), skip_invalid=True), agent20)
    assert len(src.examples) == 1 and src.dropped["invalid"] == 2 and src.format == "messages"


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        SourceSpec(name="a")
    with pytest.raises(ValueError, match="exactly one"):
        SourceSpec(name="a", path="x", curriculum=CurriculumSpec(families={"clarify": 1}))
    with pytest.raises(ValueError, match="unique"):
        DataConfig(sources=[SourceSpec(name="a", path="x"), SourceSpec(name="a", path="y")])
    with pytest.raises(ValueError):
        SourceSpec(name="a", path="x", bogus=1)  # type: ignore[call-arg]


def test_upweight() -> None:
    rng = random.Random(0)
    assert upweight(4, 3, rng) == [0, 1, 2, 3] * 3
    half = upweight(10, 0.5, rng)
    assert len(half) == 5 and len(set(half)) == 5
    assert len(upweight(10, 1.3, rng)) == 13
    assert upweight(5, 0, rng) == []


def test_tool_subset_and_system_prompt(agent20: Evalset) -> None:
    src = load_source(
        SourceSpec(
            name="c",
            curriculum=CurriculumSpec(
                families={"governance": 6, "clarify": 9, "should_not_call": 2}
            ),
        ),
        agent20,
    )
    spec = SourceSpec(
        name="c",
        curriculum=CurriculumSpec(families={"clarify": 1}),
        tools="called",
        distractor_tools=2,
    )
    related = related_tools(agent20)
    assert related["cl_invoice_id"] == ("pay_invoice", "get_invoice") and len(related) == 9
    for ex in src.examples:
        messages, tools = shaped_messages(ex, spec, "messages", agent20, 0, related)
        names = {t["function"]["name"] for t in tools}
        assert messages[0]["role"] == "system"
        assert set(ex.called_tools()) <= names
        if ex.family == "governance":
            # The confirmation tool and the action it would unlock are always shown.
            action = ex.messages[1]["tool_calls"][0]["function"]["arguments"]["action"]
            assert {"request_confirmation", action} <= names
        if ex.family == "clarify":
            # The tool it asks about (+ the confirmation tool if destructive) + 2 others.
            assert set(related[ex.tags[0]]) <= names and 3 <= len(names) <= 5
        if ex.family == "should_not_call":
            assert len(names) == 2
        # Same seed, same subset.
        assert shaped_messages(ex, spec, "messages", agent20, 0, related)[1] == tools
    full = shaped_messages(
        src.examples[0], SourceSpec(name="c", path="x"), "messages", agent20, 0, related
    )[1]
    assert len(full) == len(agent20.toolset.tools)
    xl = xlam_example(XLAM_ROWS[1], 0, "xl")
    msgs, tools = shaped_messages(xl, SourceSpec(name="xl", path="x"), "xlam", agent20, 0, {})
    assert msgs[0]["role"] == "user" and tools == xl.tools


@pytest.mark.train
def test_tokenized_prompt_is_the_evaluation_prompt(
    renderer: ChatRenderer, agent20: Evalset
) -> None:
    tok = CharTokenizer()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Convert 5 EUR"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "convert_currency", "arguments": {"amount": 5}},
                }
            ],
        },
    ]
    tools = agent20.toolset.as_openai()[:2]
    ids, mask = tokenize_example(renderer, tok, messages, tools)
    prompt = renderer.render_prompt(messages[:-1], tools)
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert ids[:n_prompt] == tok(prompt, add_special_tokens=False)["input_ids"]
    assert mask == [0] * n_prompt + [1] * (len(ids) - n_prompt)
    completion = "".join(chr(i) if i else "<|im_end|>" for i in ids[n_prompt:])
    assert completion.startswith("<tool_call>") and completion.endswith("</tool_call><|im_end|>")


def _planted(tmp_path: Path, agent20: Evalset) -> Path:
    eval_text = agent20.by_id["A-001"].messages[0].content
    rows: list[dict[str, Any]] = [
        {
            "id": "leak",
            "messages": [
                {"role": "user", "content": eval_text},
                {"role": "assistant", "content": "Let me check."},
            ],
        },
        {
            "id": "fine",
            "messages": [
                {"role": "user", "content": "What is a bill of materials?"},
                {"role": "assistant", "content": "A list of parts."},
            ],
        },
    ]
    return _write_jsonl(tmp_path / "planted.jsonl", rows)


@pytest.mark.train
def test_prepare_refuses_allows_or_drops_leakage(
    tmp_path: Path, agent20: Evalset, renderer: ChatRenderer
) -> None:
    path = _planted(tmp_path, agent20)
    config = DataConfig(sources=[SourceSpec(name="p", path=str(path), tools="called")])
    said: list[str] = []
    with pytest.raises(BadInput, match="refusing to train") as exc:
        prepare_data(config, agent20, renderer, CharTokenizer(), 100_000, echo=said.append)
    assert "A-001" in str(exc.value) and "--allow-leakage" in str(exc.value)
    assert any("p:leak" in line for line in said)

    allowed = prepare_data(config, agent20, renderer, CharTokenizer(), 100_000, allow_leakage=True)
    assert allowed.manifest.leakage["allowed"] is True
    assert allowed.manifest.warnings and "allow-leakage" in allowed.manifest.warnings[0]
    assert allowed.manifest.total_rows == 2

    dropping = config.model_copy(update={"leakage": LeakageConfig(drop=True)})
    dropped = prepare_data(dropping, agent20, renderer, CharTokenizer(), 100_000)
    assert dropped.manifest.total_rows == 1 and not dropped.manifest.warnings
    assert dropped.manifest.sources[0].dropped == {"leakage": 1}


@pytest.mark.train
def test_mix_shares_counts_and_hashes(
    tmp_path: Path, agent20: Evalset, renderer: ChatRenderer
) -> None:
    xl = _write_jsonl(tmp_path / "x.jsonl", XLAM_ROWS[1:] * 1)
    config = DataConfig(
        seed=3,
        sources=[
            SourceSpec(name="xl", path=str(xl), format="xlam", weight=2),
            SourceSpec(
                name="cur",
                curriculum=CurriculumSpec(families={"should_not_call": 3, "parallel": 1}),
                weight=3,
                tools="called",
            ),
        ],
    )
    a = prepare_data(config, agent20, renderer, CharTokenizer(), 100_000)
    b = prepare_data(config, agent20, renderer, CharTokenizer(), 100_000)
    stats = {s.name: s for s in a.manifest.sources}
    assert (stats["xl"].in_mix, stats["cur"].in_mix) == (2, 12)
    assert stats["cur"].share == pytest.approx(12 / 14)
    assert stats["cur"].families == {"parallel": 1, "should_not_call": 3}
    assert a.manifest.total_tokens == sum(len(r.input_ids) for r in a.rows)
    assert a.manifest.mix_sha256 == b.manifest.mix_sha256  # deterministic
    table = mix_table(a.manifest)
    assert "xl" in table and "85.7%" in table and "total" in table
    # Too long for max_length: dropped and counted, never truncated.
    short = prepare_data(
        config.model_copy(update={"sources": config.sources[:1]}),
        agent20,
        renderer,
        CharTokenizer(),
        2000,
    )
    assert short.manifest.sources[0].dropped.get("too_long", 0) == 0
    with pytest.raises(BadInput, match="no usable example"):
        prepare_data(config, agent20, renderer, CharTokenizer(), 50)
