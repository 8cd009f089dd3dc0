"""Run configuration: YAML (`yaml.safe_load`) into validated models; the CLI overrides.

Every model forbids unknown keys, so a typo in a config file fails loudly with the
file and field named. Nothing in a config runs code. See `configs/*.yaml`.

The options of a generation backend sit in a block named after it (`vllm: {...}`,
`hf: {...}`, `openai: {...}`, or a plugin backend's); each backend owns the model of its
block (`loragate.runners`: `Backend.options`), and `RunConfig` validates every block
present against the registry's backends, so a plugin's options are checked like the
built-ins'. `RunConfig.options_of(name)` is a backend's validated block (its defaults
when the config has none); `config.vllm` reads the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    field_validator,
    model_validator,
)

from loragate.calls.stack import CallFormatSetting, ReasoningParserSetting
from loragate.common import arguments as arg
from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.common.loading import load_yaml_model
from loragate.common.names import Name
from loragate.formats.records import DEFAULT_PARSE_MODE, ParseMode, parse_mode_named
from loragate.formats.sampling import RepetitionStop, SamplingConfig
from loragate.formats.trajectories import UserMode
from loragate.generate.harness import HarnessConfig
from loragate.runners import backend_options, runner_names

Dtype = Literal["auto", "float32", "bfloat16", "float16"]


class RunConfig(BaseModel):
    """A `loragate run` configuration (YAML file, then CLI overrides).

    Unknown keys are refused; a key naming a registered backend is that backend's
    options block (see the module doc), held as an extra of the model.
    """

    # "allow" only to hold the backends' blocks: `_backend_blocks` refuses every other key.
    model_config = ConfigDict(extra="allow")

    name: Name | None = Field(
        default=None,
        description="run name (letters, digits, . _ + -); default out folder runs/<name>",
    )
    model: str | None = Field(default=None, description="local folder or hub id of the base model")
    embedded: Literal["smollm2-135m"] | None = Field(
        default=None, description="use a model shipped in a PyPI package instead of `model`"
    )
    revision: str | None = Field(default=None, description="hub revision (commit) of `model`")
    dtype: Dtype = Field(default="auto", description="auto = float32 on CPU, bfloat16 on GPU")
    backend: str = Field(
        default="auto", description="a backend's name (vllm, hf, openai, replay, ...) or auto"
    )
    evalset: str = Field(default="evalsets/agent20", description="evalset folder")
    chat_template: str | None = Field(
        default=None,
        description="Jinja template file (path, or a name in configs/templates/) "
        "instead of the tokenizer's own",
    )
    enable_thinking: bool | None = Field(
        default=None,
        description="Qwen3 thinking switch passed to the chat template; None = not passed "
        "(vLLM's reasoning parser then assumes thinking on)",
    )
    tool_call_format: CallFormatSetting = Field(
        default="auto",
        description="the call format the run expects (vLLM's --tool-call-parser): hermes, "
        "qwen3_xml, or auto = the one the chat template teaches; a sample in the other "
        "format is counted in the format mix (served mode runs what the server runs of "
        "it; strict and lenient judge it as written)",
    )
    reasoning_parser: ReasoningParserSetting = Field(
        default="auto",
        description="the serving stack's reasoning parser (vLLM's --reasoning-parser): "
        "qwen3, deepseek_r1, none, or auto = the model family's (Qwen3/Qwen3.5: qwen3, "
        "DeepSeek-R1: deepseek_r1, others: none); decides which text is reasoning and "
        "whether calls inside it run (docs/call-formats.md)",
    )
    trust_remote_code: bool = False
    sampling: SamplingConfig = Field(default_factory=lambda: SamplingConfig())
    adapters: dict[Name, str] = Field(
        default_factory=dict,
        description="adapter name (letters, digits, . _ + -) -> folder (openai: may be "
        "server-only)",
    )
    include_base: bool = Field(default=True, description="also evaluate the bare base model")
    parse_mode: ParseMode = Field(
        default=DEFAULT_PARSE_MODE,
        description="the reading scored: served (the calls the serving stack runs - what a "
        "gate should use), strict (the call format as written) or lenient (what the model "
        "meant, with repairs: for diagnosis); docs/call-formats.md",
    )
    out: str | None = Field(
        default=None, description="run folder; default runs/<name or timestamp>"
    )
    allow_pickle: bool = Field(
        default=False, description="accept adapter_model.bin (pickle) weights"
    )
    ignore_base_mismatch: bool = False
    generations: str | None = Field(default=None, description="replay backend: generations file")
    harness: HarnessConfig = Field(
        default_factory=lambda: HarnessConfig(),
        description="harness variants generated beside the default harness (docs/harness.md)",
    )
    episodes: int | Literal["all"] | None = Field(
        default=None,
        description="also run the first N episodes of the evalset (`all`: every one; 0: "
        "none); None: the embedded model's default subset, none for a `model`",
    )
    user: UserMode = Field(
        default="scripted",
        description="who answers an episode's user in the loop (episode format 5): "
        "`scripted` (the episode's script; episodes no script covers are left out) or "
        "`model` (the run's base model with no adapter, playing the user from its prompt)",
    )

    @model_validator(mode="after")
    def _embedded_stops_loops(self) -> RunConfig:
        # The embedded demo model loops in about one output in five; its runs stop
        # loops unless the config says otherwise (`stop_on_repetition: null`).
        # A user's own model runs to the budget unless asked.
        if self.model is None and "stop_on_repetition" not in self.sampling.model_fields_set:
            self.sampling.stop_on_repetition = RepetitionStop()
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _backend_blocks(cls, data: Any, handler: ModelWrapValidatorHandler[RunConfig]) -> RunConfig:
        """Validate each backend's block with that backend's options model; refuse any
        other unknown key as `extra="forbid"` would; default every block not given."""
        if not isinstance(data, dict):
            return handler(data)
        models = backend_options()
        rest = dict(data)
        blocks: dict[str, BaseModel] = {}
        errors: list[Any] = []
        for name, model in models.items():
            if name not in rest:
                continue
            raw = rest.pop(name)
            if isinstance(raw, model):
                blocks[name] = raw
                continue
            try:
                blocks[name] = model.model_validate(raw)
            except ValidationError as exc:
                errors += [_nested_error(name, e) for e in exc.errors()]
        try:
            cfg = handler(rest)
        except ValidationError as exc:
            if not errors:
                raise
            raise ValidationError.from_exception_data(
                cls.__name__, [*(_nested_error(None, e) for e in exc.errors()), *errors]
            ) from None
        unknown = cfg.__pydantic_extra__ or {}
        errors += [{"type": "extra_forbidden", "loc": (k,), "input": v} for k, v in unknown.items()]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        cfg.__pydantic_extra__ = {
            name: blocks.get(name) or model() for name, model in models.items()
        }
        return cfg

    def options_of(self, backend: str) -> BaseModel | None:
        """The validated options block of `backend` (its defaults when the config has
        none); None for a backend that takes no options."""
        blocks = self.__pydantic_extra__ or {}
        found = blocks.get(backend)
        if found is None:
            model = backend_options().get(backend)
            return model() if model is not None else None
        return found if isinstance(found, BaseModel) else None

    @field_validator("parse_mode", mode="before")
    @classmethod
    def _old_parse_mode(cls, value: Any) -> Any:
        return parse_mode_named(value, "parse_mode")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        known = [*runner_names(), "auto"]
        if value not in known:
            raise ValueError(
                f"unknown backend {value!r}; {unknown_name_fix(value, known, 'backends')}"
            )
        return value

    @field_validator("episodes")
    @classmethod
    def _episode_count(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 0:
            raise ValueError("a count of episodes (0: none) or `all`")
        return value

    @field_validator("adapters")
    @classmethod
    def _adapter_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if name == "base":
                raise ValueError("`base` is reserved for the bare base model; rename the adapter")
            if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", name):
                raise ValueError(f"adapter name {name!r}: use letters, digits, `_.-` (max 64)")
        return value


def _nested_error(block: str | None, err: Any) -> Any:
    """A pydantic error as `InitErrorDetails`, its location under `block` when given."""
    out = {"type": err["type"], "loc": (block, *err["loc"]) if block else err["loc"]}
    out["input"] = err.get("input")
    if "ctx" in err:
        out["ctx"] = err["ctx"]
    return out


def load_config(
    path: str | PathLike[str] | None = None, overrides: Mapping[str, Any] | None = None
) -> RunConfig:
    """The run config of the YAML file `path` (None: the defaults, the embedded model on
    the bundled agent20) with `overrides` applied on top.

    `overrides` maps dotted field names to values (`{"sampling.samples": 4}`); `None`
    values are skipped, so CLI options that were not given leave the file's values.
    Raises `BadInput` naming the file and field of every problem.
    """
    arg.check_arguments(
        "loragate.load_config",
        arg.path("path", path, optional=True),
        arg.mapping("overrides", overrides, example='{"sampling.samples": 4}'),
    )
    path = Path(path) if path is not None else None
    cfg = load_yaml_model(
        path, RunConfig, what="run config", example="configs/default.yaml", overrides=overrides
    )
    source = str(path) if path else "(defaults)"
    if cfg.model and cfg.embedded:
        raise BadInput(
            f"{source}: both `model` and `embedded` are set",
            [
                Problem(
                    source, "give one of them", field="model", fix="remove `embedded` or `model`"
                )
            ],
        )
    return cfg
