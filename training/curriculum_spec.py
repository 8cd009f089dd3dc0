"""The curriculum file of an evalset (`curriculum.yaml`): tables, steps and templates.

A template draws values in `steps`, in order, from one `random.Random`, then writes
`messages` with them (placeholders: `loragate.training.curriculum_text`). Every step
binds its result to the name in `let`, except `chance` and `one_of`, which run other
steps. The step kinds:

- `pick`: one item of a list (`random.choice`), as is; `first: N` draws among the
  first N only;
- `say`: one of several text templates (`random.choice`), filled in;
- `value`: a text, number, list or mapping filled in (no draw);
- `randint: [lo, hi]`: a whole number, both ends included;
- `sample` with `k`: k distinct items of a list (`random.sample`);
- `number` with `separators`: a whole number written with one drawn thousands
  separator (`""` writes it without one);
- `sum`: the sum of numbers;
- `tool`: a tool name; the evalset must define it (also when no message calls it);
- `each` (lists zipped item by item) or `times` (a count), with `steps` and `value`:
  runs the steps once per item in a scope of its own and collects `value`;
- `chance: p` with `then` / `else`: `then` runs when `random.random() < p`;
- `one_of`: runs one of several step lists (inline, or a fragment's name).

Messages: `user` and `answer` (text), `calls` (tool calls in one assistant turn; ids
`call_1`, `call_2`, ... in conversation order), `result` (the tool result of the latest
call; a mapping is written as JSON). The last message is the turn to learn.

A template's `about` lists tools its examples concern without calling them (a clarify
question's tool): training with `tools: called` shows them in the prompt.

Names in scope: the tables, `confirmation_tool` (the evalset policy's), and what
earlier steps bound. The tools a family needs are derived from the file: every tool a
call names, every `tool` step, and the policy's confirmation tool when a template uses
`{confirmation_tool}`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    StringConstraints,
    Tag,
    model_validator,
)

from loragate.training.curriculum_text import TemplateError, render, resolve, whole

CURRICULUM_FILE = "curriculum.yaml"
"""The curriculum's file name inside an evalset folder."""
CURRICULUM_EXAMPLE = "evalsets/agent20/curriculum.yaml"
CONFIRMATION_TOOL = "confirmation_tool"
"""The built-in name of the evalset policy's confirmation tool."""
MAX_REPEAT = 1000
"""Most items an `each` / `times` step or a `sample` may produce."""

Ident = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
"""A name in a template's scope, a table's, a fragment's or a template's name."""
Scope = dict[str, Any]
Fragments = Mapping[str, list[list["Step"]]]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _list_of(source: list[Any] | str, scope: Scope, what: str) -> list[Any]:
    """An inline list as written, or the list a whole placeholder names."""
    if isinstance(source, list):
        return source
    ref = whole(source)
    value = resolve(ref, scope) if ref is not None else None
    if not isinstance(value, list) or not value:
        raise TemplateError(f"`{what}: {source}` must name a non-empty list")
    return value


def _int(template: int | str, scope: Scope, what: str) -> int:
    value = render(template, scope)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TemplateError(f"`{what}` must be a whole number, not {value!r}")
    return value


def _number(template: int | float | str, scope: Scope, what: str) -> int | float:
    value = render(template, scope)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TemplateError(f"`{what}` must be a number, not {value!r}")
    return value


def _text(template: str, scope: Scope, what: str) -> str:
    value = render(template, scope)
    if not isinstance(value, str):
        raise TemplateError(f"`{what}` must give text, not {type(value).__name__}")
    return value


def _zipped(lists: Mapping[str, str], scope: Scope) -> list[Scope]:
    """One scope per position of the `name: {list}` lists, which must be equally long."""
    columns = {name: _list_of(ref, scope, f"each.{name}") for name, ref in lists.items()}
    lengths = {len(c) for c in columns.values()}
    if len(lengths) != 1:
        raise TemplateError(f"the `each` lists differ in length: {sorted(lengths)}")
    return [
        {**scope, **{name: col[i] for name, col in columns.items()}} for i in range(lengths.pop())
    ]


# -- steps ---------------------------------------------------------------------------


class Pick(_Model):
    """One item of a list, as is."""

    let: Ident
    pick: list[JsonValue] | str = Field(description="a list, or `{name}` of one")
    first: int | None = Field(default=None, ge=1, description="draw among the first N only")

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        items = _list_of(self.pick, scope, "pick")
        scope[self.let] = rng.choice(items[: self.first] if self.first else items)


class Say(_Model):
    """One of several text templates, filled in."""

    let: Ident
    say: list[str] | str = Field(description="text templates, or `{name}` of a list of them")

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        scope[self.let] = _text(rng.choice(_list_of(self.say, scope, "say")), scope, "say")


class Value(_Model):
    """A value filled in, no draw."""

    let: Ident
    value: JsonValue

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        scope[self.let] = render(self.value, scope)


class RandInt(_Model):
    """A whole number in [lo, hi]."""

    let: Ident
    randint: tuple[int, int]

    @model_validator(mode="after")
    def _ordered(self) -> RandInt:
        if self.randint[0] > self.randint[1]:
            raise ValueError("`randint: [lo, hi]` needs lo <= hi")
        return self

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        scope[self.let] = rng.randint(*self.randint)


class SampleStep(_Model):
    """`k` distinct items of a list."""

    let: Ident
    sample: list[JsonValue] | str = Field(description="a list, or `{name}` of one")
    k: int | str = Field(description="how many: a number or `{name}` of one")

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        items = _list_of(self.sample, scope, "sample")
        k = _int(self.k, scope, "k")
        if not 0 <= k <= min(len(items), MAX_REPEAT):
            raise TemplateError(f"`k` is {k}; the list has {len(items)} items")
        scope[self.let] = rng.sample(items, k)


class Number(_Model):
    """A whole number written with a drawn thousands separator: 12'400, 12,400, 12400."""

    let: Ident
    number: int | str = Field(description="the number, or `{name}` of one")
    separators: list[str] = Field(min_length=1, description='e.g. ["", "\'", ",", " "]')

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        whole_number = int(_number(self.number, scope, "number"))
        separator = rng.choice(self.separators)
        scope[self.let] = f"{whole_number:,}".replace(",", separator)


class Sum(_Model):
    """The sum of numbers (a float as soon as one of them is)."""

    let: Ident
    sum: list[int | float | str] = Field(min_length=1)

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        scope[self.let] = sum(_number(t, scope, "sum") for t in self.sum)


class ToolName(_Model):
    """A tool name the evalset must define."""

    let: Ident
    tool: Ident

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        scope[self.let] = self.tool


class Each(_Model):
    """Steps run once per item (or `times` times), each in a scope of its own."""

    let: Ident
    each: dict[Ident, str] | None = Field(
        default=None, description="name -> `{list}`; the lists are zipped item by item"
    )
    times: int | str | None = Field(default=None, description="a count, or `{name}` of one")
    steps: list[Step] = Field(default_factory=list)
    value: JsonValue = Field(description="collected once per item")

    @model_validator(mode="after")
    def _one_source(self) -> Each:
        if (self.each is None) == (self.times is None):
            raise ValueError("give exactly one of `each` and `times`")
        return self

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        if self.each is not None:
            scopes = _zipped(self.each, scope)
        else:
            n = _int(self.times or 0, scope, "times")
            if not 0 <= n <= MAX_REPEAT:
                raise TemplateError(f"`times` is {n}; it must be 0..{MAX_REPEAT}")
            scopes = [dict(scope) for _ in range(n)]
        out = []
        for inner in scopes:
            run_steps(self.steps, inner, rng, fragments)
            out.append(render(self.value, inner))
        scope[self.let] = out


class Chance(_Model):
    """`then` when `random.random() < chance`, else `else`."""

    chance: float = Field(ge=0.0, le=1.0)
    then: list[Step] = Field(default_factory=list)
    otherwise: list[Step] = Field(default_factory=list, alias="else")

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        run_steps(
            self.then if rng.random() < self.chance else self.otherwise, scope, rng, fragments
        )


class OneOf(_Model):
    """One of several step lists: inline, or the alternatives of a named fragment."""

    one_of: list[list[Step]] | Ident = Field(
        description="step lists, or the name of a fragment (a list of step lists)"
    )

    def alternatives(self, fragments: Fragments) -> list[list[Step]]:
        """The step lists this step chooses among."""
        return fragments[self.one_of] if isinstance(self.one_of, str) else self.one_of

    def run(self, scope: Scope, rng: random.Random, fragments: Fragments) -> None:
        run_steps(rng.choice(self.alternatives(fragments)), scope, rng, fragments)


def _by_key(kinds: dict[str, str], what: str) -> Discriminator:
    """Tell the kind of a mapping by the first key of `kinds` it has (its other keys
    are then checked by that kind's model)."""

    def kind_of(value: Any) -> str | None:
        if isinstance(value, BaseModel):
            return type(value).__name__
        if isinstance(value, dict):
            return next((kinds[k] for k in kinds if k in value), None)
        return None

    return Discriminator(
        kind_of,
        custom_error_type=f"{what}_kind",
        custom_error_message=f"a {what} is a mapping with one of: {', '.join(kinds)}",
    )


STEP_KINDS = {
    "each": "Each",
    "times": "Each",
    "chance": "Chance",
    "one_of": "OneOf",
    "pick": "Pick",
    "say": "Say",
    "value": "Value",
    "randint": "RandInt",
    "sample": "Sample",
    "number": "Number",
    "sum": "Sum",
    "tool": "ToolName",
}
"""Step key -> step kind (`each` and `times` come before `value`, which `Each` has too)."""

Step = Annotated[
    Annotated[Pick, Tag("Pick")]
    | Annotated[Say, Tag("Say")]
    | Annotated[Value, Tag("Value")]
    | Annotated[RandInt, Tag("RandInt")]
    | Annotated[SampleStep, Tag("Sample")]
    | Annotated[Number, Tag("Number")]
    | Annotated[Sum, Tag("Sum")]
    | Annotated[ToolName, Tag("ToolName")]
    | Annotated[Each, Tag("Each")]
    | Annotated[Chance, Tag("Chance")]
    | Annotated[OneOf, Tag("OneOf")],
    _by_key(STEP_KINDS, "step"),
]


def run_steps(steps: list[Step], scope: Scope, rng: random.Random, fragments: Fragments) -> None:
    """Run `steps` in order, binding their results in `scope`."""
    for step in steps:
        step.run(scope, rng, fragments)


# -- messages ------------------------------------------------------------------------


@dataclass
class CallIds:
    """Tool-call ids of one conversation: `call_1`, `call_2`, ... in order."""

    issued: int = 0

    def next(self) -> str:
        self.issued += 1
        return f"call_{self.issued}"

    @property
    def latest(self) -> str:
        if not self.issued:
            raise TemplateError("a `result` message comes before any call")
        return f"call_{self.issued}"


class UserTurn(_Model):
    user: str

    def build(self, scope: Scope, ids: CallIds) -> dict[str, Any]:
        return {"role": "user", "content": _text(self.user, scope, "user")}


class AnswerTurn(_Model):
    answer: str

    def build(self, scope: Scope, ids: CallIds) -> dict[str, Any]:
        return {"role": "assistant", "content": _text(self.answer, scope, "answer")}


class ResultTurn(_Model):
    """The tool result of the latest call: text as is, anything else as JSON."""

    result: JsonValue

    def build(self, scope: Scope, ids: CallIds) -> dict[str, Any]:
        value = render(self.result, scope)
        content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return {"role": "tool", "tool_call_id": ids.latest, "content": content}


class TurnCall(_Model):
    """One tool call (or one per item of the `each` lists)."""

    tool: str = Field(description="a tool name, or `{name}` of one")
    args: JsonValue = Field(description="the arguments: a mapping, or `{name}` of one")
    each: dict[Ident, str] | None = Field(
        default=None, description="name -> `{list}`: one call per item, lists zipped"
    )

    def expand(self, scope: Scope) -> list[tuple[str, dict[str, Any]]]:
        """(tool, arguments) of every call this entry makes."""
        out = []
        for inner in _zipped(self.each, scope) if self.each is not None else [scope]:
            args = render(self.args, inner)
            if not isinstance(args, dict):
                raise TemplateError(f"`args` must give a mapping, not {type(args).__name__}")
            out.append((_text(self.tool, inner, "tool"), args))
        return out


class CallsTurn(_Model):
    calls: list[TurnCall] = Field(min_length=1)

    def build(self, scope: Scope, ids: CallIds) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": ids.next(),
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
                for call in self.calls
                for name, args in call.expand(scope)
            ],
        }


TemplateTurn = Annotated[
    Annotated[UserTurn, Tag("UserTurn")]
    | Annotated[AnswerTurn, Tag("AnswerTurn")]
    | Annotated[ResultTurn, Tag("ResultTurn")]
    | Annotated[CallsTurn, Tag("CallsTurn")],
    _by_key(
        {"user": "UserTurn", "answer": "AnswerTurn", "result": "ResultTurn", "calls": "CallsTurn"},
        "message",
    ),
]


# -- templates and the file -----------------------------------------------------------


class Template(_Model):
    """One way to write an example of a family; its name becomes the example's tag."""

    name: Ident
    about: list[Ident] = Field(
        default_factory=list,
        description="tools the examples are about without calling them (the tool a "
        "clarify question is for); a recipe's `tools: called` shows them too",
    )
    steps: list[Step] = Field(default_factory=list)
    messages: list[TemplateTurn] = Field(min_length=2)

    @model_validator(mode="after")
    def _ends_with_the_turn_to_learn(self) -> Template:
        if not isinstance(self.messages[-1], AnswerTurn | CallsTurn):
            raise ValueError("the last message must be the assistant's: `answer` or `calls`")
        return self

    def draw(self, rng: random.Random, scope: Scope, fragments: Fragments) -> list[dict[str, Any]]:
        """The messages of one example (`scope`: tables and built-ins, not changed)."""
        inner = dict(scope)
        run_steps(self.steps, inner, rng, fragments)
        ids = CallIds()
        return [m.build(inner, ids) for m in self.messages]


class CurriculumFile(_Model):
    """`curriculum.yaml`: slot tables, shared step lists and templates per family."""

    format_version: Literal[1] = Field(description="1")
    description: str = ""
    tables: dict[Ident, list[JsonValue]] = Field(
        default_factory=dict, description="name -> list of values the templates draw from"
    )
    fragments: dict[Ident, list[list[Step]]] = Field(
        default_factory=dict,
        description="name -> step lists; `one_of: NAME` runs one of them",
    )
    families: dict[str, list[Template]] = Field(
        description="behaviour family -> its templates (output in this order)"
    )


# -- walking the file -----------------------------------------------------------------


def child_steps(step: Step, fragments: Fragments) -> Iterator[tuple[str, list[Step]]]:
    """(field suffix, steps) of the step lists inside `step` (fragments by their field)."""
    if isinstance(step, Each):
        yield "steps", step.steps
    elif isinstance(step, Chance):
        yield "then", step.then
        yield "else", step.otherwise
    elif isinstance(step, OneOf):
        if isinstance(step.one_of, str):
            for i, alt in enumerate(fragments.get(step.one_of, [])):
                yield f"@fragments.{step.one_of}.{i}", alt
        else:
            for i, alt in enumerate(step.one_of):
                yield f"one_of.{i}", alt


def step_texts(step: Step) -> Iterator[str]:
    """Every template string a step fills in or resolves (its own, not its children's)."""
    if isinstance(step, Pick | SampleStep):
        source = step.pick if isinstance(step, Pick) else step.sample
        if isinstance(source, str):
            yield source
        if isinstance(step, SampleStep) and isinstance(step.k, str):
            yield step.k
    elif isinstance(step, Say):
        yield from [step.say] if isinstance(step.say, str) else step.say
    elif isinstance(step, Value):
        yield from json_texts(step.value)
    elif isinstance(step, Number) and isinstance(step.number, str):
        yield step.number
    elif isinstance(step, Sum):
        yield from (t for t in step.sum if isinstance(t, str))


def json_texts(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (mapping keys excluded)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from json_texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_texts(v)


def message_texts(message: TemplateTurn) -> Iterator[str]:
    """Every template string of a message."""
    if isinstance(message, UserTurn):
        yield message.user
    elif isinstance(message, AnswerTurn):
        yield message.answer
    elif isinstance(message, ResultTurn):
        yield from json_texts(message.result)
    else:
        for call in message.calls:
            yield call.tool
            yield from json_texts(call.args)
            yield from (call.each or {}).values()


for _model in (Each, Chance, OneOf, Template, CurriculumFile):
    _model.model_rebuild()


__all__ = [
    "CONFIRMATION_TOOL",
    "CURRICULUM_EXAMPLE",
    "CURRICULUM_FILE",
    "CurriculumFile",
    "Step",
    "Template",
]
