"""loragate: gate LoRA fine-tune rounds by behaviour.

The Python face (docs/python-api.md): run an evaluation (`evaluate` from plain
arguments, `run` from a `RunConfig`), score generations made elsewhere
(`score_generations`), read run folders back (`load_run`, `read_summary`,
`read_results`), compare them (`compare_runs`) and gate a round (`load_policy`,
`evaluate_gate`), with every type their signatures and results use. Everything else is
reached through these names or is internal.

Importing this package stays light: no torch, vllm, peft or trl, and none of loragate's
own stages. Each name is imported from the module that defines it on first use
(`loragate.common.faces`: module `__getattr__`, PEP 562, reading the `TYPE_CHECKING`
block below), so `loragate.run` is the typed function `loragate.evaluation.run` to a
type checker and at run time alike; `dir(loragate)` is `__all__`.
"""

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face
from loragate.common.version import __version__

if TYPE_CHECKING:
    from loragate.calls.parsing import ServingStack
    from loragate.calls.stack import CallFormatSetting, ReasoningParserSetting
    from loragate.common.errors import BadInput
    from loragate.common.jsonl import ReadReport
    from loragate.episodes.definitions import EpisodeSet
    from loragate.evaluation import (
        NoHooks,
        RunHooks,
        RunOutcome,
        evaluate,
        run,
        score_generations,
    )
    from loragate.formats.manifest import RunManifest
    from loragate.formats.records import (
        AdapterSummary,
        CallFormat,
        EvalsetRef,
        FaultKind,
        HarnessSummary,
        ParseMode,
        ParseResult,
        RateStats,
        ReasonCode,
        ResultRecord,
        Summary,
        Verdict,
    )
    from loragate.formats.sampling import SamplingConfig
    from loragate.formats.trajectories import EpisodesSummary, UserMode
    from loragate.generate.config import Dtype, RunConfig, load_config
    from loragate.generate.harness import HarnessConfig
    from loragate.generate.pipeline import RunPlan
    from loragate.results.compare import Comparison, FamilyRow, RunInfo, TagRow, TrainingRow
    from loragate.results.entry_points import (
        compare_runs,
        evaluate_gate,
        read_results,
        read_summary,
    )
    from loragate.results.gate import (
        FamilyRules,
        GatePolicy,
        GateResult,
        GateVerdict,
        load_policy,
    )
    from loragate.results.gate_episodes import EpisodeRules
    from loragate.results.gate_rules import RuleResult, RuleStatus
    from loragate.results.languages import LanguagePolicy
    from loragate.results.robustness import RobustnessRow
    from loragate.results.runs import LoadedRun, RunRef, ScoredFolder, load_run
    from loragate.results.training_logs import TrainingLog
    from loragate.score.scoring import ScoredRun, ScorerError

__all__ = [
    "AdapterSummary",
    "BadInput",
    "CallFormat",
    "CallFormatSetting",
    "Comparison",
    "Dtype",
    "EpisodeRules",
    "EpisodeSet",
    "EpisodesSummary",
    "EvalsetRef",
    "FamilyRow",
    "FamilyRules",
    "FaultKind",
    "GatePolicy",
    "GateResult",
    "GateVerdict",
    "HarnessConfig",
    "HarnessSummary",
    "LanguagePolicy",
    "LoadedRun",
    "NoHooks",
    "ParseMode",
    "ParseResult",
    "RateStats",
    "ReadReport",
    "ReasonCode",
    "ReasoningParserSetting",
    "ResultRecord",
    "RobustnessRow",
    "RuleResult",
    "RuleStatus",
    "RunConfig",
    "RunHooks",
    "RunInfo",
    "RunManifest",
    "RunOutcome",
    "RunPlan",
    "RunRef",
    "SamplingConfig",
    "ScoredFolder",
    "ScoredRun",
    "ScorerError",
    "ServingStack",
    "Summary",
    "TagRow",
    "TrainingLog",
    "TrainingRow",
    "UserMode",
    "Verdict",
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
del TYPE_CHECKING, lazy_face  # the face is __all__ only
