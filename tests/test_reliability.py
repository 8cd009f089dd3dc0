"""Reliability maths against hand-computed values, and the CLI."""

from __future__ import annotations

import json

import pytest

from loragate.stats import reliability as rel
from tests._casestudy import run_cli


def test_end_to_end_hand_values() -> None:
    # The seed's presets: 0.999^5, 0.99^20, 0.74^12, 0.957^15.
    assert rel.end_to_end(0.999, 5) == pytest.approx(0.995010, abs=1e-6)
    assert rel.end_to_end(0.99, 20) == pytest.approx(0.817907, abs=1e-6)
    assert rel.end_to_end(0.74, 12) == pytest.approx(0.026964, abs=1e-6)
    assert rel.end_to_end(0.957, 15) == pytest.approx(0.517224, abs=1e-6)


def test_pass_hat_k_compounds() -> None:
    # 0.92^8 = 0.513219; pass^8 = 0.92^64 = 0.004813 (the seed's ~0.48 %).
    assert rel.end_to_end(0.92, 8) == pytest.approx(0.513219, abs=1e-6)
    assert rel.pass_hat_k(0.92, 8, 8) == pytest.approx(0.0048131, abs=1e-6)
    assert rel.pass_hat_k(0.92, 8, 8) == pytest.approx(0.92**64)


def test_required_per_step_inverse() -> None:
    # 0.5^(1/20) = 0.965936, 0.5^(1/40) = 0.982821, 0.027^(1/12) = 0.740.
    assert rel.required_per_step(0.5, 20) == pytest.approx(0.965936, abs=1e-6)
    assert rel.required_per_step(0.5, 40) == pytest.approx(0.982821, abs=1e-6)
    assert rel.required_per_step(0.027, 12) == pytest.approx(0.740, abs=1e-3)
    # pass^k target: 0.5^(1/(5*2)) = 0.933033.
    assert rel.required_per_step(0.5, 5, k=2) == pytest.approx(0.933033, abs=1e-6)
    # Round trip.
    r = rel.required_per_step(0.8, 7)
    assert rel.end_to_end(r, 7) == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (lambda: rel.end_to_end(1.2, 5), "per-step"),
        (lambda: rel.end_to_end(0.9, 0), "steps"),
        (lambda: rel.pass_hat_k(0.9, 3, 0), "k"),
        (lambda: rel.required_per_step(0.0, 3), "target"),
        (lambda: rel.end_to_end(float("nan"), 3), "per-step"),
    ],
)
def test_bad_arguments(call: object, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        call()  # type: ignore[operator]


def test_projection_uses_interval_lower_bound() -> None:
    # Governance 57/57: Wilson low = 57 / (57 + 1.96^2) = 0.936859; ^5 = 0.721724.
    low = 57 / (57 + 1.96**2)
    p = rel.project("governance", 1.0, low, steps=5)
    assert p.end_to_end_at_least == pytest.approx(0.721724, abs=1e-6)
    assert p.sentence("governed workflow") == (
        "measured governance 100 % (CI low 94 %) -> a 5-step governed workflow succeeds >= 72 %"
    )
    p8 = rel.project("governance", 1.0, low, steps=5, k=2)
    assert p8.pass_hat_k_at_least == pytest.approx(0.721724**2, abs=1e-5)


def test_percent_floor_never_overstates() -> None:
    assert rel.percent_floor(0.72999) == "72 %"
    assert rel.percent_floor(0.5) == "50 %"
    assert rel.percent_floor(0.0999, digits=1) == "9.9 %"


def test_grid() -> None:
    g = rel.grid([0.9, 0.99], [1, 10], k=2)
    assert len(g.cells) == 4
    assert g.cell(0.99, 10).end_to_end == pytest.approx(0.99**10)
    assert g.cell(0.9, 10).pass_hat_k == pytest.approx(0.9**20)


def test_cli_single_and_k(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["reliability", "--per-step", "0.99", "--steps", "20", "--k", "8"], capsys
    )
    assert code == 0
    assert "end-to-end r^n = 81.79 %" in out
    assert "pass^8 = (r^n)^8 = 20.03 %" in out  # 0.99^160 = 0.200277


def test_cli_inverse_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["reliability", "--target", "0.5", "--steps", "20", "--format", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)["required_per_step"] == pytest.approx(0.965936, abs=1e-6)
    code, out, _ = run_cli(["reliability", "--target", "0.5", "--steps", "40"], capsys)
    assert code == 0 and "98.28 %" in out


def test_cli_table_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        [
            "reliability",
            "--table",
            "-r",
            "0.99",
            "-r",
            "0.999",
            "-n",
            "5",
            "-n",
            "20",
            "-f",
            "markdown",
        ],
        capsys,
    )
    assert code == 0
    assert "| 99.9 % | 99.50 % | 98.02 % |" in out
    assert "| 99 % | 95.10 % | 81.79 % |" in out


def test_cli_table_default_grid(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["reliability", "--table"], capsys)
    assert code == 0 and "n=50" in out


@pytest.mark.parametrize(
    "args",
    [
        ["reliability"],
        ["reliability", "--per-step", "1.5", "--steps", "3"],
        ["reliability", "--target", "0.5"],
        ["reliability", "--target", "0.5", "--per-step", "0.9", "--steps", "3"],
        ["reliability", "--per-step", "0.9", "--steps", "0"],
    ],
)
def test_cli_bad_input_exits_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "Traceback" not in err and err.strip()
