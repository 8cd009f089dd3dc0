"""BFCL's own checker, and mutated model outputs of BFCL entries, for the agreement
test and `benchmarks/bench_bfcl.py`.

`bfcl_eval.eval_checker.ast_eval.ast_checker` is imported from the installed wheel
unchanged. Its module imports `bfcl_eval.constants.model_config`, the registry of
every API and local model handler (openai, anthropic, vllm, ...), only to ask whether
a model spells dotted function names with underscores; that one module is replaced by
a stub saying "no" (`underscore_to_dot=False`, what local prompting models use).
"""

from __future__ import annotations

import copy
import json
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from loragate.evalset.bfcl import CATEGORY_FAMILY


@dataclass(frozen=True)
class _NoDots:
    underscore_to_dot: bool = False


class _AnyModel(dict[str, _NoDots]):
    def __missing__(self, key: str) -> _NoDots:
        return _NoDots()


@cache
def ast_checker() -> Callable[..., dict[str, Any]]:
    """BFCL's `ast_checker` from the installed `bfcl-eval`."""
    name = "bfcl_eval.constants.model_config"
    if name not in sys.modules:
        stub = types.ModuleType(name)
        stub.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
        sys.modules[name] = stub
    from bfcl_eval.eval_checker.ast_eval import ast_checker as module

    return module.ast_checker  # type: ignore[no-any-return]


@cache
def _python() -> Any:
    from bfcl_eval.constants.enums import Language

    return Language.PYTHON


Calls = list[tuple[str, dict[str, Any]]]


def bfcl_passes(
    raw: dict[str, Any], answer: dict[str, Any] | None, category: str, calls: Calls
) -> bool:
    """BFCL's verdict on decoded calls: `ast_checker` for call categories; for
    irrelevance, BFCL's rule that any decoded call fails (`is_empty_output`) - a reply
    it cannot decode as calls (prose, a broken call) passes."""
    if CATEGORY_FAMILY[category] == "abstain":
        return not calls
    if not calls:
        return False  # BFCL: decoding no call at all fails ("Wrong number of functions")
    result = ast_checker()(
        raw["function"],
        [{name: args} for name, args in calls],
        (answer or {})["ground_truth"],
        _python(),
        category,
        "loragate-agreement",
    )
    return bool(result["valid"])


def tool_call_text(calls: Calls) -> str:
    """The calls as `<tool_call>` blocks, one per call (what loragate parses)."""
    return "\n".join(
        "<tool_call>\n"
        + json.dumps({"name": n, "arguments": a}, ensure_ascii=False)
        + "\n</tool_call>"
        for n, a in calls
    )


# -- mutations --------------------------------------------------------------------

ANSWER_TEXT = (
    "None of the available functions fits this request, so here is a direct answer: "
    "it depends on the details you give; tell me more and I will work it out."
)
REFUSAL_TEXT = "I'm sorry, but I can't help with that."
NO_TOOL_TEXT = "I can't do that with the tools I have."
"""The honest abstention: every irrelevance entry passes it under both semantics."""
INVENTED_TEXT = "Bitcoin is 43,210 USD."
"""An invented answer: BFCL passes it (no call); loragate's abstain rule fails it."""
BROKEN_CALL_TEXT = '<tool_call>\n{"name": "lookup", "arguments": {"q": \n</tool_call>'
"""A call attempt that cannot be read: BFCL decodes no call and passes it."""


def first_value(possible: Any) -> tuple[bool, Any]:
    """(given, value): the first possibility that is not `""` (dict answers resolved
    key by key); `(False, None)` when the parameter is best left out."""
    options = possible if isinstance(possible, list) else [possible]
    for option in options:
        if option == "":
            continue
        return True, _resolve(option)
    return False, None


def _resolve(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            given, inner = first_value(v)
            if given:
                out[k] = inner
        return out
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


def correct_calls(answer: dict[str, Any]) -> Calls:
    """BFCL's ground truth as calls, each argument its first possibility."""
    calls: Calls = []
    for call in answer["ground_truth"]:
        for name, params in call.items():
            args = {}
            for param, possible in params.items():
                given, value = first_value(possible)
                if given:
                    args[param] = value
            calls.append((name, args))
    return calls


def _other_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 12345
    return "12345"


def _other_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 7.5
    if isinstance(value, str):
        return value + " Zq"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["Zq"]
    return {"zq": 1}


def _recase(value: Any) -> Any:
    if isinstance(value, str):
        return value.swapcase()
    if isinstance(value, list):
        return [_recase(v) for v in value]
    if isinstance(value, dict):
        return {k: _recase(v) for k, v in value.items()}
    return value


def _int_float(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [_int_float(v) for v in value]
    if isinstance(value, dict):
        return {k: _int_float(v) for k, v in value.items()}
    return value


def _first_arg(calls: Calls) -> tuple[int, str] | None:
    for i, (_, args) in enumerate(calls):
        for k in args:
            return i, k
    return None


def _changed(calls: Calls, change: Callable[[Any], Any]) -> Calls | None:
    """Every call with `change` applied to each argument; None when nothing changed."""
    out = [(n, {k: change(v) for k, v in a.items()}) for n, a in calls]
    return out if json.dumps(out) != json.dumps(calls) else None  # 5.0 == 5 in Python


def _with_arg(calls: Calls, change: Callable[[Any], Any]) -> Calls | None:
    where = _first_arg(calls)
    if where is None:
        return None
    out = copy.deepcopy(calls)
    i, k = where
    out[i][1][k] = change(out[i][1][k])
    return out


def _without_arg(calls: Calls) -> Calls | None:
    where = _first_arg(calls)
    if where is None:
        return None
    out = copy.deepcopy(calls)
    del out[where[0]][1][where[1]]
    return out


def mutations(
    raw: dict[str, Any], answer: dict[str, Any] | None, category: str
) -> Iterator[tuple[str, Calls | str]]:
    """(kind, calls or answer text) for every mutation that applies to the entry."""
    if CATEGORY_FAMILY[category] == "abstain":
        yield "answer", ANSWER_TEXT
        yield "no_tool", NO_TOOL_TEXT
        yield "refusal", REFUSAL_TEXT
        yield "invented", INVENTED_TEXT
        yield "broken_call", BROKEN_CALL_TEXT
        functions = raw["function"]
        if functions:
            function = functions[0]
            required = function.get("parameters", {}).get("required", [])
            call = (function["name"], dict.fromkeys(required, "x"))
            yield "call", [call]
            yield "bare_call", json.dumps({"name": call[0], "arguments": call[1]})
        return
    assert answer is not None
    good = correct_calls(answer)
    yield "correct", good
    yield "no_call", ANSWER_TEXT
    yield "wrong_name", [(good[0][0] + "_v2", good[0][1]), *good[1:]]
    yield "duplicated_call", [*good, good[0]]
    variants: dict[str, Calls | None] = {
        "missing_arg": _without_arg(good),
        "extra_arg": [(good[0][0], {**good[0][1], "zq_extra": 1}), *good[1:]],
        "wrong_type": _with_arg(good, _other_type),
        "wrong_value": _with_arg(good, _other_value),
        "case_change": _changed(good, _recase),
        "int_as_float": _changed(good, _int_float),
        "reordered": list(reversed(good)) if len(good) > 1 else None,
    }
    for kind, calls in variants.items():
        if calls is not None:
            yield kind, calls
