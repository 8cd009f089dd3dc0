"""Start-up time of the command line and of `import loragate` (a benchmark, not a test).

Times, in fresh processes, `loragate --help` (the CLI imports every command module) and
`import loragate`, and counts the modules each loads. With `--against DIR` (a plain
install of another loragate, e.g. `pip install --no-deps --target DIR <clone of main>`),
the two installs run alternately in the same loop, so the machine's load falls on both
alike; the figure to read is the ratio of the medians. Usage:

    python benchmarks/bench_startup.py [--repeats 15] [--against DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "loragate --help": (
        "import sys\nfrom loragate.cli.app import main\nsys.argv = ['loragate', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    ),
    "import loragate": "import loragate",
}
COUNT = (
    "import sys, json\n{case}\n"
    "print(json.dumps([len(sys.modules), len([m for m in sys.modules if m.startswith('loragate')])]),"
    " file=sys.stderr)\n"
)


def _env(path: Path | None) -> dict[str, str]:
    # Byte-code caches on for both: the warm-up run writes them, as a user's first run does
    # (an install compiles them; a checkout gets them on first use).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if path is not None:  # a plain install put first on the path wins over the editable one
        env["PYTHONPATH"] = str(path)
    return env


CWD = tempfile.gettempdir()
"""Where the processes run: not the clone, whose folder `python -c` would put first on
the path (and so import the clone's loragate for either install)."""


def _time(code: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh process running `code`;
    the CPU time is the steadier figure on a shared machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, cwd=CWD, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _counts(code: str, env: dict[str, str]) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-c", COUNT.format(case=code)],
        env=env,
        cwd=CWD,
        check=True,
        capture_output=True,
        text=True,
    )
    counts: list[int] = json.loads(out.stderr.strip().splitlines()[-1])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--against", type=Path, help="a plain install of another loragate")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    installs: dict[str, Path | None] = {"this": None}
    if args.against is not None:
        installs["against"] = args.against.resolve()
    figures: dict[str, dict[str, object]] = {}
    for case, code in CASES.items():
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in installs}
        for path in installs.values():
            _time(code, _env(path))  # warm the file cache once
        for _ in range(args.repeats):
            for name, path in installs.items():
                times[name].append(_time(code, _env(path)))
        for name, path in installs.items():
            modules, ours = _counts(code, _env(path))
            walls, cpus = zip(*times[name], strict=True)
            figures[f"{case} [{name}]"] = {
                "median_s": round(statistics.median(walls), 3),
                "best_s": round(min(walls), 3),
                "median_cpu_s": round(statistics.median(cpus), 3),
                "modules": modules,
                "loragate_modules": ours,
            }
        if "against" in installs:
            ratios = {}
            for what, i in (("wall", 0), ("cpu", 1)):
                mine = statistics.median(t[i] for t in times["this"])
                theirs = statistics.median(t[i] for t in times["against"])
                ratios[f"{what}_ratio"] = round(mine / theirs, 3)
            figures[f"{case} [ratio this/against]"] = ratios
    for name, row in figures.items():
        print(f"{name:40} {row}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
