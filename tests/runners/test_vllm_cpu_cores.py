"""How many cores the vLLM runner asks vLLM's CPU build to keep for its scheduler."""

from __future__ import annotations

import pytest

from loragate.generate.config import load_config
from loragate.runners.vllm import cpu_reserved_cores


@pytest.fixture(autouse=True)
def _no_user_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_CPU_NUM_OF_RESERVED_CPU", raising=False)


@pytest.mark.parametrize(("usable", "want"), [(1, 0), (2, 0), (4, 0), (5, None), (64, None)])
def test_small_machines_reserve_no_core(usable: int, want: int | None) -> None:
    assert cpu_reserved_cores(None, usable) == want


def test_config_value_wins_over_the_machine_size() -> None:
    assert cpu_reserved_cores(1, 2) == 1
    assert cpu_reserved_cores(0, 64) == 0


def test_user_environment_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_CPU_NUM_OF_RESERVED_CPU", "1")
    assert cpu_reserved_cores(None, 2) is None


def test_config_field_defaults_to_automatic_and_rejects_negatives() -> None:
    assert load_config(None).vllm.cpu_reserved_cores is None
    assert load_config(None, {"vllm.cpu_reserved_cores": 1}).vllm.cpu_reserved_cores == 1
    with pytest.raises(Exception, match="cpu_reserved_cores"):
        load_config(None, {"vllm.cpu_reserved_cores": -1})
