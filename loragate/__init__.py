"""loragate: gate LoRA fine-tune rounds by behaviour.

Importing this package stays light: no torch, vllm, peft or trl is imported here, and
`loragate.run` (a run from Python: `loragate.run(config) -> RunOutcome`, the function
`loragate.evaluation.run`) is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from loragate.common.version import __version__


def __getattr__(name: str) -> Any:
    if name == "run":
        return importlib.import_module("loragate.evaluation").run
    raise AttributeError(f"module 'loragate' has no attribute {name!r}")


__all__ = ["__version__", "run"]
