"""`loragate run`: generate (or reuse cached generations), score, summarise.

With no arguments: the embedded SmolLM2-135M on the bundled agent20 evalset on the
CPU (vLLM when importable, else transformers), written to runs/smollm2-135m/.
Rerunning the same command reuses every cached generation; a killed or interrupted run
resumes. The engine's own output goes to the run folder's `run.log` (`--verbose`: the
terminal); the run ends with where its page is and the next two commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.cli.score import known_parse_mode
from loragate.common.errors import BadInput, Problem
from loragate.common.exit_codes import ExitCode
from loragate.common.names import check_name

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.UNREACHABLE, ExitCode.BUSY)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Run config YAML (see configs/).")
]
AdapterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--adapter",
        "-a",
        metavar="NAME=PATH",
        help="LoRA adapter as NAME=PATH; repeat for several.",
    ),
]
BaseOption = Annotated[
    bool | None,
    typer.Option("--base/--no-base", help="Also evaluate the bare base model (default on)."),
]
SamplesOption = Annotated[
    int | None, typer.Option("--samples", "-k", min=1, help="Samples per entry and adapter.")
]
TemperatureOption = Annotated[
    float | None, typer.Option("--temperature", help="Sampling temperature (0 = greedy).")
]
MaxNewTokensOption = Annotated[
    int | None, typer.Option("--max-new-tokens", min=1, help="Tokens generated at most.")
]
BackendOption = Annotated[
    str | None,
    typer.Option("--backend", help="A runner: vllm, hf, openai, replay; or auto."),
]
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Base model folder or hub id (overrides config).")
]
EvalsetOption = Annotated[str | None, typer.Option("--evalset", help="Evalset folder.")]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Run folder (default runs/<name>). A folder holding another run is taken "
        "over: its scores are replaced, its generations reused as cache. A folder holding "
        "no run but a name a run writes (report.md, gate.json, ...) is refused.",
    ),
]
AllowPickleOption = Annotated[
    bool, typer.Option("--allow-pickle", help="Accept adapter_model.bin (pickle) weights.")
]
IgnoreBaseMismatchOption = Annotated[
    bool,
    typer.Option("--ignore-base-mismatch", help="Accept adapters trained on another base name."),
]


def limit_help() -> str:
    """`--limit`'s help: how it takes the entries, and what the embedded model's default
    harness variants add (the start line counts them for the run)."""
    from loragate.generate.embedded import EMBEDDED

    with_harness = [spec for spec in EMBEDDED.values() if spec.harness]
    text = "Only the first N entries, taken from each family in turn."
    if with_harness:
        spec = with_harness[0]
        entries = spec.harness_entries
        text += (
            f" The embedded model's default harness variants ({', '.join(spec.harness)}) "
            f"come along on the first {entries or 'N'} of them: up to "
            f"{len(spec.harness) * entries if entries else f'{len(spec.harness)}N'} "
            "generations more; the start line says how many."
        )
    return text


LimitOption = Annotated[int | None, typer.Option("--limit", min=1, help=limit_help())]
FamiliesOption = Annotated[
    str | None, typer.Option("--families", help="Only these families, comma-separated.")
]
ParseModeOption = Annotated[
    str | None,
    typer.Option(
        "--parse-mode",
        metavar="served|strict|lenient",
        callback=known_parse_mode,
        help="The reading scored (default served: the calls the serving stack runs; "
        "docs/call-formats.md).",
    ),
]
EpisodesOption = Annotated[
    str | None,
    typer.Option(
        "--episodes",
        metavar="N|all",
        help="Also run the first N episodes of episodes.jsonl (with their fault variants); "
        "0: none. Default: the config's `episodes` (the embedded model's: 2).",
    ),
]


def known_user_mode(value: str | None) -> str | None:
    """`--user` checked while the command line is read: a wrong name is an error of the
    option (with the usage line), not of the run config it overrides."""
    from typing import get_args

    from loragate.formats.trajectories import UserMode

    modes = get_args(UserMode)
    if value is not None and value not in modes:
        raise typer.BadParameter(f"{value!r} is not a user mode: pass {' or '.join(modes)}")
    return value


UserOption = Annotated[
    str | None,
    typer.Option(
        "--user",
        metavar="scripted|model",
        callback=known_user_mode,
        help="Who answers episodes with a user in the loop (tau2 airline, retail): "
        "scripted (only the episodes a script covers) or model (the base model plays "
        "the user). Default: the config's `user` (scripted).",
    ),
]
HarnessOption = Annotated[
    str | None,
    typer.Option(
        "--harness",
        metavar="VARIANTS",
        help="Harness variants to generate beside the default harness, comma-separated "
        "(routed, shuffled, distractors-10, context-4k, system-terse, ...; `all`: every "
        "variant of the config; `none`); default: the config's harness.run. "
        "See docs/harness.md.",
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose",
        help="Show the engine's own output (vLLM, Triton, transformers warnings) in the "
        "terminal (default: run.log in the run folder).",
    ),
]
PolicyOption = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        help="Gate policy: the header says which of its rules the evalset is too small "
        "to decide (`loragate validate --policy` lists them).",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Check everything and print the plan (entries, generations, prompt tokens, "
        "the gate's power at that size) without loading a model or writing anything; "
        "exit 2 with the fix when the run would fail.",
    ),
]
TrustRemoteCodeOption = Annotated[
    bool,
    typer.Option(
        "--trust-remote-code",
        help="Allow the config's trust_remote_code: runs the model's own Python code.",
    ),
]


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
    config: ConfigOption = None,
    adapter: AdapterOption = None,
    base: BaseOption = None,
    samples: SamplesOption = None,
    temperature: TemperatureOption = None,
    max_new_tokens: MaxNewTokensOption = None,
    backend: BackendOption = None,
    model: ModelOption = None,
    evalset: EvalsetOption = None,
    out: OutOption = None,
    allow_pickle: AllowPickleOption = False,
    ignore_base_mismatch: IgnoreBaseMismatchOption = False,
    limit: LimitOption = None,
    families: FamiliesOption = None,
    parse_mode: ParseModeOption = None,
    episodes: EpisodesOption = None,
    user: UserOption = None,
    harness: HarnessOption = None,
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    policy: PolicyOption = None,
    trust_remote_code: TrustRemoteCodeOption = False,
    dry_run: DryRunOption = False,
    legacy_backend: Annotated[str | None, legacy_option("-b")] = None,
) -> None:
    """Generate over an evalset with a base model and LoRA adapters, then score it."""
    from rich.console import Console

    from loragate.generate.harness import parse_harness_option

    overrides = config_overrides(
        samples=samples,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        backend=renamed(backend, legacy_backend, "-b", "--backend"),
        evalset=evalset,
        out=out,
        base=base,
        parse_mode=parse_mode,
        allow_pickle=allow_pickle,
        ignore_base_mismatch=ignore_base_mismatch,
        episodes=episodes,
        model=model,
        adapter=adapter,
        user=user,
    )
    cfg = load_run_config(config, overrides, trust_remote_code)
    chosen = [f.strip() for f in families.split(",") if f.strip()] if families else None
    if dry_run:
        from loragate.cli._dry_run import print_plan

        print_plan(
            cfg,
            config_path=config,
            limit=limit,
            families=chosen,
            harness=parse_harness_option(harness),
            policy=policy,
            console=Console(),
        )
        return
    run_and_report(
        cfg,
        config_path=config,
        limit=limit,
        families=chosen,
        console=Console(stderr=True),
        quiet=quiet,
        verbose=verbose,
        harness=parse_harness_option(harness),
        policy=policy,
    )


def config_overrides(
    *,
    samples: int | None,
    temperature: float | None,
    max_new_tokens: int | None,
    backend: str | None,
    evalset: str | None,
    out: Path | None,
    base: bool | None,
    parse_mode: str | None,
    allow_pickle: bool,
    ignore_base_mismatch: bool,
    episodes: str | None,
    model: str | None,
    adapter: list[str] | None,
    user: str | None = None,
) -> dict[str, Any]:
    """The run config's fields the options set (dotted keys; None: not given)."""
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
    return overrides


def load_run_config(config: Path | None, overrides: dict[str, Any], trust_remote_code: bool) -> Any:
    """The run config of `config` (None: the defaults) with the options' `overrides`, its
    `trust_remote_code` confirmed by `--trust-remote-code`."""
    from loragate.cli._remote_code import resolve_remote_code
    from loragate.generate.config import load_config

    embedded_cleared = "embedded" in overrides and overrides["embedded"] is None
    cfg = load_config(config, {k: v for k, v in overrides.items() if k != "embedded"})
    if embedded_cleared and cfg.embedded is not None:
        cfg = cfg.model_copy(update={"embedded": None})
    trusted = resolve_remote_code(
        cfg.trust_remote_code, trust_remote_code, str(config) if config else "config"
    )
    return cfg.model_copy(update={"trust_remote_code": trusted})


def run_and_report(
    cfg: Any,
    *,
    config_path: Path | None,
    limit: int | None,
    families: list[str] | None,
    console: Any,
    quiet: bool = False,
    verbose: bool = False,
    harness: list[str] | None = None,
    policy: Path | None = None,
) -> Any:
    """`loragate.evaluation.run` with a progress bar and the console lines, then the tables and
    the next steps. Returns the `RunOutcome`. `harness`: the `--harness` variants (None:
    the config's `harness.run`). An interruption raises `Interrupted` saying what the
    run folder kept."""
    from loragate.cli._run_console import ConsoleHooks
    from loragate.cli._signals import Interrupted, received
    from loragate.evaluation import run

    hooks = ConsoleHooks(console, quiet=quiet, verbose=verbose, policy=policy, limit=limit)
    try:
        outcome = run(
            cfg,
            config_path=config_path,
            limit=limit,
            families=families,
            harness=harness,
            hooks=hooks,
        )
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt) or received() is not None:
            raise Interrupted.keeping(exc, hooks.kept()) from None
        raise
    carried = same_entries_options(cfg, config_path, limit, families)
    report_outcome(outcome, console, hooks.log, carried)
    return outcome


def report_outcome(
    outcome: Any, console: Any, log: Path | None = None, carried: list[str] | None = None
) -> None:
    """The family, episode and harness tables on stdout; the self-check, the warnings,
    what was generated, where the page is and the next two commands on `console`."""
    from rich.console import Console

    from loragate.results.episode_report import print_episodes
    from loragate.results.report import print_summary

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
        f"generated {outcome.generated}, reused {outcome.cached}; run folder {outcome.out_dir}"
        + (f" (the engine's own output: {log})" if log is not None else ""),
        highlight=False,
        soft_wrap=True,
    )
    for line in next_steps(outcome.out_dir, list(outcome.summary.adapters), carried):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def next_steps(out_dir: Path, adapters: list[str], carried: list[str] | None = None) -> list[str]:
    """Where the run's page is, and the next two steps: compare with another adapter,
    then gate it (command lines that run as printed, from where the run ran; `PATH` is
    the user's adapter folder, `RUN_OF_THE_BASE` a run folder of the base model).
    `carried`: the options a suggested run needs to see the same entries (`--config`,
    `--limit`, ...; `same_entries_options`). The base is the baseline only when it ran."""
    from loragate.formats.manifest import BASE_ADAPTER
    from loragate.formats.runfolder import VIEW

    prog = program_name()
    run = str(out_dir)
    same = "".join(f" {option}" for option in carried or [])
    gate = f"{prog} gate {{}} --policy configs/gates/default.yaml --baseline {{}}"
    view = f"view: {out_dir / VIEW} (open it in a browser)"
    if len(adapters) >= 2:
        baseline = BASE_ADAPTER if BASE_ADAPTER in adapters else adapters[0]
        other = next(a for a in adapters if a != baseline)
        first, second = f"{run}:{baseline}", f"{run}:{other}"
        return [
            view,
            f"next: compare {other} with {baseline} entry by entry, then gate it:",
            f"  {prog} compare {first} {second}",
            "  " + gate.format(second, first),
        ]
    if adapters and adapters[0] != BASE_ADAPTER:  # an adapter alone (--no-base)
        base_run = sibling(out_dir, BASE_ADAPTER)
        return [
            view,
            f"next: gate {adapters[0]} against a run of the base model on the same entries "
            f"(RUN_OF_THE_BASE: a run folder of the base; the first line makes {base_run}:base):",
            f"  {prog} run --base --out {base_run}{same}",
            f"  {prog} compare RUN_OF_THE_BASE {run}",
            "  " + gate.format(run, "RUN_OF_THE_BASE"),
        ]
    mine = sibling(out_dir, "mine")
    lines = [
        view,
        "next: your LoRA adapter on the same entries, compared with this run, then gated:",
        f"  {prog} run --adapter mine=PATH --no-base --out {mine}{same}",
        f"  {prog} compare {run} {mine}",
        "  " + gate.format(mine, run),
    ]
    if any(option.startswith("--families") for option in carried or []):
        lines.append("(a --families run: gate it with a policy whose rules name only those)")
    return lines


def sibling(out_dir: Path, name: str) -> str:
    """A run folder beside `out_dir` named `name` (`out_dir`-`name` when that is
    `out_dir` itself)."""
    path = out_dir.parent / name
    return str(path if path != out_dir else out_dir.parent / f"{out_dir.name}-{name}")


def same_entries_options(
    cfg: Any, config_path: Path | None, limit: int | None, families: list[str] | None
) -> list[str]:
    """The options of this run a suggested run needs to generate over the same entries
    with the same model: `--config`, the model and evalset when they are not the
    config's, `--limit`, `--families` (shell-quoted)."""
    import shlex

    from loragate.generate.config import load_config

    carried: list[str] = []
    if config_path is not None:
        carried.append(f"--config {shlex.quote(str(config_path))}")
    try:
        plain = load_config(config_path, {})
    except BadInput:  # a config only the overrides made valid: say what ran
        plain = None
    for option, field in (("--model", "model"), ("--evalset", "evalset")):
        value = getattr(cfg, field)
        if plain is None or value != getattr(plain, field):
            carried.append(f"{option} {shlex.quote(str(value))}")
    if limit is not None:
        carried.append(f"--limit {limit}")
    if families:
        carried.append(f"--families {shlex.quote(','.join(families))}")
    return carried


def program_name() -> str:
    """How the user started loragate, for command lines to copy: `loragate` when that is
    on PATH, `.venv/bin/loragate` (relative to here) when it is not, else `python -m
    loragate`."""
    import shutil
    import sys

    argv0 = Path(sys.argv[0])
    if argv0.name != "loragate":
        return "python -m loragate"
    found = shutil.which("loragate")
    if found is not None and Path(found).resolve() == argv0.resolve():
        return "loragate"
    try:
        return str(argv0.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(argv0)
