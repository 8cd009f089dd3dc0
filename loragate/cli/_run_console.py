"""What `loragate run` shows while it runs (`loragate.evaluation.RunHooks`): the header, a
progress bar, the backend's start, the episode rounds, warnings - and nothing of the
engine's own output, which goes to the run folder's `run.log` (`--verbose`: the
terminal). It also knows what the run has kept so far, for the line an interruption
ends with."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

RUN_LOG_TAIL = 15
"""Lines of `run.log` shown when the run fails with the engine's output hidden there."""


class ConsoleHooks:
    """The run's progress on the console."""

    def __init__(
        self,
        console: Any,
        *,
        quiet: bool,
        verbose: bool = False,
        policy: Path | None = None,
        limit: int | None = None,
    ) -> None:
        self.console = console
        self.limit = limit
        """`--limit`: the header says what it selected and what the harness adds."""
        self.quiet = quiet
        self.verbose = verbose
        self.policy = policy
        self.started_at = time.monotonic()
        self.plan: Any = None
        self.with_episodes = False
        self.generated = 0
        self.episode_rounds = 0
        self.log: Path | None = None
        """`run.log` when the engine's output went there."""

    def planned(self, plan: Any, episodes: Any) -> None:
        self.plan = plan
        self.with_episodes = episodes is not None
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
        if self.limit is not None:
            self.console.print(limit_line(self.limit, plan), highlight=False)
        self.console.print(
            f"{len(plan.jobs)} generations: {len(plan.cached)} cached, "
            f"{len(plan.pending)} to generate"
        )
        self.console.print(f"judged as: {plan.manifest.stack}", highlight=False)
        if self.policy is not None:  # asked for: what the policy's rules can see here
            self.console.print(
                gate_plan_line(plan.evalset, plan.config.sampling.samples, self.policy),
                highlight=False,
                markup=False,
            )
        self.started_at = time.monotonic()

    @contextlib.contextmanager
    def model_stage(self, plan: Any) -> Iterator[None]:
        """The engine's own output (and that of every process it starts) goes to
        `run.log` in the run folder while the model works; loragate's lines go on to
        the terminal."""
        if self.verbose or not (plan.pending or self.with_episodes):
            yield
            return
        from loragate.common.third_party import third_party_output
        from loragate.formats.runfolder import RUN_LOG

        log = plan.out_dir / RUN_LOG
        existed = log.exists()
        terminal = self.console.file
        failed: BaseException | None = None
        try:
            with third_party_output(log) as stream:
                self.console.file = stream
                try:
                    yield
                except BaseException as exc:
                    failed = exc
                    raise
        finally:
            if self.console.file is not terminal:
                self.console.file.close()
                self.console.file = terminal
            self._after_stage(log, existed, failed)

    def _after_stage(self, log: Path, existed: bool, failed: BaseException | None) -> None:
        """Drop an empty new log; keep a written one, and point at it when the run
        failed for another reason than an interruption."""
        if not log.is_file():
            return
        nothing_made = self.generated == 0 and not self.episode_rounds
        stopped = isinstance(failed, KeyboardInterrupt)
        if not existed and (log.stat().st_size == 0 or (stopped and nothing_made)):
            log.unlink()  # an empty log, or an interrupted start: the folder is as it was
            return
        self.log = log
        if failed is None or stopped:
            return
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-RUN_LOG_TAIL:]
        if tail:
            self.console.print(f"the engine's own output ({log}), last lines:", highlight=False)
            for line in tail:
                self.console.print(f"  {line}", highlight=False, markup=False)

    @contextlib.contextmanager
    def generating(self, plan: Any) -> Iterator[Callable[[int], None]]:
        from loragate.cli._progress import progress

        first = f"starting the {plan.backend} backend"
        with progress(
            self.console, len(plan.pending), "generating", quiet=self.quiet, before=first
        ) as advance:

            def counted(n: int) -> None:
                self.generated += n
                advance(n)

            yield counted

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
        self.episode_rounds = number
        self.console.print(f"episode round {number}: {jobs} generations")

    def warning(self, text: str) -> None:
        from rich.markup import escape

        self.console.print(f"[bold yellow]warning:[/bold yellow] {escape(text)}", highlight=False)

    def kept(self) -> str:
        """What an interruption leaves, in one line (the end of `loragate run`)."""
        if self.plan is None:
            return "nothing was written (the run was still being planned)"
        out = self.plan.out_dir
        total = len(self.plan.to_generate)
        if self.generated == 0 and not self.episode_rounds:
            if total:
                return f"nothing new was generated; {out} holds what it held before"
            return f"every generation was cached in {out}; the same command scores them"
        done = f"{self.generated} of {total} new generations" if total else "the generations"
        files = "generations.jsonl"
        if self.episode_rounds:
            done += " and every finished episode step"
            files += ", trajectories.jsonl"
        return f"{out} keeps {done} ({files}); the same command resumes from them"


def limit_line(limit: int, plan: Any) -> str:
    """What `--limit N` selected (entries of each family) and how many generations the
    harness variants add to the entries' own."""
    from collections import Counter

    per_family = Counter(e.family for e in plan.evalset.entries)
    low, high = min(per_family.values(), default=0), max(per_family.values(), default=0)
    each = f"{low}" if low == high else f"{low}-{high}"
    added = sum(1 for j in plan.jobs if j.harness is not None)
    line = (
        f"--limit {limit} looks at {len(plan.evalset.entries)} entries, {each} of each of "
        f"{len(per_family)} families"
    )
    if added:
        line += f"; the harness variants add {added}: {len(plan.jobs)} generations"
    return line


def gate_plan_line(evalset: Any, samples: int, policy: Path) -> str:
    """The header's line on whether the evalset is large enough for the rules of the gate
    policy `--policy` names; never fails the run."""
    from loragate.common.errors import BadInput
    from loragate.results.gate import load_policy
    from loragate.results.gate_plan import group_sizes, plan_header, plan_policy

    try:
        loaded = load_policy(policy)
        families, tags = group_sizes(evalset.entries)
        rows = plan_policy(loaded, families, tags, samples, policy)
    except BadInput as exc:
        return f"gate plan: not checked ({exc.message})"
    return plan_header(rows, loaded.name or policy.stem)
