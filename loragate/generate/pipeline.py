"""Generation orchestration behind `loragate run`: plan, reuse the cache, generate.

`plan_run(config)` does everything that needs no model: loads the evalset, resolves
the base model (converting the embedded default once), inspects every adapter,
renders every prompt, computes every cache key, and reads the run folder's
`generations.jsonl` to find what is already done. All bad input surfaces here, as
`BadInput`, before any engine starts. `execute_run(plan)` then starts the runner
only when something is left to generate, streams records into `generations.jsonl`
(never writing a cache key twice) and returns the records of the run's jobs.

Prompts: local backends (`Backend.local`: vllm, hf) get the chat-template rendering of
`loragate.generate.prompt`. Server backends (openai) and replay render nothing locally;
their `PromptJob.prompt` is the canonical JSON of the request's messages and tools, so
the cache key still changes whenever the request would.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from loragate import runners  # the registry, read at call time (tests stand in runners)
from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.calls.stack import ResolvedStack, resolve_stack
from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.common.files import atomic_write_json
from loragate.common.jsonguard import loads
from loragate.evalset.input_files import evalset_record
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.evalset import Entry
from loragate.formats.manifest import (
    BASE_ADAPTER,
    AdapterInfo,
    BaseProbe,
    ModelRecord,
    RunManifest,
    SelfCheck,
    adapter_record,
    check_compatible,
    git_revision,
    host_info,
    now_iso,
    package_versions,
)
from loragate.formats.records import GenerationRecord
from loragate.formats.run_identity import describe, same_run
from loragate.formats.runfolder import (
    GENERATIONS,
    MANIFEST,
    GenerationWriter,
    cached_generations,
    drop_torn_tail,
    read_manifest,
    refuse_foreign_folder,
    retire_scored,
)
from loragate.generate.adapters import RANK_FIX, inspect_adapters
from loragate.generate.config import RunConfig
from loragate.generate.embedded import (
    EMBEDDED,
    embedded_checkpoint,
    embedded_info,
    embedded_name,
)
from loragate.generate.harness_apply import (
    AppliedVariant,
    harness_records,
    plan_variants,
    run_harness,
)
from loragate.generate.jobs import build_jobs
from loragate.generate.model_source import check_model_source
from loragate.generate.prompt import (
    ChatRenderer,
    load_renderer,
    resolve_template,
)
from loragate.runners import (
    PromptJob,
    Runner,
    RunnerSetup,
    check_available,
    get_backend,
)


@dataclass
class RunPlan:
    """A fully checked run: what to generate, what is cached, where it goes."""

    config: RunConfig
    backend: str
    evalset: Evalset
    """The evalset restricted to the selected entries (--limit / --families)."""
    out_dir: Path
    setup: RunnerSetup
    jobs: list[PromptJob]
    cached: dict[str, GenerationRecord]
    """Records already in `generations.jsonl`, by cache key, for this run's jobs."""
    manifest: RunManifest
    renderer: ChatRenderer | None = None
    variants: list[AppliedVariant] = field(default_factory=list)
    """The harness variants generated beside the default harness (docs/harness.md)."""
    stack: ServingStack = DEFAULT_STACK
    """The serving stack the run models (what its outputs are judged as)."""
    previous: dict[str, Any] = field(default_factory=dict)
    """The folder's `manifest.json` before this run (empty: none): the run it held."""

    @property
    def pending(self) -> list[PromptJob]:
        return [j for j in self.jobs if j.cache_key not in self.cached]

    @property
    def to_generate(self) -> list[PromptJob]:
        """The pending jobs, one per cache key: two names for the same weights (an A/A
        check) share one cache key and are generated once."""
        return list({j.cache_key: j for j in self.pending}.values())


@dataclass
class GenerationOutcome:
    records: list[GenerationRecord]
    """One record per job, in job order."""
    generated: int
    cached: int
    manifest: RunManifest
    extra: dict[str, Any] = field(default_factory=dict)
    replaced: str | None = None
    """Set when the folder held another run, whose scores this run removed: what."""


def resolve_backend(backend: str) -> str:
    """`auto` -> `vllm` when vLLM is importable, else `hf`."""
    if backend != "auto":
        return backend
    return "vllm" if importlib.util.find_spec("vllm") is not None else "hf"


def select_entries(evalset: Evalset, *, families: list[str] | None, limit: int | None) -> Evalset:
    """The evalset restricted to `families` (names) and then to `limit` entries taken
    across the families in turn (the first of each family, then the second, ...), so a
    quick look covers every family; entries keep their evalset order."""
    entries = evalset.entries
    if families:
        known = sorted({e.family for e in entries})
        unknown = [f for f in families if f not in known]
        if unknown:
            raise BadInput(
                f"--families: {', '.join(unknown)} not in evalset {evalset.name}",
                [
                    Problem(
                        "--families",
                        f"unknown family {f!r}",
                        fix=unknown_name_fix(f, known, "families in this evalset"),
                    )
                    for f in unknown
                ],
            )
        entries = [e for e in entries if e.family in families]
    if limit is not None:
        if limit < 1:
            raise BadInput("--limit must be at least 1", fix="pass --limit 1 or more")
        entries = _round_robin(entries, limit)
    if len(entries) == len(evalset.entries):
        return evalset
    expects = {e.id: evalset.expects[e.id] for e in entries}
    return dataclasses.replace(evalset, entries=entries, expects=expects, by_id={})


def _round_robin(entries: list[Entry], limit: int) -> list[Entry]:
    by_family: dict[str, list[Entry]] = {}
    for e in entries:
        by_family.setdefault(e.family, []).append(e)
    chosen: set[str] = set()
    for row in itertools.zip_longest(*by_family.values()):
        for e in row:
            if e is not None and len(chosen) < limit:
                chosen.add(e.id)
    return [e for e in entries if e.id in chosen]


def run_folder(config: RunConfig, config_path: Path | None) -> Path:
    """Where the run goes: `out`, else `runs/<name>`; `BadInput` for a file, or a folder
    of the user's names a run writes (`refuse_foreign_folder`)."""
    out_dir = Path(config.out or Path("runs") / default_run_name(config, config_path))
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(
            f"--out {out_dir} exists and is not a folder",
            [Problem(str(out_dir), "a file, not a run folder", fix="pass a folder path as --out")],
        )
    refuse_foreign_folder(out_dir, "run")
    return out_dir


def default_run_name(config: RunConfig, config_path: Path | None) -> str:
    """The run folder name: `name`, else the config file's stem, else the model's (the
    embedded model's name when the config names none: `loragate run` alone writes
    `runs/smollm2-135m`)."""
    if config.name:
        return config.name
    label = config_path.stem if config_path is not None else None
    label = label or embedded_name(config.model, config.embedded) or (config.model or "run")
    slug = re.sub(r"[^A-Za-z0-9_.+-]+", "-", label.rstrip("/").rsplit("/", 1)[-1])
    slug = slug.strip("-._+")[:100]
    return slug or datetime.now().strftime("%Y%m%d-%H%M%S")


@dataclass(frozen=True)
class _Model:
    path: str
    id: str
    revision: str | None
    aliases: tuple[str, ...]
    chat_template: str | None
    source_sha256: str | None = None


def _resolve_model(config: RunConfig, backend: str) -> _Model:
    embedded = embedded_name(config.model, config.embedded)
    if embedded is not None:
        spec = EMBEDDED[embedded]
        if get_backend(backend).local:
            emb_path = str(embedded_checkpoint(embedded))
            source_sha = embedded_info(embedded).get("source_sha256")
        else:
            emb_path, source_sha = spec.hub_id, None
        return _Model(
            path=emb_path,
            id=f"embedded:{embedded}",
            revision=None,
            aliases=(f"embedded:{embedded}", spec.hub_id, emb_path),
            chat_template=config.chat_template or spec.chat_template,
            source_sha256=source_sha,
        )
    model = config.model or ""
    local = Path(model).expanduser()
    aliases: list[str] = [model]
    path: str = model
    if local.is_dir():
        path = str(local.resolve())
        aliases.append(path)
        cfg_file = local / "config.json"
        if cfg_file.is_file():
            try:
                inner = loads(cfg_file.read_text(encoding="utf-8"))[0].get("_name_or_path")
            except (ValueError, AttributeError, OSError):  # JsonRefused is a ValueError
                inner = None
            if isinstance(inner, str) and inner:
                aliases.append(inner)
    elif get_backend(backend).local and (model.startswith((".", "/", "~")) or local.exists()):
        raise BadInput(
            f"model folder {model} does not exist",
            [Problem("config", f"{model} is not a folder", field="model", fix="check the path")],
        )
    return _Model(
        path=path,
        id=model,
        revision=config.revision,
        aliases=tuple(aliases),
        chat_template=config.chat_template,
    )


def _adapters(config: RunConfig, backend: str, model: _Model) -> list[AdapterInfo]:
    runner = get_backend(backend)
    limit = runner.rank_limit(config.options_of(backend))
    return inspect_adapters(
        config.adapters,
        base_aliases=model.aliases,
        max_rank=limit.rank if limit is not None else None,
        rank_fix=limit.fix if limit is not None else RANK_FIX,
        allow_pickle=config.allow_pickle,
        ignore_base_mismatch=config.ignore_base_mismatch,
        server_side_ok=runner.served_adapters,
    )


@dataclass(frozen=True)
class _Inputs:
    """What a run reads before it plans: the backend, the evalset (whole and selected),
    the model, the adapters and (local backends) the chat renderer."""

    backend: str
    full: Evalset
    evalset: Evalset
    model: _Model
    adapters: list[AdapterInfo]
    renderer: ChatRenderer | None


def plan_run(
    config: RunConfig,
    *,
    config_path: Path | None = None,
    limit: int | None = None,
    families: list[str] | None = None,
    harness: list[str] | None = None,
) -> RunPlan:
    """Check everything and work out what to generate; loads no model. `harness`:
    `--harness` (None: the config's `harness.run`)."""
    inputs = _load_inputs(config, limit=limit, families=families)
    variants = _plan_harness(config, inputs, harness)
    jobs = build_jobs(
        inputs.evalset,
        renderer=inputs.renderer,
        config=config,
        model_id=inputs.model.id,
        revision=inputs.model.revision,
        adapters=inputs.adapters,
        variants=variants,
    )
    out_dir = run_folder(config, config_path)
    resolved = _serving_stack(config, inputs)
    manifest = _manifest(config, inputs, resolved, jobs, variants)
    previous = read_manifest(out_dir) if out_dir.is_dir() else {}
    check_compatible(previous, manifest, out_dir)
    cached = cached_generations(out_dir / GENERATIONS, {j.cache_key for j in jobs})
    manifest.cached = len(cached)
    setup = RunnerSetup(
        config=config,
        model_path=inputs.model.path,
        model_id=inputs.model.id,
        adapters=tuple(inputs.adapters),
        tools=inputs.evalset.toolset.as_openai(),
        generations_file=Path(config.generations) if config.generations else None,
        stack=resolved.stack,
    )
    return RunPlan(
        config=config,
        backend=inputs.backend,
        evalset=inputs.evalset,
        out_dir=out_dir,
        setup=setup,
        jobs=jobs,
        cached=cached,
        manifest=manifest,
        renderer=inputs.renderer,
        variants=variants,
        stack=resolved.stack,
        previous=previous,
    )


def _load_inputs(config: RunConfig, *, limit: int | None, families: list[str] | None) -> _Inputs:
    """The backend (its extra installed), the evalset and its selection, the model, the
    adapters (inspected) and, for a local backend, the chat renderer."""
    backend = resolve_backend(config.backend)
    check_available(backend)
    full = load_evalset(config.evalset)
    evalset = select_entries(full, families=families, limit=limit)
    model = _resolve_model(config, backend)
    check_model_source(model.path, model.revision, loads=get_backend(backend).local)
    adapters = _adapters(config, backend, model)
    renderer: ChatRenderer | None = None
    if get_backend(backend).local:
        renderer = load_renderer(
            model.path,
            chat_template=model.chat_template,
            enable_thinking=config.enable_thinking,
            trust_remote_code=config.trust_remote_code,
            revision=None if os.path.isdir(model.path) else model.revision,
        )
    return _Inputs(backend, full, evalset, model, adapters, renderer)


def _plan_harness(
    config: RunConfig, inputs: _Inputs, harness: list[str] | None
) -> list[AppliedVariant]:
    """The harness variants the run generates beside the default harness."""
    harness_config = run_harness(config, inputs.backend, harness, inputs.evalset)
    return plan_variants(
        config.model_copy(update={"harness": harness_config}),
        full=inputs.full,
        entries=select_entries(inputs.evalset, families=None, limit=harness_config.entries).entries,
        renderer=inputs.renderer,
        backend=inputs.backend,
        model_path=inputs.model.path,
        names=harness,
    )


def _serving_stack(config: RunConfig, inputs: _Inputs) -> ResolvedStack:
    """The serving stack the outputs are judged as (`auto` settings decided from the
    chat template and the model)."""
    renderer, model = inputs.renderer, inputs.model
    template, template_source = (
        (renderer.template, renderer.source) if renderer is not None else (None, "(server)")
    )
    if renderer is None and model.chat_template is not None:
        # No tokenizer is loaded for a server or replay run; a named template still
        # says which call format the model was taught.
        path = resolve_template(model.chat_template)
        template, template_source = path.read_text(encoding="utf-8"), str(path)
    return resolve_stack(
        call_format=config.tool_call_format,
        reasoning_parser=config.reasoning_parser,
        enable_thinking=config.enable_thinking,
        template=template,
        template_source=template_source,
        model_id=model.id,
        model_path=model.path,
    )


def _manifest(
    config: RunConfig,
    inputs: _Inputs,
    resolved: ResolvedStack,
    jobs: list[PromptJob],
    variants: list[AppliedVariant],
) -> RunManifest:
    """The run's `manifest.json` as it stands before anything is generated."""
    model, renderer, full = inputs.model, inputs.renderer, inputs.full
    options = config.options_of(inputs.backend)
    return RunManifest(
        model=ModelRecord(
            id=model.id,
            revision=model.revision,
            path=model.path,
            source_sha256=model.source_sha256,
            dtype=config.dtype,
        ),
        adapters=[adapter_record(a) for a in inputs.adapters],
        include_base=config.include_base,
        evalset=evalset_record(full),
        entries=len(inputs.evalset.entries),
        entry_ids=[e.id for e in inputs.evalset.entries],
        sampling=config.sampling.model_dump(),
        seed=config.sampling.seed,
        backend=inputs.backend,
        chat_template=renderer.source if renderer else "(server)",
        chat_template_sha256=renderer.template_sha256 if renderer else "",
        enable_thinking=config.enable_thinking,
        tool_call_format=resolved.stack.call_format,
        reasoning_parser=resolved.stack.reasoning_parser,
        stack=resolved.stack.describe() + (f" ({resolved.how})" if resolved.how else ""),
        engine=options.model_dump() if options is not None else {},
        packages=package_versions(),
        git_revision=git_revision(),
        host=host_info(),
        started_at=now_iso(),
        jobs=len(jobs),
        harness=harness_records(variants),
    )


class LazyRunner:
    """The run's runner, started on first use, so that the entries and the episodes of
    a run share one engine and a fully cached run starts none."""

    def __init__(self, backend: str, setup: RunnerSetup) -> None:
        self.backend = backend
        self.setup = setup
        self._runner: Runner | None = None

    def get(self) -> Runner:
        if self._runner is None:
            self._runner = runners.get_runner(self.backend)(self.setup)
        return self._runner

    def warnings(self) -> list[str]:
        """The started runner's warnings (none when it never started)."""
        return self._runner.warnings() if self._runner is not None else []

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def take_over(plan: RunPlan) -> str | None:
    """Before a run's first write into its folder: when the folder holds the scored files
    of another run, remove them (its generations stay, as the cache), so that the folder
    never holds one run's manifest beside another's scores. Returns a note saying what
    was removed, or None."""
    if same_run(plan.previous, plan.manifest.model_dump(mode="json")):
        return None
    removed = retire_scored(plan.out_dir)
    if not removed:
        return None
    held = describe(plan.previous) if plan.previous else "scored by `loragate score`"
    return (
        f"{plan.out_dir} held another run ({held}): this run replaces it and removed its "
        f"{', '.join(removed)}; its generations stay in {GENERATIONS} as cache "
        "(--out NEW keeps two runs side by side)"
    )


class CacheAppender:
    """The sink of a plan's pending jobs: appends each fresh record to the run folder's
    `generations.jsonl` (flushed), never a cache key twice and never one the plan did
    not ask for. The manifest is written before the first record, so a run that fails
    to start leaves no files; before it, `take_over` clears another run's scores out of
    the folder (`note` says so). `done` holds every record of the plan by cache key."""

    def __init__(
        self,
        plan: RunPlan,
        pending: list[PromptJob],
        on_records: Callable[[list[GenerationRecord]], None] | None = None,
    ) -> None:
        self.plan = plan
        self.wanted = {j.cache_key for j in pending}
        self.done: dict[str, GenerationRecord] = dict(plan.cached)
        self.generated = 0
        self.on_records = on_records
        self.note: str | None = None
        self.wrote = False
        self._writer: GenerationWriter | None = None
        plan.out_dir.mkdir(parents=True, exist_ok=True)
        if pending:
            drop_torn_tail(plan.out_dir / GENERATIONS)

    def __call__(self, records: list[GenerationRecord]) -> None:
        # A runner that answers a job twice (or a retried worker), or one it was not
        # given, must not put a duplicate into the cache: keep the first per cache key.
        fresh: dict[str, GenerationRecord] = {}
        for r in records:
            key = r.cache_key
            if key is not None and key in self.wanted and key not in self.done:
                fresh.setdefault(key, r)
        if not fresh:
            return
        if self._writer is None:
            self.write_manifest()
            self._writer = GenerationWriter(self.plan.out_dir / GENERATIONS)
        self._writer.append(fresh.values())
        self.done.update(fresh)
        self.generated += len(fresh)
        if self.on_records is not None:
            self.on_records(list(fresh.values()))

    def write_manifest(self) -> None:
        """Write the plan's manifest (the first time: after `take_over`)."""
        if not self.wrote:
            self.note = take_over(self.plan)
            self.wrote = True
        atomic_write_json(self.plan.out_dir / MANIFEST, self.plan.manifest.model_dump(mode="json"))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def execute_run(
    plan: RunPlan,
    *,
    on_records: Callable[[list[GenerationRecord]], None] | None = None,
    runner: LazyRunner | None = None,
    on_started: Callable[[], None] | None = None,
) -> GenerationOutcome:
    """Generate the pending jobs (starting the runner only if there are any) and
    return one record per job. `on_records` sees each persisted batch (progress),
    `on_started` the moment the runner is up. A `runner` given is left open for the
    caller to use and close."""
    manifest = plan.manifest
    pending = plan.to_generate
    appender = CacheAppender(plan, pending, on_records)
    if pending:
        lazy = runner if runner is not None else LazyRunner(plan.backend, plan.setup)
        try:
            engine = lazy.get()
            if on_started is not None:
                on_started()
            engine.generate(pending, appender)
            manifest.warnings += engine.warnings()
            probe = _base_probe(plan, pending, appender.done, engine)
        finally:
            if runner is None:
                lazy.close()
            appender.close()
    else:
        probe = None
    done, generated = appender.done, appender.generated
    missing = [j for j in plan.jobs if j.cache_key not in done]
    if missing:
        raise RuntimeError(
            f"the {plan.backend} runner returned no generation for {len(missing)} job(s), "
            f"e.g. {missing[0].entry_id}/{missing[0].adapter}/{missing[0].sample}"
        )
    records = [_named(done[j.cache_key], j.adapter) for j in plan.jobs]
    manifest.generated = generated
    manifest.finished_at = now_iso()
    manifest.self_check = self_check(plan, records, probe)
    appender.write_manifest()
    if probe is not None and probe.differing:
        raise GenerationMismatch(
            f"the base model's outputs in the batch with the adapters differ from a batch "
            f"of the base alone on {', '.join(probe.differing)}: the engine served base "
            f"requests with an adapter, so {plan.out_dir / GENERATIONS} holds wrong base "
            "generations",
            fix="delete the run folder and evaluate the base in a run of its own "
            "(--no-base for the adapters); report the engine version",
        )
    return GenerationOutcome(
        # The cache is shared between names of the same weights; results carry the name
        # this run asked for.
        records=records,
        generated=generated,
        cached=len(plan.cached),
        manifest=manifest,
        replaced=appender.note,
    )


def _named(record: GenerationRecord, adapter: str) -> GenerationRecord:
    """`record` under the adapter name `adapter` (a copy when it differs)."""
    return record if record.adapter == adapter else record.model_copy(update={"adapter": adapter})


# -- self-check: were the adapters applied? ------------------------------------------------

PROBE_ENTRIES = 3
"""Entries whose base output is generated again in a batch of the base alone."""
PROBE_MIN_SHARED_PREFIX = 0.5
"""Probe outputs agree when equal or sharing this share of the shorter text as a common
prefix: batch composition may change float rounding late in a generation, but an
adapter applied to a base request changes it from the start."""


class GenerationMismatch(BadInput):
    """The base model's outputs depend on whether adapters share its batch."""


def _agree(a: str, b: str) -> bool:
    if a == b:
        return True
    shorter = min(len(a), len(b))
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shorter)
    return shorter > 0 and common >= PROBE_MIN_SHARED_PREFIX * shorter


def _base_probe(
    plan: RunPlan, pending: list[PromptJob], done: dict[str, GenerationRecord], runner: Any
) -> BaseProbe | None:
    """Generate a few base prompts again without the adapters and compare (greedy local
    runs with both the base and adapters only)."""
    if (
        not get_backend(plan.backend).local
        or not plan.config.include_base
        or not plan.setup.adapters
        or not plan.config.sampling.greedy
    ):
        return None
    base_jobs = [j for j in pending if j.adapter == BASE_ADAPTER and j.sample == 0]
    base_jobs = [j for j in base_jobs if j.harness is None]  # the default harness's
    chosen = base_jobs[:PROBE_ENTRIES]
    if not chosen:
        return None
    probe_jobs = [dataclasses.replace(j, cache_key=j.cache_key + ":probe") for j in chosen]
    got: dict[str, str] = {}
    runner.generate(probe_jobs, lambda recs: got.update({r.entry_id: r.text for r in recs}))
    agreeing: list[str] = []
    differing: list[str] = []
    for j in chosen:
        mixed = done.get(j.cache_key)
        if mixed is None or j.entry_id not in got:
            continue
        (agreeing if _agree(mixed.text, got[j.entry_id]) else differing).append(j.entry_id)
    return BaseProbe(entries=[j.entry_id for j in chosen], agreeing=agreeing, differing=differing)


def self_check(
    plan: RunPlan, records: list[GenerationRecord], probe: BaseProbe | None
) -> SelfCheck:
    """Per adapter, the share of entries whose greedy sample 0 equals the base's; a
    warning when an adapter equals the base everywhere (it was probably not applied)."""
    records = [r for r in records if r.harness is None]  # the default harness's
    base = {r.entry_id: r.text for r in records if r.adapter == BASE_ADAPTER and r.sample == 0}
    shares: dict[str, float] = {}
    warnings: list[str] = []
    if base and plan.config.sampling.greedy:
        for adapter in plan.setup.adapters:
            same = total = 0
            for r in records:
                if r.adapter == adapter.name and r.sample == 0 and r.entry_id in base:
                    total += 1
                    same += r.text == base[r.entry_id]
            if total:
                shares[adapter.name] = same / total
                if same == total and total > 1:
                    warnings.append(
                        f"adapter {adapter.name!r} gave exactly the base model's output on "
                        f"all {total} entries: it was probably not applied (check the "
                        "engine's LoRA settings and the adapter's target modules)"
                    )
    return SelfCheck(identical_to_base=shares, base_probe=probe, warnings=warnings)
