"""One convention over every command of `loragate` (docs/running.md, "Conventions"),
read from click's command tree so a new command or option is held to it too: a short
flag means one thing, `-o/--out` is a folder and `-w/--write` a file, no old name in
the help, every help ends with its exit codes and reads at 80 columns, `--version`,
and every old name still works with one `warning:` line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from loragate.cli import app as cli_app
from loragate.common.errors import LegacyName
from loragate.common.exit_codes import ALWAYS, ExitCode
from loragate.common.version import __version__
from tests._casestudy import CASE, build_rounds, run_cli

DEFAULT = Path(__file__).resolve().parent.parent / "configs" / "gates" / "default.yaml"

SHORT_FLAGS = {
    "-k": "--samples",
    "-b": "--baseline",
    "-p": "--policy",
    "-f": "--format",
    "-c": "--config",
    "-o": "--out",
    "-w": "--write",
}
"""The short flags issue 44 settled: each means this long option wherever it appears."""

OLD_NAMES = ("--force", "--update", "--markdown")


def _commands() -> dict[str, Any]:
    """Every leaf command of the app by its path ("gate", "import bfcl")."""
    found: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*path, name])
        else:
            found[" ".join(path)] = command

    walk(get_command(cli_app.app), [])
    return found


COMMANDS = _commands()


def _options(command: Any, *, hidden: bool = False) -> list[Any]:
    return [
        p
        for p in command.params
        if p.param_type_name == "option" and bool(getattr(p, "hidden", False)) == hidden
    ]


def _module_of(path: str) -> Any:
    """The `loragate.cli` module of a command path (its `EXIT_CODES`)."""
    return getattr(cli_app, path.replace("import ", "import_").replace("-", "_"))


_RENDER = """
import sys
from loragate.cli.app import app
width = int(sys.argv[1])
extra = {"max_content_width": width, "terminal_width": width} if width > 80 else {}
for path in sys.argv[2:]:
    print("\\x00" + path, flush=True)
    app([*path.split(), "--help"], prog_name="loragate", standalone_mode=False, **extra)
    sys.stdout.flush()
"""


def _help_pages(columns: int) -> dict[str, str]:
    """Every command's `--help` as `COLUMNS=columns loragate ... --help` prints it (one
    process renders them all)."""
    paths = ["", *COMMANDS]
    done = subprocess.run(
        [sys.executable, "-c", _RENDER, str(columns), *paths],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(columns)},
        timeout=120,
        check=True,
    )
    pages = done.stdout.split("\x00")[1:]
    return {page.split("\n", 1)[0]: page.split("\n", 1)[1] for page in pages}


@pytest.fixture(scope="module")
def narrow() -> dict[str, str]:
    return _help_pages(80)


@pytest.fixture(scope="module")
def wide() -> dict[str, str]:
    return _help_pages(1000)


def test_the_tree_has_every_command() -> None:
    assert len(COMMANDS) == 14 and {"gate", "import bfcl", "import tau2"} <= set(COMMANDS)


def test_a_short_flag_means_one_thing() -> None:
    meanings: dict[str, set[str]] = {}
    for command in COMMANDS.values():
        for option in _options(command):
            names = [*option.opts, *option.secondary_opts]
            long = next(n for n in names if n.startswith("--"))
            for short in (n for n in names if not n.startswith("--")):
                meanings.setdefault(short, set()).add(long)
    several = {short: longs for short, longs in meanings.items() if len(longs) > 1}
    assert not several, f"short flags with more than one meaning: {several}"
    for short, long in SHORT_FLAGS.items():
        assert meanings[short] == {long}, short


def test_out_is_a_folder_and_write_a_file() -> None:
    outs = writes = 0
    for path, command in COMMANDS.items():
        for option in _options(command):
            if "--out" in option.opts:
                outs += 1
                assert "-o" in option.opts, path
                assert "folder" in (option.help or "").lower(), f"{path} --out: {option.help}"
            if "--write" in option.opts:
                writes += 1
                assert "-w" in option.opts and option.metavar == "FILE", path
    assert outs == 7 and writes == 4  # score, score-episodes, run, train, card, imports


def test_no_old_name_in_the_help(narrow: dict[str, str]) -> None:
    for path, text in narrow.items():
        for old in OLD_NAMES:
            assert not re.search(rf"{old}\b", text), f"{path} --help shows {old}"


def test_every_help_ends_with_its_exit_codes(narrow: dict[str, str]) -> None:
    for path in COMMANDS:
        codes = sorted(set(ALWAYS) | set(_module_of(path).EXIT_CODES))
        tail = "\n".join(f"    {int(c)}  {c.meaning}" for c in codes)
        assert narrow[path].rstrip().endswith("Exit codes:\n" + tail), path
    assert "3  " + ExitCode.INTERNAL.meaning in narrow["score"]
    assert "6  " + ExitCode.INCONCLUSIVE.meaning in narrow["gate"]
    assert "1  " + ExitCode.RULE_FAILED.meaning not in narrow["compare"]


def _cut_words(page: str, whole: set[str]) -> list[str]:
    """Words of `page` that the wide rendering (`whole`: its words) does not have: cut
    ones. A line break after a hyphen is no cut when the two halves make a word."""
    cut = []
    lines = [line.split() for line in page.splitlines()]
    joined = False
    for i, words in enumerate(lines):
        continued, joined = joined, False
        for j, word in enumerate(words):
            if word in whole or (j == 0 and continued):
                continue
            last = j == len(words) - 1
            nxt = lines[i + 1] if i + 1 < len(lines) else []
            if last and word.endswith("-") and nxt and word + nxt[0] in whole:
                joined = True
                continue
            cut.append(word)
    return cut


def test_help_reads_at_80_columns(narrow: dict[str, str], wide: dict[str, str]) -> None:
    for path, text in narrow.items():
        long = [line for line in text.splitlines() if len(line) > 80]
        assert not long, f"{path}: lines over 80 columns: {long}"
        assert "<bool>" not in text and "…" not in text, path
        whole = set(wide[path].split())
        cut = [w for w in _cut_words(text, whole) if not w.endswith("...")]  # command lists
        assert not cut, f"{path}: words cut at 80 columns: {cut}"
    assert "--allow-pickle" in narrow["run"] and "--ignore-base-mismatch" in narrow["run"]


def test_cut_words_are_found() -> None:
    whole = {"docs/call-formats.md", "serving", "stack"}
    assert _cut_words("serving stack docs/call-\nformats.md", whole) == []
    assert _cut_words("serving st\nack", whole) == ["st", "ack"]


def test_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loragate", "--version"], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"loragate {__version__}\n", "")


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_rounds(tmp_path_factory.mktemp("convention-rounds"))


def _alias_cases(r1: Path, r2: Path, tmp: Path) -> list[tuple[list[str], str, str, str]]:
    """(argv with an old name, that name, what its warning says, what the command did: a
    file it wrote or a text it printed)."""
    (tmp / "README.md").write_text("# model\n", encoding="utf-8")
    (tmp / "full").mkdir()
    (tmp / "full" / "notes.txt").write_text("x\n", encoding="utf-8")
    gate = ["gate", str(r2), "-p", str(DEFAULT)]
    out_is_write = "--out is now --write (read as --write); write --write"
    return [
        ([*gate, "--out", str(tmp / "g.json")], "--out", out_is_write, "g.json"),
        ([*gate, "-o", str(tmp / "g2.json")], "-o", out_is_write, "g2.json"),
        (
            [*gate, "--markdown", "-w", str(tmp / "g3.json")],
            "--markdown",
            "--markdown is now --format markdown",
            "| should_not_call |",
        ),
        (
            ["compare", str(r1), str(r2), "--out", str(tmp / "c.txt")],
            "--out",
            out_is_write,
            "c.txt",
        ),
        (
            ["view", str(r1), "--evalset", str(CASE / "evalset"), "--out", str(tmp / "v.html")],
            "--out",
            out_is_write,
            "v.html",
        ),
        (
            ["curriculum", "-f", "clarify=2", "-o", str(tmp / "c.jsonl")],
            "-f",
            "-f is now --families",
            "c.jsonl",
        ),
        (
            ["card", str(r2), "--no-chart", "--update", str(tmp / "README.md")],
            "--update",
            "--update is now --overwrite",
            "updated the loragate section",
        ),
        (["reliability", "-r", "0.9", "-n", "3", "-k", "2"], "-k", "-k is now --k", "pass^2 = "),
        (["reliability", "-p", "0.9", "-n", "3"], "-p", "-p is now --target", "needs per-step"),
        (["run", "-b", "nonsense"], "-b", "-b is now --backend", "unknown backend 'nonsense'"),
        (
            ["import", "bfcl", "-c", "irrelevance", "--out", str(tmp / "full"), "--force"],
            "--force",
            "--force is now --overwrite",
            "irrelevance",
        ),
        (
            ["import", "bfcl", "-c", "bogus", "--out", str(tmp / "b")],
            "-c",
            "-c is now --categories",
            "bogus",
        ),
    ]


@pytest.mark.bfcl  # one of its cases imports BFCL
def test_every_old_name_still_works_and_warns(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    for argv, old, says, did in _alias_cases(r1, r2, tmp_path):
        command = COMMANDS[" ".join(argv[:2]) if argv[0] == "import" else argv[0]]
        alias = next(p for p in command.params if old in p.opts)
        assert alias.hidden, f"{argv[0]} {old} shows in the help"
        with warnings.catch_warnings():  # each run warns, as each process would
            warnings.simplefilter("always", LegacyName)
            code, out, err = run_cli(argv, capsys)
        warned = [line for line in err.splitlines() if line.startswith(f"warning: {says}")]
        assert len(warned) == 1, (argv, err)
        assert code == (2 if argv[0] == "run" or "bogus" in argv else 0), (argv, err)
        if did.endswith((".json", ".txt", ".html", ".jsonl")):
            assert (tmp_path / did).is_file(), argv
        else:
            assert did in out + err, (argv, out, err)
    assert "loragate" in (tmp_path / "README.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "g.json").read_text())["verdict"] == "SHIP"


def test_an_old_name_beside_its_new_one_is_bad_input(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, r2 = rounds
    argv = ["gate", str(r2), "-p", str(DEFAULT), "-w", "a.json", "--out", str(tmp_path / "b")]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "--out and --write were both given" in err and "fix:" in err


def test_gate_formats(rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, r2 = rounds
    code, out, _ = run_cli(["gate", str(r2), "-p", str(DEFAULT), "-f", "json"], capsys)
    assert code == 0 and json.loads(out)["verdict"] == "SHIP"
    code, out, _ = run_cli(["gate", str(r2), "-p", str(DEFAULT), "--format", "markdown"], capsys)
    assert code == 0 and "| should_not_call |" in out


@pytest.mark.tau2
def test_import_tau2_force_still_works_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "telecom"
    out.mkdir()
    (out / "notes.txt").write_text("x\n", encoding="utf-8")
    argv = ["import", "tau2", "--domain", "telecom", "--split", "small", "--limit", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("always", LegacyName)
        code, _, err = run_cli([*argv, "--out", str(out), "--force"], capsys)
    assert code == 0 and "warning: --force is now --overwrite" in err, err
    assert (out / "evalset.yaml").is_file()
