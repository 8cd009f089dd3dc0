"""`loragate run`: generate (or reuse cached generations), score, summarise.

With no arguments: the embedded SmolLM2-135M on the bundled agent20 evalset on the
CPU (vLLM when importable, else transformers), written to runs/smollm2-135m/.
Rerunning the same command reuses every cached generation; a killed run resumes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from loragate.common.errors import BadInput, Problem
from loragate.common.names import check_name


def parse_adapter_option(values: list[str]) -> dict[str, str]:
    """`NAME=PATH` (or a bare `PATH`, named after its folder) -> {name: path}."""
    out: dict[str, str] = {}
    for value in values:
        if "=" in value:
            name, path = value.split("=", 1)
        else:
            path = value
            name = Path(value.rstrip("/")).name
        name, path = name.strip(), path.strip()
        if not name or not path:
            raise BadInput(
                f"--adapter {value!r}: expected NAME=PATH",
                [
                    Problem(
                        "--adapter", "empty name or path", fix="write --adapter round2=./out/round2"
                    )
                ],
            )
        check_name(name, "--adapter", "adapter name")
        if name in out:
            raise BadInput(
                f"--adapter: the name {name!r} is given twice",
                [
                    Problem(
                        "--adapter",
                        f"duplicate name {name!r}",
                        fix="give each adapter its own name",
                    )
                ],
            )
        out[name] = path
    return out


def parse_episodes_option(value: str | None) -> int | str | None:
    """`--episodes N` (N >= 0; 0: none) or `all`."""
    if value is None or value == "all":
        return value
    if value.isascii() and value.isdigit():
        return int(value)
    raise BadInput(
        f"--episodes {value!r}: expected a count or `all`",
        [
            Problem(
                "--episodes",
                "not a count",
                fix="write --episodes 3, --episodes all or --episodes 0 (none)",
            )
        ],
    )


def command(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Run config YAML (see configs/).")
    ] = None,
    adapter: Annotated[
        list[str] | None,
        typer.Option("--adapter", "-a", help="LoRA adapter as NAME=PATH; repeat for several."),
    ] = None,
    base: Annotated[
        bool | None,
        typer.Option("--base/--no-base", help="Also evaluate the bare base model (default on)."),
    ] = None,
    samples: Annotated[
        int | None, typer.Option("--samples", "-k", min=1, help="Samples per entry and adapter.")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature (0 = greedy).")
    ] = None,
    max_new_tokens: Annotated[
        int | None, typer.Option("--max-new-tokens", min=1, help="Tokens generated at most.")
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", "-b", help="A runner: vllm, hf, openai, replay; or auto."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Base model folder or hub id (overrides config).")
    ] = None,
    evalset: Annotated[str | None, typer.Option("--evalset", help="Evalset folder.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Run folder (default runs/<name>).")
    ] = None,
    allow_pickle: Annotated[
        bool, typer.Option("--allow-pickle", help="Accept adapter_model.bin (pickle) weights.")
    ] = False,
    ignore_base_mismatch: Annotated[
        bool,
        typer.Option(
            "--ignore-base-mismatch", help="Accept adapters trained on another base name."
        ),
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N entries.")
    ] = None,
    families: Annotated[
        str | None, typer.Option("--families", help="Only these families, comma-separated.")
    ] = None,
    parse_mode: Annotated[
        str | None,
        typer.Option(
            "--parse-mode",
            metavar="served|strict|lenient",
            help="The reading scored (default served: the calls the serving stack runs; "
            "docs/call-formats.md).",
        ),
    ] = None,
    episodes: Annotated[
        str | None,
        typer.Option(
            "--episodes",
            metavar="N|all",
            help="Also run the first N episodes of episodes.jsonl (with their fault variants); "
            "0: none. Default: the config's `episodes` (the embedded model's: 2).",
        ),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            metavar="scripted|model",
            help="Who answers episodes with a user in the loop (tau2 airline, retail): "
            "scripted (only the episodes a script covers) or model (the base model plays "
            "the user). Default: the config's `user` (scripted).",
        ),
    ] = None,
    harness: Annotated[
        str | None,
        typer.Option(
            "--harness",
            metavar="VARIANTS",
            help="Harness variants to generate beside the default harness, comma-separated "
            "(routed, shuffled, distractors-10, context-4k, system-terse, ...; `all`: every "
            "variant of the config; `none`); default: the config's harness.run. "
            "See docs/harness.md.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            help="Gate policy the header checks the evalset's size against (default: "
            "configs/gates/default.yaml); see `loragate validate --policy`.",
        ),
    ] = None,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            "--trust-remote-code",
            help="Allow the config's trust_remote_code: runs the model's own Python code.",
        ),
    ] = False,
) -> None:
    """Generate over an evalset with a base model and LoRA adapters, then score it."""
    from rich.console import Console

    overrides: dict[str, Any] = {
        "sampling.samples": samples,
        "sampling.temperature": temperature,
        "sampling.max_new_tokens": max_new_tokens,
        "backend": backend,
        "evalset": evalset,
        "out": str(out) if out is not None else None,
        "include_base": base,
        "parse_mode": parse_mode,
        "allow_pickle": True if allow_pickle else None,
        "ignore_base_mismatch": True if ignore_base_mismatch else None,
        "episodes": parse_episodes_option(episodes),
        "user": user,
    }
    if model is not None:
        overrides["model"] = model
        overrides["embedded"] = None
    if adapter:
        overrides["adapters"] = parse_adapter_option(adapter)
    cfg = _load(config, overrides)
    from loragate.cli._remote_code import resolve_remote_code

    trusted = resolve_remote_code(
        cfg.trust_remote_code, trust_remote_code, str(config) if config else "config"
    )
    cfg = cfg.model_copy(update={"trust_remote_code": trusted})
    family_list = [f.strip() for f in families.split(",") if f.strip()] if families else None
    console = Console(stderr=True)
    from loragate.generate.harness import parse_harness_option

    run_and_report(
        cfg,
        config_path=config,
        limit=limit,
        families=family_list,
        console=console,
        quiet=quiet,
        harness=parse_harness_option(harness),
        policy=policy,
    )


def _load(config: Path | None, overrides: dict[str, Any]) -> Any:
    from loragate.generate.config import load_config

    embedded_cleared = "embedded" in overrides and overrides["embedded"] is None
    cfg = load_config(config, {k: v for k, v in overrides.items() if k != "embedded"})
    if embedded_cleared and cfg.embedded is not None:
        cfg = cfg.model_copy(update={"embedded": None})
    return cfg


def run_and_report(
    cfg: Any,
    *,
    config_path: Path | None,
    limit: int | None,
    families: list[str] | None,
    console: Any,
    quiet: bool = False,
    harness: list[str] | None = None,
    policy: Path | None = None,
) -> Any:
    """`loragate.evaluation.run` with a progress bar and the console lines, then the tables.
    Returns the `RunOutcome`. `harness`: the `--harness` variants (None: the config's
    `harness.run`)."""
    from rich.console import Console

    from loragate.evaluation import run
    from loragate.formats.runfolder import GENERATIONS
    from loragate.results.episode_report import print_episodes
    from loragate.results.report import print_summary

    outcome = run(
        cfg,
        config_path=config_path,
        limit=limit,
        families=families,
        harness=harness,
        hooks=_ConsoleHooks(console, quiet, policy),
    )
    out_console = Console() if console.stderr else console
    print_summary(outcome.summary, out_console)
    if outcome.episodes is not None:
        print_episodes(outcome.episodes, out_console)
    check = outcome.manifest.self_check
    if check is not None:
        for adapter, share in check.identical_to_base.items():
            console.print(f"{adapter}: greedy output equals the base's on {share:.0%} of entries")
        for warning in check.warnings:
            console.print(f"[bold red]warning:[/bold red] {warning}")
    for warning in outcome.manifest.warnings:
        console.print(f"[bold yellow]warning:[/bold yellow] {warning}")
    console.print(
        f"generated {outcome.generated}, reused {outcome.cached}; "
        f"{outcome.out_dir / GENERATIONS}, results.jsonl, summary.json, report.md, view.html"
        + (", trajectories.jsonl, episodes_summary.json" if outcome.episodes else "")
    )
    return outcome


def gate_plan_line(evalset: Any, samples: int, policy: Path | None) -> str:
    """The header's line on whether the evalset is large enough for the gate policy's
    rules (the shipped default policy unless one is given); never fails the run."""
    from loragate.common.errors import BadInput
    from loragate.results.gate import load_policy
    from loragate.results.gate_plan import group_sizes, plan_header, plan_policy

    path = policy if policy is not None else Path("configs/gates/default.yaml")
    try:
        loaded = load_policy(path)
        families, tags = group_sizes(evalset.entries)
        rows = plan_policy(loaded, families, tags, samples, path)
    except BadInput as exc:
        return f"gate plan: not checked ({exc.message})"
    return plan_header(rows, loaded.name or path.stem)


class _ConsoleHooks:
    """The run's progress on the console (`loragate.evaluation.RunHooks`): the plan, a bar, the
    backend's start, the episode rounds."""

    def __init__(self, console: Any, quiet: bool, policy: Path | None = None) -> None:
        self.console = console
        self.quiet = quiet
        self.policy = policy
        self.started_at = time.monotonic()

    def planned(self, plan: Any, episodes: Any) -> None:
        self.console.print(
            f"[bold]loragate run[/bold]  model {plan.manifest.model.id}  backend {plan.backend}  "
            f"evalset {plan.evalset.name} ({len(plan.evalset.entries)} entries)  "
            f"adapters {', '.join(a.name for a in plan.setup.adapters) or '-'}"
            f"{' + base' if plan.config.include_base else ''}  -> {plan.out_dir}"
        )
        if plan.variants:
            ids = {e for v in plan.variants for e in [*v.entries, *v.skipped]}
            self.console.print(
                f"harness variants: {', '.join(v.name for v in plan.variants)} on "
                f"{len(ids)} entries, generated with the default harness in one batch"
            )
        self.console.print(
            f"{len(plan.jobs)} generations: {len(plan.cached)} cached, "
            f"{len(plan.pending)} to generate"
        )
        self.console.print(f"judged as: {plan.manifest.stack}", highlight=False)
        self.console.print(
            gate_plan_line(plan.evalset, plan.config.sampling.samples, self.policy),
            highlight=False,
            markup=False,
        )
        self.started_at = time.monotonic()

    @contextlib.contextmanager
    def generating(self, plan: Any) -> Iterator[Callable[[int], None]]:
        from loragate.cli._progress import progress

        first = f"starting the {plan.backend} backend"
        with progress(
            self.console, len(plan.pending), "generating", quiet=self.quiet, before=first
        ) as advance:
            yield advance

    def started(self, plan: Any) -> None:
        if not self.quiet and plan.pending:
            spent = int(time.monotonic() - self.started_at)
            self.console.print(
                f"the {plan.backend} backend is up after {spent // 60}:{spent % 60:02d}",
                highlight=False,
            )

    def episodes_started(self, episodes: Any, prefetched: int) -> None:
        self.console.print(
            f"episodes: {len(episodes.episodes)} variants of "
            f"{len({e.base_id for e in episodes.episodes})} episodes"
            + (f" ({prefetched} first steps generated with the entries)" if prefetched else "")
        )

    def episode_round(self, number: int, jobs: int) -> None:
        self.console.print(f"episode round {number}: {jobs} generations")

    def warning(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[bold yellow]warning:[/bold yellow] {escape(text)}", highlight=False)
