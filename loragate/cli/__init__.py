"""The command line: one module a command (`app.py` registers them), each with its
options, output and exit codes. Last in the layer order: nothing else imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.cli.app import main

__all__ = ["main"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
