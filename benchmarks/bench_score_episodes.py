"""`score-episodes` on the bundled trajectories, this tree against an older commit, in
one run (a benchmark, not a test).

Each side scores its own `tests/data/episodes/trajectories.jsonl` (two scripted adapters
over agent20's 112 episode variants, 873 steps) against its own `evalsets/agent20`, as
`loragate score-episodes` does from the command line, each pass in a fresh process
(interpreter start and imports included). The older side is a detached git worktree of
`--base` (default: `main`), made in a temporary folder and removed after. The sides
alternate, so a change of load on this shared machine hits both; printed: every pass,
the median of each side, and the ratio of the medians (this / base). Usage:

    python benchmarks/bench_score_episodes.py [--base main] [--passes 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path("tests") / "data" / "episodes" / "trajectories.jsonl"
EVALSET = Path("evalsets") / "agent20"


def _score(tree: Path, out: Path) -> float:
    """Seconds one `score-episodes` takes with the code and data of `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [
        sys.executable,
        "-m",
        "loragate",
        "score-episodes",
        "--trajectories",
        str(tree / FIXTURE),
        "--evalset",
        str(tree / EVALSET),
        "--out",
        str(out),
    ]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, timeout=600)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the commit to compare with")
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-score-episodes-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), args.base],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        try:
            times: dict[str, list[float]] = {"base": [], "this": []}
            for i in range(args.passes):
                for side, tree in (("base", base), ("this", REPO)):
                    seconds = _score(tree, Path(tmp) / f"{side}-{i}")
                    times[side].append(seconds)
                    print(f"pass {i + 1} {side}: {seconds:.2f} s", flush=True)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(base)], cwd=REPO, check=False
            )
    base_median = statistics.median(times["base"])
    this_median = statistics.median(times["this"])
    print(
        f"median of {args.passes}: base ({args.base}) {base_median:.2f} s, "
        f"this {this_median:.2f} s, ratio {this_median / base_median:.2f}x"
    )


if __name__ == "__main__":
    main()
