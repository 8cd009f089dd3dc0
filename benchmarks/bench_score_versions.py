"""`loragate score` of two checkouts in one run: the current tree against a baseline
(a benchmark, not a test).

A change to the free-text judge or the bundled evalset must not slow scoring down; this
script measures it the way a user meets it. For each checkout it builds the scoring
benchmark's synthetic generations over that checkout's `evalsets/agent20`
(`benchmarks/bench_scoring.build_generations`: expected calls, wrong tools, direct
answers, broken JSON, think blocks, junk; about 37 % distinct outputs), then times
`loragate score --jobs 1` end to end in a new process, alternating between the two
checkouts, and prints the medians (samples per second of wall time and per CPU second
of the process) and their ratio. Each process imports the package of its own checkout
(a small import hook maps `loragate`, `loragate.families`, `loragate.runners`,
`loragate.training`, `loragate.evalsets` and `loragate.configs` to its folders), so
one virtual environment serves both. Usage:

    git worktree add --detach /tmp/base <old commit>
    python benchmarks/bench_score_versions.py --baseline /tmp/base [--samples 100000]
                                              [--repeats 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_BOOT = """
import importlib.abc, importlib.machinery, importlib.util, sys
from pathlib import Path
ROOT = Path({root!r})
TOP = {{"loragate": "loragate", "loragate.families": "families", "loragate.runners": "runners",
       "loragate.training": "training", "loragate.evalsets": "evalsets", "loragate.configs": "configs"}}
class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        folder = TOP.get(name)
        if folder is None:
            return None
        d = ROOT / folder
        if (d / "__init__.py").exists():
            return importlib.util.spec_from_file_location(
                name, d / "__init__.py", submodule_search_locations=[str(d)])
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(d)]
        return spec
sys.meta_path.insert(0, _Finder())
"""
"""Put one checkout's packages first in a new process."""

_GENERATE = """
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_scoring import build_generations
from loragate.evalset.load import load_evalset
ev = load_evalset(ROOT / "evalsets" / "agent20")
records = build_generations(ev, {samples})
Path({out!r}).write_text("".join(r.model_dump_json() + "\\n" for r in records), encoding="utf-8")
print(ev.version, len(records))
"""


def _python(root: Path, code: str, *args: str, quiet: bool = False) -> str:
    command = [sys.executable, "-c", _BOOT.format(root=str(root)) + code, *args]
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    return "" if quiet else done.stdout.strip()


def _score(root: Path, gens: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `loragate score --jobs 1` of `root`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    _python(
        root,
        "from loragate.cli.app import main; main()",
        "score",
        "--generations",
        str(gens),
        "--evalset",
        str(root / "evalsets" / "agent20"),
        "--out",
        str(out),
        "--jobs",
        "1",
        quiet=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the older checkout")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    trees = {"baseline": args.baseline.resolve(), "current": REPO}
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        gens = {}
        for name, root in trees.items():
            gens[name] = Path(tmp) / f"{name}.jsonl"
            made = _python(root, _GENERATE.format(samples=args.samples, out=str(gens[name])))
            print(f"{name}: agent20 {made.split()[0]}, {made.split()[1]} samples ({root})")
        for i in range(args.repeats):
            for name, root in trees.items():
                runs[name].append(_score(root, gens[name], Path(tmp) / f"{name}{i}"))
    rates = {}
    for name, timings in runs.items():
        wall = statistics.median(t[0] for t in timings)
        cpu = statistics.median(t[1] for t in timings)
        rates[name] = (args.samples / wall, args.samples / cpu)
        shown = ", ".join(f"{w:.1f}" for w, _ in timings)
        print(
            f"{name:<9} loragate score --jobs 1: median {rates[name][0]:>8,.0f} samples/s wall, "
            f"{rates[name][1]:>8,.0f} per CPU second (runs {shown} s wall)"
        )
    wall_ratio = rates["current"][0] / rates["baseline"][0]
    cpu_ratio = rates["current"][1] / rates["baseline"][1]
    print(f"current / baseline: {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target >= 0.9x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
