"""Reading and validating evalset folders (against the families' contracts), per-entry
tools, fault variants and the BFCL import.

Above the families in the layer order; below runners and generation.
"""

from __future__ import annotations

__all__: list[str] = []
