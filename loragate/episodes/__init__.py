"""Episodes: definitions, the simulator and its faults, the trajectory judge, the final-
reply judge, the episode loop and run, episode statistics; `servers/` holds the tool
servers.

Above scoring in the layer order; below results.
"""

from __future__ import annotations

__all__: list[str] = []
