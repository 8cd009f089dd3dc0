"""Every persisted model: generation and result records, verdicts and reason codes, the run
manifest, trajectory/episode records, run-folder I/O and training logs.

Third in the layer order (above common and stats): what the rest of the pipeline reads
and writes.
"""

from __future__ import annotations

__all__: list[str] = []
