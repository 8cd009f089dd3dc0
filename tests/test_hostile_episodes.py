"""Hostile input on episodes files, trajectories files and the pre-flight of `run`
(issue 26; the harness and the rules every case is held to: `tests/_hostile_harness.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests._hostile_harness import (
    DEEP,
    HUGE_INT,
    RESCORE,
    RUN_EP,
    Case,
    both,
    check_cases,
    copy,
    edit_lines,
    edit_records,
    params,
    raw_field,
    run_case,
    traj,
    traj_raw,
    write_file,
)

CASES: list[Case] = [
    # == episodes files ==================================================================
    Case(
        "exit 2: episodes.jsonl line 1 nests too deep, with the fix; no traceback",
        "validate-episodes-deep",
        ["validate", "ev"],
        2,
        ("episodes.jsonl", ":1", "deep", "fix:"),
        out=None,
        prepare=raw_field("ev/episodes.jsonl", 0, "x", DEEP),
    ),
    Case(
        "exit 2 before anything is written: the run folder is never created",
        "run-episodes-deep",
        RUN_EP,
        2,
        ("episodes.jsonl", "deep", "fix:"),
        prepare=raw_field("ev/episodes.jsonl", 1, "x", DEEP),
    ),
    Case(
        "exit 2: score-episodes names episodes.jsonl; --out is not created",
        "rescore-episodes-deep",
        RESCORE,
        2,
        ("episodes.jsonl", "deep", "fix:"),
        prepare=both(
            copy("r1/trajectories.jsonl", "t.jsonl"),
            raw_field("ev/episodes.jsonl", 0, "x", DEEP),
        ),
    ),
    Case(
        "exit 2: a lone surrogate in an evalset file is refused with file, line and fix "
        "(it cannot become a prompt)",
        "validate-episodes-lone-surrogate",
        ["validate", "ev"],
        2,
        ("episodes.jsonl", ":1", "surrogate", "fix:"),
        out=None,
        prepare=edit_lines(
            "ev/episodes.jsonl",
            lambda ls: [ls[0].replace("Please pay", "Please \\ud800 pay"), *ls[1:]],
        ),
    ),
    Case(
        "exit 2 before anything is written: the lone surrogate is found by the pre-flight",
        "run-episodes-lone-surrogate",
        RUN_EP,
        2,
        ("episodes.jsonl", "surrogate", "fix:"),
        prepare=edit_lines(
            "ev/episodes.jsonl",
            lambda ls: [ls[0], ls[1].replace("Delete", "Delete \\udfff")],
        ),
    ),
    Case(
        "exit 2: a lone surrogate in entries.jsonl is refused too (the evalset reader)",
        "validate-entries-lone-surrogate",
        ["validate", "ev"],
        2,
        ("entries.jsonl", "surrogate", "fix:"),
        out=None,
        prepare=edit_lines(
            "ev/entries.jsonl", lambda ls: [ls[0].replace("Convert", "\\ud83d"), *ls[1:]]
        ),
    ),
    Case(
        "exit 2: a line of 100,000 nested arrays in entries.jsonl: file, line, fix",
        "validate-entries-deep",
        ["validate", "ev"],
        2,
        ("entries.jsonl", "deep", "fix:"),
        out=None,
        prepare=raw_field("ev/entries.jsonl", 2, "notes", DEEP),
    ),
    Case(
        "exit 2: tools.json nested 100,000 levels: the file and the fix",
        "validate-tools-deep",
        ["validate", "ev"],
        2,
        ("tools.json", "deep", "fix:"),
        out=None,
        prepare=write_file("ev/tools.json", DEEP),
    ),
    Case(
        "exit 2: episodes.jsonl is not UTF-8: file, line, fix",
        "validate-episodes-latin1",
        ["validate", "ev"],
        2,
        ("episodes.jsonl", "UTF-8", "fix:"),
        out=None,
        prepare=write_file("ev/episodes.jsonl", b'{"id": "Z\xfcrich"}\n'),
    ),
    Case(
        "exit 2: an integer of 5,000 digits in episodes.jsonl is refused, not parsed",
        "validate-episodes-huge-integer",
        ["validate", "ev"],
        2,
        ("episodes.jsonl", "fix:"),
        out=None,
        prepare=raw_field("ev/episodes.jsonl", 0, "max_steps", "9" * 5000),
    ),
    Case(
        "exit 2: max_steps beyond the limit is a range error with the field",
        "validate-episodes-max-steps-huge",
        ["validate", "ev"],
        2,
        ("max_steps", "fix:"),
        out=None,
        prepare=raw_field("ev/episodes.jsonl", 0, "max_steps", str(HUGE_INT)),
    ),
    Case(
        "exit 2 before anything is written: --episodes on an evalset without episodes",
        "run-episodes-missing-file",
        RUN_EP,
        2,
        ("episodes.jsonl", "fix:"),
        prepare=lambda w: (w / "ev" / "episodes.jsonl").unlink(),
    ),
    Case(
        "exit 2 before anything is written: episodes.jsonl is a named pipe (no hang)",
        "run-episodes-fifo",
        RUN_EP,
        2,
        ("episodes.jsonl", "fix:"),
        prepare=lambda w: (
            (w / "ev" / "episodes.jsonl").unlink(),
            os.mkfifo(w / "ev" / "episodes.jsonl"),
        ),
    ),
    Case(
        "exit 2 before anything is written: the replayed episode script lacks a step that "
        "the trajectory needs; the message names the step",
        "run-episode-script-lacks-step",
        RUN_EP,
        2,
        ("gens.jsonl", "EP-PAY@3", "fix:"),
        prepare=edit_records(
            "gens.jsonl", lambda rs: rs.remove(next(r for r in rs if r["entry_id"] == "EP-PAY@3"))
        ),
    ),
    Case(
        "exit 2 before anything is written: a variant's script ends on a tool call below "
        "max_steps, so its next step is missing",
        "run-episode-script-ends-on-a-call",
        RUN_EP,
        2,
        ("gens.jsonl", "EP-DENY", "fix:"),
        prepare=edit_records(
            "gens.jsonl", lambda rs: rs.remove(next(r for r in rs if r["entry_id"] == "EP-DENY@2"))
        ),
    ),
    Case(
        "exit 2 before anything is written: a generations line nested 100,000 levels",
        "run-generations-deep",
        RUN_EP,
        2,
        ("gens.jsonl", "deep", "fix:"),
        prepare=raw_field("gens.jsonl", 3, "extra", DEEP),
    ),
    # == trajectories files ==============================================================
    Case(
        "exit 2: a trajectories line nested 100,000 levels: file, line, fix; --out absent",
        "rescore-trajectory-deep",
        RESCORE,
        2,
        ("t.jsonl", ":2", "deep", "fix:"),
        prepare=traj_raw(1, "arguments_extra", DEEP),
    ),
    Case(
        "exit 2: deep nesting inside a recorded result's arguments is refused the same way",
        "rescore-trajectory-deep-arguments",
        RESCORE,
        2,
        ("t.jsonl", "deep", "fix:"),
        prepare=edit_lines(
            "t.jsonl",
            lambda ls: [
                ls[0].replace(
                    '"arguments":{"invoice_id"', f'"arguments":{{"x":{DEEP},"invoice_id"'
                ),
                *ls[1:],
            ],
            source="r1/trajectories.jsonl",
        ),
    ),
    Case(
        "exit 0: a lone surrogate in a step's text becomes U+FFFD with a warning",
        "rescore-trajectory-lone-surrogate-text",
        RESCORE,
        0,
        ("surrogate",),
        prepare=edit_lines(
            "t.jsonl",
            lambda ls: [ls[0].replace('"text":"', '"text":"\\ud800', 1), *ls[1:]],
            source="r1/trajectories.jsonl",
        ),
        needs_fix=False,
    ),
    Case(
        "exit 0: a lone surrogate deep inside a recorded tool result becomes U+FFFD with "
        "a warning (no serialisation error when the rescored file is written)",
        "rescore-trajectory-lone-surrogate-nested",
        RESCORE,
        0,
        ("surrogate",),
        prepare=edit_lines(
            "t.jsonl",
            lambda ls: [ls[0].replace('"text":"{', '"text":"\\udfff{', 1), *ls[1:]],
            source="r1/trajectories.jsonl",
        ),
        needs_fix=False,
    ),
    Case(
        "exit 2: an absurd sample number is a range error naming the field (no MemoryError)",
        "rescore-trajectory-absurd-sample",
        RESCORE,
        2,
        ("t.jsonl", "sample", "fix:"),
        prepare=traj(lambda rs: rs[-1].update(sample=HUGE_INT)),
    ),
    Case(
        "exit 2: an absurd step number is a range error naming the field",
        "rescore-trajectory-absurd-step",
        RESCORE,
        2,
        ("t.jsonl", "step", "fix:"),
        prepare=traj(lambda rs: rs[-1].update(step=HUGE_INT)),
    ),
    Case(
        "exit 2: a negative sample number is refused with the field",
        "rescore-trajectory-negative-sample",
        RESCORE,
        2,
        ("t.jsonl", "sample", "fix:"),
        prepare=traj(lambda rs: rs[0].update(sample=-1)),
    ),
    Case(
        "exit 0: bytes that are not UTF-8 are read as U+FFFD with a warning",
        "rescore-trajectory-latin1",
        RESCORE,
        0,
        ("UTF-8",),
        prepare=lambda w: (w / "t.jsonl").write_bytes(
            (w / "r1" / "trajectories.jsonl").read_bytes().replace(b"Invoice", b"Inv\xe9ice", 1)
        ),
        needs_fix=False,
    ),
    Case(
        "exit 0: a torn last line (a killed writer) is dropped",
        "rescore-trajectory-torn-tail",
        RESCORE,
        0,
        prepare=lambda w: (w / "t.jsonl").write_bytes(
            (w / "r1" / "trajectories.jsonl").read_bytes() + b'{"episode_id": "EP-PA'
        ),
        needs_fix=False,
    ),
    Case(
        "exit 2: a garbage line in the middle: file, line, fix",
        "rescore-trajectory-garbage-line",
        RESCORE,
        2,
        ("t.jsonl", ":2", "fix:"),
        prepare=edit_lines(
            "t.jsonl", lambda ls: [ls[0], "garbage {", *ls[1:]], source="r1/trajectories.jsonl"
        ),
    ),
    Case(
        "exit 2: trajectories of another evalset whose episode ids match are refused "
        "(evalset identity), naming both evalsets",
        "rescore-trajectories-of-another-evalset",
        [
            "score-episodes",
            "--trajectories",
            "r2/trajectories.jsonl",
            "--evalset",
            "ev",
            "--out",
            "out",
        ],
        2,
        ("other", "agent20", "fix:"),
    ),
    Case(
        "exit 0 with a warning: the same evalset in another version is rescored, and the "
        "output says which versions",
        "rescore-trajectories-of-another-version",
        RESCORE,
        0,
        ("version", "9.9.9"),
        prepare=traj(lambda rs: [r["evalset"].update(version="9.9.9") for r in rs]),
        needs_fix=False,
    ),
    Case(
        "exit 2: one file mixing steps of two evalsets is refused",
        "rescore-trajectories-mixed-evalsets",
        RESCORE,
        2,
        ("t.jsonl", "evalset", "fix:"),
        prepare=lambda w: (w / "t.jsonl").write_bytes(
            (w / "r1" / "trajectories.jsonl").read_bytes()
            + (w / "r2" / "trajectories.jsonl").read_bytes()
        ),
    ),
    Case(
        "exit 0: a version-2 file without evalset identity still rescores (with a note)",
        "rescore-trajectories-v2-without-identity",
        RESCORE,
        0,
        ("evalset",),
        prepare=traj(lambda rs: [(r.pop("evalset", None), r.update(schema_version=2)) for r in rs]),
        needs_fix=False,
    ),
    Case(
        "exit 2: --out holds a run of another evalset: refused before writing",
        "rescore-into-a-run-of-another-evalset",
        [
            "score-episodes",
            "--trajectories",
            "r1/trajectories.jsonl",
            "--evalset",
            "ev",
            "--out",
            "r2",
        ],
        2,
        ("r2", "other", "fix:"),
        out="r2",
    ),
    Case(
        "exit 2: an empty trajectories file says there is nothing to rescore",
        "rescore-trajectories-empty",
        RESCORE,
        2,
        ("fix:",),
        prepare=write_file("t.jsonl", ""),
    ),
    Case(
        "exit 2: --trajectories is a named pipe (no hang)",
        "rescore-trajectories-fifo",
        RESCORE,
        2,
        ("t.jsonl", "fix:"),
        prepare=lambda w: os.mkfifo(w / "t.jsonl"),
    ),
    Case(
        "exit 2: an adapter name that would escape the folder is refused",
        "rescore-trajectory-adapter-escape",
        RESCORE,
        2,
        ("t.jsonl", "adapter", "fix:"),
        prepare=traj(lambda rs: rs[0].update(adapter="../../x")),
    ),
    Case(
        "exit 2: a step of an episode the evalset lacks names the episode",
        "rescore-trajectory-unknown-episode",
        RESCORE,
        2,
        ("EP-NOPE", "fix:"),
        prepare=traj(lambda rs: rs[0].update(episode_id="EP-NOPE")),
    ),
    # == run config files ===============================================================
    Case(
        "exit 2 before anything is written: a run config nested 100,000 levels",
        "run-config-deep",
        ["run", "--config", "deep.yaml", "--out", "out"],
        2,
        ("deep.yaml", "deep", "fix:"),
        prepare=write_file("deep.yaml", "name: " + DEEP + "\n"),
    ),
    Case(
        "exit 2 before anything is written: an adapter's adapter_config.json nested "
        "100,000 levels names the file",
        "run-adapter-config-deep",
        ["run", "--config", "run.yaml", "--adapter", "a1=ad", "--out", "out", "-q"],
        2,
        ("adapter_config.json", "deep", "fix:"),
        prepare=both(
            write_file("ad/adapter_config.json", DEEP),
            write_file("ad/adapter_model.safetensors", b"\0" * 16),
        ),
    ),
    Case(
        "exit 2: a training log nested 100,000 levels names the file (compare)",
        "compare-training-log-deep",
        ["compare", "r1", "r1c", "--training-log", "r1c=log.json"],
        2,
        ("log.json", "deep", "fix:"),
        out=None,
        prepare=both(copy("r1", "r1c"), write_file("log.json", DEEP)),
    ),
]


def test_cases_state_their_outcome() -> None:
    check_cases(CASES)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", params(CASES))
def test_episodes_and_trajectories(
    case: Case,
    hostile_world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_case(case, hostile_world, capfd, monkeypatch)
