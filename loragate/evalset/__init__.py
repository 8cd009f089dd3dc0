"""Reading and validating evalset folders (against the families' contracts), per-entry
tools, fault variants and the BFCL import.

Above the families in the layer order; below runners and generation. The package
re-exports the loader's public names (`from loragate.evalset import load_evalset`).
"""

from __future__ import annotations

from loragate.evalset.load import (
    EVALSET_FORMAT_VERSION,
    FAULT_SEPARATOR,
    Entry,
    Evalset,
    EvalsetManifest,
    FunctionCall,
    Message,
    MessageToolCall,
    Policy,
    expand_faults,
    fault_text,
    load_evalset,
)

__all__ = [
    "EVALSET_FORMAT_VERSION",
    "FAULT_SEPARATOR",
    "Entry",
    "Evalset",
    "EvalsetManifest",
    "FunctionCall",
    "Message",
    "MessageToolCall",
    "Policy",
    "expand_faults",
    "fault_text",
    "load_evalset",
]
