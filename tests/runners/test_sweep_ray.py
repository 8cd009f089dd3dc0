"""`loragate sweep` on a local 2-CPU Ray cluster with the tiny Qwen3 and three adapters
through the hf runner: verdicts equal `loragate run`'s, a rerun generates nothing, and
a generation actor killed mid-sweep is restarted without duplicate generations."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._extras import EXTRAS
from tests.runners.conftest import tiny_config
from tests.runners.tiny import build_lora

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason=EXTRAS["ray"][1])


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def three_adapters(
    tiny_model: Path, tiny_adapters: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    lora3 = build_lora(tiny_model, tmp_path_factory.mktemp("lora3") / "lora3", seed=3)
    return {**tiny_adapters, "lora3": lora3}


def _sweep(model: Path, evalset: Path, adapters: dict[str, Path], out: Path) -> Any:
    from loragate.sweep.spec import SweepConfig

    run = tiny_config(model, evalset, backend="hf").model_dump()
    return SweepConfig.model_validate(
        run
        | {
            "adapters": {k: str(v) for k, v in adapters.items()},
            "out": str(out),
            "group_size": 2,
            "baseline": "base",
            "cluster": {"actors": 2, "batch_size": 4},
        }
    )


def _verdicts(run_dir: Path) -> dict[tuple[str, str, int], bool]:
    from loragate.formats.runfolder import read_results

    return {(r.entry_id, r.adapter, r.sample): r.verdict.passed for r in read_results(run_dir)}


def _cache_keys(run_dir: Path) -> list[str | None]:
    from loragate.formats.runfolder import read_generations

    return [r.cache_key for r in read_generations(run_dir / "generations.jsonl")]


def test_sweep_equals_run_and_reruns_free(
    local_ray: None,
    tiny_model: Path,
    mini_evalset: Path,
    three_adapters: dict[str, Path],
    tmp_path: Path,
) -> None:
    from loragate.evaluation import finish_run
    from loragate.generate.pipeline import execute_run, plan_run
    from loragate.results.runs import load_run
    from loragate.sweep.orchestrate import run_sweep

    sweep = _sweep(tiny_model, mini_evalset, three_adapters, tmp_path / "sweep")
    first = run_sweep(sweep, "test")
    assert first.generated == first.jobs == 8 * 4
    assert [f"{r.evalset}/{r.group}" for r in first.runs] == ["mini/g0", "mini/g1"]
    sweep_verdicts: dict[tuple[str, str, int], bool] = {}
    for r in first.runs:
        sweep_verdicts |= _verdicts(Path(r.config.out or ""))
        load_run(f"{r.config.out}:{next(iter(r.config.adapters))}")  # compare/gate/card read it

    cfg = tiny_config(
        tiny_model,
        mini_evalset,
        backend="hf",
        out=str(tmp_path / "run"),
        adapters={k: str(v) for k, v in three_adapters.items()},
    )
    plan = plan_run(cfg)
    outcome = execute_run(plan)
    finish_run(plan.evalset, outcome.records, plan.out_dir, k=1, stack=plan.stack)
    assert sweep_verdicts == _verdicts(plan.out_dir)

    rows = first.summary.evalsets["mini"]
    assert {r.adapter for r in rows} == {"base", "lora1", "lora2", "lora3"}
    assert [r.vs_baseline is None for r in rows].count(True) == 1  # the baseline itself
    assert (tmp_path / "sweep" / "sweep.md").read_text(encoding="utf-8").count("lora") >= 6

    again = run_sweep(sweep, "test")
    assert again.generated == 0
    assert again.cached == again.jobs


def _generation_actors() -> list[int]:
    """Generation actor processes of this test's own Ray cluster (its descendants)."""
    import psutil

    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if any("GenerateActor" in part for part in proc.cmdline()):
                found.append(proc.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def test_killed_actor_is_restarted_without_duplicates(
    local_ray: None,
    tiny_model: Path,
    mini_evalset: Path,
    three_adapters: dict[str, Path],
    tmp_path: Path,
) -> None:
    from loragate.sweep.orchestrate import run_sweep

    sweep = _sweep(tiny_model, mini_evalset, three_adapters, tmp_path / "sweep")
    killed: list[int] = []

    def kill_once(records: Any) -> None:
        if not killed:
            actors = _generation_actors()
            assert actors, "no generation actor process found"
            os.kill(actors[0], signal.SIGKILL)
            killed.append(actors[0])

    outcome = run_sweep(sweep, "test", on_records=kill_once)
    assert killed
    assert outcome.generated == outcome.jobs
    for r in outcome.runs:
        keys = _cache_keys(Path(r.config.out or ""))
        assert not [k for k, n in Counter(keys).items() if n > 1]
    assert sum(len(_cache_keys(Path(r.config.out or ""))) for r in outcome.runs) == outcome.jobs


@pytest.mark.timeout(600)
def test_sweep_keeps_third_party_output_in_its_log(
    tiny_model: Path, mini_evalset: Path, tiny_adapters: dict[str, Path], tmp_path: Path
) -> None:
    """A real `loragate sweep` (its own local Ray): the terminal shows loragate's lines
    and the ranked table only; Ray's and the engines' own output is in sweep.log."""
    import subprocess
    import sys

    import yaml

    sweep = _sweep(tiny_model, mini_evalset, tiny_adapters, tmp_path / "sweep")
    raw = sweep.model_dump(mode="json", exclude_none=True)
    raw["cluster"] = {"actors": 1, "batch_size": 8, "cpus_per_actor": 1}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "loragate", "sweep", "--config", str(path), "-q"],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    terminal = done.stdout + done.stderr
    assert done.returncode == 0, terminal
    log = (tmp_path / "sweep" / "sweep.log").read_text(encoding="utf-8", errors="replace")
    assert "| lora1" in terminal or "lora1" in terminal  # the ranked table
    for noise in ("INFO", "WARNING", "ERROR", "Ray Data", "(raylet)", "pid="):
        lines = [ln for ln in terminal.splitlines() if noise in ln and "sweep.log" not in ln]
        assert not lines, (noise, lines)
    assert log.strip(), "Ray's output went to sweep.log"
