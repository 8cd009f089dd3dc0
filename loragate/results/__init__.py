"""What a finished run is read back as: loaded runs and their training logs, compare (and
its rendering), the gate, the model card, the report, formatting, episode report/compare,
and `view/` (the HTML view).

Above episodes in the layer order; below run, sweep and the CLI.
"""

from __future__ import annotations

__all__: list[str] = []
