"""The HTML view of one or more runs: its data (`data`), the page (`html`) and the page's
templates.

Part of the results layer.
"""

from __future__ import annotations

__all__: list[str] = []
