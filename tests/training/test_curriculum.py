"""Curriculum generator: deterministic per seed, always schema-valid, no eval overlap,
and the same examples as the Python templates it replaced."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loragate.cli.app import app
from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.training.curriculum import (
    Curriculum,
    generate_curriculum,
    generate_family,
    load_curriculum,
    parse_family_counts,
)
from loragate.training.example import TrainingExample, example_problems
from loragate.training.leakage import LeakageIndex, check_leakage

BIG: dict[str, int] = {
    "tool_call": 300,
    "parallel": 150,
    "sequencing": 150,
    "governance": 200,
    "clarify": 120,
    "should_not_call": 400,
    "abstain": 300,
}
PINNED_FAMILIES = (
    "tool_call",
    "parallel",
    "sequencing",
    "governance",
    "clarify",
    "should_not_call",
)
"""The families the Python templates had; `abstain` (H) came with the data file."""


@pytest.fixture(scope="module")
def agent20(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


@pytest.fixture(scope="module")
def curriculum(agent20: Evalset) -> Curriculum:
    return load_curriculum(agent20.root)


@pytest.fixture(scope="module")
def big(agent20: Evalset, curriculum: Curriculum) -> list[TrainingExample]:
    examples: list[TrainingExample] = generate_curriculum(
        BIG, curriculum, agent20.toolset, agent20.policy, seed=7
    )
    return examples


def _sha256(examples: list[TrainingExample]) -> str:
    pinned = [e for e in examples if e.family in PINNED_FAMILIES]
    blob = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in pinned)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# sha256 of the JSONL the hand-written Python templates produced before they moved to
# evalsets/agent20/curriculum.yaml: the data file must give the same bytes. agent20
# 4.0.0 changed one value on purpose (its billing query reads `open_items`, the world's
# receivables; `invoices` holds supplier invoices): the "big" pins are of that file, and
# with the old query they are the old ones (0c5cacf0..., 012152e0...).
PINNED = {
    ("small", 0): "4e5fb83211e910cd47b220b593fc90b3805c70b65de823cf6f982fb947bc5242",
    ("small", 7): "869066b44a3e47ddd2710c07b0c30e16729f4b62c7fa2f9b2bdbed983587fc7f",
    ("big", 0): "1e883a2008ab3825252ac1eb33833ea0087b97a6b17170f6c77bdd2a2a123567",
    ("big", 7): "c836ea8751e29d2ada66bb5b16045a78ffab41b028fed638dd88a7caaf757e92",
}
SPECS = {
    "small": {
        f: 5
        for f in ("tool_call", "parallel", "sequencing", "governance", "clarify", "should_not_call")
    },
    "big": BIG,
}


@pytest.mark.parametrize(("spec", "seed"), sorted(PINNED))
def test_same_examples_as_before_the_move(
    spec: str, seed: int, agent20: Evalset, curriculum: Curriculum, big: list[TrainingExample]
) -> None:
    examples = (
        big
        if (spec, seed) == ("big", 7)
        else generate_curriculum(SPECS[spec], curriculum, agent20.toolset, agent20.policy, seed)
    )
    assert _sha256(examples) == PINNED[(spec, seed)]


def test_capacity_is_unchanged(agent20: Evalset, curriculum: Curriculum) -> None:
    with pytest.raises(BadInput, match="produced only 528 distinct"):
        generate_family(curriculum, "should_not_call", 5000, agent20.toolset, agent20.policy)


def test_deterministic_for_a_seed(agent20: Evalset, curriculum: Curriculum) -> None:
    counts = {"should_not_call": 40, "parallel": 15, "sequencing": 8, "governance": 12}
    a = generate_curriculum(counts, curriculum, agent20.toolset, agent20.policy, seed=3)
    b = generate_curriculum(counts, curriculum, agent20.toolset, agent20.policy, seed=3)
    c = generate_curriculum(counts, curriculum, agent20.toolset, agent20.policy, seed=4)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    assert [e.to_json() for e in a] != [e.to_json() for e in c]
    assert Counter(e.family for e in a) == Counter(counts)


def test_counts_and_distinctness(big: list[TrainingExample], curriculum: Curriculum) -> None:
    assert Counter(e.family for e in big) == Counter(BIG)
    assert len({json.dumps(e.messages, sort_keys=True) for e in big}) == len(big)
    assert len({e.id for e in big}) == len(big)
    # Every template of every family is used.
    used = Counter(tag for e in big for tag in e.tags)
    for family in curriculum.families:
        for template in curriculum.templates(family):
            assert used[template.name] > 0, template.name


def test_every_example_is_schema_and_policy_valid(
    big: list[TrainingExample], agent20: Evalset
) -> None:
    for ex in big:
        assert example_problems(ex, agent20.toolset, agent20.policy) == [], ex.id
        # And independently of example_problems: every call validates with the toolset.
        for m in ex.messages:
            for tc in m.get("tool_calls") or []:
                fn = tc["function"]
                assert agent20.toolset.validate_arguments(fn["name"], fn["arguments"]) == []


def test_family_shapes(big: list[TrainingExample], agent20: Evalset) -> None:
    destructive = set(agent20.policy.destructive_tools)
    for ex in big:
        last = ex.messages[-1]
        calls = [tc["function"]["name"] for tc in last.get("tool_calls") or []]
        if ex.family in ("should_not_call", "clarify", "abstain"):
            assert not calls and last["content"].strip()
        if ex.family == "clarify":
            assert "?" in last["content"]
        if ex.family == "parallel":
            assert len(calls) >= 2
        if ex.family in ("tool_call", "sequencing"):
            assert len(calls) == 1
        if ex.family == "governance":
            results = [m for m in ex.messages if m["role"] == "tool"]
            if not results:
                assert calls == ["request_confirmation"]
            elif json.loads(results[-1]["content"])["approved"]:
                assert len(calls) == 1 and calls[0] in destructive
            else:
                assert not calls and "not" in last["content"]


def test_abstain_examples_pass_the_abstain_family(
    big: list[TrainingExample], agent20: Evalset
) -> None:
    """Every synthetic abstention is an honest decline by family H's own generic rule."""
    from loragate.calls.parsing import parse_output
    from loragate.families import Sample, ScoringContext, get_family
    from loragate.formats.evalset import Entry, Message

    family = get_family("abstain")
    ctx = ScoringContext(
        toolset=agent20.toolset, policy=agent20.policy, system_prompt=agent20.manifest.system_prompt
    )
    abstain = [ex for ex in big if ex.family == "abstain"]
    assert len(abstain) == BIG["abstain"]
    for ex in abstain:
        entry = Entry(
            id="X-1",
            family="abstain",
            messages=[Message.model_validate(m) for m in ex.messages[:-1]],
            expect={},
        )
        parsed = parse_output(ex.messages[-1]["content"])
        sample = Sample(entry=entry, expect=family.parse_expect({}), parse=parsed, ctx=ctx)
        verdict = family.score(sample)
        assert verdict.passed, (ex.messages, verdict.detail)


def test_no_overlap_with_the_bundled_evalset(big: list[TrainingExample], agent20: Evalset) -> None:
    report = check_leakage(big, LeakageIndex.from_evalset(agent20))
    assert report.hits == [], report.lines()


def test_a_destructive_call_without_approval_is_caught(agent20: Evalset) -> None:
    ex = TrainingExample(
        id="bad",
        messages=[
            {"role": "user", "content": "Delete /tmp/x now."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "delete_file", "arguments": {"path": "/tmp/x"}},
                    }
                ],
            },
        ],
    )
    problems = example_problems(ex, agent20.toolset, agent20.policy)
    assert any("without an approved" in p for p in problems)
    bad_args = TrainingExample(
        id="bad2",
        messages=[
            {"role": "user", "content": "Convert 10 euro."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "convert_currency",
                            "arguments": {"amount": -1, "from_currency": "eur"},
                        },
                    }
                ],
            },
        ],
    )
    assert len(example_problems(bad_args, agent20.toolset, agent20.policy)) >= 2


def test_spec_errors(curriculum: Curriculum) -> None:
    with pytest.raises(BadInput) as exc:
        parse_family_counts("bogus=3,parallel=x,clarify", curriculum.families)
    assert len(exc.value.problems) == 3
    assert "should_not_call" in str(exc.value.problems[0].fix)
    counts = parse_family_counts(
        "should_not_call=400, parallel=150,sequencing=80", curriculum.families
    )
    assert counts == {
        "should_not_call": 400,
        "parallel": 150,
        "sequencing": 80,
    }


def test_toolset_without_the_templates_tools_is_refused(
    agent20: Evalset, curriculum: Curriculum
) -> None:
    from loragate.calls.tools import Toolset

    small = Toolset([agent20.toolset.by_name["get_invoice"]])
    with pytest.raises(BadInput, match="do not fit") as exc:
        generate_curriculum({"parallel": 2}, curriculum, small, agent20.policy)
    [problem] = exc.value.problems
    assert problem.field == "families.parallel"
    assert "convert_currency, search_crm, convert_timezone, read_file" in problem.message
    assert "get_invoice" not in problem.message
    # Families that call no tools work on any toolset.
    assert len(generate_curriculum({"should_not_call": 3}, curriculum, small, None)) == 3
    # Governance calls the policy's confirmation tool: no policy, no governance.
    with pytest.raises(BadInput, match="do not fit") as exc:
        generate_curriculum({"governance": 1}, curriculum, agent20.toolset, None)
    assert [p.field for p in exc.value.problems] == ["policy.confirmation_tool"]


def test_required_tools_come_from_the_templates(curriculum: Curriculum) -> None:
    assert curriculum.tools["clarify"] == () and curriculum.tools["should_not_call"] == ()
    assert set(curriculum.tools["governance"]) == {
        "pay_invoice",
        "send_email",
        "delete_file",
        "cancel_calendar_event",
        "update_crm_record",
        "write_file",
    }
    assert len(curriculum.tools["tool_call"]) == 13
    assert curriculum.tools["sequencing"][:2] == ("get_invoice", "convert_currency")
    assert curriculum.confirms == {"governance"}


def test_cli_writes_valid_jsonl(tmp_path: Path, agent20_dir: Path, agent20: Evalset) -> None:
    out = tmp_path / "cur.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "curriculum",
            "--families",
            "should_not_call=20,parallel=6,sequencing=4",
            "--toolset",
            str(agent20_dir),
            "--seed",
            "1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "no overlap" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert Counter(r["family"] for r in rows) == {
        "should_not_call": 20,
        "parallel": 6,
        "sequencing": 4,
    }
    assert all(r["messages"][-1]["role"] == "assistant" for r in rows)
    bad = CliRunner().invoke(app, ["curriculum", "--families", "nope=1", "--out", str(out)])
    assert bad.exit_code != 0
