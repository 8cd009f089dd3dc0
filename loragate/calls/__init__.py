"""What a tool call is and how it is checked: the output parser, tools and toolsets, JSON-
Schema checks and their error wording, argument matchers, and the call checks the
families and the episode judge share (`checks`).

Above formats in the layer order; below the judge and the families.
"""

from __future__ import annotations

__all__: list[str] = []
