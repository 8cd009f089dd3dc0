"""What a finished run is read back as: loaded runs and their training logs, compare (and
its rendering), the gate, the model card, the report, formatting, episode report/compare,
and `view/` (the HTML view).

Above episodes in the layer order; below the run stage (`loragate.evaluation`), sweep and the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.results.card import Card, build_card
    from loragate.results.compare import Comparison, compare_runs
    from loragate.results.gate import GatePolicy, GateResult, evaluate_gate, load_policy
    from loragate.results.report import render_markdown
    from loragate.results.runs import LoadedRun, load_run
    from loragate.results.training_logs import TrainingLog, read_training_log

__all__ = [
    "Card",
    "Comparison",
    "GatePolicy",
    "GateResult",
    "LoadedRun",
    "TrainingLog",
    "build_card",
    "compare_runs",
    "evaluate_gate",
    "load_policy",
    "load_run",
    "read_training_log",
    "render_markdown",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
