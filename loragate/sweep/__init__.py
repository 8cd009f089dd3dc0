"""Sweeps: the sweep spec, the orchestration, the Ray stage and the ranked summary.

Above results (and run) in the layer order; only the CLI is above it.
"""

from __future__ import annotations

__all__: list[str] = []
