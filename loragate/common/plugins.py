"""Plugins: the classes that other packages register through an entry-point group.

`loragate.families` (group `loragate.families`) and `loragate.runners` (group
`loragate.runners`) each read their group with `importlib.metadata.entry_points` and
hand the entry points here, which loads each and checks that it names a subclass of the
registry's base class.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from loragate.common.errors import BadInput


class EntryPointLike(Protocol):
    """What of `importlib.metadata.EntryPoint` a registry uses."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str: ...

    def load(self) -> Any: ...


def plugin_classes(
    found: Iterable[EntryPointLike], group: str, base: type, public_name: str
) -> Iterator[tuple[EntryPointLike, Any]]:
    """(entry point, class) of every entry point of `group` in `found`; `BadInput` for
    one that does not name a subclass of `base` (known to users as `public_name`)."""
    for ep in found:
        loaded = ep.load()
        if not (isinstance(loaded, type) and issubclass(loaded, base)):
            raise BadInput(
                f"entry point {ep.name!r} in {group} is not a {base.__name__} subclass",
                fix=f"point the entry point at a {public_name} subclass",
            )
        yield ep, loaded


def check_plugin_name(ep: EntryPointLike, name: str, found: Iterable[str], what: str) -> None:
    """`BadInput` when the plugin `ep` loaded calls itself other than its entry point, or
    its name is taken already (`what`: "backend", "reward kind", ...)."""
    taken = name in found
    if name != ep.name or taken:
        why = "is registered twice" if taken else f"is named {ep.name!r}"
        raise BadInput(
            f"{what} {name!r} ({ep.value}) {why}",
            fix=f"give the entry point the {what}'s own name, one {what} a name",
        )


__all__ = ["EntryPointLike", "check_plugin_name", "plugin_classes"]
