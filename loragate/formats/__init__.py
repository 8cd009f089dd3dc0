"""Every persisted model and the one table of their versions (`versions`): the evalset
files (`evalset`), generation and result records, verdicts and reason codes, the run
manifest and the adapters it names, sampling settings, trajectory/episode records and
run-folder I/O.

Third in the layer order (above common and stats): what the rest of the pipeline reads
and writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.formats.evalset import CallSpec, Entry, EvalsetManifest, Message, Policy
    from loragate.formats.manifest import AdapterInfo, RunManifest
    from loragate.formats.records import (
        AdapterSummary,
        GenerationRecord,
        ParseResult,
        RateStats,
        ReasonCode,
        ResultRecord,
        Summary,
        ToolCall,
        Verdict,
    )
    from loragate.formats.runfolder import (
        read_episodes_summary,
        read_generations,
        read_manifest,
        read_results,
        read_summary,
    )
    from loragate.formats.sampling import SamplingConfig
    from loragate.formats.trajectories import EpisodesSummary, StepRecord, TrajectoryResult
    from loragate.formats.versions import FORMATS

__all__ = [
    "FORMATS",
    "AdapterInfo",
    "AdapterSummary",
    "CallSpec",
    "Entry",
    "EpisodesSummary",
    "EvalsetManifest",
    "GenerationRecord",
    "Message",
    "ParseResult",
    "Policy",
    "RateStats",
    "ReasonCode",
    "ResultRecord",
    "RunManifest",
    "SamplingConfig",
    "StepRecord",
    "Summary",
    "ToolCall",
    "TrajectoryResult",
    "Verdict",
    "read_episodes_summary",
    "read_generations",
    "read_manifest",
    "read_results",
    "read_summary",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
