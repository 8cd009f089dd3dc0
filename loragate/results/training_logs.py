"""Training-log reader: loss, token accuracy and callback metrics of a fine-tune round.

Reads what a round logged, so `compare` and `card` can put it beside the family
scores:

- `trainer_state.json` (transformers `Trainer` / TRL `SFTTrainer`): its `log_history`
  list of `{"step", "epoch", "loss", "eval_loss", "mean_token_accuracy",
  "eval_mean_token_accuracy", ...}` objects, including any metric a callback logged
  (e.g. per-family pass rates of the behavioural-eval callback);
- a plain CSV with a header row (`step`, `epoch` and metric columns; empty cells are
  "not logged at this step");
- JSONL, one log object a line, or a JSON array of them.

Given a folder (an adapter or a training output folder), the log is looked up in the
folder, then in its newest `checkpoint-N/`, then next to it (the parent folder and the
parent's newest checkpoint).

Values are kept as logged: losses in nats per token, accuracies as fractions.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import BadInput
from loragate.common.files import read_text
from loragate.common.jsonguard import MAX_DOCUMENT_BYTES, JsonRefused, loads
from loragate.common.jsonl import read_objects
from loragate.families import get_families

TRAINER_STATE = "trainer_state.json"
LogFormat = Literal["trainer_state", "csv", "jsonl", "summary"]
Direction = Literal["min", "max"]

_POSITION_KEYS = frozenset({"step", "epoch"})
_CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)$")

LOSS_KEYS: tuple[str, ...] = ("loss", "train_loss")
"""Training loss, in order of preference: the last logged step loss, then the run mean."""
ACCURACY_KEYS: tuple[str, ...] = ("eval_mean_token_accuracy", "mean_token_accuracy")
"""Token accuracy, in order of preference: on the validation set, then on training batches."""


def metric_direction(name: str) -> Direction | None:
    """Whether lower (`min`) or higher (`max`) is better; `None` for bookkeeping values.

    Losses and unparseable rates go down; accuracies and pass rates (including
    callback metrics named after a family) go up. Learning rate, gradient norm,
    runtimes and throughputs have no better direction and are not compared.
    """
    low = name.lower()
    if "unparseable" in low or "loss" in low or "perplexity" in low:
        return "min"
    if any(w in low for w in ("accuracy", "pass", "f1", "exact_match", "success")):
        return "max"
    try:
        if any(fam in low for fam in get_families()):
            return "max"
    except BadInput:  # a broken plugin must not break log reading
        pass
    return None


class LogPoint(BaseModel):
    """One logged row: where in training, and the numeric metrics logged there."""

    model_config = ConfigDict(extra="forbid")

    step: int | None = None
    epoch: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)


class MetricSummary(BaseModel):
    """Final and best value of one metric over a training log."""

    model_config = ConfigDict(extra="forbid")

    final: float
    """The last logged value."""
    final_step: int | None = None
    best: float | None = None
    """Lowest (losses) or highest (accuracies, pass rates); `None` when no direction."""
    best_step: int | None = None
    direction: Direction | None = None
    points: int = 0
    """How many times it was logged (0 when read back from a summary)."""


class TrainingLog(BaseModel):
    """A training round's log: the curve (`points`) and per-metric final/best values."""

    model_config = ConfigDict(extra="forbid")

    source: str
    """The file it was read from."""
    format: LogFormat
    points: list[LogPoint] = Field(default_factory=list)
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    run: dict[str, float] = Field(default_factory=dict)
    """Run-level numbers of a trainer_state.json (global_step, num_train_epochs,
    train_batch_size, max_steps, ...)."""

    def final(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.final if m else None

    def best(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.best if m else None

    def first_of(self, names: Iterable[str]) -> tuple[str, float] | None:
        """The first of `names` that was logged, with its final value."""
        for n in names:
            v = self.final(n)
            if v is not None:
                return n, v
        return None

    def curve(self, name: str) -> list[tuple[int | None, float]]:
        """(step, value) of every point where `name` was logged, in log order."""
        return [(p.step, p.metrics[name]) for p in self.points if name in p.metrics]

    def compared_metrics(self) -> list[str]:
        """Metrics with a better direction (losses, accuracies, pass rates), in a stable order."""
        preferred = [*LOSS_KEYS, "eval_loss", *ACCURACY_KEYS[::-1]]
        names = [n for n, m in self.metrics.items() if m.direction is not None]
        head = [n for n in preferred if n in names]
        return head + sorted(n for n in names if n not in head)

    def to_summary(self) -> dict[str, Any]:
        """A compact form for `summary.json` `training[adapter]` (no curve)."""
        return {
            "source": self.source,
            "format": self.format,
            "final": {n: m.final for n, m in self.metrics.items()},
            "best": {n: m.best for n, m in self.metrics.items() if m.best is not None},
            "last_step": max((p.step for p in self.points if p.step is not None), default=None),
        }

    @classmethod
    def from_summary(cls, value: Mapping[str, Any], source: str = "summary.json") -> TrainingLog:
        """Read back `to_summary()` output, or a flat `{metric: value}` mapping."""
        final_raw = value.get("final")
        best_raw = value.get("best")
        finals: Mapping[str, Any] = final_raw if isinstance(final_raw, Mapping) else value
        bests: Mapping[str, Any] = best_raw if isinstance(best_raw, Mapping) else {}
        metrics: dict[str, MetricSummary] = {}
        for name, v in finals.items():
            num = _number(v)
            if num is None or name in _POSITION_KEYS:
                continue
            metrics[name] = MetricSummary(
                final=num, best=_number(bests.get(name)), direction=metric_direction(name)
            )
        src = value.get("source")
        return cls(
            source=src if isinstance(src, str) else source, format="summary", metrics=metrics
        )


def _number(v: Any) -> float | None:
    """A finite number, or None (bools, strings, NaN and infinities are not metrics)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _point(obj: Mapping[str, Any]) -> LogPoint:
    step = _number(obj.get("step"))
    epoch = _number(obj.get("epoch"))
    metrics = {
        str(k): num
        for k, v in obj.items()
        if k not in _POSITION_KEYS and (num := _number(v)) is not None
    }
    return LogPoint(step=int(step) if step is not None else None, epoch=epoch, metrics=metrics)


def summarize_points(points: list[LogPoint]) -> dict[str, MetricSummary]:
    """Final (last logged) and best value of every metric in `points`."""
    out: dict[str, MetricSummary] = {}
    for p in points:
        for name, v in p.metrics.items():
            m = out.get(name)
            if m is None:
                d = metric_direction(name)
                out[name] = MetricSummary(
                    final=v,
                    final_step=p.step,
                    best=v if d else None,
                    best_step=p.step if d else None,
                    direction=d,
                    points=1,
                )
                continue
            m.final, m.final_step = v, p.step
            m.points += 1
            if m.best is not None and (
                (m.direction == "min" and v < m.best) or (m.direction == "max" and v > m.best)
            ):
                m.best, m.best_step = v, p.step
    return out


def _from_objects(objs: Iterable[Any], path: Path, fmt: LogFormat) -> TrainingLog:
    points: list[LogPoint] = []
    for i, obj in enumerate(objs):
        if not isinstance(obj, Mapping):
            raise BadInput(
                f"{path}: log entry {i + 1} is {type(obj).__name__}, expected an object "
                "of metric values",
                fix="give a trainer_state.json, or CSV/JSONL of logged steps",
            )
        p = _point(obj)
        if p.metrics:
            points.append(p)
    if not points:
        raise BadInput(
            f"{path}: no numeric metrics found; expected logged values such as `loss` "
            "or `mean_token_accuracy`",
            fix="give the log with loss values (trainer_state.json)",
        )
    return TrainingLog(
        source=str(path), format=fmt, points=points, metrics=summarize_points(points)
    )


def _read_json(path: Path) -> TrainingLog:
    try:
        raw = loads(read_text(path, "training log", MAX_DOCUMENT_BYTES))[0]
    except JsonRefused as exc:
        raise BadInput(f"{path}: not a readable JSON file: {exc.reason}", fix=exc.fix) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(
            f"{path}: not a readable JSON file: {exc}", fix="give a valid trainer_state.json"
        ) from None
    if isinstance(raw, Mapping):
        history = raw.get("log_history")
        if not isinstance(history, list):
            raise BadInput(
                f"{path}: no `log_history` list; expected a transformers trainer_state.json "
                "(or give a CSV/JSONL of logged steps)",
                fix="give a transformers trainer_state.json or a CSV/JSONL log",
            )
        log = _from_objects(history, path, "trainer_state")
        log.run = {
            str(k): num
            for k, v in raw.items()
            if k != "log_history" and (num := _number(v)) is not None
        }
        return log
    if isinstance(raw, list):
        return _from_objects(raw, path, "jsonl")
    raise BadInput(
        f"{path}: expected a trainer_state.json object or a list of log objects",
        fix="give a transformers trainer_state.json",
    )


def _read_jsonl(path: Path) -> TrainingLog:
    objs = [obj for _, obj in read_objects(path, what="training log")]
    return _from_objects(objs, path, "jsonl")


def _read_csv(path: Path) -> TrainingLog:
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BadInput(
            f"{path}: not a readable CSV file: {exc}", fix="give a CSV with a header row"
        ) from None
    objs: list[dict[str, Any]] = []
    for lineno, row in enumerate(rows, start=2):
        obj: dict[str, Any] = {}
        for key, cell in row.items():
            if key is None or cell is None or not str(cell).strip():
                continue  # an empty cell: not logged at this step
            try:
                obj[key.strip()] = float(cell)
            except ValueError:
                raise BadInput(
                    f"{path}:{lineno}: column {key!r} holds {cell!r}, not a number",
                    [],
                    fix="keep only numbers in metric columns",
                ) from None
        objs.append(obj)
    return _from_objects(objs, path, "csv")


def _newest_checkpoint(folder: Path) -> Path | None:
    best: tuple[int, Path] | None = None
    if not folder.is_dir():
        return None
    for child in folder.iterdir():
        m = _CHECKPOINT_RE.match(child.name)
        if m and (child / TRAINER_STATE).is_file():
            n = int(m.group(1))
            if best is None or n > best[0]:
                best = (n, child)
    return best[1] / TRAINER_STATE if best else None


def find_training_log(folder: Path) -> Path | None:
    """The trainer_state.json of an adapter or output folder, or None when there is none.

    Looks in the folder, its newest `checkpoint-N/`, then the parent folder and the
    parent's newest checkpoint (an adapter saved into a subfolder of the output dir).
    The newest checkpoint holds the whole history up to that step.
    """
    for base in (folder, folder.parent):
        direct = base / TRAINER_STATE
        if direct.is_file():
            return direct
        ckpt = _newest_checkpoint(base)
        if ckpt is not None:
            return ckpt
    return None


def read_training_log(path: str | Path) -> TrainingLog:
    """Read a training log file, or find and read one in a folder; `BadInput` otherwise."""
    p = Path(path)
    if p.is_dir():
        found = find_training_log(p)
        if found is None:
            raise BadInput(
                f"no {TRAINER_STATE} in {p}, its checkpoint-N folders or next to it; "
                "give the log file itself (trainer_state.json, .csv or .jsonl)"
            )
        p = found
    if not p.is_file():
        raise BadInput(f"training log {p} does not exist", fix="check the path")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return _read_csv(p)
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(p)
    if suffix == ".json":
        return _read_json(p)
    raise BadInput(
        f"training log {p}: unknown format {suffix or '(no suffix)'!r}; "
        "use trainer_state.json, a .csv or a .jsonl file"
    )


__all__ = [
    "ACCURACY_KEYS",
    "LOSS_KEYS",
    "TRAINER_STATE",
    "LogPoint",
    "MetricSummary",
    "TrainingLog",
    "find_training_log",
    "metric_direction",
    "read_training_log",
    "summarize_points",
]
