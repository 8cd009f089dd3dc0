"""Applying harness variants to an evalset: per entry the prompt's messages and tools,
per variant the evalset its outputs are scored against.

`apply_variants` checks every variant before anything is generated (unknown
paraphrases, pools that collide with the evalset's tools, templates without a tools
branch, padding targets beyond the model's context length) and builds, per variant:

- each entry's messages and tools as the prompt offers them (`VariantEntry`), with
  the token count when the variant pads the context;
- the *scoring evalset*: the entries the variant runs (those opted out are left out,
  with the reason), each judged against the tools its prompt offered and the system
  prompt it was given, on its own conversation (padding is context, not content);
- the variant's key (definition, `HARNESS_FORMAT`, sha256 of the pool, paraphrase or
  template it uses), which goes into every cache key of its generations.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loragate.calls.parsing import ServingStack
from loragate.calls.stack import template_call_format
from loragate.calls.tools import Toolset
from loragate.common.errors import BadInput, Problem
from loragate.evalset.load import Evalset
from loragate.evalset.paraphrases import Paraphrases, check_paraphrase, load_paraphrases
from loragate.formats.evalset import Entry
from loragate.formats.manifest import HarnessRecord
from loragate.formats.records import CallFormat
from loragate.generate.config import RunConfig
from loragate.generate.embedded import EMBEDDED, embedded_name
from loragate.generate.harness import (
    DEFAULT_HARNESS,
    FORMAT_TEMPLATES,
    HarnessConfig,
    HarnessVariant,
    known_variants,
    select_variants,
    variant_key,
)
from loragate.generate.harness_context import (
    Donor,
    PaddingShort,
    admissible_donors,
    estimate_tokens,
    load_donors,
    pad,
    seeded_order,
    short_error,
)
from loragate.generate.harness_tools import check_pool, load_pool, routed_tools, transform_tools
from loragate.generate.prompt import ChatRenderer, evalset_messages, load_renderer


@dataclass(frozen=True)
class VariantEntry:
    """One entry as a variant's prompt offers it."""

    messages: list[dict[str, Any]]
    """Chat messages with the system prompt (tool-call arguments as objects)."""
    tools: list[dict[str, Any]]
    """The tools in OpenAI form, in prompt order."""
    tokens: int | None = None
    """Prompt tokens, counted when the variant pads the context."""
    donors: tuple[str, ...] = ()
    """Entries whose exchanges pad the context, in order."""


@dataclass
class AppliedVariant:
    """A variant applied to the run's entries."""

    variant: HarnessVariant
    key: str
    entries: dict[str, VariantEntry]
    skipped: dict[str, str]
    """Entries left out, with the reason (an opt-out, an own system prompt)."""
    scoring: Evalset
    renderer: ChatRenderer | None = None
    """The variant's own renderer (a `format` variant); None: the run's."""
    call_format: CallFormat | None = None
    """The call format the variant's own template teaches, which its outputs are parsed
    as (a `format` variant); None: the run's."""
    data: dict[str, str] = field(default_factory=dict)
    tokens_estimated: bool = False

    @property
    def name(self) -> str:
        return self.variant.name

    def prompts(
        self, renderer: ChatRenderer | None
    ) -> Iterator[tuple[str, str, list[dict[str, Any]], list[dict[str, Any]]]]:
        """(entry id, prompt, messages as a server takes them, tools) of every entry:
        rendered with the variant's renderer, else `renderer`, else a canonical request."""
        render = self.renderer or renderer
        for entry_id, ve in self.entries.items():
            if render is not None:
                prompt = render.render_prompt(ve.messages, ve.tools)
            else:
                prompt = canonical_request(ve.messages, ve.tools)
            yield entry_id, prompt, server_messages(ve.messages), ve.tools

    def stack(self, run: ServingStack) -> ServingStack:
        """The serving stack the variant's outputs are judged as: the run's, with the
        call format the variant's template teaches."""
        if self.call_format is None or self.call_format == run.call_format:
            return run
        return dataclasses.replace(run, call_format=self.call_format)

    def mean_tokens(self) -> float | None:
        counts = [v.tokens for v in self.entries.values() if v.tokens is not None]
        return sum(counts) / len(counts) if counts else None


def server_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with tool-call arguments as JSON strings (what a server takes)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.get("tool_calls"):
            m = dict(m)
            m["tool_calls"] = [
                {
                    **tc,
                    "function": {
                        **tc["function"],
                        "arguments": tc["function"]["arguments"]
                        if isinstance(tc["function"]["arguments"], str)
                        else json.dumps(tc["function"]["arguments"], ensure_ascii=False),
                    },
                }
                for tc in m["tool_calls"]
            ]
        out.append(m)
    return out


def canonical_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The prompt of a server or replay run: the request's messages and tools as JSON."""
    return json.dumps(
        {"messages": server_messages(messages), "tools": tools}, sort_keys=True, ensure_ascii=False
    )


class TokenCounter:
    """Counts a prompt's tokens with the model's tokenizer (`tokenizer.json` of a local
    model folder), else estimates them as characters / 4 (`estimated`)."""

    def __init__(self, model_path: str) -> None:
        self.model_path = model_path
        self._encode: Any = None
        self.estimated = False

    def _load(self) -> None:
        if self._encode is not None or self.estimated:
            return
        file = Path(self.model_path) / "tokenizer.json"
        if file.is_file():
            try:
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(file))
                self._encode = lambda text: len(tok.encode(text, add_special_tokens=False).ids)
                return
            except Exception:  # a tokenizer file tokenizers cannot read: estimate
                pass
        self.estimated = True

    def __call__(self, text: str) -> int:
        self._load()
        if self._encode is None:
            return estimate_tokens(text)
        return int(self._encode(text))


def model_context_length(model_path: str) -> int | None:
    """`max_position_embeddings` (or a like field) of a local model's config.json."""
    file = Path(model_path) / "config.json"
    if not file.is_file():
        return None
    try:
        cfg = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cfg, dict):
        return None
    for key in ("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"):
        value = cfg.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


@dataclass
class HarnessSetup:
    """What applying variants needs besides the variants."""

    evalset: Evalset
    """The whole evalset (the donors of context padding come from every entry)."""
    renderer: ChatRenderer | None
    model_path: str
    max_new_tokens: int
    context_length: int | None
    """The model's context length (vLLM's `max_model_len`, else the model's config);
    None when unknown (a server's model)."""
    enable_thinking: bool | None = None
    trust_remote_code: bool = False
    _counter: TokenCounter | None = None
    _donors: list[Donor] | None = None
    _paraphrases: Paraphrases | None = None
    _paraphrases_read: bool = False

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = TokenCounter(self.model_path)
        return self._counter

    @property
    def donors(self) -> list[Donor]:
        if self._donors is None:
            answers = self.evalset.manifest.answers
            self._donors = load_donors(
                self.evalset, self.evalset.root / answers if answers else None
            )
        return self._donors

    @property
    def paraphrases(self) -> Paraphrases | None:
        if not self._paraphrases_read:
            self._paraphrases = load_paraphrases(self.evalset)
            self._paraphrases_read = True
        return self._paraphrases


NO_TOOL_ROUTED = (
    "needs no tool: a routed prompt would offer none, and the entry tests what the model "
    "does with tools on offer"
)


def _opted_out(variant: HarnessVariant, entry: Entry, evalset: Evalset) -> str | None:
    for t in variant.transforms():
        reason = entry.harness_opt_out.get(t)
        if reason is not None:
            return f"opts out of {t}: {reason}"
    if variant.system_prompt is not None and entry.messages[0].role == "system":
        return "brings its own system prompt"
    tools = variant.tools
    if (
        tools is not None
        and tools.select == "routed"
        and not tools.distractors
        and not routed_tools(evalset, entry)
    ):
        return NO_TOOL_ROUTED
    return None


def _format_renderer(variant: HarnessVariant, setup: HarnessSetup) -> ChatRenderer | None:
    spec = variant.format
    if spec is None:
        return None
    if setup.renderer is None:
        raise BadInput(
            f"harness variant {variant.name!r} changes how the prompt is rendered, which a "
            "server or replay run does not do (the server renders it)",
            [
                Problem(
                    "harness",
                    f"variant {variant.name}: no local chat template",
                    field="format",
                    fix="run it with a local backend (--backend vllm or hf), or drop the variant",
                )
            ],
        )
    template = spec.template()
    renderer = load_renderer(
        setup.model_path,
        chat_template=None if template == "model" else template,
        enable_thinking=setup.enable_thinking,
        trust_remote_code=setup.trust_remote_code,
    )
    probe = [{"role": "user", "content": "hello"}]
    tools = setup.evalset.toolset.as_openai()[:1]
    if tools and renderer.render_prompt(probe, tools) == renderer.render_prompt(probe, None):
        raise BadInput(
            f"harness variant {variant.name!r}: chat template {renderer.source} does not "
            "render tools; the entries' tools would vanish from the prompt",
            [
                Problem(
                    "harness",
                    f"variant {variant.name}: the template has no tools branch",
                    field="format.chat_template",
                    fix="name a template that renders `tools` (configs/templates/), or drop "
                    "the variant",
                )
            ],
        )
    taught = template_call_format(renderer.template)
    if spec.call_format is not None and taught != spec.call_format:
        raise BadInput(
            f"harness variant {variant.name!r}: chat template {renderer.source} teaches "
            f"{taught or 'no call format'}, not {spec.call_format}; its outputs could not be "
            "parsed as the prompt asked",
            [
                Problem(
                    "harness",
                    f"variant {variant.name}: template and call_format disagree",
                    field="format.chat_template",
                    fix=f"drop `chat_template` (the shipped {FORMAT_TEMPLATES[spec.call_format]} "
                    f"teaches {spec.call_format}) or name a template that teaches it",
                )
            ],
        )
    return renderer


def _check_target(variant: HarnessVariant, setup: HarnessSetup) -> None:
    spec, limit = variant.context, setup.context_length
    if spec is None or limit is None:
        return
    room = limit - setup.max_new_tokens
    if spec.tokens > room:
        raise BadInput(
            f"harness variant {variant.name!r}: a prompt of {spec.tokens} tokens and "
            f"{setup.max_new_tokens} new ones exceed the model's context length of {limit}; "
            "nothing was generated",
            [
                Problem(
                    "harness",
                    f"variant {variant.name}: context.tokens {spec.tokens} > {room}",
                    field="context.tokens",
                    fix=f"lower `context.tokens` to {room} or less, or raise the context "
                    "length (vllm.max_model_len) if the model allows it",
                )
            ],
        )


def apply_variant(
    variant: HarnessVariant, setup: HarnessSetup, entries: list[Entry]
) -> AppliedVariant:
    """`variant` applied to `entries` (see the module docstring); `BadInput` for
    anything that would make the variant unsound, before any generation."""
    evalset = setup.evalset
    kept: list[Entry] = []
    skipped: dict[str, str] = {}
    for e in entries:
        reason = _opted_out(variant, e, evalset)
        if reason is None:
            kept.append(e)
        else:
            skipped[e.id] = reason
    data: dict[str, str] = {}
    system_prompt = _system_prompt(variant, setup, kept, data)
    renderer = _format_renderer(variant, setup)
    call_format: CallFormat | None = None
    if renderer is not None:
        data["template"] = renderer.template_sha256
        call_format = template_call_format(renderer.template)
        if call_format is not None:
            data["call_format"] = call_format
    _check_target(variant, setup)
    scoring_manifest = evalset.manifest.model_copy(update={"system_prompt": system_prompt})
    scoring_view = dataclasses.replace(evalset, manifest=scoring_manifest)
    out, toolsets = _variant_entries(variant, setup, kept, scoring_view, renderer)
    if variant.context is not None:
        data["donors"] = _donors_sha(setup.donors)
        data["tokenizer"] = "estimate" if setup.counter.estimated else "model"
    scoring = dataclasses.replace(
        evalset,
        manifest=scoring_manifest,
        entries=kept,
        expects={e.id: evalset.expects[e.id] for e in kept},
        by_id={},
        entry_toolsets=toolsets,
    )
    return AppliedVariant(
        variant=variant,
        key=variant_key(variant, data),
        entries=out,
        skipped=skipped,
        scoring=scoring,
        renderer=renderer,
        call_format=call_format,
        data=data,
        tokens_estimated=variant.context is not None and setup.counter.estimated,
    )


def _system_prompt(
    variant: HarnessVariant, setup: HarnessSetup, kept: list[Entry], data: dict[str, str]
) -> str | None:
    """The variant's system prompt (a paraphrase, checked, or the evalset's); records the
    paraphrase and the distractor pool it uses in `data`."""
    evalset = setup.evalset
    system_prompt = evalset.manifest.system_prompt
    if variant.system_prompt is not None:
        check_paraphrase(setup.paraphrases, variant.system_prompt, variant.name, kept)
        assert setup.paraphrases is not None
        system_prompt = setup.paraphrases.text(variant.system_prompt)
        data["paraphrase"] = setup.paraphrases.sha256(variant.system_prompt)
    if variant.tools is not None and variant.tools.distractors:
        pool_sha = check_pool(variant, evalset, kept)
        if pool_sha is not None:
            data["pool"] = pool_sha
            data["pool_version"] = load_pool(variant.tools.pool).version
    return system_prompt


def _variant_entries(
    variant: HarnessVariant,
    setup: HarnessSetup,
    kept: list[Entry],
    scoring_view: Evalset,
    renderer: ChatRenderer | None,
) -> tuple[dict[str, VariantEntry], dict[str, Toolset]]:
    """Each kept entry's messages and tools under the variant, and the toolsets that
    differ from the evalset's; `BadInput` when a padded prompt would not fit."""
    evalset = setup.evalset
    render = renderer or setup.renderer
    out: dict[str, VariantEntry] = {}
    toolsets: dict[str, Toolset] = {}
    problems: list[Problem] = []
    for e in kept:
        toolset = evalset.toolset_of(e.id)
        if variant.tools is not None:
            toolset = transform_tools(variant, variant.tools, evalset, e).toolset
            toolsets[e.id] = toolset
        elif e.id in evalset.entry_toolsets:
            toolsets[e.id] = toolset
        tools = toolset.as_openai()
        messages = evalset_messages(scoring_view, e)
        tokens: int | None = None
        donors: tuple[str, ...] = ()
        if variant.context is not None:
            tokens, messages, donors = _padded(variant, setup, render, e, messages, tools)
            if (
                setup.context_length is not None
                and tokens + setup.max_new_tokens > setup.context_length
            ):
                problems.append(
                    Problem(
                        "harness",
                        f"variant {variant.name}, entry {e.id}: the padded prompt holds "
                        f"{tokens} tokens; with {setup.max_new_tokens} new ones it exceeds "
                        f"the context length of {setup.context_length}",
                        field="context.tokens",
                        fix="lower `context.tokens` (the last exchange added overshoots it)",
                    )
                )
        out[e.id] = VariantEntry(messages, tools, tokens, donors)
    if problems:
        raise BadInput(
            f"harness variant {variant.name!r}: {len(problems)} prompt(s) beyond the context "
            "length; nothing was generated",
            problems[:50],
        )
    return out, toolsets


def _donors_sha(donors: list[Donor]) -> str:
    blob = json.dumps([d.messages for d in donors], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _padded(
    variant: HarnessVariant,
    setup: HarnessSetup,
    renderer: ChatRenderer | None,
    entry: Entry,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
) -> tuple[int, list[dict[str, Any]], tuple[str, ...]]:
    assert variant.context is not None
    counter = setup.counter
    generic = load_pool("loragate-1").generic_words

    def count(msgs: list[dict[str, Any]]) -> int:
        if renderer is not None:
            return counter(renderer.render_prompt(msgs, tools))
        return counter(canonical_request(msgs, tools))

    costs: dict[str, int] = {}

    def cost(d: Donor) -> int:
        if d.source not in costs:
            text = (
                renderer.render_conversation(list(d.messages), None)
                if renderer is not None
                else json.dumps(list(d.messages), ensure_ascii=False)
            )
            costs[d.source] = counter(text)
        return costs[d.source]

    has_system = bool(messages) and messages[0]["role"] == "system"
    system, own = (messages[:1], messages[1:]) if has_system else ([], messages)
    needed = routed_tools(setup.evalset, entry)
    donors = seeded_order(
        admissible_donors(
            setup.donors, entry, needed, generic, system[0]["content"] if system else ""
        ),
        variant.context.seed,
        entry,
    )
    try:
        padded = pad(system, own, donors, variant.context.tokens, count, cost)
    except PaddingShort as short:
        raise short_error(variant.name, entry.id, variant.context.tokens, short) from None
    return padded.tokens, padded.messages, tuple(padded.donors)


def apply_variants(
    variants: list[HarnessVariant], setup: HarnessSetup, entries: list[Entry]
) -> list[AppliedVariant]:
    """Every variant applied (see `apply_variant`)."""
    return [apply_variant(v, setup, entries) for v in variants]


def plan_variants(
    config: RunConfig,
    *,
    full: Evalset,
    entries: list[Entry],
    renderer: ChatRenderer | None,
    backend: str,
    model_path: str,
    names: list[str] | None,
) -> list[AppliedVariant]:
    """The harness variants of a run (`names`: the `--harness` option, else the
    config's `harness.run`) applied to `entries` (the run's, or the first
    `harness.entries` of them); `BadInput` for anything unsound, before any generation."""
    if not (config.harness.run if names is None else names):
        return []  # the default harness only: nothing to read or check
    paraphrases = load_paraphrases(full)
    variants = select_variants(
        config.harness, names, paraphrases.names() if paraphrases is not None else []
    )
    if not variants:
        return []
    setup = HarnessSetup(
        evalset=full,
        renderer=renderer,
        model_path=model_path,
        max_new_tokens=config.sampling.max_new_tokens,
        context_length=harness_context_length(backend, _max_model_len(config), model_path),
        enable_thinking=config.enable_thinking,
        trust_remote_code=config.trust_remote_code,
    )
    setup._paraphrases, setup._paraphrases_read = paraphrases, True
    return apply_variants(variants, setup, entries)


def harness_records(variants: list[AppliedVariant]) -> list[HarnessRecord]:
    return [
        HarnessRecord(
            name=a.name,
            version=a.variant.version,
            key=a.key,
            description=a.variant.summary(),
            definition=a.variant.definition(),
            entries=list(a.entries),
            skipped=a.skipped,
            data=a.data,
            prompt_tokens_mean=a.mean_tokens(),
            tokens_estimated=a.tokens_estimated,
        )
        for a in variants
    ]


def run_harness(
    config: RunConfig, backend: str, names: list[str] | None, evalset: Evalset
) -> HarnessConfig:
    """The config's `harness` section; when the config has none and `--harness` is not
    given (`names`), the embedded model's default variant set (a few entries, so that a
    newcomer's `loragate run` shows the sensitivity table; none for `replay`, which has
    only what its file holds). The default set keeps only the variants `evalset` can
    run: a system-prompt paraphrase it does not ship is left out, not an error - the
    user never asked for it."""
    if "harness" in config.model_fields_set or backend == "replay" or names is not None:
        return config.harness

    name = embedded_name(config.model, config.embedded)
    if name is None or not EMBEDDED[name].harness:
        return config.harness
    spec = EMBEDDED[name]
    paraphrases = load_paraphrases(evalset)
    known = known_variants(config.harness, paraphrases.names() if paraphrases else None)
    runnable = [v for v in spec.harness if v in known]
    return HarnessConfig(run=runnable, entries=spec.harness_entries)


def _max_model_len(config: RunConfig) -> int | None:
    """The vLLM options' `max_model_len` (None when unset or vLLM is not registered)."""
    value = getattr(config.options_of("vllm"), "max_model_len", None)
    return value if isinstance(value, int) else None


def harness_context_length(backend: str, max_model_len: int | None, model_path: str) -> int | None:
    """The context length prompts must fit: vLLM's `max_model_len` when set, else the
    model's own (config.json); None when unknown."""
    if backend == "vllm" and max_model_len is not None:
        return max_model_len
    return model_context_length(model_path) if os.path.isdir(model_path) else None


__all__ = [
    "DEFAULT_HARNESS",
    "AppliedVariant",
    "HarnessSetup",
    "TokenCounter",
    "VariantEntry",
    "apply_variant",
    "apply_variants",
    "canonical_request",
    "harness_context_length",
    "harness_records",
    "model_context_length",
    "plan_variants",
    "run_harness",
    "server_messages",
]
