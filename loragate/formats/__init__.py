"""Every persisted model and the one table of their versions (`versions`): the evalset
files (`evalset`), generation and result records, verdicts and reason codes, the run
manifest and the adapters it names, sampling settings, trajectory/episode records and
run-folder I/O.

Third in the layer order (above common and stats): what the rest of the pipeline reads
and writes.
"""

from __future__ import annotations

__all__: list[str] = []
