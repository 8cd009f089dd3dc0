"""`loragate card`: section markdown, Hub model-index (parsed back), idempotent --overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loragate.common.errors import BadInput
from loragate.results.card import (
    CARD_END,
    CARD_START,
    META_END,
    META_START,
    build_card,
    update_readme,
)
from loragate.results.runs import load_run
from tests._casestudy import ROUND1_LOG, ROUND2_LOG, build_rounds, run_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_rounds(tmp_path_factory.mktemp("card-rounds"))


def _logs() -> list[str]:
    return ["--training-log", f"round1={ROUND1_LOG}", "--training-log", f"round2={ROUND2_LOG}"]


def _front_matter(text: str) -> dict[str, object]:
    assert text.startswith("---\n")
    end = text.index("\n---\n", 4)
    value = yaml.safe_load(text[4:end])
    assert isinstance(value, dict)
    return value


def test_card_section_golden(rounds: tuple[Path, Path]) -> None:
    r1, r2 = rounds
    card = build_card(load_run(str(r2), ROUND2_LOG), load_run(str(r1), ROUND1_LOG))
    s = card.section
    assert s.startswith(CARD_START + "\n") and s.endswith(CARD_END + "\n")
    assert (
        "**vs `round1`: train loss +0.6 %, token accuracy +0.00 pt; should_not_call +75 pt "
        "(p = 0.03); unparseable (served) 2/24 -> 0/24**"
    ) in s
    assert (
        "| F | should_not_call | settled knowledge: a real, direct answer and no tool call. | 8 "
        "| 87.5 % (7/8) [52.9, 97.8] | 87.5 % (k=1) | 0/8 / 0/8 / 0/8 |"
    ) in s
    assert "| Final training loss | 0.0663 |" in s
    assert "| Final token accuracy (eval) | 98.10 % |" in s
    assert "| Epochs | 2 |" in s
    assert (
        "| should_not_call | 12.5 % (1/8) [2.2, 47.1] | 87.5 % (7/8) [52.9, 97.8] | +75 pt "
        "| 0.03 | ≥ 75 pt | F-002, F-003, F-004, F-005, F-006, F-007 | - |"
    ) in s
    assert "| loss | 0.0659 | 0.0663 | +0.6 % |" in s
    # Wilson lower bound of 8/8 is 8 / (8 + 1.96^2) = 0.6756; 0.6756^5 = 0.1409 and
    # 0.6756^10 = 0.0199, floored: 14 % and 1 %. 7/8: 0.5291^5 = 0.0414 -> 4 %.
    assert "| governance | 100.0 % | 67.6 % | 14 % | 1 % |" in s
    assert "| should_not_call | 87.5 % | 52.9 % | 4 % | 0 % |" in s
    assert (
        "measured governance 100 % (CI low 68 %) -> a 5-step governed workflow succeeds >= 14 %."
    ) in s
    assert "![pass@1 per family](loragate_pass_at_1.png)" in s


def test_model_index_structure(rounds: tuple[Path, Path]) -> None:
    _, r2 = rounds
    run = load_run(str(r2))
    card = build_card(run, model_name="acme/qwen3-4b-tools-v2")
    parsed = yaml.safe_load(card.metadata_block)
    assert parsed == card.model_index
    (entry,) = parsed["model-index"]
    assert entry["name"] == "acme/qwen3-4b-tools-v2"
    (result,) = entry["results"]
    assert result["task"] == {
        "type": "text-generation",
        "name": "Tool calling (behavioural families, loragate)",
    }
    assert result["dataset"]["type"] == "casestudy"
    assert result["dataset"]["revision"] == run.summary.evalset.sha256
    values = {m["name"]: m["value"] for m in result["metrics"]}
    assert values == {
        "A tool_call pass@1 (%)": 100.0,
        "D governance pass@1 (%)": 100.0,
        "F should_not_call pass@1 (%)": 87.5,
        "overall pass@1 (%)": 95.8,
    }
    assert {m["type"] for m in result["metrics"]} == {"pass@1"}
    # The standalone card is a README whose front matter is exactly that metadata.
    assert _front_matter(card.standalone()) == parsed


README = (
    "---\n"
    "license: apache-2.0\n"
    "base_model: Qwen/Qwen3-4B\n"
    "tags:\n"
    "- lora\n"
    "---\n"
    "\n"
    "# My adapter\r\n"
    "\r\n"
    "Windows line endings and trailing spaces stay.   \r\n"
    "Ünïcode too.\n"
)


@pytest.mark.card
def test_update_is_idempotent_and_keeps_bytes(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    r1, r2 = rounds
    readme = tmp_path / "README.md"
    readme.write_bytes(README.encode("utf-8"))
    args = ["card", str(r2), "--baseline", str(r1), *_logs(), "--overwrite", str(readme)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    first = readme.read_bytes()
    assert (tmp_path / "loragate_pass_at_1.png").read_bytes().startswith(PNG_MAGIC)

    code, _, err = run_cli(args, capsys)
    assert code == 0 and "already up to date" in err
    assert readme.read_bytes() == first

    text = first.decode("utf-8")
    meta = _front_matter(text)
    assert meta["license"] == "apache-2.0" and meta["tags"] == ["lora"]
    assert meta["model-index"][0]["name"] == "round2"  # type: ignore[index]
    # Cut out what loragate added: the original comes back byte for byte.
    m0, m1 = text.index(META_START), text.index(META_END) + len(META_END) + 1
    c0, c1 = text.index(CARD_START), text.index(CARD_END) + len(CARD_END) + 1
    assert text[c1:] == ""
    restored = text[:m0] + text[m1:c0]
    assert restored == README + "\n"  # plus the one blank line before the section


def test_update_replaces_stale_section_and_keeps_what_follows(
    rounds: tuple[Path, Path], tmp_path: Path
) -> None:
    r1, r2 = rounds
    card = build_card(load_run(str(r2)), chart=None)
    text = f"# Title\n\nintro\n\n{CARD_START}\nold figures\n{CARD_END}\n\n## Limitations\n\nkept.\n"
    new = update_readme(text, card, metadata=False)
    assert "old figures" not in new
    assert new.startswith("# Title\n\nintro\n\n" + CARD_START)
    assert new.endswith(CARD_END + "\n\n## Limitations\n\nkept.\n")
    assert update_readme(new, card, metadata=False) == new
    # The other run's card replaces this one in place.
    other = build_card(load_run(str(r1)), chart=None)
    swapped = update_readme(new, other, metadata=False)
    assert "12.5 % (1/8)" in swapped and swapped.endswith("kept.\n")


def test_update_without_front_matter_adds_it(rounds: tuple[Path, Path]) -> None:
    _, r2 = rounds
    card = build_card(load_run(str(r2)), chart=None)
    text = "# Plain README\n"
    new = update_readme(text, card)
    assert new.startswith("---\n" + META_START)
    assert _front_matter(new)["model-index"] == card.model_index["model-index"]
    assert "\n---\n# Plain README\n\n" + CARD_START in new
    assert update_readme(new, card) == new
    # An empty README becomes a card.
    assert update_readme("", card) == card.standalone().replace("---\n\n", "---\n", 1)


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("---\nmodel-index:\n- name: x\n---\n", "did not write"),
        (f"# t\n{CARD_START}\nno end\n", "must appear once each"),
        (f"# t\n{CARD_END}\n{CARD_START}\n", "in that order"),
        (f"{CARD_START}\n{CARD_END}\n{CARD_START}\n{CARD_END}\n", "once each"),
        ("---\nlicense: mit\nno closing line\n", "never closes"),
    ],
)
def test_update_refuses_ambiguous_readmes(rounds: tuple[Path, Path], text: str, msg: str) -> None:
    _, r2 = rounds
    card = build_card(load_run(str(r2)), chart=None)
    with pytest.raises(BadInput, match=msg):
        update_readme(text, card)


def test_cli_update_errors_exit_2(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, r2 = rounds
    readme = tmp_path / "README.md"
    readme.write_text("---\nmodel-index: []\n---\n")
    before = readme.read_bytes()
    code, _, err = run_cli(["card", str(r2), "--no-chart", "--overwrite", str(readme)], capsys)
    assert code == 2 and "--no-metadata" in err
    assert readme.read_bytes() == before
    code, _, err = run_cli(
        ["card", str(r2), "--no-chart", "--overwrite", str(tmp_path / "missing.md")], capsys
    )
    assert code == 2 and "no such file" in err
    code, _, err = run_cli(["card", str(r2), "--no-chart", "--project-family", "clarify"], capsys)
    assert code == 2 and "not a family of the run" in err


@pytest.mark.card
def test_cli_standalone_card(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, r2 = rounds
    out = tmp_path / "card"
    code, stdout, err = run_cli(
        ["card", str(r2), "--out", str(out), "--model-name", "v2-adapter", "--steps", "3"], capsys
    )
    assert code == 0, err
    assert stdout == (out / "card.md").read_text()
    meta = _front_matter(stdout)
    assert meta["model-index"][0]["name"] == "v2-adapter"  # type: ignore[index]
    assert yaml.safe_load((out / "model_index.yaml").read_text()) == meta
    assert "| 3 steps ≥ |" in stdout
    png = (out / "loragate_pass_at_1.png").read_bytes()
    assert png.startswith(PNG_MAGIC)
    # Same inputs, same bytes (no timestamps in the image either).
    code, _, _ = run_cli(["card", str(r2), "--out", str(out), "--model-name", "v2-adapter"], capsys)
    assert (out / "loragate_pass_at_1.png").read_bytes() == png
