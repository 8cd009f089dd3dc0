"""Generation: the run config, prompt rendering (chat templates), the plan/cache/execute
pipeline, adapter inspection and the embedded model.

Above evalset and runners in the layer order; below scoring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.generate.adapters import inspect_adapter
    from loragate.generate.config import RunConfig, load_config
    from loragate.generate.harness import HarnessConfig
    from loragate.generate.pipeline import RunPlan, execute_run, plan_run
    from loragate.generate.prompt import ChatRenderer, load_renderer

__all__ = [
    "ChatRenderer",
    "HarnessConfig",
    "RunConfig",
    "RunPlan",
    "execute_run",
    "inspect_adapter",
    "load_config",
    "load_renderer",
    "plan_run",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
