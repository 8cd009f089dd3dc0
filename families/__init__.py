"""Behaviour families: one module each, registered by name.

The package exports the contract (`Family`, `Sample`, `ScoringContext`, `CallSpec`) and
the registry (`get_families`, `get_family`, and `family_label` / `family_order` for
whatever shows families) only; what the families share with the rest
of loragate lives below them (`loragate.calls.checks`, `loragate.judge`). Third-party
packages add families through the entry-point group `loragate.families` (each entry
point names a `Family` subclass).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from loragate.common.errors import BadInput, unknown_name
from loragate.common.plugins import plugin_classes
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families.abstain import Abstain
from loragate.families.clarify import Clarify
from loragate.families.governance import Governance
from loragate.families.parallel import Parallel
from loragate.families.recovery import Recovery
from loragate.families.sequencing import Sequencing
from loragate.families.should_not_call import ShouldNotCall
from loragate.families.tool_call import ToolCallFamily
from loragate.formats.evalset import CallSpec

ENTRY_POINT_GROUP = "loragate.families"

BUILTIN_FAMILIES: tuple[type[Family[Any]], ...] = (
    ToolCallFamily,
    Parallel,
    Sequencing,
    Governance,
    Clarify,
    ShouldNotCall,
    Recovery,
    Abstain,
)


@lru_cache(maxsize=1)
def get_families() -> Mapping[str, Family[Any]]:
    """All families by name: the built-ins, then plugins from the entry-point group."""
    found: dict[str, Family[Any]] = {cls.name: cls() for cls in BUILTIN_FAMILIES}
    eps = entry_points(group=ENTRY_POINT_GROUP)
    for ep, cls in plugin_classes(eps, ENTRY_POINT_GROUP, Family, "loragate.families.Family"):
        plugin: type[Family[Any]] = cls
        if plugin.name in found:
            raise BadInput(
                f"plugin family {plugin.name!r} ({ep.value}) clashes with an existing family",
                fix="give the plugin family another name",
            )
        found[plugin.name] = plugin()
    return MappingProxyType(found)


def family_label(name: str) -> tuple[str, str]:
    """(letter, name) of a family, for tables and charts; `?` for a family this
    installation does not know."""
    fam = get_families().get(name)
    return (fam.letter if fam is not None else "?", name)


def family_order(names: Iterable[str]) -> list[str]:
    """`names` once each, in registry order (the built-ins A..H, then plugins), names
    the registry does not know last, sorted."""
    rank = {name: i for i, name in enumerate(get_families())}
    return sorted(set(names), key=lambda n: (rank.get(n, len(rank)), n))


def get_family(name: str) -> Family[Any]:
    """The family called `name`; a clear error with the known names otherwise."""
    fams = get_families()
    if name in fams:
        return fams[name]
    raise unknown_name("family", name, fams, "families")


__all__ = [
    "BUILTIN_FAMILIES",
    "ENTRY_POINT_GROUP",
    "CallSpec",
    "Family",
    "Sample",
    "ScoringContext",
    "family_label",
    "family_order",
    "get_families",
    "get_family",
]
