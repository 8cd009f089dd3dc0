"""Reading an evalset's `curriculum.yaml`, checking it, and what it needs of a toolset.

`load_curriculum` finds the file inside the evalset folder it is given (never relative
to the working directory), validates it with `CurriculumFile` (unknown keys refused),
then checks what pydantic cannot: families are known, template names are unique, every
placeholder names something bound before it, fragments exist and do not use
themselves. Every problem names the file, the field and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.common.loading import load_yaml_model
from loragate.families import get_families
from loragate.training.curriculum_spec import (
    CONFIRMATION_TOOL,
    CURRICULUM_EXAMPLE,
    CURRICULUM_FILE,
    CallsTurn,
    CurriculumFile,
    Each,
    OneOf,
    Pick,
    SampleStep,
    Say,
    Scope,
    Step,
    Template,
    ToolName,
    child_steps,
    json_texts,
    message_texts,
    step_texts,
)
from loragate.training.curriculum_text import TemplateError, placeholders, whole

if TYPE_CHECKING:
    from loragate.formats.evalset import Policy


@dataclass(frozen=True)
class Curriculum:
    """A checked curriculum file and the tools each family needs."""

    path: Path
    spec: CurriculumFile
    tools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Family -> tools its templates call or name, first use first."""
    confirms: frozenset[str] = frozenset()
    """Families whose templates use `{confirmation_tool}`."""

    @property
    def families(self) -> tuple[str, ...]:
        """The families it can generate, in the file's order."""
        return tuple(self.spec.families)

    def templates(self, family: str) -> list[Template]:
        return self.spec.families[family]

    @property
    def related(self) -> dict[str, tuple[str, ...]]:
        """Template name -> the tools its examples are about without calling them."""
        return {
            t.name: tuple(t.about)
            for templates in self.spec.families.values()
            for t in templates
            if t.about
        }

    def scope(self, policy: Policy | None) -> Scope:
        """The names every template starts with: the tables and the built-ins."""
        scope: Scope = dict(self.spec.tables)
        if policy is not None and policy.confirmation_tool:
            scope[CONFIRMATION_TOOL] = policy.confirmation_tool
        return scope


def curriculum_path(evalset: Path) -> Path:
    """Where the curriculum of the evalset folder `evalset` is (for a bare tools file:
    the folder holding it)."""
    return (evalset.parent if evalset.is_file() else evalset) / CURRICULUM_FILE


def load_curriculum(evalset: Path) -> Curriculum:
    """The checked curriculum of the evalset folder `evalset`; `BadInput` when it has
    none or it is invalid."""
    path = curriculum_path(evalset)
    if not path.is_file():
        raise BadInput(
            f"evalset {evalset} has no {CURRICULUM_FILE}; write one like {CURRICULUM_EXAMPLE}",
            [
                Problem(
                    str(path),
                    "no curriculum file",
                    fix=f"write {path} (see {CURRICULUM_EXAMPLE}), or pass an evalset "
                    "folder that has one",
                )
            ],
        )
    spec = load_yaml_model(
        path,
        CurriculumFile,
        what="curriculum",
        example=CURRICULUM_EXAMPLE,
        unknown_key_fix=f"see the step and message kinds in {CURRICULUM_EXAMPLE}",
    )
    problems = _Checker(spec, str(path)).problems()
    if problems:
        raise BadInput(f"{path}: invalid curriculum ({len(problems)} problem(s))", problems)
    tools: dict[str, tuple[str, ...]] = {}
    confirms: set[str] = set()
    for family, templates in spec.families.items():
        names, uses_confirmation = _family_tools(spec, templates)
        tools[family] = names
        if uses_confirmation:
            confirms.add(family)
    return Curriculum(path, spec, tools, frozenset(confirms))


def _say_table(step: Step, spec: CurriculumFile) -> list[str]:
    """The templates of a table a `say` step draws from (they are filled in too)."""
    if not isinstance(step, Say) or not isinstance(step.say, str):
        return []
    ref = whole(step.say)
    rows = spec.tables.get(ref.root, []) if ref is not None and len(ref.path) == 1 else []
    return [r for r in rows if isinstance(r, str)]


def _all_steps(steps: Iterable[Step], spec: CurriculumFile) -> Iterable[Step]:
    """Every step, depth first, fragments expanded (the file is checked: no cycles)."""
    for step in steps:
        yield step
        for _, inner in child_steps(step, spec.fragments):
            yield from _all_steps(inner, spec)


def _uses_confirmation(texts: Iterable[str]) -> bool:
    return any(p.root == CONFIRMATION_TOOL for t in texts for p in placeholders(t))


def _family_tools(spec: CurriculumFile, templates: list[Template]) -> tuple[tuple[str, ...], bool]:
    """(tools the templates call or name, whether they use `{confirmation_tool}`)."""
    names: list[str] = []
    confirms = False
    for template in templates:
        for step in _all_steps(template.steps, spec):
            if isinstance(step, ToolName):
                names.append(step.tool)
            confirms |= _uses_confirmation([*step_texts(step), *_say_table(step, spec)])
        for message in template.messages:
            if isinstance(message, CallsTurn):
                names += [c.tool for c in message.calls if whole(c.tool) is None]
            confirms |= _uses_confirmation(message_texts(message))
    return tuple(dict.fromkeys(names)), confirms


class _Checker:
    """The checks pydantic cannot make, collected as problems."""

    def __init__(self, spec: CurriculumFile, file: str) -> None:
        self.spec = spec
        self.file = file
        self.found: list[Problem] = []

    def problem(self, where: str, message: str, fix: str) -> None:
        self.found.append(Problem(self.file, message, field=where, fix=fix))

    def problems(self) -> list[Problem]:
        known = list(get_families())
        if CONFIRMATION_TOOL in self.spec.tables:
            self.problem(
                f"tables.{CONFIRMATION_TOOL}",
                f"`{CONFIRMATION_TOOL}` is built in (the evalset policy's)",
                fix="rename the table",
            )
        seen: dict[str, str] = {}
        for family, templates in self.spec.families.items():
            if family not in known:
                self.problem(
                    f"families.{family}",
                    f"unknown family `{family}`",
                    fix=unknown_name_fix(family, known, "families"),
                )
            if not templates:
                self.problem(
                    f"families.{family}",
                    "no templates",
                    fix=f"add a template under families.{family}, or remove the family",
                )
            for i, template in enumerate(templates):
                where = f"families.{family}.{i}"
                if template.name in seen:
                    self.problem(
                        f"{where}.name",
                        f"template name `{template.name}` is also used at {seen[template.name]}",
                        fix="give every template its own name (it becomes the examples' tag)",
                    )
                seen.setdefault(template.name, where)
                self.template(template, where)
        return list(dict.fromkeys(self.found))

    def template(self, template: Template, where: str) -> None:
        bound = self.steps(template.steps, self.initial(), f"{where}.steps", ())
        for j, message in enumerate(template.messages):
            at = f"{where}.messages.{j}"
            if not isinstance(message, CallsTurn):
                self.texts(message_texts(message), bound, at)
                continue
            for k, call in enumerate(message.calls):
                self.texts((call.each or {}).values(), bound, f"{at}.calls.{k}.each")
                inner = bound | set(call.each or {})
                self.texts([call.tool, *json_texts(call.args)], inner, f"{at}.calls.{k}")
                if whole(call.tool) is None and not call.tool.isidentifier():
                    self.problem(
                        f"{at}.calls.{k}.tool",
                        f"`{call.tool}` is neither a tool name nor one `{{name}}`",
                        fix="write the tool's name, or `{name}` of a `tool` step",
                    )

    def initial(self) -> set[str]:
        return {*self.spec.tables, CONFIRMATION_TOOL}

    def texts(self, texts: Iterable[str], bound: set[str], where: str) -> None:
        for text in texts:
            try:
                found = placeholders(text)
            except TemplateError as exc:
                self.problem(where, str(exc), fix="write placeholders as `{name}`")
                continue
            for p in found:
                if p.root not in bound:
                    self.problem(
                        where,
                        f"`{{{p.root}}}` is not defined at this point",
                        fix=f"bind it in an earlier step (`let: {p.root}`) or add a table "
                        "of that name",
                    )

    def steps(
        self, steps: list[Step], bound: set[str], where: str, using: tuple[str, ...]
    ) -> set[str]:
        """Check `steps` with the names in `bound`; the names bound after them (a name
        bound on any branch counts)."""
        bound = set(bound)
        for i, step in enumerate(steps):
            at = f"{where}.{i}"
            self.texts([*step_texts(step), *_say_table(step, self.spec)], bound, at)
            self.source(step, at)
            if isinstance(step, Each):
                inner = bound | set(step.each or {})
                self.texts([*(step.each or {}).values()], bound, f"{at}.each")
                if isinstance(step.times, str):
                    self.texts([step.times], bound, f"{at}.times")
                inner = self.steps(step.steps, inner, f"{at}.steps", using)
                self.texts(json_texts(step.value), inner, f"{at}.value")
                bound.add(step.let)
            elif isinstance(step, OneOf) and isinstance(step.one_of, str):
                bound |= self.fragment(step.one_of, bound, at, using)
            elif hasattr(step, "let"):
                bound.add(step.let)
            else:
                after = set(bound)
                for suffix, inner_steps in child_steps(step, self.spec.fragments):
                    after |= self.steps(inner_steps, bound, f"{at}.{suffix}", using)
                bound = after
        return bound

    def fragment(self, name: str, bound: set[str], where: str, using: tuple[str, ...]) -> set[str]:
        if name not in self.spec.fragments:
            self.problem(
                f"{where}.one_of",
                f"no fragment `{name}`",
                fix=f"define it under `fragments` (defined: {', '.join(self.spec.fragments)})",
            )
            return set()
        if name in using:
            self.problem(
                f"fragments.{name}",
                f"fragment `{name}` uses itself ({' -> '.join((*using, name))})",
                fix="break the cycle",
            )
            return set()
        out: set[str] = set()
        for i, alternative in enumerate(self.spec.fragments[name]):
            out |= self.steps(alternative, bound, f"fragments.{name}.{i}", (*using, name))
        return out

    def source(self, step: Step, where: str) -> None:
        """A list a step draws from, when given by name, is exactly one `{name}`."""
        source: Any = None
        if isinstance(step, Pick):
            source = step.pick
        elif isinstance(step, SampleStep):
            source = step.sample
        elif isinstance(step, Say):
            source = step.say
        if isinstance(source, str) and whole(source) is None:
            self.problem(
                where,
                f"`{source}` must be exactly one `{{name}}` of a list, or a list",
                fix="write `{table}` or an inline list",
            )


__all__ = ["Curriculum", "curriculum_path", "load_curriculum"]
