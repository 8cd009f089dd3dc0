"""Synthetic training examples per behaviour family, from an evalset's curriculum file.

The templates, their slot tables and prose live beside the evalset they serve
(`evalsets/<name>/curriculum.yaml`, read by `loragate.training.curriculum_load`); this
module is the generic generator. For agent20 they cover seven families:

- `tool_call`: one request, one schema-valid call;
- `parallel`: independent requests answered by every call in one turn;
- `sequencing`: a dependent chain - only the first step now, or the next step with the
  value threaded from the tool result in the history;
- `governance`: a destructive request -> the confirmation tool first; an approval in
  the history -> the action; a denial -> no action, said plainly;
- `clarify`: a required value is missing -> a question, no call;
- `should_not_call`: settled professional knowledge -> a direct answer, no call;
- `abstain`: a request no tool can serve and nobody can answer from knowledge (a
  taxi, a live sensor reading, another company's decision) -> an honest decline that
  says why and where it can be done, no call, nothing invented.

`generate_curriculum` is deterministic for a seed (each family draws from its own
`random.Random` seeded by a string, which Python hashes the same way in every process)
and validates every example against the toolset's schemas and the governance policy
before it is emitted; an example that fails is a template bug or a toolset that does
not match the templates, and raises `BadInput` instead of being emitted.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.training.curriculum_load import Curriculum, load_curriculum
from loragate.training.curriculum_spec import CONFIRMATION_TOOL
from loragate.training.curriculum_text import TemplateError
from loragate.training.example import TrainingExample, example_problems

if TYPE_CHECKING:
    from loragate.calls.tools import Toolset
    from loragate.formats.evalset import Policy

MAX_DUPLICATE_STREAK = 2000
"""Consecutive draws without a new distinct example after which a family is exhausted."""


def parse_family_counts(spec: str, known: Sequence[str]) -> dict[str, int]:
    """`"should_not_call=400,parallel=150"` -> `{"should_not_call": 400, "parallel": 150}`.

    `BadInput` for families not in `known`, missing or negative counts, or repeats.
    """
    out: dict[str, int] = {}
    problems: list[Problem] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep:
            problems.append(Problem("--families", f"`{part}` has no count", fix="write FAMILY=N"))
            continue
        if name not in known:
            problems.append(
                Problem(
                    "--families",
                    f"unknown family `{name}`",
                    fix=unknown_name_fix(name, known, "families"),
                )
            )
            continue
        try:
            count = int(value)
        except ValueError:
            count = -1
        if count < 0:
            problems.append(
                Problem("--families", f"`{part}`: the count must be a whole number >= 0")
            )
            continue
        if name in out:
            problems.append(Problem("--families", f"family `{name}` given twice"))
            continue
        out[name] = count
    if not out and not problems:
        problems.append(Problem("--families", "no family given", fix="e.g. should_not_call=400"))
    if problems:
        raise BadInput("invalid --families", problems)
    return out


def _check_toolset(
    families: dict[str, int], curriculum: Curriculum, toolset: Toolset, policy: Policy | None
) -> None:
    problems: list[Problem] = []
    file = str(curriculum.path)
    for family, n in families.items():
        if n == 0:
            continue
        missing = [t for t in curriculum.tools[family] if t not in toolset]
        if missing:
            problems.append(
                Problem(
                    file,
                    f"family `{family}` calls tools the toolset lacks: {', '.join(missing)}",
                    field=f"families.{family}",
                    fix="use the evalset this curriculum was written for, or drop this family",
                )
            )
        if family in curriculum.confirms:
            confirmation = policy.confirmation_tool if policy is not None else None
            if not confirmation:
                problems.append(
                    Problem(
                        "evalset.yaml",
                        f"family `{family}` templates call `{{{CONFIRMATION_TOOL}}}` and the "
                        "evalset policy names none",
                        field="policy.confirmation_tool",
                        fix="set `policy.confirmation_tool` in evalset.yaml",
                    )
                )
            elif confirmation not in toolset:
                problems.append(
                    Problem(
                        "evalset.yaml",
                        f"the confirmation tool `{confirmation}` is not in the toolset",
                        field="policy.confirmation_tool",
                        fix="name a tool of tools.json",
                    )
                )
    if problems:
        raise BadInput("the curriculum templates do not fit this toolset", problems)


def generate_family(
    curriculum: Curriculum,
    family: str,
    n: int,
    toolset: Toolset,
    policy: Policy | None,
    seed: int = 0,
) -> list[TrainingExample]:
    """`n` distinct, validated examples of one family (deterministic for `seed`).

    `BadInput` when the family's templates cannot produce `n` distinct examples, or an
    example fails validation against `toolset` / `policy`.
    """
    templates = curriculum.templates(family)
    fragments = curriculum.spec.fragments
    scope = curriculum.scope(policy)
    rng = random.Random(f"loragate-curriculum:{seed}:{family}")
    out: list[TrainingExample] = []
    seen: set[str] = set()
    attempts = 0
    streak = 0
    while len(out) < n:
        attempts += 1
        if streak > MAX_DUPLICATE_STREAK:
            raise BadInput(
                f"family `{family}`: the templates produced only {len(out)} distinct examples "
                f"of the {n} asked for",
                [
                    Problem(
                        "--families",
                        f"{family}={n} is more than the templates can vary",
                        fix=f"ask for at most {len(out)}",
                    )
                ],
            )
        # Round-robin over templates keeps every template represented; rng varies the slots.
        template = templates[len(out) % len(templates)] if attempts <= n else rng.choice(templates)
        try:
            messages = template.draw(rng, scope, fragments)
        except TemplateError as exc:
            raise BadInput(
                f"curriculum template {template.name} cannot be written",
                [
                    Problem(
                        str(curriculum.path),
                        str(exc),
                        field=f"families.{family}.{templates.index(template)}",
                        fix="correct the template",
                    )
                ],
            ) from None
        key = json.dumps(messages, sort_keys=True, ensure_ascii=False)
        if key in seen:
            streak += 1
            continue
        streak = 0
        seen.add(key)
        example = TrainingExample(
            id=f"{family}-{len(out) + 1:04d}",
            messages=messages,
            source="curriculum",
            family=family,
            tags=(template.name,),
        )
        problems = example_problems(example, toolset, policy)
        if problems:
            raise BadInput(
                f"curriculum template {template.name} produced an invalid example for this toolset",
                [Problem("curriculum", p, field=example.id) for p in problems],
            )
        out.append(example)
    return out


def generate_curriculum(
    families: dict[str, int],
    curriculum: Curriculum,
    toolset: Toolset,
    policy: Policy | None,
    seed: int = 0,
) -> list[TrainingExample]:
    """Examples for every family in `families` (family -> count), in the curriculum
    file's family order."""
    unknown = [f for f in families if f not in curriculum.families]
    if unknown:
        raise BadInput(
            f"unknown curriculum families: {', '.join(unknown)}; "
            f"{curriculum.path} has: {', '.join(curriculum.families)}",
            fix="use families from the list",
        )
    _check_toolset(families, curriculum, toolset, policy)
    out: list[TrainingExample] = []
    for family in curriculum.families:
        if families.get(family):
            out += generate_family(curriculum, family, families[family], toolset, policy, seed)
    return out


__all__ = [
    "Curriculum",
    "generate_curriculum",
    "generate_family",
    "load_curriculum",
    "parse_family_counts",
]
