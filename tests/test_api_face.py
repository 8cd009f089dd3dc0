"""The face of `loragate` is the face only (issue 44): every type that a public name's
signature or fields use is exported beside it, and `dir(loragate)` lists `__all__` and
nothing else (no `TYPE_CHECKING`, `annotations` or `lazy_face`)."""

from __future__ import annotations

import inspect
import sys
import types
import typing
from typing import Any

import loragate

ROOTS = [
    "RunOutcome",
    "RunHooks",
    "NoHooks",
    "ScoredRun",
    "LoadedRun",
    "Summary",
    "ResultRecord",
    "RunConfig",
    "Comparison",
    "GatePolicy",
    "GateResult",
]
"""The run and result types the face offered before: with the public functions, the
signatures whose types must be exported (one level down: a type exported because a
signature names it, such as `RunPlan`, need not bring its own fields' types along)."""
NAMED_IN_THE_ISSUE = [
    "ParseMode",
    "ServingStack",
    "ScorerError",
    "Verdict",
    "ReasonCode",
    "RuleResult",
    "FamilyRow",
    "AdapterSummary",
]


def test_dir_is_all_and_nothing_else() -> None:
    assert dir(loragate) == sorted(loragate.__all__)
    assert not {"TYPE_CHECKING", "annotations", "lazy_face"} & set(vars(loragate))


def _hints(value: Any) -> dict[str, Any]:
    """The annotations of a public function, or of a public class's fields and of the
    methods loragate defines on it."""
    if isinstance(value, types.FunctionType):
        return typing.get_type_hints(value)
    hints = {k: v for k, v in typing.get_type_hints(value).items() if not k.startswith("_")}
    for name, method in inspect.getmembers(value, inspect.isfunction):
        if not name.startswith("_") and method.__qualname__.startswith(value.__name__ + "."):
            hints |= {f"{name}.{k}": t for k, t in typing.get_type_hints(method).items()}
    return hints


def _aliases() -> dict[Any, str]:
    """Every capitalised `Literal` alias loragate defines (`ParseMode`) -> its name."""
    out: dict[Any, str] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("loragate"):
            for attr, value in vars(module).items():
                if attr[:1].isupper() and typing.get_origin(value) is typing.Literal:
                    out.setdefault(value, attr)
    return out


def _used(hint: Any, aliases: dict[Any, str], out: set[str]) -> None:
    if isinstance(hint, type):
        if hint.__module__.startswith("loragate"):
            out.add(hint.__name__)
        return
    if typing.get_origin(hint) is typing.Literal:
        if hint in aliases:
            out.add(aliases[hint])
        return
    for arg in typing.get_args(hint):
        _used(arg, aliases, out)


def test_every_type_in_a_public_signature_is_exported() -> None:
    public = {n: getattr(loragate, n) for n in loragate.__all__ if n != "__version__"}
    roots = {n: v for n, v in public.items() if isinstance(v, types.FunctionType) or n in ROOTS}
    assert len(roots) == len(ROOTS) + 10, sorted(roots)
    hints = {f"{n}.{k}": t for n, v in roots.items() for k, t in _hints(v).items()}
    aliases = _aliases()
    missing: dict[str, list[str]] = {}
    for where, hint in hints.items():
        used: set[str] = set()
        _used(hint, aliases, used)
        for name in used - set(loragate.__all__):
            missing.setdefault(name, []).append(where)
    assert not missing, sorted(missing.items())
    assert set(NAMED_IN_THE_ISSUE) <= set(loragate.__all__)
