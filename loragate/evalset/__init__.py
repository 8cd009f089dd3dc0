"""Reading and validating evalset folders (against the families' contracts), per-entry
tools, fault variants and the BFCL import.

Above the families in the layer order; below runners and generation. The package
exports the loader (`from loragate.evalset import load_evalset`); the models of the
files it reads are in `loragate.formats.evalset`.
"""

from __future__ import annotations

from loragate.evalset.load import Evalset, load_evalset

__all__ = ["Evalset", "load_evalset"]
