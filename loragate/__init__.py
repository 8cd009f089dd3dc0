"""loragate: gate LoRA fine-tune rounds by behaviour.

The Python face (docs/python-api.md): run an evaluation (`evaluate` from plain
arguments, `run` from a `RunConfig`), score generations made elsewhere
(`score_generations`), read run folders back (`load_run`, `read_summary`,
`read_results`), compare them (`compare_runs`) and gate a round (`load_policy`,
`evaluate_gate`). Everything else is reached through these names or is internal.

Importing this package stays light: no torch, vllm, peft or trl, and none of loragate's
own stages. Each name below is imported from the module that defines it on first use
(module `__getattr__`, PEP 562); a type checker reads the same names from the
`TYPE_CHECKING` block, so `loragate.run` is the typed function
`loragate.evaluation.run` to both.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from loragate.results.compare import Comparison, compare_runs
    from loragate.results.gate import GatePolicy, GateResult, evaluate_gate, load_policy
    from loragate.results.runs import LoadedRun, load_run
    from loragate.score.scoring import ScoredRun

_HOME = {
    "BadInput": "loragate.common.errors",
    "NoHooks": "loragate.evaluation",
    "RunHooks": "loragate.evaluation",
    "RunOutcome": "loragate.evaluation",
    "evaluate": "loragate.evaluation",
    "run": "loragate.evaluation",
    "score_generations": "loragate.evaluation",
    "ResultRecord": "loragate.formats.records",
    "Summary": "loragate.formats.records",
    "read_results": "loragate.formats.runfolder",
    "read_summary": "loragate.formats.runfolder",
    "RunConfig": "loragate.generate.config",
    "load_config": "loragate.generate.config",
    "Comparison": "loragate.results.compare",
    "compare_runs": "loragate.results.compare",
    "GatePolicy": "loragate.results.gate",
    "GateResult": "loragate.results.gate",
    "evaluate_gate": "loragate.results.gate",
    "load_policy": "loragate.results.gate",
    "LoadedRun": "loragate.results.runs",
    "load_run": "loragate.results.runs",
    "ScoredRun": "loragate.score.scoring",
}
"""Each public name -> the module that defines it (the `TYPE_CHECKING` block, at run time)."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'loragate' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # found once; later reads do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
