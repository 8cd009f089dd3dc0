"""Per-entry tools (evalset format 3): loading, rendering, scoring, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.records import GenerationRecord
from loragate.generate.config import RunConfig
from loragate.generate.pipeline import build_jobs
from loragate.generate.prompt import renderer_from_template
from loragate.score.scoring import Scorer
from tests._perentry_evalset import (
    ENTRIES,
    SEARCH,
    WEATHER_BY_CITY,
    WEATHER_BY_LOCATION,
    tool,
    write_perentry_evalset,
)

AGENT20 = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"


@pytest.fixture(scope="module")
def evalset(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load_evalset(write_perentry_evalset(tmp_path_factory.mktemp("ev") / "perentry"))


def call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def verdict(evalset: Evalset, entry_id: str, text: str) -> tuple[bool, str]:
    record = GenerationRecord(entry_id=entry_id, adapter="base", sample=0, text=text)
    v = Scorer(evalset).score(record).verdict
    return v.passed, v.reason.value


# -- loading ---------------------------------------------------------------------------


def test_each_entry_gets_its_own_tools(evalset: Evalset) -> None:
    loc, city = evalset.toolset_of("W-loc"), evalset.toolset_of("W-city")
    assert loc.names() == city.names() == ["get_current_weather"]
    assert loc.by_name["get_current_weather"].function.parameters["required"] == ["location"]
    assert city.by_name["get_current_weather"].function.parameters["required"] == ["city"]
    assert evalset.toolset_of("C-named").names() == ["convert_currency", "search_web"]
    assert evalset.toolset_of("C-all") is evalset.toolset


def test_same_tool_list_shares_one_toolset_and_definition(tmp_path: Path) -> None:
    entries = [
        {**ENTRIES[0], "id": f"W-{i}", "tools": [WEATHER_BY_LOCATION, "search_web"]}
        for i in range(3)
    ]
    entries.append({**ENTRIES[0], "id": "W-alone", "tools": [WEATHER_BY_LOCATION]})
    ev = load_evalset(write_perentry_evalset(tmp_path / "ev", entries=entries))
    first = ev.toolset_of("W-0")
    assert ev.toolset_of("W-1") is first and ev.toolset_of("W-2") is first
    alone = ev.toolset_of("W-alone")
    assert alone is not first
    # one definition, compiled once, shared by both lists
    assert alone.compiled("get_current_weather") is first.compiled("get_current_weather")
    assert first.compiled("search_web") is ev.toolset.compiled("search_web")


def test_format_2_evalsets_are_unchanged() -> None:
    agent20 = load_evalset(AGENT20)  # written without per-entry tools (format 5 now)
    assert agent20.manifest.format_version >= 2
    assert agent20.entry_toolsets == {}
    assert all(agent20.toolset_of(e.id) is agent20.toolset for e in agent20.entries)


def test_empty_tools_json_when_every_entry_brings_its_tools(tmp_path: Path) -> None:
    entries = [ENTRIES[0], ENTRIES[1], {**ENTRIES[3], "tools": [SEARCH]}]
    ev = load_evalset(write_perentry_evalset(tmp_path / "ev", entries=entries, tools=[]))
    assert len(ev.toolset) == 0
    assert ev.toolset_of("C-all").names() == ["search_web"]


def test_fault_variants_keep_the_entrys_tools(tmp_path: Path) -> None:
    recovery = {
        "id": "G-1",
        "family": "recovery",
        "tools": [SEARCH],
        "messages": [
            {"role": "user", "content": "Search the web for loragate."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search_web", "arguments": {"query": "loragate"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"hits": ["loragate.dev"]}'},
        ],
        "faults": ["error", "timeout"],
        "expect": {"acceptable_calls": [{"name": "search_web"}], "allow_report": True},
    }
    ev = load_evalset(write_perentry_evalset(tmp_path / "ev", entries=[recovery], tools=[]))
    assert [e.id for e in ev.entries] == ["G-1~error", "G-1~timeout"]
    assert all(ev.toolset_of(e.id).names() == ["search_web"] for e in ev.entries)


# -- rendering ---------------------------------------------------------------------------


@pytest.mark.hf
def test_each_prompt_shows_only_its_entrys_tools(evalset: Evalset) -> None:
    renderer = renderer_from_template("chatml-tools")
    jobs = build_jobs(
        evalset,
        renderer=renderer,
        config=RunConfig(),
        model_id="m",
        revision=None,
        adapters=[],
    )
    prompts = {j.entry_id: j.prompt for j in jobs}
    assert '"location"' in prompts["W-loc"] and '"city"' not in prompts["W-loc"]
    assert '"city"' in prompts["W-city"] and '"location"' not in prompts["W-city"]
    assert "convert_currency" not in prompts["W-loc"]
    assert "get_current_weather" not in prompts["C-all"]
    assert "convert_currency" in prompts["C-all"] and "search_web" in prompts["C-all"]
    # Same messages, other tools: other prompt, other hash, other cache key.
    by_id = {j.entry_id: j for j in jobs}
    assert by_id["W-loc"].prompt_sha256 != by_id["W-city"].prompt_sha256
    assert by_id["W-loc"].cache_key != by_id["W-city"].cache_key
    assert [t["function"]["name"] for t in by_id["C-named"].tools or []] == [
        "convert_currency",
        "search_web",
    ]


def test_server_requests_carry_the_entrys_tools_in_the_cache_key(evalset: Evalset) -> None:
    jobs = build_jobs(
        evalset, renderer=None, config=RunConfig(), model_id="m", revision=None, adapters=[]
    )
    by_id = {j.entry_id: j for j in jobs}
    assert by_id["W-loc"].messages == by_id["W-city"].messages
    assert by_id["W-loc"].prompt_sha256 != by_id["W-city"].prompt_sha256


# -- scoring -----------------------------------------------------------------------------


def test_a_call_is_judged_against_the_entrys_own_schema(evalset: Evalset) -> None:
    by_location = call("get_current_weather", {"location": "Bern"})
    by_city = call("get_current_weather", {"city": "Bern"})
    assert verdict(evalset, "W-loc", by_location) == (True, "ok")
    assert verdict(evalset, "W-city", by_location) == (False, "schema_invalid")
    assert verdict(evalset, "W-city", by_city) == (True, "ok")
    assert verdict(evalset, "W-loc", by_city) == (False, "schema_invalid")


def test_unknown_and_wrong_tool_follow_the_entrys_tools(evalset: Evalset) -> None:
    search = call("search_web", {"query": "Bern weather"})
    # search_web is in tools.json but not offered to W-loc: unknown there
    assert verdict(evalset, "W-loc", search) == (False, "unknown_tool")
    # ... and offered to C-named, which expects another tool: wrong there
    assert verdict(evalset, "C-named", search) == (False, "wrong_tool")
    weather = call("get_current_weather", {"location": "Bern"})
    # get_current_weather is no tool of tools.json: unknown to an entry offering all of it
    assert verdict(evalset, "C-all", weather) == (False, "unknown_tool")


def test_validate_describes_per_entry_tools(evalset: Evalset) -> None:
    from loragate.cli.validate import describe

    text = describe(evalset)
    assert "tools: 2 in tools.json, 2 defined in entries, 3 per-entry tool lists" in text


# -- bad input ---------------------------------------------------------------------------


def problems_of(root: Path) -> list[str]:
    with pytest.raises(BadInput) as exc:
        load_evalset(root)
    return [str(p) for p in exc.value.problems]


def test_unknown_tool_name_suggests_the_closest(tmp_path: Path) -> None:
    entries = [{**ENTRIES[2], "tools": ["convert_curency", "search_web"]}]
    [problem] = [
        p
        for p in problems_of(write_perentry_evalset(tmp_path / "ev", entries=entries))
        if "tools[0]" in p
    ]
    assert "entries.jsonl:1: tools[0]: unknown tool 'convert_curency'" in problem
    assert "did you mean 'convert_currency'?" in problem


def test_a_name_offered_twice_in_one_entry(tmp_path: Path) -> None:
    entries = [{**ENTRIES[0], "tools": [WEATHER_BY_LOCATION, WEATHER_BY_CITY]}]
    problems = problems_of(write_perentry_evalset(tmp_path / "ev", entries=entries))
    assert any(
        "entries.jsonl:1: tools[1].function.name: tool 'get_current_weather' is offered twice" in p
        and "(fix: offer each tool once" in p
        for p in problems
    ), problems
    named_twice = [{**ENTRIES[2], "tools": ["search_web", "convert_currency", "search_web"]}]
    problems = problems_of(write_perentry_evalset(tmp_path / "ev2", entries=named_twice))
    assert any("tools[2]: tool 'search_web' is offered twice" in p for p in problems), problems


def test_bad_inline_schema(tmp_path: Path) -> None:
    broken = tool("get_current_weather", {"location": {"type": "place"}}, ["location"])
    no_name = {"type": "function", "function": {"parameters": {"type": "object"}}}
    entries = [
        {**ENTRIES[0], "tools": [broken]},
        {**ENTRIES[3], "id": "X-2", "tools": [no_name]},
    ]
    problems = problems_of(write_perentry_evalset(tmp_path / "ev", entries=entries))
    assert any(
        "entries.jsonl:1: tools[0].function.parameters: not a valid JSON Schema" in p
        and "(fix: fix the JSON Schema)" in p
        for p in problems
    ), problems
    assert any("entries.jsonl:2: tools[0].function.name: Field required" in p for p in problems)


def test_hostile_inline_pattern_is_refused(tmp_path: Path) -> None:
    lookahead = tool("f", {"x": {"type": "string", "pattern": "(?=a)b"}}, [])
    entries = [{**ENTRIES[3], "tools": [lookahead]}]
    problems = problems_of(write_perentry_evalset(tmp_path / "ev", entries=entries))
    assert any("tools[0].function.parameters" in p and "linear time" in p for p in problems)


def test_empty_tools_json_and_an_entry_without_tools(tmp_path: Path) -> None:
    root = write_perentry_evalset(tmp_path / "ev", entries=ENTRIES[:2] + ENTRIES[3:], tools=[])
    problem = problems_of(root)[0]
    assert "entries.jsonl:3: tools: the entry offers no tools" in problem
    assert '(fix: list the tools it offers in `"tools": [...]`' in problem


def test_per_entry_tools_need_format_3(tmp_path: Path) -> None:
    root = write_perentry_evalset(tmp_path / "ev", format_version=2)
    problems = problems_of(root)
    assert any(
        "entries.jsonl:1: tools: per-entry `tools` need evalset format 3" in p
        and "set `format_version: 3`" in p
        for p in problems
    ), problems


def test_expectation_names_a_tool_the_entry_does_not_offer(tmp_path: Path) -> None:
    entries = [{**ENTRIES[2], "tools": ["search_web"]}]
    problems = problems_of(write_perentry_evalset(tmp_path / "ev", entries=entries))
    assert any("unknown tool 'convert_currency'" in p for p in problems), problems


def test_policy_tools_may_come_from_entries(tmp_path: Path) -> None:
    root = write_perentry_evalset(tmp_path / "ev")
    manifest = root / "evalset.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text + "policy:\n  read_only_tools: [get_current_weather]\n")
    assert load_evalset(root).policy.read_only_tools == ["get_current_weather"]
    manifest.write_text(text + "policy:\n  read_only_tools: [get_weather]\n")
    [problem] = problems_of(root)
    assert "policy names unknown tool 'get_weather'" in problem
    assert "did you mean 'get_current_weather'?" in problem
