"""Hostile input on `view`, `sweep` and `import bfcl` (issue 26; the harness and the
rules every case is held to: `tests/_hostile_harness.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests._hostile_harness import (
    BFCL,
    BFCL_ANSWERS,
    BFCL_DATA,
    DEEP,
    HUGE_INT,
    SWEEP,
    VIEW,
    Case,
    both,
    check_cases,
    copy,
    edit_json,
    edit_lines,
    edit_records,
    fake_bfcl,
    no_openai,
    no_ray,
    params,
    raw_field,
    run_case,
    sweep_file,
    write_file,
)

CASES: list[Case] = [
    # == view ===========================================================================
    Case(
        "exit 2: runs of two different evalsets are refused as compare refuses them, naming both",
        "view-runs-of-two-evalsets",
        ["view", "r1", "r2", "--write", "out/v.html"],
        2,
        ("r2", "other", "agent20", "fix:"),
    ),
    Case(
        "exit 0 with a warning: a run of the same evalset in another version is shown, "
        "and the warning names the versions",
        "view-runs-of-two-versions",
        ["view", "r1", "r3", "--write", "out/v.html"],
        0,
        ("warning", "9.9.9"),
        prepare=both(
            copy("r1", "r3"),
            edit_json("r3/summary.json", lambda s: s["evalset"].update(version="9.9.9")),
        ),
        needs_fix=False,
    ),
    Case(
        "exit 2: a results.jsonl line nested 100,000 levels: file, line, fix",
        "view-results-deep",
        VIEW,
        2,
        ("results.jsonl", "deep", "fix:"),
        prepare=raw_field("r1/results.jsonl", 2, "extra", DEEP),
    ),
    Case(
        "exit 0 with a warning: a lone surrogate in results.jsonl is shown as U+FFFD",
        "view-results-lone-surrogate",
        VIEW,
        0,
        ("surrogate",),
        prepare=edit_lines(
            "r1/results.jsonl",
            lambda ls: [ls[0].replace('"text":"', '"text":"\\ud800', 1), *ls[1:]],
        ),
        needs_fix=False,
    ),
    Case(
        "exit 2: an absurd sample number in results.jsonl is a range error",
        "view-results-absurd-sample",
        VIEW,
        2,
        ("results.jsonl", "sample", "fix:"),
        prepare=edit_records("r1/results.jsonl", lambda rs: rs[0].update(sample=HUGE_INT)),
    ),
    Case(
        "exit 2: summary.json nested 100,000 levels: the file and the fix",
        "view-summary-deep",
        VIEW,
        2,
        ("summary.json", "deep", "fix:"),
        prepare=write_file("r1/summary.json", DEEP),
    ),
    Case(
        "exit 2: an absurd samples_per_entry in summary.json is a range error",
        "view-summary-absurd-k",
        VIEW,
        2,
        ("summary.json", "samples_per_entry", "fix:"),
        prepare=edit_json("r1/summary.json", lambda s: s.update(samples_per_entry=HUGE_INT)),
    ),
    Case(
        "exit 2: gate.json nested 100,000 levels names the file",
        "view-gate-deep",
        VIEW,
        2,
        ("gate.json", "deep", "fix:"),
        prepare=write_file("r1/gate.json", DEEP),
    ),
    Case(
        "exit 0: a manifest whose evalset path is a named pipe is skipped (no hang); the "
        "report is written",
        "view-manifest-evalset-fifo",
        VIEW,
        0,
        prepare=both(
            copy("ev", "fifo-ev"),
            lambda w: (
                (w / "fifo-ev" / "entries.jsonl").unlink(),
                os.mkfifo(w / "fifo-ev" / "entries.jsonl"),
            ),
            edit_json("r1/manifest.json", lambda m: m["evalset"].update(path="fifo-ev")),
        ),
        needs_fix=False,
    ),
    Case(
        "exit 2: manifest.json nested 100,000 levels names the file",
        "view-manifest-deep",
        VIEW,
        2,
        ("manifest.json", "deep", "fix:"),
        prepare=write_file("r1/manifest.json", DEEP),
    ),
    # == sweep ==========================================================================
    Case(
        "exit 2 before anything is written: an evalset that does not exist; no sweep "
        "folder, not even one for the good evalset",
        "sweep-missing-evalset",
        SWEEP,
        2,
        ("nowhere", "fix:"),
        prepare=sweep_file(evalsets=["ev", "nowhere"]),
    ),
    Case(
        "exit 2 before anything is written: an adapter folder that does not exist",
        "sweep-missing-adapter",
        SWEEP,
        2,
        ("no-adapter", "fix:"),
        prepare=sweep_file(adapters={"r1": "no-adapter"}),
    ),
    Case(
        "exit 2 before anything is written: an adapter glob that matches nothing; the fix "
        "names what to do",
        "sweep-glob-matches-nothing",
        SWEEP,
        2,
        ("ckpt/round*", "fix: ", "adapters"),
        prepare=sweep_file(adapter_globs=["ckpt/round*"]),
        check=lambda w, t: "fix: fix it" not in t or pytest.fail(t),
    ),
    Case(
        "exit 2 before anything is written: the backend's extra is not installed; the "
        "message names its pip line",
        "sweep-backend-extra-missing",
        SWEEP,
        2,
        ("loragate[openai]",),
        prepare=sweep_file(backend="openai"),
        patch=no_openai,
        needs_fix=False,
    ),
    Case(
        "exit 2 before anything is written: without Ray the message names the ray extra",
        "sweep-ray-missing",
        SWEEP,
        2,
        ("loragate[ray]",),
        prepare=sweep_file(),
        patch=no_ray,
        needs_fix=False,
    ),
    Case(
        "exit 2 before anything is written: a sweep file nested 100,000 levels deep",
        "sweep-file-deep",
        SWEEP,
        2,
        ("sweep.yaml", "deep", "fix:"),
        prepare=write_file("sweep.yaml", "evalsets: " + DEEP + "\n"),
    ),
    Case(
        "exit 2 before anything is written: YAML aliases that expand to billions of nodes "
        "are refused at once (no hang)",
        "sweep-file-alias-bomb",
        SWEEP,
        2,
        ("sweep.yaml", "fix:"),
        prepare=write_file(
            "sweep.yaml",
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
                f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
                f"*{chr(97 + i)}, *{chr(97 + i)}]\n"
                for i in range(9)
            )
            + "model: Qwen/Qwen3-4B\nopenai: {extra_body: {x: *j}}\n",
        ),
    ),
    Case(
        "exit 2 before anything is written: the sweep's out is a file",
        "sweep-out-is-file",
        SWEEP,
        2,
        ("gens.jsonl", "fix:"),
        prepare=sweep_file(out="gens.jsonl"),
        out="gens.jsonl",
    ),
    Case(
        "exit 2 before anything is written: a sweep asking for episodes, which a sweep "
        "does not run, says so",
        "sweep-episodes-not-run",
        SWEEP,
        2,
        ("episodes", "fix:"),
        prepare=sweep_file(episodes=2),
    ),
    # == import bfcl ====================================================================
    Case(
        "exit 0: the fake bfcl-eval data folder imports (the control case)",
        "bfcl-fake-data-imports",
        BFCL,
        0,
        patch=fake_bfcl,
        needs_fix=False,
    ),
    Case(
        "exit 2: a data line nested 100,000 levels: the file, the line, the fix; --out absent",
        "bfcl-data-deep",
        BFCL,
        2,
        ("BFCL_v4_simple_python.json", ":2", "deep", "fix:"),
        prepare=raw_field(BFCL_DATA, 1, "x", DEEP),
        patch=fake_bfcl,
    ),
    Case(
        "exit 2: a data line that is not JSON: the file, the line, the fix",
        "bfcl-data-not-json",
        BFCL,
        2,
        ("BFCL_v4_simple_python.json", ":2", "fix:"),
        prepare=edit_lines(BFCL_DATA, lambda ls: [ls[0], "{not json", *ls[1:]]),
        patch=fake_bfcl,
    ),
    Case(
        "exit 2: data that is not UTF-8: the file and the fix",
        "bfcl-data-latin1",
        BFCL,
        2,
        ("BFCL_v4_simple_python.json", "UTF-8", "fix:"),
        prepare=lambda w: (w / BFCL_DATA).write_bytes(
            (w / BFCL_DATA).read_bytes().replace(b"area", b"ar\xe9a", 1)
        ),
        patch=fake_bfcl,
    ),
    Case(
        "exit 0 with a warning: a lone surrogate in BFCL's data becomes U+FFFD",
        "bfcl-data-lone-surrogate",
        BFCL,
        0,
        ("surrogate",),
        prepare=edit_lines(BFCL_DATA, lambda ls: [ls[0].replace("Find", "Find \\ud800"), *ls[1:]]),
        patch=fake_bfcl,
        needs_fix=False,
    ),
    Case(
        "exit 2: possible answers nested 100,000 levels: the file and the fix",
        "bfcl-answers-deep",
        BFCL,
        2,
        ("possible_answer", "deep", "fix:"),
        prepare=raw_field(BFCL_ANSWERS, 0, "x", DEEP),
        patch=fake_bfcl,
    ),
    Case(
        "exit 2: an integer of 5,000 digits in the data is refused with the line",
        "bfcl-data-huge-integer",
        BFCL,
        2,
        ("BFCL_v4_simple_python.json", "fix:"),
        prepare=raw_field(BFCL_DATA, 0, "x", "9" * 5000),
        patch=fake_bfcl,
    ),
    Case(
        "exit 2: a data file that is a named pipe is refused (no hang)",
        "bfcl-data-fifo",
        BFCL,
        2,
        ("BFCL_v4_simple_python.json", "fix:"),
        prepare=lambda w: ((w / BFCL_DATA).unlink(), os.mkfifo(w / BFCL_DATA)),
        patch=fake_bfcl,
    ),
]


def test_cases_state_their_outcome() -> None:
    check_cases(CASES)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", params(CASES))
def test_view_sweep_bfcl(
    case: Case,
    hostile_world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_case(case, hostile_world, capfd, monkeypatch)
