"""LoRA training: SFT recipe, training data and its sources, the curriculum generator,
the leakage check and the behavioural-eval callback (installed as `loragate.training`).

Above the core's stages and the run stage (`loragate.evaluation`) in the layer order; only the CLI sits above.
"""

from __future__ import annotations

__all__: list[str] = []
