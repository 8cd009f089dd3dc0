"""`loragate score` throughput with the served reading beside strict and lenient, against
an older loragate, in one run (a benchmark, not a test).

Every output is read three ways now (served, strict, lenient), where older versions
read it two ways; issue 38 asks that this keep `loragate score` at >= 0.8x the older
samples/s. The script builds the generations of `bench_scoring.py` over agent20 (a mix
of right calls, wrong tools, direct answers, broken JSON, reasoning, extra calls and
junk), then times `loragate score --jobs 1` end to end in a new process - this
checkout in each parse mode, and the older version in its default (strict) mode -
alternating the versions in every round, and prints the medians (wall and CPU seconds
of the process) and the ratios.

The older version is a folder holding an importable `loragate` package, e.g. a plain
install of the commit before the served mode:

    git archive c49b413 | tar -x -C /tmp/old-src
    .venv/bin/python -m pip install --no-deps --no-build-isolation --target /tmp/old /tmp/old-src
    .venv/bin/python benchmarks/bench_parse_modes.py --old /tmp/old [--samples 100000]
        [--repeats 3]

The figures in docs/benchmarks.md come from this script.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scoring import EVALSET, build_generations
from loragate.evalset.load import load_evalset

Sample = tuple[float, float]
"""(wall seconds, CPU seconds) of one `loragate score` process."""


def _env(pythonpath: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath  # found before this checkout's editable install
    return env


def _loragate_of(pythonpath: str | None, cwd: Path) -> Path:
    """The `loragate` package a child process imports (run outside any checkout, so
    the current folder does not shadow the path)."""
    found = subprocess.run(
        [sys.executable, "-c", "import loragate; print(loragate.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=_env(pythonpath),
        cwd=cwd,
    )
    return Path(found.stdout.strip()).parent


def _score(gens: Path, out: Path, mode: str | None, pythonpath: str | None) -> Sample:
    command = [sys.executable, "-c", "from loragate.cli.app import main; main()", "score"]
    command += ["--generations", str(gens), "--evalset", str(EVALSET), "--out", str(out)]
    command += ["--jobs", "1"] + (["--parse-mode", mode] if mode else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, env=_env(pythonpath), cwd=gens.parent
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="folder with the older loragate")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if not (args.old / "loragate" / "__init__.py").is_file():
        parser.error(f"--old {args.old} holds no loragate package")

    records = build_generations(load_evalset(EVALSET), args.samples)
    n = len(records)
    runs: dict[str, tuple[str | None, str | None]] = {
        "older (strict)": (None, str(args.old)),
        "this, served": ("served", None),
        "this, strict": ("strict", None),
        "this, lenient": ("lenient", None),
    }
    timings: dict[str, list[Sample]] = {label: [] for label in runs}
    with tempfile.TemporaryDirectory() as tmp:
        older = _loragate_of(str(args.old), Path(tmp))
        this = _loragate_of(None, Path(tmp))
        print(f"older: {older}; this: {this}")
        if older == this or not older.is_relative_to(args.old.resolve()):
            parser.error(f"--old {args.old}: a child process would not import it")
        gens = Path(tmp) / "generations.jsonl"
        gens.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
        for i in range(args.repeats):
            for label, (mode, pythonpath) in runs.items():
                out = Path(tmp) / f"run-{i}-{label.replace(' ', '_').replace(',', '')}"
                timings[label].append(_score(gens, out, mode, pythonpath))
    print(f"{n:,} samples, loragate score --jobs 1, medians of {args.repeats}")
    base_wall = statistics.median(t[0] for t in timings["older (strict)"])
    base_cpu = statistics.median(t[1] for t in timings["older (strict)"])
    for label, samples in timings.items():
        wall = statistics.median(t[0] for t in samples)
        cpu = statistics.median(t[1] for t in samples)
        print(
            f"{label:16} {n / wall:>8,.0f} samples/s wall ({base_wall / wall:.2f}x), "
            f"{n / cpu:>8,.0f} per CPU second ({base_cpu / cpu:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
