"""Sweeps: the sweep spec, the orchestration, the Ray stage and the ranked summary.

Above results and the run stage (`loragate.evaluation`) in the layer order; below training and the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.sweep.orchestrate import run_sweep
    from loragate.sweep.spec import load_sweep

__all__ = ["load_sweep", "run_sweep"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
