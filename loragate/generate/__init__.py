"""Generation: the run config, prompt rendering (chat templates), the plan/cache/execute
pipeline, adapter inspection and the embedded model.

Above evalset and runners in the layer order; below scoring.
"""

from __future__ import annotations

__all__: list[str] = []
