"""Pure statistics: Wilson intervals and pass^k/pass@k (`binomial`), paired exact tests
(`paired`) and reliability over episodes (`reliability`).

Second in the layer order (above common only): no file formats, no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.stats.binomial import Counts, pass_at_1, pass_at_k, pass_hat_k, wilson_interval
    from loragate.stats.paired import PairedTest, paired_test
    from loragate.stats.power import detectable_drop, entries_to_detect
    from loragate.stats.reliability import project
    from loragate.stats.survival import hazard_table, survival_curve

__all__ = [
    "Counts",
    "PairedTest",
    "detectable_drop",
    "entries_to_detect",
    "hazard_table",
    "paired_test",
    "pass_at_1",
    "pass_at_k",
    "pass_hat_k",
    "project",
    "survival_curve",
    "wilson_interval",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
