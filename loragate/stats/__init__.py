"""Pure statistics: Wilson intervals and pass^k/pass@k (`binomial`), paired exact tests
(`paired`) and reliability over episodes (`reliability`).

Second in the layer order (above common only): no file formats, no I/O.
"""

from __future__ import annotations

__all__: list[str] = []
