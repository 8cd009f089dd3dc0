"""The HTML view of one or more runs: its data (`page_data`), the page (`html`) and the page's
templates.

Part of the results layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.results.view.html import write_view
    from loragate.results.view.page_data import run_view_page, view_data

__all__ = ["run_view_page", "view_data", "write_view"]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
