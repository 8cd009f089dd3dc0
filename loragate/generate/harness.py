"""Harness variants as data: the run config's `harness` section and its named variants.

loragate judges an adapter in one harness: the evalset's system prompt, its tools in
their order, its conversations, one chat template. A *harness variant* is a named,
versioned transformation of every entry's prompt that keeps the entry's expectation
valid (docs/harness.md):

- `tools`: the tools the entry needs (`select: routed`) or all of them, plus
  `distractors` tools drawn with a `seed` from a versioned `pool` (`loragate-1` ships
  with loragate; `bfcl` takes BFCL's functions), in the evalset's order or `shuffled`;
- `context`: earlier, unrelated turns taken from other entries in front of the entry
  until the prompt reaches `tokens` tokens;
- `system_prompt`: a named paraphrase of the evalset's system prompt (the evalset's
  `system_prompts` file);
- `format`: the call format the prompt teaches (`call_format: hermes | qwen3_xml`, with
  the matching parse setting) and the chat template it is rendered with
  (`chat_template`; `model`: the model's own). A variant's outputs are parsed as the
  call format its template teaches.

A variant may combine them. `loragate run --harness NAMES` (or the config's
`harness.run`) generates the default harness and every named variant in one engine
load. Variants come from the config's `harness.variants`, from the presets shipped in
`configs/harness/variants.yaml`, and - one per paraphrase of the evalset -
`system-NAME`. A variant's identity (its definition, `version`, the transformation
code's `HARNESS_FORMAT` and the data it draws on) is part of every cache key of its
generations.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from loragate.common.errors import BadInput, Problem, unknown_name_fix, validation_problems
from loragate.common.files import read_yaml
from loragate.common.names import Name
from loragate.common.resources import bundled
from loragate.formats.versions import HARNESS_FORMAT

DEFAULT_HARNESS = "default"
"""The name of the untransformed harness in tables; no variant may take it."""
PRESETS_FILE = "configs/harness/variants.yaml"
SYSTEM_PREFIX = "system-"
"""`system-NAME` is the variant that swaps in the evalset's paraphrase NAME."""
Transform = Literal["tools", "context", "system_prompt", "format"]
TRANSFORMS: tuple[Transform, ...] = ("tools", "context", "system_prompt", "format")


class ToolsTransform(BaseModel):
    """Which tools the prompt offers, in which order."""

    model_config = ConfigDict(extra="forbid")

    select: Literal["all", "routed"] = Field(
        default="all",
        description="all: the entry's tools; routed: only those its expectation and "
        "conversation name (plus the confirmation tool beside a destructive one)",
    )
    distractors: int = Field(
        default=0, ge=0, le=500, description="tools added from `pool`, drawn with `seed`"
    )
    pool: str = Field(
        default="loragate-1",
        description="distractor pool: a shipped pool (loragate-1, bfcl) or a YAML file",
    )
    order: Literal["evalset", "shuffled"] = "evalset"
    seed: int = Field(default=0, ge=0, description="seed of the draw and the shuffle")

    @model_validator(mode="after")
    def _changes_something(self) -> ToolsTransform:
        if self.select == "all" and self.distractors == 0 and self.order == "evalset":
            raise ValueError(
                "this `tools` transformation changes nothing: set select: routed, "
                "distractors: N or order: shuffled"
            )
        return self


class ContextTransform(BaseModel):
    """Earlier turns from other entries in front of each entry."""

    model_config = ConfigDict(extra="forbid")

    tokens: int = Field(
        ge=16, le=1_048_576, description="pad the prompt to at least this many tokens"
    )
    seed: int = Field(default=0, ge=0, description="seed of the order of the earlier turns")


class FormatTransform(BaseModel):
    """How the prompt is rendered: the call format it teaches, the chat template."""

    model_config = ConfigDict(extra="forbid")

    call_format: Literal["hermes", "qwen3_xml"] | None = Field(
        default=None,
        description="the call format the prompt teaches (and the variant's outputs are "
        "parsed as): hermes (JSON in <tool_call>) or qwen3_xml (<function=...>); alone, "
        "it takes the shipped template that teaches it (FORMAT_TEMPLATES)",
    )
    chat_template: str | None = Field(
        default=None,
        description="`model`: the model's own chat template; else a template name in "
        "configs/templates/ or a .jinja file (with `call_format`, one that teaches it)",
    )

    @model_validator(mode="after")
    def _says_something(self) -> FormatTransform:
        if self.call_format is None and self.chat_template is None:
            raise ValueError(
                "this `format` transformation changes nothing: give call_format or chat_template"
            )
        return self

    def template(self) -> str:
        """The template the variant renders with (`model`, a name or a file)."""
        if self.chat_template is not None:
            return self.chat_template
        assert self.call_format is not None
        return FORMAT_TEMPLATES[self.call_format]


FORMAT_TEMPLATES: dict[str, str] = {"hermes": "chatml-tools", "qwen3_xml": "qwen3.5"}
"""The shipped template (configs/templates/) that teaches each call format."""


class HarnessVariant(BaseModel):
    """One named, versioned harness variant."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    version: int = Field(
        default=1, ge=1, description="raise it when you change what the name means"
    )
    description: str = ""
    tools: ToolsTransform | None = None
    context: ContextTransform | None = None
    system_prompt: str | None = Field(
        default=None, description="a paraphrase name of the evalset's system_prompts file"
    )
    format: FormatTransform | None = None

    @model_validator(mode="after")
    def _one_transform(self) -> HarnessVariant:
        if self.name == DEFAULT_HARNESS:
            raise ValueError(f"`{DEFAULT_HARNESS}` names the untransformed harness; rename it")
        if not self.transforms():
            raise ValueError(
                f"variant {self.name!r} transforms nothing: give tools, context, "
                "system_prompt or format"
            )
        return self

    def transforms(self) -> list[Transform]:
        """The transformations this variant applies (what an entry may opt out of)."""
        return [t for t in TRANSFORMS if getattr(self, t) is not None]

    def definition(self) -> dict[str, Any]:
        """The variant as data, without its description (for keys and manifests)."""
        return self.model_dump(mode="json", exclude={"description"}, exclude_none=True)

    def summary(self) -> str:
        """One line saying what the variant does."""
        if self.description:
            return self.description
        parts: list[str] = []
        if self.tools is not None:
            t = self.tools
            what = "routed tools" if t.select == "routed" else "all tools"
            if t.distractors:
                what += f" + {t.distractors} distractors ({t.pool}, seed {t.seed})"
            if t.order == "shuffled":
                what += f", shuffled (seed {t.seed})"
            parts.append(what)
        if self.context is not None:
            parts.append(f"earlier turns up to {self.context.tokens} tokens")
        if self.system_prompt is not None:
            parts.append(f"system prompt paraphrase {self.system_prompt!r}")
        if self.format is not None:
            f = self.format
            if f.call_format is not None:
                taught = "Qwen3 XML" if f.call_format == "qwen3_xml" else "Hermes JSON"
                parts.append(f"calls taught and parsed as {taught} (template {f.template()})")
            else:
                parts.append(f"chat template {f.template()}")
        return "; ".join(parts)


def variant_key(variant: HarnessVariant, data: dict[str, str] | None = None) -> str:
    """sha256 (hex) of a variant's identity: its definition, `HARNESS_FORMAT` and the
    sha256 of the data it draws on (`data`: pool, paraphrase, template)."""
    payload = {
        "harness_format": HARNESS_FORMAT,
        "variant": variant.definition(),
        "data": dict(sorted((data or {}).items())),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class HarnessConfig(BaseModel):
    """The `harness` section of a run config or sweep file."""

    model_config = ConfigDict(extra="forbid")

    variants: list[HarnessVariant] = Field(
        default_factory=list, description="variants defined here (beside the presets)"
    )
    run: list[Name] = Field(
        default_factory=list,
        description="variants a run generates beside the default harness (`--harness` "
        "overrides); names from `variants`, the presets or system-PARAPHRASE",
    )
    entries: int | None = Field(
        default=None,
        ge=1,
        description="run the variants on this many entries only, taken across the "
        "families in turn (as --limit takes them); None: every entry of the run",
    )

    @model_validator(mode="after")
    def _unique(self) -> HarnessConfig:
        seen: set[str] = set()
        for v in self.variants:
            if v.name in seen:
                raise ValueError(f"variant {v.name!r} is defined twice; rename one")
            seen.add(v.name)
        return self


def load_presets() -> list[HarnessVariant]:
    """The variants shipped in `configs/harness/variants.yaml`."""
    path = bundled(PRESETS_FILE)
    if path is None:
        return []
    raw = read_yaml(path, "harness presets")
    items = raw.get("variants", []) if isinstance(raw, dict) else []
    try:
        return [HarnessVariant.model_validate(v) for v in items]
    except ValidationError as exc:  # a broken shipped file is a bug, said plainly
        raise BadInput(
            f"{path}: invalid harness presets",
            validation_problems(exc, str(path), fix="fix the shipped presets file"),
        ) from None


def known_variants(
    config: HarnessConfig, paraphrases: list[str] | None = None
) -> dict[str, HarnessVariant]:
    """Every variant a run may name: the config's, then the presets, then
    `system-PARAPHRASE` for each paraphrase of the evalset (the first definition of a
    name wins, so a config may redefine a preset)."""
    out: dict[str, HarnessVariant] = {}
    for v in config.variants:
        out.setdefault(v.name, v)
    for v in load_presets():
        out.setdefault(v.name, v)
    for p in paraphrases or []:
        name = f"{SYSTEM_PREFIX}{p}"
        if name not in out:
            out[name] = HarnessVariant(
                name=name,
                description=f"the evalset's system prompt paraphrase {p!r}",
                system_prompt=p,
            )
    return out


def parse_harness_option(value: str | None) -> list[str] | None:
    """`--harness A,B,C` -> names; `none` -> []; `all` stays a name (every variant the
    config defines); None when the option was not given."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if names == ["none"]:
        return []
    return names


def select_variants(
    config: HarnessConfig,
    names: list[str] | None,
    paraphrases: list[str] | None = None,
    *,
    where: str = "--harness",
) -> list[HarnessVariant]:
    """The variants a run generates: `names` (the `--harness` option), else the
    config's `harness.run`. `all` stands for every variant of `harness.variants`.
    `BadInput` naming every unknown name with the closest known one."""
    wanted = list(config.run if names is None else names)
    if names is None:
        where = "harness.run"
    known = known_variants(config, paraphrases)
    chosen: list[HarnessVariant] = []
    problems: list[Problem] = []
    for name in wanted:
        if name == "all":
            if not config.variants:
                problems.append(
                    Problem(
                        where,
                        "`all` names every variant of the config's `harness.variants`, "
                        "which defines none",
                        fix="name the variants (e.g. routed,shuffled,context-4k) or define "
                        "them under `harness.variants` (docs/harness.md)",
                    )
                )
            chosen += [v for v in config.variants if v not in chosen]
            continue
        if name == DEFAULT_HARNESS:
            continue  # the default harness always runs
        variant = known.get(name)
        if variant is None:
            problems.append(
                Problem(
                    where,
                    f"unknown harness variant {name!r}",
                    fix=unknown_name_fix(name, known, "variants")
                    + " (define it under `harness.variants` in the run config, docs/harness.md)",
                )
            )
        elif variant not in chosen:
            chosen.append(variant)
    if problems:
        raise BadInput(f"{where}: {len(problems)} harness variant name(s) name nothing", problems)
    return chosen


__all__ = [
    "DEFAULT_HARNESS",
    "FORMAT_TEMPLATES",
    "HARNESS_FORMAT",
    "TRANSFORMS",
    "ContextTransform",
    "FormatTransform",
    "HarnessConfig",
    "HarnessVariant",
    "ToolsTransform",
    "Transform",
    "known_variants",
    "load_presets",
    "parse_harness_option",
    "select_variants",
    "variant_key",
]
