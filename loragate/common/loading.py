"""One way to read a YAML file into a pydantic model, with command-line overrides.

Run configs, training recipes and gate policies all go through `load_yaml_model`: the
file is found where the user said or among the shipped ones (`loragate.common.resources`),
read safely (`loragate.common.files.read_yaml`), dotted overrides are merged on top, and
every validation problem names the file, the field and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.files import read_yaml
from loragate.common.resources import user_or_bundled

M = TypeVar("M", bound=BaseModel)


def apply_overrides(raw: dict[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """Put dotted overrides (`{"sampling.samples": 4}`) into `raw` (changed in place).
    `None` values are skipped (an option not given leaves the file's value); a mapping
    value is merged into the mapping it overrides, any other value replaces it."""
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        node = raw
        *parents, leaf = dotted.split(".")
        for p in parents:
            child = node.get(p)
            if not isinstance(child, dict):
                child = {}
                node[p] = child
            node = child
        if isinstance(value, dict) and isinstance(node.get(leaf), dict):
            node[leaf] = {**node[leaf], **value}
        else:
            node[leaf] = value
    return raw


def load_yaml_model(
    path: str | Path | None,
    model: type[M],
    *,
    what: str,
    example: str,
    overrides: Mapping[str, Any] | None = None,
    unknown_key_fix: str | None = None,
) -> M:
    """`model` validated from the YAML file `path` (None: from the overrides alone).

    `what` names the kind of file in messages ("run config"); `example` is the shipped
    file to point users at (`configs/default.yaml`).
    """
    raw: dict[str, Any] = {}
    source = "(defaults)"
    if path is not None:
        found = user_or_bundled(path)
        source = str(found)
        value = read_yaml(found, what)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise BadInput(
                f"{source}: the top level of a {what} must be a mapping of keys",
                [Problem(source, "not a mapping", fix=f"see {example}")],
            )
        raw = value
    apply_overrides(raw, overrides)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(
            f"{source}: invalid {what}",
            validation_problems(
                exc,
                source,
                fix=f"correct the value (see {example})",
                unknown_key_fix=unknown_key_fix or f"see {example} for the accepted keys",
            ),
        ) from None
