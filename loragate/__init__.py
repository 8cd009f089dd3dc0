"""loragate: gate LoRA fine-tune rounds by behaviour.

The Python face (docs/python-api.md): run an evaluation (`evaluate` from plain
arguments, `run` from a `RunConfig`), score generations made elsewhere
(`score_generations`), read run folders back (`load_run`, `read_summary`,
`read_results`), compare them (`compare_runs`) and gate a round (`load_policy`,
`evaluate_gate`). Everything else is reached through these names or is internal.

Importing this package stays light: no torch, vllm, peft or trl, and none of loragate's
own stages. Each name is imported from the module that defines it on first use
(`loragate.common.faces`: module `__getattr__`, PEP 562, reading the `TYPE_CHECKING`
block below), so `loragate.run` is the typed function `loragate.evaluation.run` to a
type checker and at run time alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face
from loragate.common.version import __version__

if TYPE_CHECKING:
    from loragate.common.errors import BadInput
    from loragate.evaluation import (
        NoHooks,
        RunHooks,
        RunOutcome,
        evaluate,
        run,
        score_generations,
    )
    from loragate.formats.records import ResultRecord, Summary
    from loragate.formats.runfolder import read_results, read_summary
    from loragate.generate.config import RunConfig, load_config
    from loragate.results.compare import Comparison
    from loragate.results.entry_points import compare_runs, evaluate_gate
    from loragate.results.gate import GatePolicy, GateResult, load_policy
    from loragate.results.runs import LoadedRun, load_run
    from loragate.score.scoring import ScoredRun

__all__ = [
    "BadInput",
    "Comparison",
    "GatePolicy",
    "GateResult",
    "LoadedRun",
    "NoHooks",
    "ResultRecord",
    "RunConfig",
    "RunHooks",
    "RunOutcome",
    "ScoredRun",
    "Summary",
    "__version__",
    "compare_runs",
    "evaluate",
    "evaluate_gate",
    "load_config",
    "load_policy",
    "load_run",
    "read_results",
    "read_summary",
    "run",
    "score_generations",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
