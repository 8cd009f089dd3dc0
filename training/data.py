"""Training data: sources (xLAM files, `messages` files, the curriculum), the leakage
check, rendering with the evaluation's renderer, mixing with per-source weights, and
the data manifest.

Formats of a `path` source (`format`, or `auto` from the first row's keys; read by
`loragate.training.sources`):

- `xlam`: Salesforce xLAM function-calling rows `{"query", "tools", "answers"}` (`tools`
  and `answers` may be JSON strings, as in the published dataset) in JSON, JSONL or
  parquet, read through `datasets`. Each row becomes a user turn and an assistant turn
  with the answers as tool calls; its tools are converted to JSON Schema parameters.
- `messages`: JSONL of `{"messages": [...], "tools"?: [...], "family"?, "id"?}`, as
  `loragate curriculum` writes. Read with the json module, not `datasets`: Arrow would
  unify differing tool-call argument objects into one struct and add null keys.

Every example is rendered by `loragate.generate.prompt.ChatRenderer.render_training_example`, so
training sees the prompt exactly as evaluation renders it, and tokenised here into
`input_ids` plus a `completion_mask` (loss on the final assistant turn only).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loragate.common.errors import BadInput, Problem
from loragate.common.files import atomic_write_text, file_sha256
from loragate.common.resources import user_or_bundled
from loragate.training.curriculum import generate_curriculum
from loragate.training.curriculum_load import curriculum_path, load_curriculum
from loragate.training.data_spec import (
    CurriculumSpec,
    DataConfig,
    DataManifest,
    SourceSpec,
    SourceStats,
)
from loragate.training.example import TrainingExample, example_problems
from loragate.training.leakage import LeakageIndex, check_leakage
from loragate.training.sources import messages_example, read_rows, sniff_format, xlam_example

if TYPE_CHECKING:
    from loragate.evalset.load import Evalset
    from loragate.generate.prompt import ChatRenderer
    from loragate.training.leakage import LeakageReport

# -- loading ---------------------------------------------------------------------------


@dataclass
class LoadedSource:
    """A source's examples after loading and validation, with bookkeeping."""

    spec: SourceSpec
    examples: list[TrainingExample]
    format: Literal["xlam", "messages"]
    sha256: str
    rows: int
    dropped: Counter[str] = field(default_factory=Counter)
    jsonl: str | None = None
    """The generated JSONL (curriculum sources), to be written beside the adapter."""


def load_source(spec: SourceSpec, evalset: Evalset, base_dir: Path | None = None) -> LoadedSource:
    """Read (or generate) one source and validate its examples.

    Examples without their own tools are validated against the evalset's toolset and
    governance policy; xLAM examples (own tools, loose types) only by tool name.
    `BadInput` lists invalid rows unless the source has `skip_invalid: true`.
    """
    if spec.curriculum is not None:
        return _curriculum_source(spec, spec.curriculum, evalset)
    path = _source_path(spec, base_dir)
    fmt: Literal["xlam", "messages"] = sniff_format(path) if spec.format == "auto" else spec.format
    rows = read_rows(path, fmt)
    examples, problems = _valid_examples(spec.name, path, fmt, rows, evalset)
    if problems and not spec.skip_invalid:
        raise BadInput(
            f"data source `{spec.name}`: {len(rows) - len(examples)} invalid row(s) in {path}"
            + (" (first 20 problems listed)" if len(problems) > 20 else ""),
            [
                *problems[:20],
                Problem(
                    "recipe",
                    "invalid rows fail the run",
                    field=f"data.sources.{spec.name}.skip_invalid",
                    fix="fix the rows, or set `skip_invalid: true` to drop and count them",
                ),
            ],
        )
    dropped: Counter[str] = Counter()
    if len(examples) < len(rows):
        dropped["invalid"] = len(rows) - len(examples)
    return LoadedSource(
        spec=spec,
        examples=examples,
        format=fmt,
        sha256=file_sha256(path),
        rows=len(rows),
        dropped=dropped,
    )


def _curriculum_source(
    spec: SourceSpec, curriculum: CurriculumSpec, evalset: Evalset
) -> LoadedSource:
    """A source generated from the evalset's curriculum, its examples named after it."""
    generated = generate_curriculum(
        curriculum.families,
        load_curriculum(evalset.root),
        evalset.toolset,
        evalset.policy,
        curriculum.seed,
    )
    renamed = [
        TrainingExample(
            id=f"{spec.name}:{e.id}",
            messages=e.messages,
            source=spec.name,
            family=e.family,
            tools=e.tools,
            tags=e.tags,
        )
        for e in generated
    ]
    jsonl = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in renamed)
    return LoadedSource(
        spec=spec,
        examples=renamed,
        format="messages",
        sha256=hashlib.sha256(jsonl.encode("utf-8")).hexdigest(),
        rows=len(renamed),
        jsonl=jsonl,
    )


def _source_path(spec: SourceSpec, base_dir: Path | None) -> Path:
    """The file of a `path` source: a user's or a bundled file, else relative to the
    recipe's folder; `BadInput` when there is none."""
    if spec.path is None:  # SourceSpec's validator makes this unreachable
        raise BadInput(
            f"data source `{spec.name}` has neither `path` nor `curriculum`",
            fix="give the source a `path` or `curriculum`",
        )
    path = user_or_bundled(spec.path)
    if not path.is_absolute() and base_dir is not None and not path.exists():
        path = base_dir / path
    if not path.is_file():
        raise BadInput(
            f"data source `{spec.name}`: file {spec.path} does not exist",
            [Problem("recipe", "no such file", field=f"data.sources.{spec.name}.path")],
        )
    return path


def _valid_examples(
    name: str,
    path: Path,
    fmt: Literal["xlam", "messages"],
    rows: Sequence[Any],
    evalset: Evalset,
) -> tuple[list[TrainingExample], list[Problem]]:
    """The rows that make valid examples, and the problems of the others."""
    maker = xlam_example if fmt == "xlam" else messages_example
    examples: list[TrainingExample] = []
    problems: list[Problem] = []
    for i, row in enumerate(rows):
        try:
            ex = maker(row, i, name)
        except ValueError as exc:
            line = i + 1 if fmt == "messages" else None
            problems.append(Problem(str(path), str(exc), line=line, field=f"row {i}"))
            continue
        own_tools = ex.tools is not None
        issues = example_problems(
            ex, None if own_tools else evalset.toolset, None if own_tools else evalset.policy
        )
        if issues:
            problems += [Problem(str(path), p, field=f"row {i} ({ex.id})") for p in issues]
            continue
        examples.append(ex)
    return examples, problems


# -- shaping and rendering -------------------------------------------------------------


def related_tools(evalset: Evalset) -> dict[str, tuple[str, ...]]:
    """Curriculum template name -> the tools its examples are about without calling
    them (a clarify question's tool), from the evalset's `curriculum.yaml`; none when
    the evalset has no curriculum."""
    if not curriculum_path(evalset.root).is_file():
        return {}
    return load_curriculum(evalset.root).related


def _tool_subset(
    ex: TrainingExample,
    evalset: Evalset,
    distractors: int,
    seed: int,
    related: Mapping[str, tuple[str, ...]],
) -> list[dict[str, Any]]:
    """The evalset tools `ex` calls or asks about (`related`: by template tag), plus
    `distractors` others (seeded by example id), in the toolset's own order."""
    wanted = set(ex.called_tools())
    for tag in ex.tags:
        wanted.update(related.get(tag, ()))
    conf = evalset.policy.confirmation_tool
    for m in ex.messages:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            args = fn.get("arguments")
            # A confirmation request names the action it would unlock: show that tool too.
            if (
                fn.get("name") == conf
                and isinstance(args, dict)
                and args.get("action") in evalset.toolset
            ):
                wanted.add(str(args["action"]))
    if conf and wanted & set(evalset.policy.destructive_tools):
        wanted.add(conf)
    others = [n for n in evalset.toolset.names() if n not in wanted]
    rng = random.Random(f"loragate-tools:{seed}:{ex.id}")
    wanted.update(rng.sample(others, min(distractors, len(others))))
    return [t for t in evalset.toolset.as_openai() if t["function"]["name"] in wanted]


def shaped_messages(
    ex: TrainingExample,
    spec: SourceSpec,
    fmt: str,
    evalset: Evalset,
    seed: int,
    related: Mapping[str, tuple[str, ...]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) of `ex` as rendered for training: system prompt and tool list
    chosen by the source's `system_prompt` and `tools` options (`related`: see
    `related_tools`)."""
    messages = list(ex.messages)
    use_system = spec.system_prompt == "evalset" or (spec.system_prompt == "auto" and fmt != "xlam")
    system = evalset.manifest.system_prompt
    if use_system and system and not (messages and messages[0].get("role") == "system"):
        messages = [{"role": "system", "content": system.strip()}, *messages]
    if ex.tools is not None:
        tools = ex.tools
    elif spec.tools == "called":
        tools = _tool_subset(ex, evalset, spec.distractor_tools, seed, related)
    else:
        tools = evalset.toolset.as_openai()
    return messages, tools


@dataclass(frozen=True)
class TokenizedExample:
    """One example ready for the trainer."""

    example_id: str
    source: str
    input_ids: list[int]
    completion_mask: list[int]
    """1 on the tokens the loss is computed on (the final assistant turn)."""


def tokenize_example(
    renderer: ChatRenderer,
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
) -> tuple[list[int], list[int]]:
    """(input_ids, completion_mask) of one conversation.

    Prompt and completion are tokenised separately (no special tokens added: the
    template writes them), so the prompt tokens are exactly those a runner feeds the
    model at evaluation time. Text after the end-of-turn token (the template's
    trailing newline) is not trained on: generation stops at that token.
    """
    prompt, completion = renderer.render_training_example(messages, tools)
    eos = getattr(tokenizer, "eos_token", None)
    if isinstance(eos, str) and eos and eos in completion:
        completion = completion[: completion.rfind(eos) + len(eos)]
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    c_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    return list(p_ids) + list(c_ids), [0] * len(p_ids) + [1] * len(c_ids)


@dataclass
class PreparedData:
    """Everything `train()` needs from the data side."""

    rows: list[TokenizedExample]
    """The mix in training order (upweighted sources repeat their rows)."""
    manifest: DataManifest
    leakage: LeakageReport
    sources: list[LoadedSource]


def _take(examples: list[TrainingExample], n: int, seed: str) -> list[TrainingExample]:
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(examples)), n))
    return [examples[i] for i in picked]


def upweight(n: int, weight: float, rng: random.Random) -> list[int]:
    """Indices 0..n-1 repeated int(weight) times, plus a seeded sample of
    round((weight - int(weight)) * n) of them once more."""
    whole = int(weight)
    frac = weight - whole
    out = [i for _ in range(whole) for i in range(n)]
    extra = round(frac * n)
    if extra:
        out += sorted(rng.sample(range(n), extra))
    return out


def prepare_data(
    config: DataConfig,
    evalset: Evalset,
    renderer: ChatRenderer,
    tokenizer: Any,
    max_length: int,
    *,
    allow_leakage: bool = False,
    base_dir: Path | None = None,
    echo: Any = None,
) -> PreparedData:
    """Load every source, check leakage, render, tokenise and mix.

    Leakage: overlapping examples fail the run (`BadInput` listing them) unless the
    recipe says `leakage.drop` (they are dropped and counted) or `allow_leakage` (they
    are kept, and the manifest carries a warning for the model card). Examples longer
    than `max_length` tokens are dropped and counted, never truncated: a cut-off
    completion would teach the model to stop mid-call.
    """
    say = echo or (lambda _msg: None)
    loaded = [load_source(spec, evalset, base_dir) for spec in config.sources]
    report, warnings = _check_leakage(loaded, evalset, config, allow_leakage, say)
    related = related_tools(evalset) if any(s.spec.tools == "called" for s in loaded) else {}
    rng = random.Random(f"loragate-mix:{config.seed}")
    per_source = [
        _tokenized(src, config.seed, evalset, renderer, tokenizer, max_length, related)
        for src in loaded
    ]
    mix: list[TokenizedExample] = []
    for src, rows in zip(loaded, per_source, strict=True):
        mix += [rows[i] for i in upweight(len(rows), src.spec.weight, rng)]
    rng.shuffle(mix)
    if not mix:
        raise BadInput(
            "the training mix is empty (every source has weight 0)",
            fix="give at least one source a positive weight",
        )
    h = hashlib.sha256()
    for r in mix:
        h.update(json.dumps([r.input_ids, r.completion_mask], separators=(",", ":")).encode())
    flagged = report.flagged_ids
    manifest = DataManifest(
        evalset={"name": evalset.name, "version": evalset.version, "sha256": evalset.sha256},
        seed=config.seed,
        max_length=max_length,
        chat_template=f"{renderer.source} sha256:{renderer.template_sha256}",
        sources=[_source_stats(src, mix) for src in loaded],
        total_rows=len(mix),
        total_tokens=sum(len(r.input_ids) for r in mix),
        total_completion_tokens=sum(sum(r.completion_mask) for r in mix),
        mix_sha256=h.hexdigest(),
        leakage={
            **report.to_json(),
            "allowed": bool(flagged) and allow_leakage,
            "dropped": bool(flagged) and not allow_leakage and config.leakage.drop,
        },
        warnings=warnings,
    )
    return PreparedData(rows=mix, manifest=manifest, leakage=report, sources=loaded)


def _check_leakage(
    loaded: list[LoadedSource],
    evalset: Evalset,
    config: DataConfig,
    allow_leakage: bool,
    say: Any,
) -> tuple[LeakageReport, list[str]]:
    """(the leakage report, the manifest's warnings): overlapping examples fail the run
    (`BadInput`), are dropped from their sources (`leakage.drop`), or kept with a
    warning (`allow_leakage`)."""
    index = LeakageIndex.from_evalset(evalset, config.leakage.threshold, config.leakage.containment)
    report = check_leakage((ex for src in loaded for ex in src.examples), index)
    flagged = report.flagged_ids
    if not flagged:
        say(
            f"leakage check: {report.examples_checked} examples against "
            f"{report.eval_turns} eval user turns: no overlap"
        )
        return report, []
    say(
        f"leakage check: {len(flagged)} training example(s) overlap the eval entries "
        f"of {evalset.name} {evalset.version} ({report.counts()}):"
    )
    for line in report.lines():
        say("  " + line)
    if allow_leakage:
        msg = (
            f"trained with {len(flagged)} example(s) that overlap the eval entries of "
            f"{evalset.name} {evalset.version} (--allow-leakage); the eval scores of this "
            "adapter may be inflated"
        )
        say("WARNING: " + msg)
        return report, [msg]
    if not config.leakage.drop:
        raise BadInput(
            f"{len(flagged)} training example(s) overlap the eval entries "
            f"(exact or near-duplicate user turns); refusing to train",
            [
                Problem(
                    h.source or "data",
                    f"{h.kind} match ({h.similarity:.2f}) with eval entry {h.entry_id}: {h.train_text[:80]!r}",
                    field=h.example_id,
                )
                for h in report.hits[:20]
            ]
            + [
                Problem(
                    "recipe",
                    "eval entries must not be trained on",
                    field="data.leakage",
                    fix="remove them, set `leakage: {drop: true}`, or pass --allow-leakage "
                    "(the model card will then carry a warning)",
                )
            ],
        )
    say(f"dropping the {len(flagged)} overlapping example(s) (leakage.drop: true)")
    for src in loaded:
        before = len(src.examples)
        src.examples = [e for e in src.examples if e.id not in flagged]
        if before - len(src.examples):
            src.dropped["leakage"] += before - len(src.examples)
    return report, []


def _tokenized(
    src: LoadedSource,
    seed: int,
    evalset: Evalset,
    renderer: ChatRenderer,
    tokenizer: Any,
    max_length: int,
    related: dict[str, tuple[str, ...]],
) -> list[TokenizedExample]:
    """One source's examples (at most its `limit`), shaped, rendered and tokenised; those
    longer than `max_length` dropped and counted; `BadInput` when none is left of a
    source with weight."""
    spec = src.spec
    if spec.limit is not None and len(src.examples) > spec.limit:
        src.dropped["limit"] += len(src.examples) - spec.limit
        src.examples = _take(src.examples, spec.limit, f"loragate-limit:{seed}:{spec.name}")
    rows: list[TokenizedExample] = []
    for ex in src.examples:
        messages, tools = shaped_messages(ex, spec, src.format, evalset, seed, related)
        ids, mask = tokenize_example(renderer, tokenizer, messages, tools)
        if len(ids) > max_length:
            src.dropped["too_long"] += 1
            continue
        rows.append(TokenizedExample(ex.id, spec.name, ids, mask))
    if not rows and spec.weight > 0:
        raise BadInput(
            f"data source `{spec.name}` has no usable example left "
            f"(dropped: {dict(src.dropped) or 'none'})",
            [
                Problem(
                    "recipe",
                    "empty source",
                    field=f"data.sources.{spec.name}",
                    fix="raise `max_length` or check the data",
                )
            ],
        )
    kept_ids = {r.example_id for r in rows}
    src.examples = [e for e in src.examples if e.id in kept_ids]
    return rows


def _source_stats(src: LoadedSource, mix: list[TokenizedExample]) -> SourceStats:
    """A source's line of the data manifest: what it held, what was dropped, its share."""
    mine = [r for r in mix if r.source == src.spec.name]
    return SourceStats(
        name=src.spec.name,
        kind="curriculum" if src.spec.curriculum is not None else "file",
        path=src.spec.path,
        format=src.format,
        sha256=src.sha256,
        curriculum=src.spec.curriculum.model_dump() if src.spec.curriculum else None,
        rows=src.rows,
        dropped=dict(src.dropped),
        examples=len(src.examples),
        families=dict(Counter(e.family for e in src.examples if e.family)),
        weight=src.spec.weight,
        in_mix=len(mine),
        share=len(mine) / len(mix),
        tokens=sum(len(r.input_ids) for r in mine),
        completion_tokens=sum(sum(r.completion_mask) for r in mine),
    )


def mix_table(manifest: DataManifest) -> str:
    """The per-source table printed before training: count and share of the mix."""
    header = f"{'source':<22} {'examples':>8} {'weight':>6} {'in mix':>7} {'share':>7} {'tokens':>9} {'dropped':<20}"
    lines = [header, "-" * len(header)]
    for s in manifest.sources:
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(s.dropped.items())) or "-"
        lines.append(
            f"{s.name:<22} {s.examples:>8} {s.weight:>6g} {s.in_mix:>7} {s.share:>6.1%} "
            f"{s.tokens:>9} {dropped:<20}"
        )
    lines.append("-" * len(header))
    lines.append(
        f"{'total':<22} {sum(s.examples for s in manifest.sources):>8} {'':>6} "
        f"{manifest.total_rows:>7} {1:>6.1%} {manifest.total_tokens:>9}"
    )
    return "\n".join(lines)


def write_jsonl(path: Path, examples: Sequence[TrainingExample]) -> None:
    """Write examples in the `messages` format, one a line."""
    atomic_write_text(
        path, "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in examples)
    )


__all__ = [
    "LoadedSource",
    "PreparedData",
    "TokenizedExample",
    "load_source",
    "mix_table",
    "prepare_data",
    "related_tools",
    "shaped_messages",
    "tokenize_example",
    "upweight",
    "write_jsonl",
]
