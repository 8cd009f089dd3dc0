"""Replayed run folders shaped like the case study, for compare/gate/card tests.

`tests/data/casestudy/` holds a 24-entry evalset (8 should_not_call, 8 governance,
8 tool_call over the agent20 tools and policy), the generations of two rounds and
their trainer_state.json files:

- round 1 (adapter `round1`): F passes 1/8 (F-001 only), D-008 and A-008 emit
  unparseable JSON (2/24 unparseable), everything else passes;
- round 2 (adapter `round2`): F passes 7/8 (F-008 still calls a tool), all else passes;
- the training logs are flat: final loss 0.0659 -> 0.0663, eval token accuracy
  0.9810 -> 0.9810.

The generations go through the real parser and family scorers (`finish_run`).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from loragate.evalset.load import Evalset, load_evalset
from loragate.evaluation import finish_run
from loragate.formats.records import GenerationRecord
from loragate.formats.runfolder import read_generations

CASE = Path(__file__).resolve().parent / "data" / "casestudy"
ROUND1_LOG = CASE / "round1" / "trainer_state.json"
ROUND2_LOG = CASE / "round2" / "trainer_state.json"


@lru_cache(maxsize=1)
def casestudy_evalset() -> Evalset:
    return load_evalset(CASE / "evalset")


def replay(out: Path, generations: list[GenerationRecord]) -> Path:
    """Score `generations` into the run folder `out` (created) and return it."""
    finish_run(casestudy_evalset(), generations, out, progress=False)
    return out


def build_round(tmp: Path, name: str) -> Path:
    """The run folder of round `round1` or `round2` under `tmp`."""
    return replay(tmp / name, read_generations(CASE / name / "generations.jsonl"))


def build_rounds(tmp: Path) -> tuple[Path, Path]:
    return build_round(tmp, "round1"), build_round(tmp, "round2")


def texts(name: str) -> dict[str, str]:
    """Entry id -> generated text of a round (one sample per entry)."""
    return {g.entry_id: g.text for g in read_generations(CASE / name / "generations.jsonl")}


def replay_run_config(tmp: Path, out: Path) -> Any:
    """A `RunConfig` replaying round 1's outputs as the base model's (made with thinking
    off: no reasoning block) into the run folder `out`; the generations file in `tmp`."""
    from loragate.generate.config import RunConfig

    gens = tmp / "gens.jsonl"
    records = [
        GenerationRecord(entry_id=e, adapter="base", sample=0, text=t)
        for e, t in texts("round1").items()
    ]
    gens.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return RunConfig.model_validate(
        {
            "model": "Qwen/Qwen3-4B",
            "backend": "replay",
            "enable_thinking": False,
            "generations": str(gens),
            "evalset": str(CASE / "evalset"),
            "out": str(out),
        }
    )


def k_sample_generations(adapter: str, passes: dict[str, int], k: int) -> list[GenerationRecord]:
    """k samples per entry; entry `e` passes in its first `passes.get(e, k)` samples.

    Passing texts come from round 2, failing ones from round 1; F-001 (passing in
    both rounds) and F-008 (failing in both) get a tool call or a direct answer.
    """
    good, bad = texts("round2"), texts("round1")
    bad["F-001"] = bad["F-002"]  # any tool call fails a should_not_call entry
    good["F-008"] = "GROUP BY collects rows with equal values so aggregates run per group."
    out: list[GenerationRecord] = []
    for eid in sorted(good):
        n_pass = passes.get(eid, k)
        for s in range(k):
            text = good[eid] if s < n_pass else bad[eid]
            if s >= n_pass and text == good[eid]:
                raise ValueError(f"no failing text for {eid}")
            out.append(GenerationRecord(entry_id=eid, adapter=adapter, sample=s, text=text))
    return out


def cli_exit_code(args: list[str]) -> int:
    """Run `loragate ARGS` through the console entry point; its exit code."""
    from loragate.cli.app import main

    old = sys.argv
    sys.argv = ["loragate", *args]
    try:
        with pytest.raises(SystemExit) as exc:
            main()
    finally:
        sys.argv = old
    code = exc.value.code
    return code if isinstance(code, int) else 1


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `loragate ARGS` through the console entry point; (exit code, stdout, stderr).
    `capsys` may be `capfd` (output written to the file descriptors, too)."""
    code = cli_exit_code(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_json(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def score_rounds(out: Path) -> dict[str, Any]:
    """Rounds 1 and 2 scored through the public API into `out` (`loragate.score_generations`,
    in memory: what a user's script holds)."""
    import loragate

    return {
        name: loragate.score_generations(
            CASE / name / "generations.jsonl", CASE / "evalset", out / name
        )
        for name in ("round1", "round2")
    }
