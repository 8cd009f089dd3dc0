"""Sweeps: the sweep spec, the orchestration, the Ray stage and the ranked summary.

Above results and run in the layer order; below training and the CLI.
"""

from __future__ import annotations

__all__: list[str] = []
