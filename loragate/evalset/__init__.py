"""Reading and validating evalset folders (against the families' contracts), per-entry
tools, fault variants and the BFCL import.

Above the families in the layer order; below runners and generation. The package
exports the loader (`from loragate.evalset import load_evalset`); the models of the
files it reads are in `loragate.formats.evalset`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.evalset.answers import read_answers
    from loragate.evalset.load import Evalset, load_evalset

__all__ = ["Evalset", "load_evalset", "read_answers"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
