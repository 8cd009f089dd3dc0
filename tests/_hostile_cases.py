"""The cases of the hostile-input matrix (`test_hostile_matrix.py`): per command, the bad
input, bad path or broken file, the exit code and what the message must say."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests._casestudy import CASE
from tests._mini_evalset import ENTRY_IDS, PASSING

REPO = Path(__file__).resolve().parent.parent
POLICY = REPO / "configs" / "gates" / "default.yaml"
RECIPE = REPO / "configs" / "train" / "smollm2-cpu.yaml"
LATIN1 = "Zürich".encode("latin-1")


# -- the cases --------------------------------------------------------------------------


@dataclass
class Case:
    id: str
    args: list[str]
    code: int
    says: tuple[str, ...] = ()
    """Substrings of the output (`{w}` is the world folder)."""
    out: str | None = None
    """The folder (or file) the command may write, relative to the world."""
    prepare: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    needs_fix: bool = True
    """The message must say how to fix it (`fix:`, or click's `Try ... --help`)."""
    extras: tuple[str, ...] = ()
    """The extras it needs (markers of tests/_extras.py: `openai`, ...)."""


def _write(rel: str, data: str | bytes) -> Callable[[Path], None]:
    def prepare(w: Path) -> None:
        p = w / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")

    return prepare


def _mkdir(rel: str) -> Callable[[Path], None]:
    return lambda w: (w / rel).mkdir(parents=True, exist_ok=True)


def _both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def prepare(w: Path) -> None:
        for step in steps:
            step(w)

    return prepare


def _gens(records: list[str]) -> Callable[[Path], None]:
    return _write("bad.jsonl", "".join(r + "\n" for r in records))


def _record(entry: str, text: str, adapter: str = "base") -> str:
    """A generation line; `<U+XXXX>` in `text` becomes the JSON escape `\\uXXXX` (so a lone
    surrogate can be written)."""
    line = json.dumps({"entry_id": entry, "adapter": adapter, "sample": 0, "text": text})
    return re.sub(r"<U\+([0-9A-Fa-f]{4})>", r"\\u\1", line)


def _all_records(adapter: str = "base", **texts: str) -> list[str]:
    return [_record(e, texts.get(e, PASSING[e]), adapter) for e in ENTRY_IDS]


def _edit_json(rel: str, edit: Callable[[dict], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def prepare(w: Path) -> None:
        p = w / rel
        value = json.loads(p.read_text(encoding="utf-8"))
        edit(value)
        p.write_text(json.dumps(value), encoding="utf-8")

    return prepare


def _evalset_with(entries_edit: Callable[[list[dict]], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def prepare(w: Path) -> None:
        p = w / "ev" / "entries.jsonl"
        entries = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
        entries_edit(entries)
        p.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")

    return prepare


def _regex_expect(pattern: str) -> Callable[[list[dict]], None]:  # type: ignore[type-arg]
    def edit(entries: list[dict]) -> None:  # type: ignore[type-arg]
        a = next(e for e in entries if e["id"] == "A-001")
        a["expect"]["calls"][0]["arguments"]["to_currency"] = {"$regex": pattern}

    return edit


def _schema_pattern(
    pattern: str, tool: str = "web_search", param: str = "query"
) -> Callable[[Path], None]:
    def edit(tools: list[dict]) -> None:  # type: ignore[type-arg]
        for t in tools:
            if t["function"]["name"] == tool:
                t["function"]["parameters"]["properties"][param]["pattern"] = pattern

    return _edit_json("ev/tools.json", edit)  # type: ignore[arg-type]


def _replay_config(name: str = "replay", **extra: object) -> Callable[[Path], None]:
    cfg = {
        "name": name,
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "evalset": "ev",
        "generations": "gens.jsonl",
        **extra,
    }
    return _write("run.yaml", json.dumps(cfg))


HOSTILE = "a" * 40 + "!"

CASES: list[Case] = [
    # 1. names that would become paths
    Case(
        "score-adapter-path-escape",
        ["score", "--generations", "bad.jsonl", "--evalset", "ev", "--out", "out"],
        2,
        ("bad.jsonl", "not a valid name", "fix:"),
        out="out",
        prepare=_gens(_all_records("../../victim/summary")),
    ),
    Case(
        "score-adapter-absolute",
        ["score", "--generations", "bad.jsonl", "--evalset", "ev", "--out", "out"],
        2,
        ("not a valid name", "fix:"),
        out="out",
        prepare=_gens(_all_records("/../../../tmp/PWNED-gate")),
    ),
    Case(
        "gate-adapter-path-escape",
        ["gate", "round1:../../victim/summary", "--policy", str(POLICY)],
        2,
        ("not a valid name", "fix:"),
        out="round1",
    ),
    Case(
        "gate-summary-with-hostile-adapter",
        ["gate", "round1", "--policy", str(POLICY)],
        2,
        ("summary.json", "fix:"),
        out="round1",
        prepare=_edit_json(
            "round1/summary.json",
            lambda s: s["adapters"].update({"../../x": s["adapters"].pop("round1")}),
        ),
    ),
    Case(
        "run-config-name-escape",
        ["run", "--config", "run.yaml"],
        2,
        ("run.yaml", "name", "fix:"),
        out="runs",
        prepare=_replay_config("../../escaped-run"),
    ),
    Case(
        "run-adapter-flag-escape",
        ["run", "--config", "run.yaml", "--adapter", "../x=ev", "--out", "out"],
        2,
        ("not a valid name", "fix:"),
        out="out",
        prepare=_replay_config(),
    ),
    # 2. catastrophic regexes: refused by validate, linear in score
    Case(
        "validate-lookbehind-regex",
        ["validate", "ev"],
        2,
        ("$regex", "fix:"),
        prepare=_evalset_with(_regex_expect("(?<=x)CHF")),
    ),
    Case(
        "validate-backreference-pattern",
        ["validate", "ev"],
        2,
        ("pattern", "fix:"),
        prepare=_schema_pattern(r"^(a)\1$"),
    ),
    Case(
        "score-nested-quantifier-regex",
        ["score", "--generations", "bad.jsonl", "--evalset", "ev", "--out", "out"],
        0,
        out="out",
        prepare=_both(
            _evalset_with(_regex_expect("^(a+)+$")),
            _schema_pattern("^(a+)+$"),
            _gens(
                _all_records(
                    **{
                        "A-001": '<tool_call>{"name": "convert_currency", "arguments": '
                        f'{{"amount": 250, "from_currency": "EUR", "to_currency": "{HOSTILE}"}}}}'
                        "</tool_call>",
                        "F-001": '<tool_call>{"name": "web_search", "arguments": '
                        f'{{"query": "{HOSTILE}"}}}}</tool_call>',
                    }
                )
            ),
        ),
        needs_fix=False,
    ),
    # 4. usage errors (click, vendored by typer)
    Case(
        "score-parse-mode",
        [
            "score",
            "--generations",
            "gens.jsonl",
            "--evalset",
            "ev",
            "--out",
            "o",
            "--parse-mode",
            "relaxed",
        ],
        2,
        ("--parse-mode", "relaxed"),
    ),
    Case(
        "score-k-zero",
        ["score", "--generations", "gens.jsonl", "--evalset", "ev", "--out", "o", "--k", "0"],
        2,
        ("--k",),
    ),
    Case(
        "score-missing-evalset",
        ["score", "--generations", "gens.jsonl", "--out", "o"],
        2,
        ("--evalset",),
    ),
    Case("compare-format", ["compare", "round1", "round2", "-f", "xml"], 2, ("xml",)),
    Case("run-samples-zero", ["run", "--samples", "0"], 2, ("--samples",)),
    Case("run-limit-zero", ["run", "--limit", "0"], 2, ("--limit",)),
    Case(
        "reliability-k-negative", ["reliability", "--k", "-2", "-r", "0.9", "-n", "3"], 2, ("--k",)
    ),
    Case("reliability-n-word", ["reliability", "-n", "ten"], 2, ("--steps",)),
    Case("unknown-command", ["frobnicate"], 2, ("frobnicate",)),
    Case("train-missing-config", ["train"], 2, ("--config",)),
    Case(
        "curriculum-bad-family",
        ["curriculum", "--families", "nonsense=3", "-t", "ev", "-w", "c.jsonl"],
        2,
        ("nonsense", "fix:"),
        out="c.jsonl",
    ),
    # 5. lone surrogates and bytes that are not UTF-8 in generations
    Case(
        "score-lone-surrogate",
        ["score", "--generations", "bad.jsonl", "--evalset", "ev", "--out", "out"],
        0,
        ("surrogate",),
        out="out",
        prepare=_gens(_all_records(**{"F-001": "GDPR <U+D800> is the EU law."})),
        needs_fix=False,
    ),
    Case(
        "score-not-utf8",
        ["score", "--generations", "bad.jsonl", "--evalset", "ev", "--out", "out"],
        0,
        ("UTF-8",),
        out="out",
        prepare=lambda w: (w / "bad.jsonl").write_bytes(
            "".join(r + "\n" for r in _all_records(**{"F-001": "GDPR @@ law"}))
            .encode()
            .replace(b"@@", LATIN1)
        ),
        needs_fix=False,
    ),
    Case(
        "run-replay-lone-surrogate",
        ["run", "--config", "run.yaml", "--out", "out", "-q"],
        0,
        ("surrogate",),
        out="out",
        prepare=_both(
            _replay_config(generations="bad.jsonl"),
            _gens(_all_records(**{"F-001": "GDPR <U+DFFF> law"})),
        ),
        needs_fix=False,
    ),
    # 6. files that are not UTF-8, folders where files belong, files where folders belong
    Case(
        "validate-evalset-yaml-latin1",
        ["validate", "ev"],
        2,
        ("evalset.yaml", "UTF-8", "fix:"),
        prepare=_write("ev/evalset.yaml", b"name: agent20\ndescription: " + LATIN1 + b"\n"),
    ),
    Case(
        "validate-entries-latin1",
        ["validate", "ev"],
        2,
        ("entries.jsonl", "UTF-8", "fix:"),
        prepare=_write("ev/entries.jsonl", b'{"id": "' + LATIN1 + b'"}\n'),
    ),
    Case(
        "validate-tools-is-folder",
        ["validate", "ev"],
        2,
        ("tools.json", "fix:"),
        prepare=lambda w: ((w / "ev" / "tools.json").unlink(), _mkdir("ev/tools.json")(w)),
    ),
    Case("validate-not-a-folder", ["validate", "gens.jsonl"], 2, ("gens.jsonl", "fix:")),
    Case(
        "validate-fifo",
        ["validate", "ev"],
        2,
        ("entries.jsonl", "fix:"),
        prepare=lambda w: (
            (w / "ev" / "entries.jsonl").unlink(),
            os.mkfifo(w / "ev" / "entries.jsonl"),
        ),
    ),
    Case(
        "score-generations-fifo",
        ["score", "--generations", "fifo", "--evalset", "ev", "--out", "out"],
        2,
        ("fifo", "fix:"),
        out="out",
        prepare=lambda w: os.mkfifo(w / "fifo"),
    ),
    Case(
        "run-config-latin1",
        ["run", "--config", "run.yaml"],
        2,
        ("run.yaml", "UTF-8", "fix:"),
        out="runs",
        prepare=_write("run.yaml", b"name: " + LATIN1 + b"\n"),
    ),
    Case(
        "run-config-python-object",
        ["run", "--config", "run.yaml"],
        2,
        ("run.yaml", "fix:"),
        out="runs",
        prepare=_write("run.yaml", "name: !!python/object/apply:os.system [id]\n"),
    ),
    Case(
        "train-recipe-latin1",
        ["train", "--config", "recipe.yaml", "--dry-run"],
        2,
        ("recipe.yaml", "UTF-8", "fix:"),
        prepare=_write("recipe.yaml", b"name: " + LATIN1 + b"\n"),
    ),
    Case(
        "train-output-dir-is-file",
        ["train", "--config", str(RECIPE), "--out", "gens.jsonl", "--dry-run"],
        2,
        ("gens.jsonl", "fix:"),
    ),
    Case(
        "card-update-readme-latin1",
        ["card", "round2", "--overwrite", "README.md", "--no-chart"],
        2,
        ("README.md", "UTF-8", "fix:"),
        out="README.md",
        prepare=_write("README.md", b"# " + LATIN1 + b"\n"),
    ),
    Case(
        "card-update-readme-folder",
        ["card", "round2", "--overwrite", "ev", "--no-chart"],
        2,
        ("ev", "fix:"),
    ),
    Case(
        "card-out-is-file",
        ["card", "round2", "--out", "gens.jsonl", "--no-chart"],
        2,
        ("gens.jsonl", "fix:"),
    ),
    Case(
        "compare-out-is-folder", ["compare", "round1", "round2", "--write", "ev"], 2, ("ev", "fix:")
    ),
    Case(
        "compare-out-fifo",
        ["compare", "round1", "round2", "--write", "fifo"],
        2,
        ("fifo", "fix:"),
        prepare=lambda w: os.mkfifo(w / "fifo"),
    ),
    Case(
        "gate-out-is-folder",
        ["gate", "round2", "--policy", str(POLICY), "--write", "ev"],
        2,
        ("ev", "fix:"),
    ),
    Case(
        "gate-policy-latin1",
        ["gate", "round2", "--policy", "p.yaml"],
        2,
        ("p.yaml", "UTF-8", "fix:"),
        prepare=_write("p.yaml", b"# " + LATIN1 + b"\n"),
    ),
    Case(
        "gate-step-summary-is-folder",
        ["gate", "round2", "--policy", str(POLICY), "--write", "g.json"],
        2,
        ("ev", "fix:"),
        out="g.json",
        env={"GITHUB_STEP_SUMMARY": "ev"},
    ),
    Case(
        "curriculum-out-is-folder",
        ["curriculum", "--families", "clarify=2", "-t", "ev", "-w", "ev"],
        2,
        ("ev", "fix:"),
    ),
    Case(
        "curriculum-out-parent-is-file",
        ["curriculum", "--families", "clarify=2", "-t", "ev", "-w", "gens.jsonl/c.jsonl"],
        2,
        ("gens.jsonl", "fix:"),
    ),
    Case(
        "score-out-is-file",
        ["score", "--generations", "gens.jsonl", "--evalset", "ev", "--out", "gens.jsonl"],
        2,
        ("gens.jsonl", "fix:"),
    ),
    Case(
        "score-missing-generations",
        ["score", "--generations", "nope.jsonl", "--evalset", "ev", "--out", "out"],
        2,
        ("nope.jsonl", "fix:"),
        out="out",
    ),
    Case(
        "compare-training-log-latin1",
        ["compare", "round1", "round2", "--training-log", "round2=log.json"],
        2,
        ("log.json", "fix:"),
        prepare=_write("log.json", b'{"x": "' + LATIN1 + b'"}'),
    ),
    Case(
        "run-out-is-file",
        ["run", "--config", "run.yaml", "--out", "gens.jsonl"],
        2,
        ("gens.jsonl", "fix:"),
        prepare=_replay_config(),
    ),
    Case(
        "run-unknown-config-key",
        ["run", "--config", "run.yaml"],
        2,
        ("run.yaml", "fix:"),
        out="runs",
        prepare=_write("run.yaml", "modle: x\n"),
    ),
    Case(
        "run-adapter-missing-folder",
        ["run", "--config", "run.yaml", "--adapter", "r1=nowhere", "--out", "out"],
        2,
        ("nowhere", "fix:"),
        out="out",
        prepare=_replay_config(),
    ),
    Case(
        "score-evalset-is-file",
        ["score", "--generations", "gens.jsonl", "--evalset", "gens.jsonl", "--out", "out"],
        2,
        ("gens.jsonl", "fix:"),
        out="out",
    ),
    Case("compare-missing-run", ["compare", "round1", "nope"], 2, ("nope", "fix:")),
    Case("view-missing-run", ["view", "round1", "nope"], 2, ("nope", "fix:")),
    Case(
        "view-adapter-path-escape",
        ["view", "round1:../../victim/summary"],
        2,
        ("not a valid name", "fix:"),
    ),
    Case("view-unknown-adapter", ["view", "round1:v9"], 2, ("v9", "round1", "fix:")),
    Case("view-out-is-folder", ["view", "round1", "--write", "ev"], 2, ("ev", "fix:")),
    Case(
        "view-out-fifo",
        ["view", "round1", "--write", "fifo"],
        2,
        ("fifo", "fix:"),
        prepare=lambda w: os.mkfifo(w / "fifo"),
    ),
    Case(
        "view-two-rounds",
        ["view", "round1", "round2", "--evalset", str(CASE / "evalset"), "--write", "out/v.html"],
        0,
        out="out",
        needs_fix=False,
    ),
    Case("view-into-the-run-folder", ["view", "round2"], 0, out="round2", needs_fix=False),
    Case(
        "view-evalset-of-another-sha",
        ["view", "round1", "--evalset", "ev", "--write", "out/v.html"],
        2,
        ("--evalset ev", "casestudy", "fix:"),
        out="out",
    ),
    Case(
        "card-missing-baseline",
        ["card", "round2", "--baseline", "nope", "--no-chart"],
        2,
        ("nope", "fix:"),
        out="round2",
    ),
    Case(
        "gate-policy-is-folder",
        ["gate", "round2", "--policy", "ev"],
        2,
        ("ev", "fix:"),
        out="round2",
    ),
    Case(
        "gate-policy-unknown-rule",
        ["gate", "round2", "--policy", "p.yaml"],
        2,
        ("p.yaml", "fix:"),
        out="round2",
        prepare=_write("p.yaml", "rules:\n  nonsense: 3\n"),
    ),
    Case("train-config-is-folder", ["train", "--config", "ev"], 2, ("ev", "fix:")),
    Case("reliability-nan", ["reliability", "-r", "nan", "-n", "3"], 2, ("fix:",)),
    # 7. leftovers and stale state
    Case(
        "score-removes-stale-temp-files",
        ["score", "--generations", "gens.jsonl", "--evalset", "ev", "--out", "out"],
        0,
        out="out",
        prepare=_both(
            _mkdir("out"),
            _write("out/.results.jsonl.4242.0123abcd.tmp", "x" * 1000),
        ),
        needs_fix=False,
    ),
    Case(
        "run-replay-incomplete",
        ["run", "--config", "run.yaml", "--out", "out", "-q"],
        2,
        ("fix:",),
        out="out",
        prepare=_both(
            _replay_config(generations="part.jsonl"),
            _gens([]),
            _write("part.jsonl", _record("A-001", "x") + "\n"),
        ),
    ),
    Case(
        "run-dead-server",
        ["run", "--config", "run.yaml", "--out", "out", "-q"],
        4,
        ("127.0.0.1", "fix:"),
        out="out",
        prepare=_write(
            "run.yaml",
            json.dumps(
                {
                    "model": "Qwen/Qwen3-4B",
                    "backend": "openai",
                    "evalset": "ev",
                    "openai": {
                        "base_url": "http://127.0.0.1:9/v1",
                        "max_retries": 0,
                        "timeout_s": 2,
                    },
                }
            ),
        ),
        extras=("openai",),
    ),
    # 8. numbers
    Case("reliability-huge-n", ["reliability", "-r", "0.99", "-n", "1" + "0" * 400], 2, ("fix:",)),
    Case(
        "reliability-huge-k",
        ["reliability", "-r", "0.99", "-n", "5", "--k", "9" * 30],
        2,
        ("fix:",),
    ),
    Case(
        "reliability-target-huge-n",
        ["reliability", "--target", "0.9", "-n", "9" * 30],
        2,
        ("fix:",),
    ),
    Case("reliability-r-out-of-range", ["reliability", "-r", "1.5", "-n", "3"], 2, ("1.5", "fix:")),
    # 9. code from the model's folder runs only when asked twice
    Case(
        "run-trust-remote-code",
        ["run", "--config", "run.yaml", "--out", "out"],
        2,
        ("trust_remote_code", "--trust-remote-code"),
        out="out",
        prepare=_replay_config(trust_remote_code=True),
    ),
    Case(
        "train-trust-remote-code",
        ["train", "--config", "recipe.yaml", "--dry-run"],
        2,
        ("trust_remote_code", "--trust-remote-code"),
        prepare=lambda w: (w / "recipe.yaml").write_text(
            RECIPE.read_text(encoding="utf-8") + "\ntrust_remote_code: true\n", encoding="utf-8"
        ),
    ),
]
