"""LoRA training: SFT recipe, training data and its sources, the curriculum generator,
the leakage check and the behavioural-eval callback (installed as `loragate.training`).

Above the core's stages and the run stage (`loragate.evaluation`) in the layer order; only the CLI sits above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.training.callback import BehaviouralEvalCallback
    from loragate.training.curriculum import generate_curriculum
    from loragate.training.data import prepare_data
    from loragate.training.leakage import check_leakage
    from loragate.training.sft import Recipe, load_recipe, train

__all__ = [
    "BehaviouralEvalCallback",
    "Recipe",
    "check_leakage",
    "generate_curriculum",
    "load_recipe",
    "prepare_data",
    "train",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
