"""Training-log reader: trainer_state.json, CSV, JSONL, discovery in adapter folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.results.training_logs import (
    TrainingLog,
    find_training_log,
    metric_direction,
    read_training_log,
)

CASE = Path(__file__).resolve().parent / "data" / "casestudy"


def test_trainer_state_final_best_and_curve() -> None:
    log = read_training_log(CASE / "round1" / "trainer_state.json")
    assert log.format == "trainer_state"
    assert log.final("loss") == pytest.approx(0.0659)
    assert log.final("eval_mean_token_accuracy") == pytest.approx(0.9810)
    assert log.final("eval_loss") == pytest.approx(0.0667)
    assert log.final("train_loss") == pytest.approx(0.1357)
    # Monotonic curve: best == final for the loss, best step 100.
    loss = log.metrics["loss"]
    assert (loss.best, loss.best_step, loss.points, loss.direction) == (0.0659, 100, 10, "min")
    acc = log.metrics["mean_token_accuracy"]
    assert acc.direction == "max" and acc.best == pytest.approx(0.9811)
    assert log.curve("eval_loss") == [(50, 0.0702), (100, 0.0667)]
    # Bookkeeping is kept in the curve but never compared.
    assert log.metrics["learning_rate"].direction is None
    assert log.compared_metrics()[:5] == [
        "loss",
        "train_loss",
        "eval_loss",
        "mean_token_accuracy",
        "eval_mean_token_accuracy",
    ]
    assert "learning_rate" not in log.compared_metrics()
    assert log.first_of(["eval_mean_token_accuracy", "mean_token_accuracy"]) == (
        "eval_mean_token_accuracy",
        pytest.approx(0.981),
    )


def test_best_differs_from_final_when_curve_turns(tmp_path: Path) -> None:
    p = tmp_path / "log.jsonl"
    rows = [
        {"step": 1, "eval_loss": 0.5, "eval_should_not_call_pass_at_1": 0.25},
        {"step": 2, "eval_loss": 0.3, "eval_should_not_call_pass_at_1": 0.875},
        {"step": 3, "eval_loss": 0.4, "eval_should_not_call_pass_at_1": 0.5},
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    log = read_training_log(p)
    assert log.format == "jsonl"
    m = log.metrics["eval_loss"]
    assert (m.final, m.best, m.best_step) == (0.4, 0.3, 2)
    fam = log.metrics["eval_should_not_call_pass_at_1"]
    assert (fam.direction, fam.best, fam.final) == ("max", 0.875, 0.5)


def test_csv_with_empty_cells(tmp_path: Path) -> None:
    p = tmp_path / "steps.csv"
    p.write_text("step,epoch,loss,eval_loss\n10,0.5,0.2,\n20,1.0,0.1,0.12\n")
    log = read_training_log(p)
    assert log.format == "csv"
    assert log.final("loss") == 0.1
    assert log.curve("eval_loss") == [(20, 0.12)]


def test_nan_and_bools_are_not_metrics(tmp_path: Path) -> None:
    p = tmp_path / "trainer_state.json"
    p.write_text('{"log_history": [{"step": 1, "loss": NaN, "flag": true, "grad_norm": 1.5}]}')
    log = read_training_log(p)
    assert set(log.metrics) == {"grad_norm"}


def test_discovery_in_adapter_and_checkpoints(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for n in (50, 100):
        (out / f"checkpoint-{n}").mkdir(parents=True)
    shutil.copy(
        CASE / "round1" / "trainer_state.json", out / "checkpoint-100" / "trainer_state.json"
    )
    (out / "checkpoint-50" / "trainer_state.json").write_text('{"log_history": [{"loss": 1.0}]}')
    # The newest checkpoint wins (it holds the whole history).
    assert find_training_log(out) == out / "checkpoint-100" / "trainer_state.json"
    # An adapter saved into a subfolder finds the log next to it.
    adapter = out / "final_adapter"
    adapter.mkdir()
    assert read_training_log(adapter).final("loss") == pytest.approx(0.0659)
    # A state in the folder itself comes first.
    shutil.copy(CASE / "round2" / "trainer_state.json", adapter / "trainer_state.json")
    assert read_training_log(adapter).final("loss") == pytest.approx(0.0663)


def test_summary_round_trip() -> None:
    log = read_training_log(CASE / "round2" / "trainer_state.json")
    back = TrainingLog.from_summary(json.loads(json.dumps(log.to_summary())))
    assert back.final("loss") == pytest.approx(0.0663)
    assert back.best("eval_loss") == pytest.approx(0.0671)
    assert back.metrics["loss"].direction == "min"
    flat = TrainingLog.from_summary({"loss": 0.07, "mean_token_accuracy": 0.98, "note": "x"})
    assert set(flat.metrics) == {"loss", "mean_token_accuracy"}


def test_direction() -> None:
    assert metric_direction("eval_loss") == "min"
    assert metric_direction("unparseable_rate") == "min"
    assert metric_direction("eval_mean_token_accuracy") == "max"
    assert metric_direction("behaviour/governance") == "max"
    assert metric_direction("learning_rate") is None


@pytest.mark.parametrize(
    ("name", "content", "msg"),
    [
        ("trainer_state.json", "{not json", "not a readable JSON"),
        ("trainer_state.json", '{"global_step": 3}', "log_history"),
        ("trainer_state.json", '{"log_history": [{"step": 1}]}', "no numeric metrics"),
        ("log.jsonl", '{"loss": 1}\n[1, 2]\n', "must be a JSON object"),
        ("log.csv", "step,loss\n1,abc\n", "not a number"),
        ("log.txt", "loss 1", "unknown format"),
    ],
)
def test_bad_logs_raise_bad_input(tmp_path: Path, name: str, content: str, msg: str) -> None:
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(BadInput, match=msg):
        read_training_log(p)


def test_missing_log_in_folder(tmp_path: Path) -> None:
    (tmp_path / "adapter").mkdir()
    with pytest.raises(BadInput, match=r"no trainer_state\.json"):
        read_training_log(tmp_path / "adapter")
    with pytest.raises(BadInput, match="does not exist"):
        read_training_log(tmp_path / "nope.json")
