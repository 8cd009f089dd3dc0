"""`loragate run --dry-run`: the plan of a run, checked as the run would check it, with no
model loaded, nothing downloaded and nothing written (no run folder, no lock, no
`run.log`) - a GPU job checked on a laptop.

It resolves the config, the evalset and its selection, the adapters (their files and
their base, read from their configs), the harness variants and the gate policy, and
prints the entries, the generations, the prompt tokens and what the gate's rules can
see at that size. The hub is never asked: a hub model that is not in the local cache
is named with the command that downloads it, and the plan is unsound (exit 2); the
embedded model not converted yet is planned without its prompts (the run converts it).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loragate.common.errors import BadInput, Problem

DEFAULT_POLICY = "configs/gates/default.yaml"
"""The gate policy whose power the plan shows when `--policy` is not given (shipped)."""


def print_plan(
    cfg: Any,
    *,
    config_path: Path | None,
    limit: int | None,
    families: list[str] | None,
    harness: list[str] | None,
    policy: Path | None,
    console: Any,
) -> None:
    """Print the plan of `cfg` on `console`; `BadInput` (exit 2) with the fix when the
    run would fail before generating."""
    with _hub_offline():
        _plan(cfg, config_path, limit, families, harness, policy, console)


def _plan(
    cfg: Any,
    config_path: Path | None,
    limit: int | None,
    families: list[str] | None,
    harness: list[str] | None,
    policy: Path | None,
    console: Any,
) -> None:
    from loragate.generate.embedded import EMBEDDED, embedded_name, is_converted
    from loragate.generate.model_source import download_fix, missing_hub_model
    from loragate.generate.pipeline import plan_run, resolve_backend, run_folder
    from loragate.runners import get_backend

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False, soft_wrap=True)

    out_dir = run_folder(cfg, config_path)  # a file or a foreign folder: refused here
    backend = resolve_backend(cfg.backend)
    embedded = embedded_name(cfg.model, cfg.embedded)
    local = get_backend(backend).local
    missing: str | None = None
    if embedded is not None and local and not is_converted(embedded):
        missing = f"embedded:{embedded} is not converted yet"
        fix = "the run converts it first (~30 s on a CPU)"
        model_label = f"{EMBEDDED[embedded].hub_id} (embedded, not converted yet)"
    elif embedded is None and local:
        missing = missing_hub_model(cfg.model or "", cfg.revision)
        fix = download_fix(cfg.model or "", cfg.revision)
        model_label = cfg.model or ""
    if missing is not None:
        _partial_plan(cfg, backend, out_dir, limit, families, policy, model_label, say)
        say(f"model: {missing}; {fix}")
        if embedded is not None:  # the run converts it: sound, only not counted yet
            return
        raise BadInput(
            f"the run cannot start: {missing}",
            [Problem("config", missing, field="model", fix=fix)],
        )
    plan = plan_run(cfg, config_path=config_path, limit=limit, families=families, harness=harness)
    _print_plan(plan, policy, say)
    if plan.backend == "replay" and plan.to_generate:  # no model: its runner reads a file
        get_backend("replay").create(plan.setup).close()
    say(f"plan sound: `loragate run` without --dry-run generates it into {plan.out_dir}")


def _print_plan(plan: Any, policy: Path | None, say: Any) -> None:
    from loragate.generate.harness_apply import TokenCounter

    cfg = plan.config
    say("loragate run --dry-run: the plan (nothing loaded, nothing written)")
    say(f"model: {plan.manifest.model.id} ({plan.setup.model_path})  backend {plan.backend}")
    say(f"evalset: {plan.evalset.name}, {_entries_line(plan.evalset)}")
    say(f"adapters: {_adapters_line(plan.setup.adapters, cfg.include_base)}")
    sides = len(plan.setup.adapters) + (1 if cfg.include_base else 0)
    default = len(plan.evalset.entries) * cfg.sampling.samples * sides
    line = f"generations: {len(plan.jobs)} = {_times(len(plan.evalset.entries), cfg.sampling.samples, sides)}"
    if plan.variants:
        line += f" + {len(plan.jobs) - default} of harness variants " + ", ".join(
            f"{v.name} ({len(v.entries)} entries)" for v in plan.variants
        )
    say(line)
    say(_episodes_line(plan.evalset, cfg))
    say(f"cached in {plan.out_dir}: {len(plan.cached)}; to generate: {len(plan.to_generate)}")
    count = TokenCounter(plan.setup.model_path)
    by_prompt: dict[str, int] = {}
    total = 0
    for job in plan.jobs:
        if job.prompt_sha256 not in by_prompt:
            by_prompt[job.prompt_sha256] = count(job.prompt or "".join(map(str, job.messages)))
        total += by_prompt[job.prompt_sha256]
    how = "estimated as characters / 4" if count.estimated else "counted with the tokenizer"
    say(
        f"prompt tokens: {total:,} over {len(plan.jobs)} generations ({len(by_prompt)} distinct "
        f"prompts, mean {total // max(len(plan.jobs), 1):,}; {how}); at most "
        f"{cfg.sampling.max_new_tokens} new tokens each"
    )
    say(f"judged as: {plan.manifest.stack}")
    say(_gate_line(plan.evalset, cfg.sampling.samples, policy))


def _partial_plan(
    cfg: Any,
    backend: str,
    out_dir: Path,
    limit: int | None,
    families: list[str] | None,
    policy: Path | None,
    model_label: str,
    say: Any,
) -> None:
    """What can be planned without the model's tokenizer: the evalset, the adapters
    (checked against the model's name) and the default harness's generations."""
    from loragate.evalset.load import load_evalset
    from loragate.generate.adapters import RANK_FIX, inspect_adapters
    from loragate.generate.pipeline import select_entries
    from loragate.runners import get_backend

    evalset = select_entries(load_evalset(cfg.evalset), families=families, limit=limit)
    runner = get_backend(backend)
    rank = runner.rank_limit(cfg.options_of(backend))
    adapters = inspect_adapters(
        cfg.adapters,
        base_aliases=(cfg.model or model_label,),
        max_rank=rank.rank if rank is not None else None,
        rank_fix=rank.fix if rank is not None else RANK_FIX,
        allow_pickle=cfg.allow_pickle,
        ignore_base_mismatch=cfg.ignore_base_mismatch,
        server_side_ok=runner.served_adapters,
    )
    sides = len(adapters) + (1 if cfg.include_base else 0)
    n, k = len(evalset.entries), cfg.sampling.samples
    say("loragate run --dry-run: the plan (nothing loaded, nothing written)")
    say(f"model: {model_label}  backend {backend}")
    say(f"evalset: {evalset.name}, {_entries_line(evalset)}")
    say(f"adapters: {_adapters_line(adapters, cfg.include_base)}")
    say(
        f"generations: {n * k * sides} = {_times(n, k, sides)} "
        "(harness variants and prompt tokens: planned once the model's tokenizer is here)"
    )
    say(_episodes_line(evalset, cfg))
    say(f"run folder: {out_dir}")
    say(_gate_line(evalset, k, policy))


def _times(entries: int, samples: int, models: int) -> str:
    def of(n: int, word: str) -> str:
        return f"{n} {word}{'s' if n != 1 else ''}"

    return f"{of(entries, 'entry')} x {of(samples, 'sample')} x {of(models, 'model')}".replace(
        "entrys", "entries"
    )


def _episodes_line(evalset: Any, cfg: Any) -> str:
    """The episodes the run runs after the entries (`--episodes`, the config's)."""
    from loragate.episodes.stage import for_user_mode, run_episode_set

    episodes = run_episode_set(evalset, cfg)
    if episodes is None or not episodes.episodes:
        return "episodes: none"
    kept, left = for_user_mode(episodes, cfg.user)
    line = (
        f"episodes: {len(kept.episodes)} variants of {len({e.base_id for e in kept.episodes})} "
        "episodes after the entries (a generation a step)"
    )
    return line + (f"; {len(left)} left out: no {cfg.user} user" if left else "")


def _entries_line(evalset: Any) -> str:
    counts: dict[str, int] = {}
    for e in evalset.entries:
        counts[e.family] = counts.get(e.family, 0) + 1
    return f"{len(evalset.entries)} entries in {len(counts)} families"


def _adapters_line(adapters: Any, include_base: bool) -> str:
    names = [f"{a.name} (rank {a.rank})" if getattr(a, "rank", None) else a.name for a in adapters]
    return ", ".join([*names, *(["base"] if include_base else [])]) or "-"


def _gate_line(evalset: Any, samples: int, policy: Path | None) -> str:
    """What the gate policy's rules can see at this size (`--policy`, else the default)."""
    from loragate.cli._run_console import gate_plan_line
    from loragate.common.resources import bundled

    chosen = policy or bundled(DEFAULT_POLICY)
    if chosen is None:
        return "gate plan: not checked (pass --policy FILE)"
    return gate_plan_line(evalset, samples, chosen)


@contextlib.contextmanager
def _hub_offline() -> Iterator[None]:
    """`HF_HUB_OFFLINE=1` while the plan is made (nothing asks the hub), then as it was."""
    before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    was = getattr(constants, "HF_HUB_OFFLINE", None)
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before
        constants = sys.modules.get("huggingface_hub.constants")
        if constants is not None:
            constants.HF_HUB_OFFLINE = (  # type: ignore[attr-defined]
                was if was is not None else before not in (None, "", "0")
            )
