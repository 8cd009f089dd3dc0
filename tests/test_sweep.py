"""`loragate sweep` without Ray: the sweep file, planning into run folders, cache
skipping, the generation actor's logic called in-process, and the summary. The Ray
versions of these checks are in tests/runners/test_sweep_ray.py (slow)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

import loragate.runners as runners_pkg
import loragate.sweep.ray_stage as sweep_ray
from loragate.common.errors import BadInput, MissingDependency
from loragate.formats.runfolder import read_generations
from loragate.runners import PromptJob, Runner, RunnerSetup, Sink
from loragate.sweep.orchestrate import run_sweep
from loragate.sweep.spec import load_sweep, run_configs
from tests._adapters import make_adapter
from tests._casestudy import run_cli
from tests._mini_evalset import ENTRY_IDS, write_evalset


class EchoRunner(Runner):
    """Passes entries whose id sorts before the adapter's cut-off; counts engines."""

    created: ClassVar[int] = 0
    generated: ClassVar[int] = 0

    def __init__(self, setup: RunnerSetup) -> None:
        type(self).created += 1

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        type(self).generated += len(jobs)
        sink([job.record(f"{job.adapter} on {job.entry_id}") for job in jobs])


def in_process(plans: Sequence[Any], cluster: Any, *, on_records: Any = None) -> int:
    """`generate_on_ray` without Ray: the same actor class and driver, batches of 5."""
    rows = sweep_ray.job_rows(plans)
    actor = sweep_ray.GenerateActor([(p.backend, p.setup) for p in plans])
    chunks = [rows[i : i + 5] for i in range(0, len(rows), 5)]

    def batches() -> Iterable[dict[str, Any]]:
        for chunk in chunks:
            yield actor({"run": [r["run"] for r in chunk], "job": [r["job"] for r in chunk]})

    return sweep_ray.write_batches(plans, batches(), on_records=on_records)


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> type[EchoRunner]:
    EchoRunner.created = 0
    EchoRunner.generated = 0
    monkeypatch.setattr(runners_pkg, "get_runner", lambda name: EchoRunner)
    monkeypatch.setattr(sweep_ray, "generate_on_ray", in_process)
    return EchoRunner


def write_sweep(tmp_path: Path, **extra: Any) -> Path:
    evalset = tmp_path / "mini"
    if not evalset.exists():
        write_evalset(evalset)
    raw: dict[str, Any] = {
        "model": "Qwen/Qwen3-4B",
        "backend": "openai",
        "evalsets": [str(evalset)],
        "adapters": {"r1": "r1", "r2": "r2", "r3": "r3"},
        "group_size": 2,
        "baseline": "base",
        "out": str(tmp_path / "sweep"),
    }
    raw.update(extra)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_groups_and_run_folders(tmp_path: Path) -> None:
    second = write_evalset(tmp_path / "other")
    path = write_sweep(tmp_path)
    sweep = load_sweep(path)
    sweep = sweep.model_copy(update={"evalsets": [*sweep.evalsets, str(second)]})
    runs = run_configs(sweep, str(path))
    assert [(r.evalset, r.group, list(r.config.adapters)) for r in runs] == [
        ("mini", "g0", ["r1", "r2"]),
        ("mini", "g1", ["r3"]),
        ("other", "g0", ["r1", "r2"]),
        ("other", "g1", ["r3"]),
    ]
    assert [r.config.include_base for r in runs] == [True, False, True, False]
    assert runs[1].config.out == str(tmp_path / "sweep" / "mini" / "g1")


def test_adapter_globs_name_folders(tmp_path: Path) -> None:
    for name in ("round1", "round2"):
        make_adapter(tmp_path / "ckpt" / name)
    path = write_sweep(tmp_path, adapters={}, adapter_globs=[str(tmp_path / "ckpt" / "*")])
    runs = run_configs(load_sweep(path), str(path))
    assert runs[0].config.adapters == {
        "round1": str(tmp_path / "ckpt" / "round1"),
        "round2": str(tmp_path / "ckpt" / "round2"),
    }


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"cluster": {"adress": "local"}}, "cluster.adress"),
        ({"cluster": {"address": "http://x"}}, "ray://"),
        ({"baseline": "r4"}, "known adapters: r1, r2, r3, base"),
        ({"adapter_globs": ["nowhere/*"]}, "matches no folder"),
        ({"group_size": 0}, "group_size"),
    ],
)
def test_bad_sweep_files(tmp_path: Path, extra: dict[str, Any], said: str) -> None:
    path = write_sweep(tmp_path, **extra)
    with pytest.raises(BadInput) as info:
        run_configs(load_sweep(path), str(path))
    text = str(info.value) + " ".join(str(p) for p in info.value.problems)
    assert said in text
    assert str(path) in text


def test_glob_folder_name_a_run_config_refuses(tmp_path: Path) -> None:
    make_adapter(tmp_path / "ckpt" / "r+1")
    path = write_sweep(tmp_path, adapter_globs=[str(tmp_path / "ckpt" / "*")])
    with pytest.raises(BadInput, match="not a valid run config") as info:
        run_configs(load_sweep(path), str(path))
    assert "adapters" in str(info.value.problems[0])


def test_cli_bad_sweep_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_sweep(tmp_path, cluster={"actors": 0})
    code, _, err = run_cli(["sweep", "--config", str(path)], capsys)
    assert code == 2
    assert "cluster.actors" in err


def test_glob_name_taken_twice(tmp_path: Path) -> None:
    make_adapter(tmp_path / "ckpt" / "r1")
    path = write_sweep(tmp_path, adapter_globs=[str(tmp_path / "ckpt" / "*")])
    with pytest.raises(BadInput, match="cannot be named 'r1'"):
        run_configs(load_sweep(path), str(path))


@pytest.mark.openai
def test_sweep_writes_run_folders_summary_and_reuses_the_cache(
    tmp_path: Path, echo: type[EchoRunner]
) -> None:
    path = write_sweep(tmp_path)
    sweep = load_sweep(path)
    first = run_sweep(sweep, str(path))
    n = len(ENTRY_IDS)
    assert first.jobs == first.generated == 4 * n
    assert EchoRunner.created == 2  # one engine per adapter group
    g0 = tmp_path / "sweep" / "mini" / "g0"
    assert {r.adapter for r in read_generations(g0 / "generations.jsonl")} == {"base", "r1", "r2"}
    summary = json.loads((tmp_path / "sweep" / "sweep.json").read_text(encoding="utf-8"))
    rows = summary["evalsets"]["mini"]
    assert sorted(r["adapter"] for r in rows) == ["base", "r1", "r2", "r3"]
    assert [r["vs_baseline"] is None for r in rows].count(True) == 1
    assert "| rank | adapter | overall |" in (tmp_path / "sweep" / "sweep.md").read_text()

    # a sweep killed part-way: the last lines of one run folder's cache are lost
    gens = g0 / "generations.jsonl"
    lines = gens.read_text(encoding="utf-8").splitlines(keepends=True)
    gens.write_text("".join(lines[:-5]), encoding="utf-8")
    EchoRunner.created = EchoRunner.generated = 0
    again = run_sweep(sweep, str(path))
    assert (again.generated, EchoRunner.generated, again.cached) == (5, 5, 4 * n - 5)
    assert len(read_generations(gens)) == len(lines)

    EchoRunner.created = 0
    third = run_sweep(sweep, str(path))
    assert (third.generated, EchoRunner.created) == (0, 0)


@pytest.mark.openai
def test_duplicate_answers_are_written_once(tmp_path: Path, echo: type[EchoRunner]) -> None:
    from loragate.generate.pipeline import plan_run

    path = write_sweep(tmp_path, group_size=None)
    plans = [plan_run(r.config) for r in run_configs(load_sweep(path), str(path))]
    rows = sweep_ray.job_rows(plans)
    actor = sweep_ray.GenerateActor([(p.backend, p.setup) for p in plans])
    batch = actor({"run": [r["run"] for r in rows], "job": [r["job"] for r in rows]})
    written = sweep_ray.write_batches(plans, [batch, batch])  # a retried batch
    assert written == len(rows)
    assert len(read_generations(plans[0].out_dir / "generations.jsonl")) == len(rows)


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"loragate\[ray\]"):
        sweep_ray.import_ray()


@pytest.mark.openai
def test_a_sweep_files_harness_section_reaches_every_run_folder(
    tmp_path: Path, echo: type[EchoRunner]
) -> None:
    harness = {
        "variants": [{"name": "wide", "tools": {"order": "shuffled", "seed": 3}}],
        "run": ["wide", "shuffled"],
    }
    path = write_sweep(tmp_path, harness=harness)
    sweep = load_sweep(path)
    first = run_sweep(sweep, str(path))
    n = len(ENTRY_IDS)
    # base + three adapters, each under the default harness and two variants
    assert first.jobs == first.generated == 4 * n * 3
    for group, adapters in (("g0", {"base", "r1", "r2"}), ("g1", {"r3"})):
        folder = tmp_path / "sweep" / "mini" / group
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        assert [v["name"] for v in summary["harness"]["variants"]] == ["wide", "shuffled"]
        assert set(summary["harness"]["sensitivity"]) == adapters
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        assert [h["name"] for h in manifest["harness"]] == ["wide", "shuffled"]
    assert run_sweep(sweep, str(path)).generated == 0  # the variants' samples are cached too

    bad = write_sweep(tmp_path, harness={"run": ["wdie"]}, out=str(tmp_path / "other"))
    with pytest.raises(BadInput, match="unknown harness variant 'wdie'"):
        run_sweep(load_sweep(bad), str(bad))
    assert not (tmp_path / "other").exists()  # nothing made before the check
