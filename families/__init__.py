"""Behaviour families: one module each, registered by name.

Third-party packages add families through the entry-point group `loragate.families`
(each entry point names a `Family` subclass).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from loragate.common.errors import BadInput, unknown_name
from loragate.episodes.final_reply import (
    Setback,
    final_reply_problem,
    forbid_problems,
    mention_group_problems,
)
from loragate.families._base import CallSpec, Family, Sample, ScoringContext
from loragate.families._checks import (
    Call,
    SpecProblem,
    asks_to_confirm,
    is_destructive,
    spec_problems,
)
from loragate.families.clarify import (
    Clarify,
    asks_user,
    clarify_spec_problems,
    question_problem,
    unasked_call_problem,
)
from loragate.families.governance import Governance
from loragate.families.parallel import Parallel
from loragate.families.recovery import Recovery
from loragate.families.sequencing import Sequencing
from loragate.families.should_not_call import ShouldNotCall
from loragate.families.tool_call import ToolCallFamily

ENTRY_POINT_GROUP = "loragate.families"

BUILTIN_FAMILIES: tuple[type[Family[Any]], ...] = (
    ToolCallFamily,
    Parallel,
    Sequencing,
    Governance,
    Clarify,
    ShouldNotCall,
    Recovery,
)


@lru_cache(maxsize=1)
def get_families() -> Mapping[str, Family[Any]]:
    """All families by name: the built-ins, then plugins from the entry-point group."""
    found: dict[str, Family[Any]] = {cls.name: cls() for cls in BUILTIN_FAMILIES}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        if not (isinstance(loaded, type) and issubclass(loaded, Family)):
            raise BadInput(
                f"entry point {ep.name!r} in {ENTRY_POINT_GROUP} is not a Family subclass",
                fix="point the entry point at a loragate.families.Family subclass",
            )
        plugin: type[Family[Any]] = loaded
        if plugin.name in found:
            raise BadInput(
                f"plugin family {plugin.name!r} ({ep.value}) clashes with an existing family",
                fix="give the plugin family another name",
            )
        found[plugin.name] = plugin()
    return MappingProxyType(found)


def get_family(name: str) -> Family[Any]:
    """The family called `name`; a clear error with the known names otherwise."""
    fams = get_families()
    if name in fams:
        return fams[name]
    raise unknown_name("family", name, fams, "families")


__all__ = [
    "BUILTIN_FAMILIES",
    "ENTRY_POINT_GROUP",
    "Call",
    "CallSpec",
    "Family",
    "Sample",
    "ScoringContext",
    "Setback",
    "SpecProblem",
    "asks_to_confirm",
    "asks_user",
    "clarify_spec_problems",
    "final_reply_problem",
    "forbid_problems",
    "get_families",
    "get_family",
    "is_destructive",
    "mention_group_problems",
    "question_problem",
    "spec_problems",
    "unasked_call_problem",
]
