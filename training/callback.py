"""A `TrainerCallback` that runs the family eval on the model being trained.

Every `every_steps` optimizer steps (optionally before the first one, and always after
the last one; `every_steps=None`: only after the last) the callback renders a subset of
the evalset - or all of it - with the same renderer as `loragate run`, generates
greedily with the `hf` backend around the in-memory model (no reload, no checkpoint;
with `prefix_cache` the shared prefix's key/value cache is recomputed at every
evaluation, since the weights changed), judges with `loragate.evaluation.evaluate_jobs` (a run's
scoring, in memory), and logs per-family pass@1 beside the loss:

- into `trainer.state.log_history` (hence `trainer_state.json`) as
  `behaviour/<family>/pass_at_1`, `behaviour/overall/pass_at_1`,
  `behaviour/unparseable` (fraction of samples) and `behaviour/eval_seconds`;
- to TensorBoard through the trainer's own logging (tags `train/behaviour/...`);
- and, in full (rates with Wilson intervals, every output and verdict), one JSON line
  per evaluation to `behaviour.jsonl` in the output folder.

The numbers are in-loop indicators on a subset; the figures to gate on come from
`loragate run` on the saved adapter.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback  # noqa: TID253 (imported only by `train`, lazily)

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.common.errors import BadInput
from loragate.evaluation import evaluate_jobs
from loragate.formats.manifest import BASE_ADAPTER
from loragate.generate.config import RunConfig
from loragate.generate.prompt import evalset_messages, prompt_sha256
from loragate.runners import PromptJob, RunnerSetup, get_backend

if TYPE_CHECKING:
    from loragate.evalset.load import Evalset
    from loragate.formats.evalset import Entry
    from loragate.formats.records import Summary
    from loragate.generate.prompt import ChatRenderer
    from loragate.runners import Runner

METRIC_PREFIX = "behaviour/"
"""Prefix of every metric this callback logs (`behaviour/<family>/pass_at_1`, ...)."""
BEHAVIOUR_LOG = "behaviour.jsonl"


def family_metric(family: str) -> str:
    """The log_history key of a family's pass@1."""
    return f"{METRIC_PREFIX}{family}/pass_at_1"


def select_entries(
    evalset: Evalset, per_family: int | None = None, entry_ids: Sequence[str] = ()
) -> list[Entry]:
    """The entries the callback evaluates.

    `entry_ids` (explicit, evalset order kept) wins; else `per_family` entries of each
    family, spread evenly over the family's entries (so fault variants of one recovery
    entry do not crowd out the others); `None` for both = the whole evalset.
    """
    if entry_ids:
        unknown = [e for e in entry_ids if e not in evalset.by_id]
        if unknown:
            raise BadInput(
                f"callback.entry_ids names entries evalset {evalset.name} does not have: "
                + ", ".join(unknown[:10]),
                fix="list entry ids of the evalset (see `loragate validate`)",
            )
        wanted = set(entry_ids)
        return [e for e in evalset.entries if e.id in wanted]
    if per_family is None:
        return list(evalset.entries)
    by_family: dict[str, list[Entry]] = defaultdict(list)
    for e in evalset.entries:
        by_family[e.family].append(e)
    chosen: set[str] = set()
    for entries in by_family.values():
        n = min(per_family, len(entries))
        chosen.update(entries[(i * len(entries)) // n].id for i in range(n))
    return [e for e in evalset.entries if e.id in chosen]


def _in_process_runner(
    model: Any, tokenizer: Any, max_new_tokens: int, batch_size: int, prefix_cache: bool
) -> Runner:
    """The `hf` backend's runner around the trainer's model, decoding greedily."""
    config = RunConfig.model_validate(
        {
            "sampling": {"samples": 1, "temperature": 0.0, "max_new_tokens": max_new_tokens},
            "hf": {"batch_size": batch_size, "prefix_cache": prefix_cache},
        }
    )
    setup = RunnerSetup(
        config=config, model_path="(in training)", model_id="(in training)", adapters=()
    )
    return get_backend("hf").around(model, tokenizer, setup)


class BehaviouralEvalCallback(TrainerCallback):  # type: ignore[misc]
    """Family pass@1 of the model in training, logged beside the loss."""

    def __init__(
        self,
        evalset: Evalset,
        renderer: ChatRenderer,
        tokenizer: Any,
        *,
        every_steps: int | None,
        entries: Sequence[Entry] | None = None,
        at_start: bool = False,
        max_new_tokens: int = 128,
        batch_size: int = 4,
        prefix_cache: bool = True,
        log_file: Path | None = None,
        echo: Callable[[str], None] | None = None,
        stack: ServingStack | None = None,
    ) -> None:
        """`every_steps=None` evaluates only after the last step. `tokenizer` is used for
        generation only (it is switched to left padding), so pass a separate instance
        from the one the trainer collates with. `stack`: the serving stack outputs are
        judged as (the recipe's `tool_call_format` / `reasoning_parser`, resolved like a
        run's); default: loragate's default for loose generations."""
        if every_steps is not None and every_steps < 1:
            raise BadInput(
                "callback.every_steps must be at least 1 (or None: only at the end)",
                fix="set callback.every_steps to 1 or more, or null",
            )

        self.evalset = evalset
        self.entries = list(entries) if entries is not None else list(evalset.entries)
        if not self.entries:
            raise BadInput(
                "the behavioural callback has no entries to evaluate",
                fix="widen callback.families / entry_ids",
            )
        self.every_steps = every_steps
        self.at_start = at_start
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.prefix_cache = prefix_cache
        self.log_file = log_file
        self.echo = echo or (lambda _msg: None)
        self.stack = stack if stack is not None else DEFAULT_STACK
        self.tokenizer = tokenizer
        # Rendered once: the prompts do not change during training.
        self.prompts: list[tuple[str, str, str]] = []
        for e in self.entries:
            tools = evalset.toolset_of(e.id).as_openai()
            text = renderer.render_prompt(evalset_messages(evalset, e), tools)
            self.prompts.append((e.id, text, prompt_sha256(text)))
        self._trainer: Any = None
        self._last_step = -1
        self.history: list[dict[str, Any]] = []
        """One record per evaluation (what `behaviour.jsonl` holds)."""

    def attach(self, trainer: Any) -> None:
        """Log through `trainer` (TensorBoard and every other reporting callback)."""
        self._trainer = trainer

    # -- evaluation --------------------------------------------------------------------

    def evaluate(self, model: Any) -> tuple[Summary, list[dict[str, Any]]]:
        """Generate and score the subset on `model`; (summary, per-output records)."""

        # A peft model generates under its active adapter; a plain model is the base.
        adapter = (
            str(getattr(model, "active_adapter", None) or "default")
            if hasattr(model, "disable_adapter")
            else BASE_ADAPTER
        )
        jobs = [
            PromptJob(
                entry_id=eid,
                adapter=adapter,
                sample=0,
                prompt=text,
                messages=[],
                prompt_sha256=sha,
                cache_key=sha,
            )
            for eid, text, sha in self.prompts
        ]
        was_training = bool(model.training)
        model.eval()
        try:
            runner = _in_process_runner(
                model, self.tokenizer, self.max_new_tokens, self.batch_size, self.prefix_cache
            )
            found = evaluate_jobs(self.evalset, jobs, runner, stack=self.stack)
        finally:
            if was_training:
                model.train()
        summary, results = found.summary, found.results
        outputs = [
            {
                "entry_id": r.entry_id,
                "family": r.family,
                "pass": r.verdict.passed,
                "reason": r.verdict.reason.value,
                "text": r.text[:2000],
            }
            for r in sorted(results, key=lambda r: r.entry_id)
        ]
        return summary, outputs

    def _run(self, state: Any, model: Any, control: Any = None) -> None:
        if model is None or state.global_step == self._last_step:
            return
        self._last_step = state.global_step
        started = time.perf_counter()
        summary, outputs = self.evaluate(model)
        seconds = time.perf_counter() - started
        adapter = next(iter(summary.adapters.values()))
        metrics: dict[str, float] = {}
        for family, stats in adapter.families.items():
            if stats.pass_at_1 is not None:
                metrics[family_metric(family)] = round(stats.pass_at_1, 6)
        if adapter.overall.pass_at_1 is not None:
            metrics[f"{METRIC_PREFIX}overall/pass_at_1"] = round(adapter.overall.pass_at_1, 6)
        samples = adapter.overall.samples or 1
        metrics[f"{METRIC_PREFIX}unparseable"] = round(adapter.overall.unparseable / samples, 6)
        metrics[f"{METRIC_PREFIX}eval_seconds"] = round(seconds, 2)

        if self._trainer is not None:
            from transformers import Trainer

            # `Trainer.log`, not `SFTTrainer.log`: TRL's override folds its running
            # token-accuracy metrics into whatever is logged and resets them, which
            # would move them from the next loss record onto this one. Logging also
            # clears `control.should_log`, which the trainer has set for this step's
            # loss record: keep it, or the loss of every evaluated step goes missing.
            should_log = bool(getattr(control, "should_log", False))
            Trainer.log(self._trainer, dict(metrics))
            if control is not None:
                control.should_log = should_log
        else:
            state.log_history.append({**metrics, "step": state.global_step, "epoch": state.epoch})

        record = {
            "step": state.global_step,
            "epoch": state.epoch,
            "seconds": round(seconds, 2),
            "entries": len(outputs),
            "overall": adapter.overall.model_dump(mode="json"),
            "families": {f: s.model_dump(mode="json") for f, s in adapter.families.items()},
            "outputs": outputs,
        }
        self.history.append(record)
        if self.log_file is not None:
            with self.log_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        shown = ", ".join(
            f"{f} {s.pass_at_1:.2f}" for f, s in adapter.families.items() if s.pass_at_1 is not None
        )
        self.echo(
            f"[behaviour] step {state.global_step}: overall "
            f"{adapter.overall.pass_at_1 or 0:.2f} ({shown}) in {seconds:.0f} s"
        )

    # -- trainer hooks -----------------------------------------------------------------

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.at_start:
            self._run(state, kwargs.get("model"), control)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # The last step is evaluated here rather than in `on_train_end`: by then the
        # TensorBoard writer is closed and the final loss record already written.
        step = state.global_step
        periodic = self.every_steps is not None and step % self.every_steps == 0
        if periodic or (state.max_steps and step >= state.max_steps):
            self._run(state, kwargs.get("model"), control)


__all__ = [
    "BEHAVIOUR_LOG",
    "METRIC_PREFIX",
    "BehaviouralEvalCallback",
    "family_metric",
    "select_entries",
]
