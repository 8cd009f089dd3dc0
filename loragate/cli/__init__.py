"""The command line: one module a command (`app.py` registers them), each with its
options, output and exit codes. Last in the layer order: nothing else imports it.
"""

from __future__ import annotations

__all__: list[str] = []
