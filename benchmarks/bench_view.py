"""Size and open time of `loragate view` pages (a benchmark, not a test).

Builds a run over the bundled agent20 evalset from the replayed reference outputs
(`tests/_view_runs.py`: three adapters, `k` samples an entry, enough for
`--samples`), each output made distinct (as sampled outputs are) unless `--shared`,
scores it with `finish_run` (which writes `view.html`) and measures:

1. the page's size, and how long building it takes (`view_data` + `render_view`);
2. how long a headless Chromium (the system's, as in the tests) takes to open it from
   `file://` until the page's script has drawn the tables and the first rows
   (`body[data-ready]`), in a fresh browser context each time;
3. how long a family filter takes to redraw the rows.

Prints medians of `--repeats` runs. Usage:

    python benchmarks/bench_view.py [--samples 10000] [--repeats 5] [--shared]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from loragate.evaluation import finish_run  # noqa: E402
from loragate.formats.runfolder import VIEW, read_results, read_summary  # noqa: E402
from loragate.results.view.html import render_view  # noqa: E402
from loragate.results.view.page_data import find_evalset, sides_of, view_data  # noqa: E402
from tests._browser import LAUNCH_TIMEOUT_MS, chromium_path  # noqa: E402
from tests._view_runs import ADAPTERS, agent20, agent20_generations  # noqa: E402


def build_run(out: Path, samples: int, shared: bool) -> int:
    entries = len(agent20().entries)
    k = max(1, math.ceil(samples / (entries * len(ADAPTERS))))
    gens = agent20_generations(ADAPTERS, k)
    if not shared:
        for g in gens:
            g.text = f"{g.text}\n(sample {g.sample} of {g.adapter})"
    finish_run(agent20(), gens, out, k=k, progress=False)
    return len(gens)


def time_build(run: Path, repeats: int) -> float:
    summary, results = read_summary(run), read_results(run)
    evalset = find_evalset(sides_of(run, summary, results))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        render_view(view_data(sides_of(run, summary, results), evalset))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_open(page_path: Path, repeats: int) -> tuple[float, float, float]:
    """Median seconds: open until ready (wall clock), the page's own count from
    navigation start (performance.now), a family filter's redraw."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise SystemExit("no chromium found (apt-get install -y chromium)")
    wall, own, refilter = [], [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, timeout=LAUNCH_TIMEOUT_MS)
        for _ in range(repeats):
            context = browser.new_context(offline=True)
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            wall.append(time.perf_counter() - t0)
            own.append(page.evaluate("performance.now()") / 1000)
            refilter.append(
                page.evaluate(
                    """() => { const s = document.getElementById('f-family');
                         const t0 = performance.now(); s.value = 'recovery';
                         s.dispatchEvent(new Event('input', {bubbles: true}));
                         return (performance.now() - t0) / 1000; }"""
                )
            )
            context.close()
        browser.close()
    return statistics.median(wall), statistics.median(own), statistics.median(refilter)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--shared", action="store_true", help="keep outputs that repeat (greedy-like)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        n = build_run(run, args.samples, args.shared)
        page = run / VIEW
        size = page.stat().st_size
        build = time_build(run, args.repeats)
        wall, own, refilter = time_open(page, args.repeats)
    print(f"samples {n} (3 adapters, agent20, {'shared' if args.shared else 'distinct'} outputs)")
    print(f"view.html {size / 1e6:.2f} MB ({size / n:.0f} bytes a sample)")
    print(f"build (view_data + render_view): median {build:.2f} s")
    print(f"open in chromium until drawn: median {wall:.2f} s wall, {own:.2f} s page-side")
    print(f"family filter redraw: median {refilter * 1000:.0f} ms")


if __name__ == "__main__":
    main()
